"""Confine the current process before it runs student code.

``enter(spec)`` applies, in this order: resource limits, a private working folder, a new
identity (when started as root), death with the parent, and, where the kernel offers it,
Landlock, which hides every file outside the folders the spec names.

This module is standard library only and imports nothing from the kit: the verification
child and the kernel launcher run its *source text* under ``python -I``, from places where the
kit's packages are neither importable nor readable by the confined user.
"""

import ctypes
import os
import resource
import signal

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38

# Landlock (linux/landlock.h). The syscall numbers are the same on every architecture.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1, 2, 4, 8
_FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1, 2
_READ = _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR
_FILE_ONLY = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV

_LIMITS = {
    "cpu_seconds": resource.RLIMIT_CPU,
    "memory_bytes": resource.RLIMIT_AS,
    "file_bytes": resource.RLIMIT_FSIZE,
    "open_files": resource.RLIMIT_NOFILE,
    "processes": resource.RLIMIT_NPROC,
}


class JailError(RuntimeError):
    """The process could not be confined as asked; it must not go on to run student code."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _prctl(option, value):
    if _libc().prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        raise JailError(f"prctl({option}) failed: {os.strerror(ctypes.get_errno())}")


def landlock_abi():
    """The Landlock ABI version this kernel offers, or 0 when it offers none."""
    try:
        version = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                                  ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _handled_fs(abi):
    handled = (1 << 13) - 1  # ABI 1: execute .. make_sym
    if abi >= 2:
        handled |= 1 << 13  # refer
    if abi >= 3:
        handled |= _FS_TRUNCATE
    if abi >= 5:
        handled |= _FS_IOCTL_DEV
    return handled


def _landlock(restrict_files, read_paths, write_paths, deny_network, isolate_signals):
    """Landlock. With ``restrict_files``: read-only beneath ``read_paths``, read-write beneath
    ``write_paths``, nothing elsewhere. Any domain at all already forbids tracing processes
    outside it; ``isolate_signals`` forbids signalling them too. Returns the ABI used (0 when
    Landlock is unavailable or there was nothing to restrict)."""
    abi = landlock_abi()
    if abi < 1 or not (restrict_files or (deny_network and abi >= 4)
                       or (isolate_signals and abi >= 6)):
        return 0
    libc = _libc()
    handled = _handled_fs(abi) if restrict_files else 0
    attr = _RulesetAttr(handled, 0, 0)
    if abi >= 4 and deny_network:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
    if abi >= 6 and isolate_signals:
        # Signals and abstract sockets reach no process outside this sandbox.
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    # The struct grew with the ABI; an older kernel rejects fields it does not know.
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        raise JailError(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        rules = [(path, _READ & handled) for path in read_paths] if restrict_files else []
        rules += [(path, handled) for path in write_paths] if restrict_files else []
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a folder this machine lacks grants nothing
            try:
                if not os.path.isdir(path):
                    access &= _FILE_ONLY
                rule = _PathBeneathAttr(access, fd)
                if libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset),
                                ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                                ctypes.c_uint32(0)) != 0:
                    raise JailError(f"landlock_add_rule({path}): "
                                    f"{os.strerror(ctypes.get_errno())}")
            finally:
                os.close(fd)
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise JailError(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
    return abi


def _set_limits(limits):
    for name, value in limits.items():
        if value is None:
            continue
        which = _LIMITS[name]
        if name == "cpu_seconds":
            # SIGXCPU at the soft limit, SIGKILL one second later if it is caught.
            resource.setrlimit(which, (int(value), int(value) + 1))
        else:
            resource.setrlimit(which, (int(value), int(value)))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _become(uid, gid):
    """Drop to ``uid``/``gid`` for good: no supplementary groups, no saved root identity."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    try:
        os.setuid(0)
    except PermissionError:
        return
    raise JailError("dropping privileges did not stick")


def enter(spec):
    """Confine this process as ``spec`` says; raise ``JailError`` rather than run unconfined.

    ``spec`` keys: ``workdir`` (None: stay); ``uid`` and ``gid`` (used only when running as root);
    ``limits`` (see ``_LIMITS``); ``landlock`` (bool: restrict files to ``read_paths`` and
    ``write_paths``); ``deny_network`` and ``isolate_signals`` (bool); ``parent_pid``.
    Returns a dict describing what was applied, for the grader's report.
    """
    applied = {"uid": os.getuid(), "landlock_abi": 0}
    _set_limits(spec.get("limits", {}))
    os.umask(0o077)
    if spec.get("workdir"):
        os.chdir(spec["workdir"])
    if os.geteuid() == 0 and spec.get("uid") is not None:
        _become(int(spec["uid"]), int(spec["gid"]))
        applied["uid"] = os.getuid()
    # Death with the parent: set after the identity change, which clears it.
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    parent = spec.get("parent_pid")
    if parent is not None and os.getppid() != parent:
        os._exit(70)  # the parent died before the signal was armed
    # Not dumpable: a process of the same user cannot ptrace this one or read its memory.
    _prctl(_PR_SET_DUMPABLE, 0)
    applied["landlock_abi"] = _landlock(
        spec.get("landlock", True), spec.get("read_paths", []), spec.get("write_paths", []),
        spec.get("deny_network", False), spec.get("isolate_signals", False))
    return applied
