"""A seccomp filter for the hosts where no network namespace can be made.

Without a network namespace (Docker's default profile on Gradescope and in `otter grade`
denies ``unshare``), a job could still open Internet sockets, UDP included. This filter lets
a job use only local (``AF_UNIX``) sockets: ``socket()`` with any other family fails with
EACCES, and ``io_uring_setup`` (whose operations can open sockets without ``socket()``)
fails with ENOSYS. Everything else is allowed.

``deny(...)`` is a small builder of classic BPF programs, also used by the tests to imitate
Docker's profile (``unshare``, ``setns``, namespace flags of ``clone``, Landlock).
Standard library only: it runs inside the sandbox.
"""

import ctypes
import errno
import os
import platform
import struct

_ARCH = {  # AUDIT_ARCH_* and the syscall numbers that differ between architectures
    "x86_64": (0xC000003E, {"socket": 41, "clone": 56, "unshare": 272, "setns": 308,
                            "mount": 165}),
    "aarch64": (0xC00000B7, {"socket": 198, "clone": 220, "unshare": 97, "setns": 268,
                             "mount": 40}),
}
_COMMON = {"io_uring_setup": 425, "clone3": 435, "landlock_create_ruleset": 444,
           "landlock_add_rule": 445, "landlock_restrict_self": 446}

_LD_W_ABS, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH_OFFSET, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (little-endian arg0)
_X32_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
AF_UNIX = 1


class SeccompUnavailable(OSError):
    """The kernel (or an outer filter) refused the filter, or this architecture is unknown."""


def syscall_number(name):
    arch = _ARCH.get(platform.machine())
    if arch is None:
        raise SeccompUnavailable(f"unknown architecture {platform.machine()}")
    return arch[1].get(name, _COMMON.get(name))


def _op(code, k, jt=0, jf=0):
    return struct.pack("=HBBI", code, jt, jf, k)


def program(rules):
    """Classic BPF for ``rules``: (syscall name, errno, condition) where condition is None
    (always), ("arg0_not", value) or ("arg0_any_bit", mask)."""
    arch_id = _ARCH[platform.machine()][0]
    ops = [
        _op(_LD_W_ABS, _ARCH_OFFSET),
        _op(_JEQ, arch_id, jt=1),  # a foreign ABI gets no syscalls at all
        _op(_RET, _RET_ERRNO | errno.EPERM),
        _op(_LD_W_ABS, _NR),
        _op(0x35, _X32_BIT, jt=0, jf=1),  # JGE: x32 numbers alias the native ones
        _op(_RET, _RET_ERRNO | errno.EPERM),
    ]
    for name, error, condition in rules:
        nr = syscall_number(name)
        deny = _op(_RET, _RET_ERRNO | error)
        if condition is None:
            ops += [_op(_JEQ, nr, jf=1), deny]
        elif condition[0] == "arg0_not":
            ops += [_op(_JEQ, nr, jf=4), _op(_LD_W_ABS, _ARG0),
                    _op(_JEQ, condition[1], jf=1), _op(_RET, _RET_ALLOW), deny]
        elif condition[0] == "arg0_any_bit":
            ops += [_op(_JEQ, nr, jf=4), _op(_LD_W_ABS, _ARG0),
                    _op(_JSET, condition[1], jf=1), deny, _op(_RET, _RET_ALLOW)]
        else:
            raise ValueError(f"unknown condition {condition!r}")
    ops.append(_op(_RET, _RET_ALLOW))
    return b"".join(ops)


def install(rules):
    """Apply a filter to this thread and every process it starts; irreversible."""
    code = program(rules)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SeccompUnavailable(os.strerror(ctypes.get_errno()))
    fprog = SockFprog(len(code) // 8, code)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise SeccompUnavailable(os.strerror(ctypes.get_errno()))


# Only local sockets: the job's network when no network namespace could be made.
NO_NETWORK = [("socket", errno.EACCES, ("arg0_not", AF_UNIX)),
              ("io_uring_setup", errno.ENOSYS, None)]
