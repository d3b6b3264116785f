"""Confine one job, in the freshly forked process that will run a student's notebook.

The zygote (zygote.py) never runs student code; each job is a fork of it that calls
``enter(plan)`` before anything else. What the host allows decides how strong the walls are,
and ``probe()`` finds out once per batch:

* **namespaces** (a host with user namespaces, or root with CAP_SYS_ADMIN): the job gets its
  own user, PID, network, IPC, UTS and mount namespaces. Its first process is PID 1 of its
  PID namespace, so when it ends the kernel kills every process the job started, whatever
  they did (``setsid``, double forks, a subreaper of their own). The network namespace has
  no interface but a down loopback: nothing reaches the host or the Internet, UDP included.
  Its working folder and ``/tmp`` are size-capped tmpfs mounts that vanish with the job. It
  may not create nested user or mount namespaces (which could mount unbounded tmpfs), and it
  keeps no capability.
* **uid** (root without namespaces, as in Docker's default profile): the job runs as a user
  id of its own, so its processes can be found and killed by uid, and it cannot write the
  grader's files. A seccomp filter denies Internet sockets.
* **none** (neither): the job runs as the grader's user, in its own session; the zygote is
  a subreaper, so orphans come back to it and are killed. A seccomp filter denies Internet
  sockets.

In every mode: resource limits, no new privileges, and Landlock where the kernel offers it
(read-only interpreter and libraries, read-write scratch, no signal leaving the domain).
Standard library only: it runs inside the sandbox.
"""

import ctypes
import os
import resource
import select
import signal
import sys

from . import landlock, seccomp

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
_NAMESPACES = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE = 1, 24, 38, 4
CAP_LAST = 63

_libc = ctypes.CDLL(None, use_errno=True)


class ConfinementError(RuntimeError):
    """The job could not be confined as planned: it must not run student code."""


def _check(result, what):
    if result != 0:
        raise ConfinementError(f"{what}: {os.strerror(ctypes.get_errno())}")


# --- what the host allows ---------------------------------------------------------------------


def probe():
    """``"userns"``, ``"rootns"`` or ``None``: which namespaces a job could create here. Tried
    in a throwaway child, because unshare changes the caller for good."""
    for kind in ("userns", "rootns"):
        if kind == "rootns" and os.geteuid() != 0:
            continue
        pid = os.fork()
        if pid == 0:
            try:
                flags = _NAMESPACES | (CLONE_NEWUSER if kind == "userns" else 0)
                if kind == "userns" and os.geteuid() == 0:
                    _become(65534, 65534)  # as a job would: its own user first
                os._exit(0 if _libc.unshare(flags) == 0 else 1)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            return kind
    return None


# --- entering ---------------------------------------------------------------------------------


def enter(plan):
    """Confine the calling process (a fresh fork of the zygote) as ``plan`` says.

    ``plan`` keys: ``namespaces`` ("userns", "rootns" or None), ``uid``/``gid`` (a job user
    when the zygote is root, else None), ``scratch`` (the working folder), ``scratch_mb``,
    ``read_paths`` (for Landlock), ``limits`` (rlimits). Returns a dict of what applied. With
    namespaces, the caller continues as PID 1 of the job; its parent only relays the status.
    """
    applied = {"namespaces": None, "landlock": 0, "network": None, "uid": os.getuid()}
    os.setsid()
    _set_limits(plan["limits"])
    os.umask(0o077)
    uid, gid = plan.get("uid"), plan.get("gid")
    kind = plan.get("namespaces")
    if kind == "userns" and uid is not None:
        _become(uid, gid)  # the job's user first, so its user namespace maps that user
    if kind:
        # The zygote is not dumpable, and changing uid resets it too; a job must be dumpable
        # to write its own /proc/self/uid_map.
        _check(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "dumpable")
        _unshare(kind)
        _fork_into_pid_namespace()  # returns in the new PID 1
        _private_mounts(plan)
        applied["namespaces"], applied["network"] = kind, "namespace"
    if uid is not None and os.geteuid() == 0:
        _become(uid, gid)
    _drop_capabilities()
    os.chdir(plan["scratch"])
    if not kind:
        try:
            seccomp.install(seccomp.NO_NETWORK)
            applied["network"] = "seccomp"
        except (seccomp.SeccompUnavailable, OSError):
            applied["network"] = None
    try:
        # /dev/null is written to by any subprocess started with stdout=DEVNULL.
        applied["landlock"] = landlock.restrict(plan["read_paths"],
                                                [plan["scratch"], plan["tmp"], "/dev/null"])
    except OSError as exc:
        raise ConfinementError(f"Landlock failed midway: {exc}") from None
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    # Not dumpable again: a process of the same uid outside the job cannot ptrace it.
    _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "dumpable")
    applied["uid"] = os.getuid()
    return applied


def _unshare(kind):
    uid, gid = os.getuid(), os.getgid()
    flags = _NAMESPACES | (CLONE_NEWUSER if kind == "userns" else 0)
    _check(_libc.unshare(flags), "unshare")
    if kind == "userns":
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"{gid} {gid} 1")


def _fork_into_pid_namespace():
    """After unshare(CLONE_NEWPID) only children enter the new namespace: fork, and let this
    process wait and relay the child's end, as the zygote's view of the job."""
    alive_r, alive_w = os.pipe()  # closed only when the relay dies
    pid = os.fork()
    if pid:
        os.close(alive_r)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except ChildProcessError:
                os._exit(70)
            except InterruptedError:
                continue
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status)
                 else 128 + os.WTERMSIG(status))
    os.close(alive_w)
    # PID 1 dies with its relay, and the kernel then kills the whole namespace. Its parent
    # is invisible from inside (getppid() is 0), so the pipe tells whether it is still alive.
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    readable, _, _ = select.select([alive_r], [], [], 0)
    os.close(alive_r)
    if readable:
        os._exit(70)


def _mount(source, target, fstype, flags, options):
    _check(_libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                       flags, options.encode() if options else None), f"mount {target}")


def _private_mounts(plan):
    _mount("none", "/", None, MS_REC | MS_PRIVATE, None)
    size = f"size={int(plan['scratch_mb'])}m,nr_inodes={int(plan['scratch_inodes'])},mode=0700"
    for folder in (plan["scratch"], plan["tmp"]):
        os.makedirs(folder, exist_ok=True)
        _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, size)
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    except ConfinementError:
        pass  # the PID namespace still hides every other process from kill()
    # No nested user or mount namespace: they could mount tmpfs outside every limit.
    for name in ("max_user_namespaces", "max_mnt_namespaces"):
        try:
            with open(f"/proc/sys/user/{name}", "w") as f:
                f.write("0")
        except OSError:
            if name == "max_user_namespaces" and plan.get("namespaces") == "userns":
                raise ConfinementError("cannot forbid nested user namespaces") from None


def _become(uid, gid):
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.geteuid() == 0 or os.getuid() == 0:
        raise ConfinementError("dropping to the job's user did not stick")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _drop_capabilities():
    for cap in range(CAP_LAST + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails for unknown caps; harmless
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def _mapped_bytes():
    """This process's address space now: the warm interpreter's libraries and heap."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _set_limits(limits):
    # The memory limit counts from what the zygote had already mapped (numpy, matplotlib and
    # IPython reserve far more address space than they use): a process that asks for more
    # than MEMORY_MB on top gets a MemoryError in its cell, before the zygote's poll of the
    # whole job's resident memory would have to kill it.
    limits = dict(limits)
    if limits.get("address_space"):
        limits["address_space"] += _mapped_bytes()
    names = {"address_space": resource.RLIMIT_AS, "cpu_seconds": resource.RLIMIT_CPU,
             "processes": resource.RLIMIT_NPROC, "file_bytes": resource.RLIMIT_FSIZE,
             "open_files": resource.RLIMIT_NOFILE}
    for name, value in limits.items():
        if value is None:
            continue
        which = names[name]
        _, hard = resource.getrlimit(which)
        soft = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        # CPU: SIGXCPU at the soft limit, SIGKILL a second later if the signal is caught.
        new_hard = soft + 1 if name == "cpu_seconds" and hard == resource.RLIM_INFINITY else soft
        resource.setrlimit(which, (soft, max(new_hard, soft)))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # A file grown past RLIMIT_FSIZE fails the write instead of killing the job.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def die_with_parent():
    """The zygote's jobs die if the zygote dies (the grader kills the zygote to stop all)."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


if sys.platform != "linux":  # pragma: no cover
    raise ImportError("the sandbox needs Linux")
