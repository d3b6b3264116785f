"""Who runs student code when the grader is root, and what that user can reach.

Gradescope and CI run the autograder as root, so student code would run as root too. Here
the kernel and the verification children each get their own system user (``kit-kernel``,
``kit-verify``), created on first use. Two users rather than one, so that whatever a kernel
leaves behind cannot signal, trace or wait for a verification child. The grading folder is
made private to root, and only the folders holding the interpreter are made traversable.

When the grader is not root none of this is possible: ``identity`` returns None and the
callers say so in their reports.
"""

import grp
import os
import pwd
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

KERNEL_USER = "kit-kernel"
VERIFY_USER = "kit-verify"
FALLBACK_USER = "nobody"


@dataclass(frozen=True)
class Identity:
    """An unprivileged user that student code runs as."""

    name: str
    uid: int
    gid: int
    dedicated: bool  # a user of the kit's own, whose process count may be capped


def is_root() -> bool:
    return os.geteuid() == 0


def _lookup(name) -> Optional[Identity]:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    return Identity(name, entry.pw_uid, entry.pw_gid, name != FALLBACK_USER)


def _create_system_user(name):
    subprocess.run(["useradd", "--system", "--user-group", "--no-create-home",
                    "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name],
                   capture_output=True, timeout=30)


def identity(name) -> Optional[Identity]:
    """The user ``name`` (created if missing) when running as root; None otherwise.

    Falls back to ``nobody`` when the user cannot be created, which still drops root but
    shares the uid with other software, so its process count is never capped.
    """
    if not is_root():
        return None
    found = _lookup(name)
    if found is None:
        try:
            _create_system_user(name)
        except (OSError, subprocess.SubprocessError):
            pass
        found = _lookup(name)
    if found is None or found.uid == 0:
        found = _lookup(FALLBACK_USER)
    if found is None:
        raise RuntimeError(f"no unprivileged user to run student code as ({name})")
    if found.gid == 0:
        found = Identity(found.name, found.uid, grp.getgrnam("nogroup").gr_gid, found.dedicated)
    return found


def make_private(folder) -> bool:
    """Make ``folder`` (the grading root) reachable by its owner only. True if it changed."""
    folder = Path(folder)
    mode = stat.S_IMODE(folder.stat().st_mode)
    if mode & 0o077:
        folder.chmod(mode & 0o700)
        return True
    return False


def make_traversable(paths) -> list:
    """Give others the right to *traverse* (never list or read) each ancestor of ``paths``.

    On Gradescope the interpreter lives under ``/root/miniforge3``, and ``/root`` is 0700:
    without this the unprivileged users could not start Python at all. Returns the folders
    whose mode changed, for the report.
    """
    changed = []
    for path in paths:
        for folder in reversed(Path(os.path.realpath(path)).parents):
            mode = stat.S_IMODE(folder.stat().st_mode)
            if not mode & stat.S_IXOTH:
                folder.chmod(mode | stat.S_IXOTH)
                changed.append(str(folder))
    return changed


def private_folder(base, owner: Optional[Identity], prefix) -> Path:
    """A new folder in ``base`` owned by ``owner`` (or by this process), mode 0700."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    if owner is not None:
        os.chown(folder, owner.uid, owner.gid)
    return folder
