"""Run a command as Docker's default profile leaves a container (Gradescope, `otter grade`).

    python tests/docker_like.py COMMAND...

As root, but without CAP_SYS_ADMIN, and under a seccomp filter that denies what Docker's
default profile denies to such a process: new namespaces (``unshare``, ``setns``, the
namespace flags of ``clone``, ``clone3``), ``mount``, and here Landlock too, the worst case.
The kit must then fall back to its degraded mode (a uid per job, seccomp against sockets).
"""

import errno
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autograder"))
from kit_autograder.sandbox.inside import seccomp  # noqa: E402

NAMESPACE_FLAGS = (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
                   | 0x20000000 | 0x40000000)
RULES = [("unshare", errno.EPERM, None), ("setns", errno.EPERM, None),
         ("mount", errno.EPERM, None), ("clone", errno.EPERM, ("arg0_any_bit", NAMESPACE_FLAGS)),
         ("clone3", errno.ENOSYS, None), ("landlock_create_ruleset", errno.ENOSYS, None),
         ("landlock_add_rule", errno.ENOSYS, None), ("landlock_restrict_self", errno.ENOSYS, None)]

if __name__ == "__main__":
    seccomp.install(RULES)
    os.execvp("setpriv", ["setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin",
                          "--"] + sys.argv[1:])
