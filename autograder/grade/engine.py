"""Step 2: execute submissions with limits, in parallel, from a warm fork server.

Start-up is most of what `otter run` spends per submission: a Python process, Otter's imports,
a kernel, numpy. Here the parent pays it once (``warm``): it imports what every notebook and
every test needs and builds an IPython shell, then forks one child per submission. A child
starts in milliseconds with all of that already in memory, runs the notebook in-process
(``kernel.grade_in_child``) and leaves a JSON report.

Limits, enforced by the parent on the child's whole process group (each child is a session
leader, so anything it spawns is in its group):

* ``timeout``: wall-clock seconds per submission, then SIGKILL to the group;
* ``memory_mb``: the child's peak resident memory (Linux's high-water mark, VmHWM, so a spike
  between two polls still counts; it includes the ~150 MB the child shares with the warm
  parent) or the current total of the rest of its group; over it, SIGKILL. An address-space
  rlimit a little above the cap stops a runaway before the next poll.

A process that leaves the group on purpose (``setsid``) escapes the group kill; the rlimits
still bound it, and guarding against hostile code is the verifier's job (``verify``).

A child that is killed, or that exits without a report (``os._exit(0)`` in a cell), becomes a
failed ``Execution`` with a Spanish reason; the batch goes on.
"""

import contextlib
import ctypes
import gc
import json
import os
import resource
import select
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .confine import data_variable_names, kernel_identity
from .kernel import grade_in_child, write_report

# Modules every submission imports (the notebook, Otter's init cell, the zip's checks).
WARM_MODULES = (
    "numpy", "matplotlib", "matplotlib.pyplot", "matplotlib_inline.backend_inline",
    "IPython.core.interactiveshell", "otter", "otter.check.notebook", "otter.execute",
    "otter.execute.preprocessor", "otter.test_files", "nbformat", "pickle", "jsonschema",
)

POLL_SECONDS = 0.05
GROUP_SCAN_SECONDS = 0.5
# Room above the memory cap for the address space, which counts mapped but untouched pages
# (libraries, thread stacks): with less, a submission would fail with MemoryError below the cap.
ADDRESS_SPACE_MARGIN_MB = 1024
MAX_FILE_BYTES = 256 * 2**20
MAX_REPORT_BYTES = 32 * 2**20
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Limits:
    timeout: float = 120.0
    memory_mb: int = 2048


@dataclass
class Execution:
    """What running one submission produced: the child's report, or why there is none."""

    verdicts: Optional[list] = None  # [[test file, [[case, passed, message], ...]], ...] in Otter's order
    catastrophic: Optional[str] = None  # why Otter would have no results although the notebook ran
    cell_errors: list = field(default_factory=list)
    output: str = ""
    output_chars: int = 0
    failure: Optional[str] = None  # Spanish reason the run was stopped or crashed
    failure_kind: Optional[str] = None  # "timeout", "memory", "died" or "internal"
    seconds: float = 0.0
    peak_rss_mb: float = 0.0
    data: Optional[dict] = None  # data questions' variables, as plain JSON (kernel.export_data)
    confined: bool = False  # whether the child ran as an unprivileged user (confine.py)

    @property
    def ran(self):
        return self.failure is None


@dataclass
class _Job:
    key: object
    submission: object
    pid: int
    workdir: Path
    started: float
    killed_for: Optional[str] = None
    group_rss_mb: float = 0.0
    last_group_scan: float = 0.0


def warm(shell_config=None):
    """Import everything a submission needs and build the IPython shell the children inherit."""
    import importlib

    for name in WARM_MODULES:
        importlib.import_module(name)
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    if InteractiveShell.initialized():
        return InteractiveShell.instance()
    config = Config()
    config.HistoryManager.enabled = False  # no SQLite file, no saving thread across fork
    config.InteractiveShell.xmode = "Minimal"  # tracebacks name the error, never source lines
    config.InteractiveShell.colors = "nocolor"
    if shell_config:
        config.merge(shell_config)
    shell = InteractiveShell.instance(config=config)
    # IPython 9 copies every write to stdout/stderr into its history, which makes printing
    # 100 MB take minutes and keeps it all in memory; no test reads that history.
    shell._tee = lambda channel: contextlib.nullcontext()
    # The inline backend, as in Jupyter, but figures are never rendered to PNG: nothing reads them.
    shell.display_formatter.active_types = ["text/plain"]
    import matplotlib

    if "inline" in matplotlib.get_backend():
        from matplotlib_inline.backend_inline import configure_inline_support

        configure_inline_support(shell, "inline")
    _warm_matplotlib()
    return shell


def _warm_matplotlib():
    """Draw one throwaway figure, so fonts and text layout are loaded before any fork."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    image = ax.imshow([[0.0, 1.0]], cmap="Blues")
    ax.set_title("warm-up")
    ax.set_xticks([0, 1], ["a", "b"], rotation=45)
    fig.colorbar(image)
    fig.tight_layout()
    plt.close(fig)


class ForkServer:
    """Runs submissions in forked children, ``jobs`` at a time, within ``limits``."""

    def __init__(self, bundle, limits: Limits, jobs: int, grader_paths=()):
        if jobs < 1:
            raise ValueError("jobs must be at least 1")
        self.bundle, self.limits, self.jobs = bundle, limits, jobs
        self.grader_paths = tuple(str(p) for p in grader_paths)
        self.identity = kernel_identity()  # None unless the grader is root
        self.data_names = data_variable_names(bundle)
        # Not beside the unzipped bundle: a confined child must traverse this folder, and
        # must not be able to reach the bundle's reference.
        self.scratch = Path(tempfile.mkdtemp(prefix="kit-runs-"))
        if self.identity is not None:
            self.scratch.chmod(0o711)
        warm()
        # Objects alive now are never collected, so the collector does not copy the parent's
        # pages into every child.
        gc.freeze()

    def run(self, items, on_done=None):
        """Execute every ``(key, submission)``; ``on_done(key, execution)`` as each one ends."""
        if threading.active_count() > 1:
            raise RuntimeError("the fork server needs a single-threaded parent")
        pending, running, done = list(items)[::-1], {}, {}
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        previous = signal.signal(signal.SIGCHLD, lambda *_: None)
        previous_fd = signal.set_wakeup_fd(wake_w)
        try:
            while pending or running:
                while pending and len(running) < self.jobs:
                    key, submission = pending.pop()
                    job = self._start(key, submission, (wake_r, wake_w))
                    running[job.pid] = job
                select.select([wake_r], [], [], POLL_SECONDS)
                _drain(wake_r)
                for job in list(running.values()):
                    if _has_exited(job.pid):
                        del running[job.pid]
                        done[job.key] = execution = self._finish(job)
                        if on_done:
                            on_done(job.key, execution)
                    else:
                        self._enforce_limits(job)
        finally:
            for job in running.values():
                _kill_group(job.pid)
                os.waitpid(job.pid, 0)
                shutil.rmtree(job.workdir, ignore_errors=True)
            signal.set_wakeup_fd(previous_fd)
            signal.signal(signal.SIGCHLD, previous)
            os.close(wake_r)
            os.close(wake_w)
        return done

    def close(self):
        shutil.rmtree(self.scratch, ignore_errors=True)

    # --- parent side ---------------------------------------------------------------------

    def _start(self, key, submission, wake_fds):
        workdir = Path(tempfile.mkdtemp(dir=self.scratch))
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child, which never returns
            self._child(submission, workdir, wake_fds)
        return _Job(key, submission, pid, workdir, time.monotonic())

    def _enforce_limits(self, job):
        elapsed = time.monotonic() - job.started
        if elapsed > self.limits.timeout:
            job.killed_for = job.killed_for or "timeout"
            _kill_group(job.pid)
            return
        peak = _peak_rss_mb(job.pid)
        if elapsed - job.last_group_scan >= GROUP_SCAN_SECONDS:
            job.last_group_scan = elapsed
            job.group_rss_mb = _group_rss_mb(job.pid)
        if max(peak, job.group_rss_mb) > self.limits.memory_mb:
            job.killed_for = job.killed_for or "memory"
            _kill_group(job.pid)

    def _finish(self, job):
        _kill_group(job.pid)  # whatever the child left running; it is still a zombie, so its id is not reused
        _, status, usage = os.wait4(job.pid, 0)
        seconds = time.monotonic() - job.started
        peak = usage.ru_maxrss / 1024
        try:
            execution = self._judge(job, status, peak)
        finally:
            shutil.rmtree(job.workdir, ignore_errors=True)
        execution.seconds, execution.peak_rss_mb = seconds, peak
        return execution

    def _judge(self, job, status, peak):
        limits = self.limits
        where = _where(job.workdir)
        if job.killed_for == "timeout":
            return Execution(failure=f"se agotó el tiempo: tu cuaderno seguía ejecutándose tras "
                                     f"{limits.timeout:g} s{where}. ¿Hay un bucle que no termina?",
                             failure_kind="timeout")
        if job.killed_for == "memory" or peak > limits.memory_mb:
            return Execution(failure=f"tu cuaderno usó más memoria de la permitida "
                                     f"({limits.memory_mb} MB){where}. ¿Creas arrays enormes o "
                                     "listas que no paran de crecer?",
                             failure_kind="memory")
        report = _read_report(job.workdir / "report.json")
        if report is None:
            if os.WIFSIGNALED(status):
                how = f"por la señal {signal.Signals(os.WTERMSIG(status)).name}"
            else:
                how = f"con el código {os.WEXITSTATUS(status)}"
            return Execution(failure=f"el proceso de Python que ejecutaba tu cuaderno terminó {how} "
                                     f"antes de acabar{where}. ¿Llamas a os._exit(), o a algo que "
                                     "cierre Python?",
                             failure_kind="died")
        if "internal_error" in report:
            return Execution(failure="error interno del evaluador (no es culpa tuya): "
                                     + report["internal_error"], failure_kind="internal")
        return Execution(verdicts=report["verdicts"], catastrophic=report["catastrophic"],
                         cell_errors=report["cell_errors"], output=report["output"],
                         output_chars=report["output_chars"], data=report.get("data"),
                         confined=bool(report.get("confined")))

    # --- child side ----------------------------------------------------------------------

    def _child(self, submission, workdir, wake_fds):  # pragma: no cover - exercised through forks
        code = 70
        try:
            os.setsid()
            signal.set_wakeup_fd(-1)
            for fd in wake_fds:
                os.close(fd)
            for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            # A file grown past the limit fails the write instead of killing the child.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            _die_with_parent()
            _redirect_standard_fds()
            self._apply_rlimits()
            progress_fd = os.open(workdir / "progress", os.O_WRONLY | os.O_CREAT, 0o600)

            def progress(cell):
                os.pwrite(progress_fd, f"{cell}\n".ljust(16).encode(), 0)

            try:
                report = grade_in_child(submission, self.bundle, workdir, self.grader_paths,
                                        progress, self.identity, self.data_names)
            except Exception as exc:  # a bug of the grader, not of the submission
                report = {"internal_error": f"{type(exc).__name__}: {exc}",
                          "traceback": traceback.format_exc()}
            write_report(workdir / "report.json", report)
            code = 0
        finally:
            os._exit(code)

    def _apply_rlimits(self):  # pragma: no cover - runs in the child
        limits = self.limits
        address_space = (limits.memory_mb + ADDRESS_SPACE_MARGIN_MB) * 2**20
        _set_rlimit(resource.RLIMIT_AS, address_space)
        # Backstops in case the parent cannot enforce the wall-clock limit.
        _set_rlimit(resource.RLIMIT_CPU, int(limits.timeout) + 10)
        _set_rlimit(resource.RLIMIT_FSIZE, MAX_FILE_BYTES)
        _set_rlimit(resource.RLIMIT_CORE, 0)


def _set_rlimit(which, value):
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, hard))


def _die_with_parent():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the rlimits still bound the child
        pass


def _redirect_standard_fds():
    """Nothing reaches the grader's terminal; Python-level output is captured by the kernel."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


def _drain(fd):
    os.set_blocking(fd, False)
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def _has_exited(pid):
    # WNOWAIT leaves the zombie in place, so its process group can still be killed safely.
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _peak_rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def _group_rss_mb(pgid):
    """The resident memory of every process in the group but its leader, which VmHWM covers."""
    page_kb = os.sysconf("SC_PAGE_SIZE") / 1024
    total_kb = 0.0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == pgid:
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # After the command name: state, ppid, pgrp, ... rss is field 24 of stat(5).
        if int(fields[2]) == pgid:
            total_kb += int(fields[21]) * page_kb
    return total_kb / 1024 + _peak_rss_mb(pgid)


def _where(workdir):
    """Which cell was running, from the child's progress file, as a Spanish phrase."""
    try:
        cell = (workdir / "progress").read_text().strip()
    except OSError:
        return ""
    if cell.isdigit():
        return f" (en la celda {cell} del cuaderno)"
    if cell in ("None", "done"):
        return " (mientras se ejecutaban las pruebas)"
    return ""


def _read_report(path):
    try:
        if path.stat().st_size > MAX_REPORT_BYTES:
            return None
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
