"""Run a submission's code cells as the student's Jupyter kernel ran them.

The zygote builds one IPython shell before forking (``warm``), so a job starts with numpy,
matplotlib and IPython already loaded. A job then runs every code cell, in order, in that
shell's namespace, carrying on after errors as "Restart & Run All" with errors allowed
would: decorators, classes, attached methods and computed constants all exist afterwards
exactly as they did in the student's kernel. Three things differ, none of which a graded
function can depend on:

* ``otter`` is a stub: ``grader.check``, ``check_all`` and ``export`` do nothing, because
  every score is decided outside this process;
* figures are never rendered (matplotlib's inline backend with only text output), and are
  closed at the end of each cell as in Jupyter;
* printed output is kept up to a bound, and only what the cells print reaches the feedback:
  nothing printed while the graded functions run on hidden inputs ever leaves the job;
* shell escapes (``!pip install``, ``%%bash``...) start nothing: each is refused and
  remembered for the feedback, and the rest of its cell runs (shell_escapes.py).
"""

import ast
import contextlib
import io
import json
import re
import signal
import sys
import time
import types

from . import shell_escapes

KEPT_OUTPUT_CHARS = 20_000
MAX_MESSAGE_CHARS = 300

# The shell escapes of the warm shell (install's memory), inherited by every job.
_escapes = None


class CellTimeout(BaseException):
    """The notebook's time is up: raised inside the running cell by SIGALRM."""


def warm():
    """Import what every notebook uses and build the shell the jobs inherit."""
    import matplotlib

    matplotlib.use("module://matplotlib_inline.backend_inline")
    import matplotlib.pyplot as plt
    import numpy  # noqa: F401
    from IPython.core.interactiveshell import InteractiveShell
    from matplotlib_inline.backend_inline import configure_inline_support
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False  # no SQLite file, no saving thread across fork
    config.InteractiveShell.xmode = "Minimal"
    config.InteractiveShell.colors = "nocolor"
    shell = InteractiveShell.instance(config=config)
    # IPython copies every write into its history: printing 100 MB would take minutes.
    shell._tee = lambda channel: contextlib.nullcontext()
    shell.display_formatter.active_types = ["text/plain"]  # figures are never drawn
    configure_inline_support(shell, "inline")
    _hide_figures(shell)  # after: configuring the inline backend resets Figure's formatters
    # `%matplotlib inline`, many notebooks' first line, asks the shell for a GUI event loop: a
    # kernel's shell has one to offer, a bare InteractiveShell raises NotImplementedError. The
    # inline backend needs none, so the cell goes on to its imports as in Jupyter.
    shell.enable_gui = lambda gui=None: None
    global _escapes
    _escapes = shell_escapes.install(shell)
    fig, ax = plt.subplots()  # fonts and text layout loaded once, before any fork
    ax.imshow([[0.0, 1.0]], cmap="Blues")
    ax.set_title("warm-up")
    fig.colorbar(ax.images[0])
    fig.tight_layout()
    plt.close(fig)
    _skip_layout()
    return shell


def _skip_layout():
    """``tight_layout`` does nothing in a job.

    It only places the axes for drawing, and no figure of a graded notebook is ever drawn
    (``_hide_figures``); but it measures every label to do so, and a log-scale figure's
    ticks took half of the CPU of the lesson's whole notebook. A figure the student's code
    draws itself (``savefig``) is laid out as it asks: its ``layout=`` still applies.
    """
    from matplotlib.figure import Figure

    def tight_layout(self, *args, **kwargs):
        return None

    Figure.tight_layout = tight_layout


def _hide_figures(shell):
    """A figure shown with ``plt.show()`` (or left open at the end of a cell) prints nothing.

    Drawing nothing, the shell would print the figure's text form, «<Figure size 1300x500
    with 2 Axes>», into what the notebook printed, and the student's feedback would show it:
    English that says nothing. Its text form is made empty, and an empty display is dropped.
    """
    from matplotlib.figure import Figure

    shell.display_formatter.formatters["text/plain"].for_type(Figure, lambda figure, printer, cycle: None)
    publish = shell.display_pub.publish

    def publish_unless_empty(data, *args, **kwargs):
        if data.get("text/plain") == "" and len(data) == 1:
            return None
        return publish(data, *args, **kwargs)

    shell.display_pub.publish = publish_unless_empty


class BoundedOutput(io.TextIOBase):
    """stdout and stderr for student code: keeps the first characters, counts the rest."""

    def __init__(self, keep=KEPT_OUTPUT_CHARS):
        self.keep, self.parts, self.kept, self.total, self.recording = keep, [], 0, 0, True

    def write(self, text):
        text = str(text)
        if self.recording:
            self.total += len(text)
            room = self.keep - self.kept
            if room > 0:
                self.parts.append(text[:room])
                self.kept += min(room, len(text))
        return len(text)

    def writable(self):
        return True

    def isatty(self):
        return False

    @property
    def encoding(self):
        return "utf-8"

    def text(self):
        return "".join(self.parts)


class _GraderStub:
    """What ``otter.Notebook(...)`` returns here: every method does nothing."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def install_otter_stub():
    stub = types.ModuleType("otter")
    stub.__path__ = []  # a package with no submodules: `import otter.x` fails cleanly
    stub.Notebook = _GraderStub
    sys.modules["otter"] = stub


# One cell may use this share of the notebook's time (and at least CELL_MIN_SECONDS): a slow
# experiment cell is stopped and the cells after it still run, so the functions they define
# are graded instead of being reported as missing.
CELL_SHARE = 0.25
CELL_MIN_SECONDS = 10.0


# Where each cell ran: IPython compiles cell n as "<ipython-input-n-…>", and a graded call that
# raises is placed by that number (calls.where_raised). Filled before any hidden input exists.
CELL_POSITIONS = {}


def cell_budget(seconds):
    return max(CELL_MIN_SECONDS, seconds * CELL_SHARE)


def run_cells(shell, cells, seconds, output):
    """Run ``cells`` (sources) in order within ``seconds``, each within ``cell_budget``; the
    errors, as plain data, each numbered as Jupyter numbers the cell after "Restart & Run All".
    A cell over its budget is stopped and recorded as ``slow``; the run goes on. When the
    notebook's whole time is over, the cells not run are recorded with what they define."""
    errors, failed_bindings = [], {}
    budget = cell_budget(seconds)

    def alarm(signum, frame):
        raise CellTimeout()

    previous = signal.signal(signal.SIGALRM, alarm)
    deadline = time.monotonic() + seconds
    try:
        for position, source in enumerate(cells):
            if not source.strip():
                continue
            # The number Jupyter shows beside the cell after "Restart & Run All": [n].
            number = shell.execution_count
            CELL_POSITIONS[number] = position
            if _escapes is not None:
                _escapes.cell = number
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                errors.append(_not_run(number, cells[position:]))
                break
            allowed = min(remaining, budget)
            signal.setitimer(signal.ITIMER_REAL, allowed)
            try:
                result = shell.run_cell(source, store_history=True)
            except CellTimeout:  # raised outside the cell's own code: IPython's machinery
                result = None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            error = _error_of(result)
            if error is None:
                continue
            record = _describe(number, source, error)
            record["position"] = position
            culprit = failed_bindings.get(getattr(error, "name", None))
            if isinstance(error, NameError) and culprit is not None:
                record["knock_on_of"] = culprit  # its name was never bound: not a new mistake
            if record["kind"] == "time" and allowed < remaining:
                record["slow"], record["budget"] = True, int(round(budget))
                record["more"] = any(later.strip() for later in cells[position + 1:])
            errors.append(record)
            for name in _bound_names(source):
                failed_bindings.setdefault(name, number)
            if record["kind"] == "time" and not record.get("slow"):
                errors.append(_not_run(shell.execution_count, cells[position + 1:]))
                break
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        output.recording = False
        if _escapes is not None:
            _escapes.stop()
    return errors


def _not_run(number, sources):
    """The cells the notebook's time did not reach, and the functions they would define."""
    names = []
    for source in sources:
        names += [n for n in _defined_names(source) if n not in names]
    return {"cell": number, "kind": "time", "skipped": True, "defines": names[:50]}


def refused_shell_escapes():
    """The commands the cells asked the system to run, refused: [{"cell", "command"}]."""
    return list(_escapes.refused) if _escapes is not None else []


def _error_of(result):
    if result is None:
        return CellTimeout()
    return result.error_before_exec or result.error_in_exec


def _describe(number, source, error):
    kind = "time" if isinstance(error, CellTimeout) else "error"
    message = "" if kind == "time" else str(error)
    return {"cell": number, "kind": kind, "exception": type(error).__name__,
            "message": message[:MAX_MESSAGE_CHARS], "line": _cell_line(error),
            **where_raised(error),
            "first_line": next((line.strip()[:80] for line in source.splitlines()
                                if line.strip()), ""),
            "defines": _defined_names(source)}


def _defined_names(source):
    """The functions and classes a cell defines at its top level: what it left undefined when
    it failed before reaching them (an import at its top, say). [] for a cell that does not
    parse, whose first line then says what it meant."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))][:50]


def _cell_line(error):
    """The line of the failing cell itself that raised: its outermost frame of a cell (a
    deeper one is a line of a function the cell called, which where_raised says)."""
    tb = getattr(error, "__traceback__", None)
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<ipython-input-"):
            return tb.tb_lineno
        tb = tb.tb_next
    return error.lineno if isinstance(error, SyntaxError) else None


_CELL_FILE = re.compile(r"^<ipython-input-(\d{1,9})-[0-9a-f]+>$")


def where_raised(error):
    """The student's own line the error came out of, the deepest frame of a notebook cell: as
    the cell's position and the line's number, {"at": [position, line]}, or {}. Two small
    integers and never the text, which the grader reads from its own copy of the cells."""
    at, tb = None, getattr(error, "__traceback__", None)
    while tb is not None:
        match = _CELL_FILE.match(tb.tb_frame.f_code.co_filename)
        if match and int(match.group(1)) in CELL_POSITIONS:
            at = [CELL_POSITIONS[int(match.group(1))], tb.tb_lineno]
        tb = tb.tb_next
    return {"at": at} if at else {}


_DEFINES = re.compile(r"^(?:(?:async\s+)?def|class)\s+(\w+)|^(\w+)\s*=[^=]", re.M)


def _bound_names(source):
    """Top-level names a cell binds; a failed cell's names explain later NameErrors. A cell
    that does not even parse still says, line by line, what it meant to define."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return [a or b for a, b in _DEFINES.findall(source)]
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in node.names]
    return names


def export(namespace, names, max_bytes):
    """Each of ``names`` as JSON text, or why it cannot be: the grader parses it as data."""
    exported = {}
    for name in names:
        if name not in namespace:
            exported[name] = {"error": "missing"}
            continue
        try:
            text = json.dumps(namespace[name], ensure_ascii=False, allow_nan=False,
                              sort_keys=True)
        except Exception:  # any value json cannot write, whatever its class does
            exported[name] = {"error": "not_json"}
            continue
        # A lone surrogate ("\ud800") is a str Python holds but UTF-8 cannot write: it becomes
        # "?" (inside a JSON string, so the JSON stays valid) instead of failing the job.
        data = text.encode("utf-8", "replace")
        text = data.decode("utf-8")
        if len(data) > max_bytes:
            exported[name] = {"error": "too_large"}
        else:
            exported[name] = {"json": text}
    return exported
