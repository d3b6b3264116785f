"""Shell escapes in a submission: refused without starting anything, remembered, and the cell
goes on, as in a kernel with no network where the command only fails.

A notebook asks the system to run commands in many ways: ``!pip install numpy``, ``!!ls``,
``files = !ls``, ``%pip``, ``%conda``, ``%sx``, ``%system``, aliases such as ``%ls``, and cell
magics such as ``%%bash``, ``%%sh`` or ``%%script``. IPython sends every line form through two
methods of the shell (``system`` and ``getoutput``) and every cell form through a cell magic.
In the sandbox's shell these answer here: nothing is spawned (so no new way out of the
sandbox), the command is remembered for the feedback, and the rest of the cell runs. Before
this, the sandbox's IPython tried to open a pty it does not have, raised ``OSError: out of pty
devices`` and stopped the cell, so a ``%pip install`` on the first line of the imports cell
left numpy unimported.

Only what the notebook's cells ask for is remembered: once the cells have run (``stop``), the
graded calls on hidden inputs cannot add anything to what leaves the job.
"""

from IPython.utils.text import SList

# Line magics that would run a package manager or an editor, beyond those that go through
# ``system`` and ``getoutput``: some print English or refuse outside conda before getting there.
LINE_MAGICS = ("pip", "conda", "mamba", "micromamba", "uv", "edit", "ed")
# Cell magics that run their cell in another program. IPython makes one per interpreter it knows.
CELL_MAGICS = ("script", "sh", "bash", "perl", "ruby", "python", "python2", "python3", "pypy")
MAX_REMEMBERED = 50
MAX_COMMAND_CHARS = 80
NOT_RUN = 127  # `_exit_code` after a refused command: the shells' "command not found"


class ShellEscapes:
    """What this job's cells asked the system to run, cell by cell."""

    def __init__(self):
        self.cell = None  # the number of the cell that runs now
        self.refused = []  # {"cell": n, "command": text}
        self.recording = True

    def refuse(self, command):
        text = " ".join(str(command).split())
        if self.recording and len(self.refused) < MAX_REMEMBERED:
            if len(text) > MAX_COMMAND_CHARS:
                text = text[:MAX_COMMAND_CHARS - 1] + "…"
            self.refused.append({"cell": self.cell, "command": text})

    def stop(self):
        self.recording = False


def install(shell):
    """Make every shell escape of ``shell`` refuse and remember; returns the memory."""
    escapes = ShellEscapes()

    def system(command, *args, **kwargs):
        escapes.refuse(f"!{command}")
        shell.user_ns["_exit_code"] = NOT_RUN

    def getoutput(command, *args, **kwargs):
        escapes.refuse(f"!{command}")
        return SList()

    shell.system = shell.system_piped = shell.system_raw = system
    shell.getoutput = getoutput
    manager = shell.magics_manager
    for kind, names in (("line", LINE_MAGICS), ("cell", CELL_MAGICS)):
        for name in names:
            # Load IPython's own first (magics load lazily, on first use), so that it cannot
            # replace this one later.
            (shell.find_line_magic if kind == "line" else shell.find_cell_magic)(name)
            getattr(manager, "lazy_magics", {}).pop(name, None)
            shell.register_magic_function(_refusal(escapes, kind, name), kind, name)
    return escapes


def _refusal(escapes, kind, name):
    if kind == "line":
        def line_magic(line):
            escapes.refuse(f"%{name} {line}".rstrip())
        return line_magic

    def cell_magic(line, cell):
        escapes.refuse(f"%%{name} {line}".rstrip())
    return cell_magic
