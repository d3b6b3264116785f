"""Step 2, as root: run each forked child as an unprivileged user that sees only its own folder.

`make grade` executes untrusted notebooks in its own processes. When it runs as root (CI, a
course server), a notebook that called ``os.kill(-1, SIGKILL)`` would kill every process on
the machine, and one that opened ``reference/transformer.py`` would read the answers. So,
exactly as the Otter plugin confines its kernel (``autograder.verify``), each child:

* works in a copy of the submission folder without the reference, the checks or the hidden
  tests (``views.kernel_view``), owned by the kernel user;
* drops to that user for good, under Landlock: read-only access to the interpreter and system
  libraries, read-write access to its own folders, and no signal reaching any process
  outside its sandbox (``jail.enter``).

The hidden tests therefore cannot run in the child; the verifier repeats them outside it, which
is where the code questions' scores come from anyway. Without root nothing changes: the child
stays the grader's user, and the feedback says so.
"""

import shutil
from pathlib import Path
from typing import Optional

from autograder.checks import GRADED_FUNCTIONS
from autograder.verify import jail, privileges, sandbox, views
from autograder.verify.kernel import _read_paths


def kernel_identity() -> Optional[privileges.Identity]:
    """The user children run as when the grader is root (created if missing); None otherwise."""
    identity = privileges.identity(privileges.KERNEL_USER)
    if identity is not None:
        # Under /root the interpreter is unreachable for other users until its ancestors
        # may be traversed (never listed).
        privileges.make_traversable(sandbox.python_paths())
    return identity


def enter_confined_view(folder: Path, workdir: Path, identity: privileges.Identity) -> Path:
    """Build the child's view of ``folder`` inside ``workdir`` and become ``identity`` there.

    ``workdir`` holds the child's report and results; it is handed to the user too. Returns
    the view, now the working directory. Runs in the child, as root, before any student code.
    """
    view = workdir / "view"
    view.mkdir()
    # Every question's hidden tests stay out, as in the plugin: the verifier repeats them all.
    views.kernel_view(folder, view, [test.stem for test in (folder / "tests").glob("*.py")])
    # The full folder holds the reference and the hidden tests: gone before the user gets
    # the working folder.
    shutil.rmtree(folder)
    views.give_to(workdir, identity.uid, identity.gid)
    jail.enter({
        "workdir": str(view),
        "uid": identity.uid,
        "gid": identity.gid,
        "limits": {},  # the engine set the rlimits already
        "landlock": True,
        "isolate_signals": True,
        "read_paths": _read_paths(),
        "write_paths": [str(workdir), "/dev/null"],
    })
    return view


def data_variable_names(bundle) -> tuple:
    """The notebook variables that the zip's data questions (not code questions) take."""
    from autograder.verify.verifier import data_variables

    names = []
    for question in bundle.question_names():
        if question not in GRADED_FUNCTIONS:
            names += [name for name in data_variables(bundle.load_test_file(question))
                      if name not in names]
    return tuple(names)


def isolate_signals():
    """Without root: the child stays the grader's user, but may not signal or trace any
    process outside its own sandbox (Landlock scopes), so ``os.kill(-1, SIGKILL)`` cannot take
    the grader or the machine's other processes with it. A kernel without Landlock signal
    scoping (before Linux 6.12) leaves this to the process-group kill."""
    jail.enter({"landlock": False, "isolate_signals": True})
