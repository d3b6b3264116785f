"""What this host allows the sandbox to do, found out once per batch.

The strongest setup starts the zygote under bubblewrap, Debian's well-kept sandbox: a mount
namespace that holds only the interpreter, its libraries and the sandbox's own code (read
only), no network, its own PID namespace, and it dies with the grader. When the grader is
root, bubblewrap runs as an unprivileged user (``SANDBOX_UID``) through ``setpriv``, so
nothing in the sandbox is root even inside a user namespace.

Where bubblewrap is missing or cannot create namespaces (Docker's default seccomp profile on
Gradescope and in ``otter grade``), the zygote starts as a plain process and each job confines
itself with what remains (confine.py): its own uid when the grader is root, Landlock, seccomp.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass


SANDBOX_UID = 65534  # nobody: bubblewrap's user when the grader is root
JOB_UID_BASE = 61_000  # one user per concurrent job when the grader is root without bubblewrap


@dataclass(frozen=True)
class Host:
    root: bool
    bwrap: str  # the bwrap binary when usable as planned, else ""

    @property
    def mode(self):
        if self.bwrap:
            return "bubblewrap"
        return "uid" if self.root else "none"


def library_paths():
    """Folders the interpreter reads: its installation and the folders holding its packages.
    Development paths that ``.pth`` files add (the kit's own checkout) are left out."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable)),
             sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"],
             _packages_folder("numpy")}
    paths |= {p for p in sys.path if p.rstrip("/").endswith(("site-packages", "dist-packages"))}
    return sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)})


def _packages_folder(module):
    """The folder ``module`` is installed in, found without importing it: the zygote starts
    before the grader has imported numpy."""
    spec = importlib.util.find_spec(module)
    origin = spec.origin if spec is not None else None
    return os.path.dirname(os.path.dirname(origin)) if origin else ""


def venv_interpreter():
    """``sys.executable`` with its venv's folder resolved, not the interpreter it links to: a
    subprocess the notebook starts with sys.executable (the lab) must find the venv's packages,
    and a venv reached through a symlink (``.venv -> /elsewhere``) must not vanish behind the
    sandbox's own /tmp, where only the resolved folders are bound."""
    executable = os.path.abspath(sys.executable)
    prefix = os.path.abspath(sys.prefix)
    if os.path.commonpath([executable, prefix]) != prefix:
        return executable
    resolved = os.path.join(os.path.realpath(prefix), os.path.relpath(executable, prefix))
    return resolved if os.path.exists(resolved) else executable


def site_paths():
    """The package folders a sandboxed Python must have on ``sys.path`` (it starts with -S)."""
    return [os.path.realpath(p) for p in sys.path
            if p.rstrip("/").endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]


# What a job reads besides the interpreter: system libraries, fonts, and the CPU description
# that numpy's BLAS looks at. Under bubblewrap /proc and /dev are its own fresh copies.
SYSTEM_FOLDERS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc",
                  "/sys/devices/system/cpu")
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/proc")


def bwrap_prefix(host: "Host"):
    """How to start bwrap: as the unprivileged sandbox user when the grader is root."""
    if not host.bwrap:
        return []
    prefix = [host.bwrap]
    if host.root:
        setpriv = shutil.which("setpriv")
        prefix = [setpriv, f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}",
                  "--clear-groups", "--"] + prefix
    return prefix


def bwrap_arguments(binds_ro, tmpfs=("/tmp",)):
    args = ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL", "--proc", "/proc", "--dev", "/dev"]
    # The empty tmpfs goes first and the binds on top of it: bwrap mounts in order, so a venv
    # or a checkout under /tmp (a CI clone, say) stays visible inside instead of being hidden.
    for folder in tmpfs:
        args += ["--tmpfs", folder]
    for source, target in binds_ro:
        args += ["--ro-bind-try", source, target]
    return args


def probe(allow_bwrap=True) -> Host:
    root = os.geteuid() == 0
    binary = shutil.which("bwrap") if allow_bwrap else None
    if binary and (not root or shutil.which("setpriv")):
        host = Host(root, binary)
        binds = [(p, p) for p in library_paths() + list(SYSTEM_FOLDERS)]
        command = bwrap_prefix(host) + bwrap_arguments(binds) + [
            os.path.realpath(sys.executable), "-I", "-S", "-c", "import sys"]
        try:
            done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=30)
            if done.returncode == 0:
                return host
        except (OSError, subprocess.TimeoutExpired):
            pass
    return Host(root, "")


def make_traversable(paths):
    """Let other users traverse (never list) the folders above the interpreter: under /root
    the sandbox's unprivileged users could not reach Python otherwise. Returns what changed."""
    changed = []
    for path in paths:
        current = os.path.dirname(os.path.realpath(path))
        while current and current != "/":
            try:
                mode = os.stat(current).st_mode
                if not mode & 0o001:
                    os.chmod(current, mode | 0o001)
                    changed.append(current)
            except OSError:
                break
            current = os.path.dirname(current)
    return changed
