"""Landlock: what a job may read and write, on hosts that offer it (Linux 5.13 and later).

In the namespaced mode the mount namespace already hides the grader's files and this is a
second wall; on hosts without namespaces (Docker's default profile) it is the wall that keeps
the grader's venv, output folder and secrets out of a job's reach. Signal scoping (ABI 6)
stops a job from signalling any process outside its own Landlock domain.
Standard library only: it runs inside the sandbox.
"""

import ctypes
import os

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every architecture
_RULE_PATH_BENEATH = 1
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1, 2, 4, 8
_TRUNCATE, _IOCTL_DEV = 1 << 14, 1 << 15
_BIND_TCP, _CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1, 2
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_PR_SET_NO_NEW_PRIVS = 38


class _Ruleset(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi():
    """The Landlock ABI this kernel offers; 0 when none (or a seccomp filter denies it)."""
    try:
        version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _handled_fs(version):
    handled = (1 << 13) - 1  # ABI 1: execute .. make_sym
    if version >= 2:
        handled |= 1 << 13  # refer
    if version >= 3:
        handled |= _TRUNCATE
    if version >= 5:
        handled |= _IOCTL_DEV
    return handled


def restrict(read_paths, write_paths):
    """Confine this process for good: read-only beneath ``read_paths``, read-write beneath
    ``write_paths``, no TCP (ABI 4), no signals or abstract sockets leaving the domain (ABI 6).
    Returns the ABI used; 0 when Landlock is unavailable. Raises OSError if it fails midway."""
    version = abi()
    if version < 1:
        return 0
    libc = _libc()
    handled = _handled_fs(version)
    ruleset = _Ruleset(handled, 0, 0)
    if version >= 4:
        ruleset.net = _BIND_TCP | _CONNECT_TCP
    if version >= 6:
        ruleset.scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL
    size = 24 if version >= 6 else 16 if version >= 4 else 8  # the struct grew with the ABI
    fd = libc.syscall(_CREATE_RULESET, ctypes.byref(ruleset), ctypes.c_size_t(size),
                      ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        rules = [(path, _READ & handled) for path in read_paths]
        rules += [(path, handled) for path in write_paths]
        for path, allowed in rules:
            try:
                parent = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a folder this host lacks grants nothing
            try:
                if not os.path.isdir(path):
                    allowed &= _FILE_RIGHTS
                rule = _PathBeneath(allowed, parent)
                if libc.syscall(_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH),
                                ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(parent)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(fd)
    return version
