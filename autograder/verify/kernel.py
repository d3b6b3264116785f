"""Confine the student's kernel: a private ``python3`` kernelspec that starts ``kernel_launcher``.

Otter (and nbclient under it) starts the kernel named in the notebook, always ``python3``
here (the plugin resets any other name). Jupyter looks kernelspecs up in ``JUPYTER_PATH``
first, so pointing that variable at a folder of ours, for the duration of one execution,
makes the kernel start through the launcher without touching Otter's code.

One session folder per grading, readable by root only except where noted:

    session/                      0711
      launcher.py                 jail.py + kernel_launcher.py, as read at import
      launch.json                 limits, identity, deadline
      status.json                 how the kernel ended, written by the launcher
      jupyter/kernels/python3/    the kernelspec
      view-*/                     confined only: the kernel's folder (views.py), owned by
                                  the kernel's user; also where it writes Otter's results file

Without root the kernel stays in Otter's submission folder with the grader's environment,
exactly as plain Otter runs it, plus the launcher's limits and deadline.
"""

import json
import os
import shutil
import sys
import tempfile
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import privileges, sandbox, views

LAUNCHER_PROGRAM = sandbox.program_source("kernel_launcher.py")


@dataclass(frozen=True)
class KernelLimits:
    """What the student's kernel may use while the notebook runs."""

    seconds: int = 300  # wall clock and CPU, for the whole notebook
    memory_mb: int = 2048
    file_mb: int = 64  # the largest file it may write
    output_mb: int = 16  # cell outputs the grader keeps (see otter_hardening)


def _read_paths():
    """The kernel sees the interpreter, system libraries and configuration, nothing else."""
    return sorted(set(sandbox.read_paths()) | {"/usr", "/bin", "/etc", "/proc", "/sys", "/dev"})


def _confined_environment(view: Path):
    python_bin = os.path.dirname(sys.executable)
    return {
        "PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(view), "TMPDIR": str(view), "LANG": "C.UTF-8",
        "MPLCONFIGDIR": str(view / ".matplotlib"), "IPYTHONDIR": str(view / ".ipython"),
        "JUPYTER_RUNTIME_DIR": str(view / ".jupyter"),
    }


class _ResultsFileInView:
    """Stands in for ``tempfile`` inside ``otter.execute``: the results file that the kernel
    pickles its verdicts into is created in the kernel's folder and handed to its user, so a
    confined kernel can still report (as untrusted data, see otter_hardening)."""

    def __init__(self, folder: Path, identity: privileges.Identity):
        self.folder, self.identity = folder, identity

    def mkstemp(self, suffix=None, prefix=None, dir=None, text=False):
        handle, path = tempfile.mkstemp(suffix=suffix, prefix=prefix, dir=self.folder)
        os.fchown(handle, self.identity.uid, self.identity.gid)
        return handle, path

    def __getattr__(self, name):
        return getattr(tempfile, name)


class KernelSession:
    """One grading's kernelspec, launcher and, when confined, the kernel's private view.

    ``with session.running():`` around the notebook's execution; ``status()`` afterwards.
    """

    def __init__(self, identity: Optional[privileges.Identity], limits: KernelLimits,
                 submission: Path, verified_questions=()):
        self.identity, self.limits = identity, limits
        self.folder = Path(tempfile.mkdtemp(prefix="kit-verify-session-"))
        self.folder.chmod(0o711)
        self.status_path = self.folder / "status.json"
        self.view, self.view_summary = None, {}
        if self.confined:
            self.view = privileges.private_folder(self.folder, None, "view-")
            self.view_summary = views.kernel_view(submission, self.view, verified_questions)
            views.give_to(self.view, identity.uid, identity.gid)
        self._write_files()

    @property
    def confined(self):
        return self.identity is not None

    def _launch_config(self):
        limits = self.limits
        jail = {
            "workdir": str(self.view) if self.confined else None,
            "limits": {"cpu_seconds": limits.seconds, "memory_bytes": limits.memory_mb * 2**20,
                       "file_bytes": limits.file_mb * 2**20, "open_files": 1024,
                       # Only a user of our own can be capped: the count is per user.
                       "processes": 256 if self.confined and self.identity.dedicated else None},
            "landlock": self.confined,
            # Even a kernel of the grader's own user may not signal or trace the grader.
            "isolate_signals": True,
            "read_paths": _read_paths(),
            "write_paths": [str(self.view), "/dev/null"] if self.confined else [],
        }
        if self.confined:
            jail["uid"], jail["gid"] = self.identity.uid, self.identity.gid
        return {
            "python": sys.executable,
            # Confined: no environment or user site, but its folder on sys.path (-m adds it)
            # for the tests that stay in the kernel. Otherwise exactly Otter's default kernel.
            "python_flags": ["-E", "-s"] if self.confined else [],
            "jail": jail,
            "env": _confined_environment(self.view) if self.confined else dict(os.environ),
            "pid_namespace": self.confined,
            "quiet": self.confined,
            "deadline_seconds": limits.seconds,
            "status_path": str(self.status_path),
        }

    def _write_files(self):
        launcher = self.folder / "launcher.py"
        launcher.write_text(LAUNCHER_PROGRAM, "utf-8")
        config = self.folder / "launch.json"
        config.write_text(json.dumps(self._launch_config()), "utf-8")
        config.chmod(0o600)
        spec_dir = self.folder / "jupyter" / "kernels" / "python3"
        spec_dir.mkdir(parents=True)
        spec = {"argv": [sys.executable, "-I", "-B", str(launcher), "{connection_file}",
                         str(config)],
                "display_name": "Python 3 (corrección)", "language": "python",
                "interrupt_mode": "signal", "metadata": {"debugger": False}}
        (spec_dir / "kernel.json").write_text(json.dumps(spec), "utf-8")

    @contextmanager
    def _jupyter_path(self):
        previous = os.environ.get("JUPYTER_PATH")
        ours = str(self.folder / "jupyter")
        os.environ["JUPYTER_PATH"] = os.pathsep.join([ours] + ([previous] if previous else []))
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = previous

    @contextmanager
    def _results_file_in_view(self):
        import otter.execute

        original = otter.execute.tempfile
        otter.execute.tempfile = _ResultsFileInView(self.view, self.identity)
        try:
            yield
        finally:
            otter.execute.tempfile = original

    @contextmanager
    def running(self):
        """Around Otter's execution of the notebook: kernels start through the launcher."""
        with ExitStack() as stack:
            stack.enter_context(self._jupyter_path())
            if self.confined:
                stack.enter_context(self._results_file_in_view())
            yield self

    @property
    def export_path(self) -> Path:
        """Where the kernel writes the variables of data questions (kernel_data.py)."""
        return (self.view if self.confined else self.folder) / ".kit-export.json"

    def status(self) -> dict:
        """How the kernel ended: exit or signal, deadline, confinement; {} if it never started."""
        try:
            return json.loads(self.status_path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}

    def close(self):
        shutil.rmtree(self.folder, ignore_errors=True)
