"""Find a student's notebook in its folder, read it, and define its functions as the kernel does.

The lab and the validator need the student's functions. Inside the notebook they take the
kernel's own, live (``lab.run_in_notebook``). From a terminal (``python lab.py``) they get the
functions *Restart & Run All* would define: ``restart_and_run_all`` runs every code cell of the
saved notebook, in order, in a fresh IPython shell, and goes on after a failing cell as the
grader's sandbox does. So magics (``%%time``, ``%%capture``), star imports, dataclasses,
closures and helpers defined after the graded cell all behave as in Jupyter, and no reading
of the code can disagree with what the kernel would define. Three things differ from a kernel,
on purpose:

* shell escapes and the magics that start programs (``!pip``, ``%pip``, ``%%bash``...) do
  nothing, with a note: loading a notebook must not install packages or run commands;
* figures are drawn off-screen and never shown;
* the kit's own cells are quiet: ``otter`` is a stand-in whose calls do nothing (no check, no
  export zip), and the lab and the validator, called from inside, return at once.

It also finds *which* notebook is the student's (``find_notebook``): the one a Jupyter or VS
Code kernel says it runs, else the only one of the folder that carries an Otter assignment
name, whatever the file is called, since browsers and LMSs rename downloads.

This file ships to students beside ``lab.py``: standard library, plus IPython (which Jupyter
brings) only to run a notebook, and nbformat only for notebooks older than format 4. Its
messages are in Spanish.
"""

import contextlib
import io
import json
import os
import re
import sys
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

__all__ = ["NotebookCodeError", "read_notebook", "cell_source", "assignment_name",
           "find_notebook", "restart_and_run_all", "NotebookRun", "running_a_notebook"]

# The magics that start a program: under the lab they are skipped, as `!` escapes are. The
# grading sandbox refuses the same (kit_autograder/sandbox/inside/shell_escapes.py), and
# tests/test_shell_escapes.py runs every name of either list through both shells.
_PROGRAM_LINE_MAGICS = ("pip", "conda", "mamba", "micromamba", "uv", "sx", "system", "edit", "ed")
_PROGRAM_CELL_MAGICS = ("bash", "sh", "script", "perl", "ruby", "python", "python2",
                        "python3", "pypy", "system", "sx")
# Not a program, but a file written into the student's folder, which the lab leaves as it was.
_FILE_CELL_MAGICS = ("writefile",)


class NotebookCodeError(Exception):
    """The notebook cannot provide what was asked. The message is meant for the student."""


def read_notebook(notebook: Union[str, Path, dict]) -> dict:
    """A notebook as a dict in format 4, from a path, an nbformat node or a plain dict."""
    if isinstance(notebook, dict):  # nbformat's NotebookNode is a dict too
        return notebook
    path = Path(notebook)
    if not path.is_file():
        raise NotebookCodeError(f"No encuentro el cuaderno «{path}».")
    # Plain JSON first: importing nbformat (and jsonschema behind it) costs more than the lab.
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _unreadable(path, exc) from None
    if isinstance(data, dict) and data.get("nbformat") == 4 and isinstance(data.get("cells"), list):
        return data
    return _read_with_nbformat(path)


def _read_with_nbformat(path: Path) -> dict:
    """Older formats need nbformat's converters; only then is it imported."""
    try:
        import nbformat
    except ImportError:
        raise NotebookCodeError(
            f"«{path.name}» usa un formato de cuaderno antiguo y para leerlo falta el paquete "
            "nbformat. Instálalo con «pip install -r requirements.txt» o abre el cuaderno en "
            "Jupyter y guárdalo de nuevo."
        ) from None
    try:
        return nbformat.read(str(path), as_version=4)
    except Exception as exc:  # nbformat raises several unrelated types for a broken file
        raise _unreadable(path, exc) from None


def _unreadable(path: Path, exc: Exception) -> NotebookCodeError:
    return NotebookCodeError(
        f"No puedo leer «{path.name}» como cuaderno de Jupyter ({type(exc).__name__}). "
        "Ábrelo en Jupyter y guárdalo de nuevo."
    )


def cell_source(cell: dict) -> str:
    """A cell's source as one string (the JSON may hold a list of lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def assignment_name(path: Union[str, Path]) -> Optional[str]:
    """The Otter assignment name in a notebook file's metadata, or None."""
    try:
        metadata = read_notebook(path).get("metadata", {})
    except NotebookCodeError:
        return None
    otter = metadata.get("otter") if isinstance(metadata, dict) else None
    name = otter.get("assignment_name") if isinstance(otter, dict) else None
    return name if isinstance(name, str) else None


def kernel_notebook() -> Optional[Path]:
    """The notebook this Python process runs as a kernel for, when the front end says so.

    Jupyter Server sets ``JPY_SESSION_NAME`` in the kernel's environment; VS Code defines
    ``__vsc_ipynb_file__`` in the kernel's namespace. A plain ``python lab.py`` has neither.
    """
    main = sys.modules.get("__main__")
    candidates = [getattr(main, "__vsc_ipynb_file__", None), os.environ.get("JPY_SESSION_NAME")]
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.endswith(".ipynb"):
            path = Path(candidate)
            for option in (path, Path.cwd() / path.name):
                if option.is_file():
                    return option
    return None


def find_notebook(folder: Union[str, Path], assignment: Optional[str] = None,
                  defines=()) -> Path:
    """The student's notebook in ``folder``, whatever its name; a Spanish error if unsure.

    In order: the notebook this kernel runs (inside Jupyter or VS Code); the only notebook of
    the folder whose metadata carries ``assignment`` (with ``assignment=None``, any Otter
    assignment: the class's tour carries none), narrowed, if there are several, to those whose
    code defines every function of ``defines`` (another class's notebook in the same folder
    does not); the only notebook of the folder at all.
    """
    folder = Path(folder)
    own = kernel_notebook()
    if own is not None and own.resolve().parent == folder.resolve():
        return own
    notebooks = sorted(folder.glob("*.ipynb"))
    names = {path: assignment_name(path) for path in notebooks}
    ours = [path for path, name in names.items()
            if (name == assignment if assignment else name is not None)]
    if len(ours) > 1 and defines:
        ours = [path for path in ours if _defines_all(path, defines)] or ours
    if len(ours) == 1:
        return ours[0]
    if not ours and len(notebooks) == 1:
        return notebooks[0]
    if not notebooks:
        raise NotebookCodeError(f"No hay ningún cuaderno .ipynb en la carpeta «{folder}».")
    listed = ", ".join(f"«{path.name}»" for path in (ours or notebooks))
    raise NotebookCodeError(
        f"Hay varios cuadernos de esta tarea en «{folder}» ({listed}) y no sé cuál es el tuyo. "
        "Deja solo uno en la carpeta: mueve o borra las copias."
    )


def _defines_all(path: Path, functions) -> bool:
    try:
        code = "\n".join(cell_source(cell) for cell in read_notebook(path).get("cells", [])
                         if isinstance(cell, dict) and cell.get("cell_type") == "code")
    except NotebookCodeError:
        return False
    return all(f"def {name}(" in code for name in functions)


# --- Restart & Run All, in this process -------------------------------------------------------


@dataclass
class NotebookRun:
    """What running a notebook's cells left behind."""

    namespace: dict
    errors: list = field(default_factory=list)  # [(the cell's first line, the error's one line)]
    skipped: list = field(default_factory=list)  # Spanish notes: shell lines not run

    def failed_cell_defining(self, name: str) -> Optional[str]:
        """The one-line error of a failed cell that was meant to define ``name``, if any."""
        return next((error for defines, error in self._failures if name in defines), None)

    _failures: list = field(default_factory=list, repr=False)  # [(names it defines, error)]


# IPython's name for a cell's code, which means nothing to a student.
_IPYTHON_FILE = re.compile(r"\s*\(<ipython-input-\d+-[0-9a-f]+>, line (\d+)\)")
_LOADING = []  # non-empty while restart_and_run_all runs: the kit's cells inside stay quiet


def running_a_notebook() -> bool:
    """True while ``restart_and_run_all`` runs a notebook's cells (the lab's own cell in
    that notebook must not start the lab again)."""
    return bool(_LOADING)


def restart_and_run_all(notebook, *, output=None) -> NotebookRun:
    """Run the saved notebook's code cells in order in a fresh IPython shell, as *Restart &
    Run All* does, going on after a failing cell. What the cells print goes to ``output``
    (discarded by default: the lab's stdout is its JSON, and the errors are kept apart)."""
    nb = read_notebook(notebook)
    sources = [cell_source(cell) for cell in nb.get("cells", [])
               if isinstance(cell, dict) and cell.get("cell_type") == "code"]
    shell = _fresh_shell()
    run = NotebookRun(shell.user_ns)
    import matplotlib.pyplot as plt

    figures_before = set(plt.get_fignums())
    folder = Path(notebook).resolve().parent if isinstance(notebook, (str, Path)) else Path.cwd()
    output = output if output is not None else io.StringIO()
    with _quiet_kit(), contextlib.chdir(folder), contextlib.redirect_stdout(output), \
            contextlib.redirect_stderr(output), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _without_programs(shell, run.skipped)
        for source in sources:
            if not source.strip():
                continue
            result = shell.run_cell(source, store_history=False, silent=False)
            error = result.error_before_exec or result.error_in_exec
            if error is not None:
                line = _IPYTHON_FILE.sub(r" (línea \1)", f"{type(error).__name__}: {error}")
                line = line.strip().rstrip(":")
                # The cell's first line, which the student can find; Jupyter shows no number.
                first = next(text.strip() for text in source.splitlines() if text.strip())
                run.errors.append((first[:80], line))
                run._failures.append((_defined_names(source), line))
        # As Jupyter does after each cell: the figures the notebook drew are closed, so that
        # the process that loaded it (a test, the validator) never finds them open.
        for number in set(plt.get_fignums()) - figures_before:
            plt.close(number)
    return run


def _fresh_shell():
    try:
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config
    except ImportError:
        raise NotebookCodeError(
            "Para ejecutar tu cuaderno fuera de Jupyter falta el paquete IPython. Instala lo que "
            "necesita la clase con «pip install -r requirements.txt»."
        ) from None
    import matplotlib

    matplotlib.use("Agg")  # figures are drawn off-screen, never shown in a window
    config = Config()
    config.HistoryManager.enabled = False  # no SQLite file in the student's home
    config.InteractiveShell.xmode = "Minimal"
    config.InteractiveShell.colors = "nocolor"
    if InteractiveShell.initialized():
        # Already inside IPython (a test, a kernel): a shell of its own, never the running one.
        shell = InteractiveShell(config=config)
    else:
        shell = InteractiveShell.instance(config=config)
        shell.user_ns.clear()
        shell.init_user_ns()
    shell.enable_gui = lambda gui=None: None  # `%matplotlib inline` needs no event loop here
    return shell


def _without_programs(shell, notes):
    """Shell escapes and program-starting magics do nothing, and say so once each."""

    def skipped(what):
        def note(*args, **kwargs):
            line = " ".join(str(a) for a in args if isinstance(a, str))[:80]
            notes.append(f"no se ha ejecutado la orden de terminal «{what}{line}»: fuera de "
                         "Jupyter, lab.py no instala paquetes ni ejecuta programas")
            return None
        return note

    shell.system = skipped("!")
    shell.system_piped = shell.system_raw = shell.system
    shell.getoutput = skipped("!")
    for name in _PROGRAM_CELL_MAGICS + _FILE_CELL_MAGICS:
        shell.register_magic_function(skipped(f"%%{name} "), "cell", name)
    for name in _PROGRAM_LINE_MAGICS:
        shell.register_magic_function(skipped(f"%{name} "), "line", name)


class _OtterStandIn:
    """``otter.Notebook(...)`` while a notebook is loaded: every call does nothing."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


@contextlib.contextmanager
def _quiet_kit():
    """``otter`` is a stand-in, and the lab and validator know they run inside, until the end."""
    stand_in = types.ModuleType("otter")
    stand_in.__path__ = []
    stand_in.Notebook = _OtterStandIn
    saved = sys.modules.get("otter")
    sys.modules["otter"] = stand_in
    _LOADING.append(True)
    try:
        yield
    finally:
        _LOADING.pop()
        if saved is None:
            sys.modules.pop("otter", None)
        else:
            sys.modules["otter"] = saved


def _defined_names(source: str) -> tuple:
    """The functions and classes a cell defines at its top level, or that it meant to (a
    cell that does not parse still says, line by line, what it was for)."""
    import ast
    import re

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return tuple(a or b for a, b in re.findall(r"^(?:async\s+)?def\s+(\w+)|^class\s+(\w+)",
                                                   source, re.M))
    return tuple(node.name for node in tree.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))



# --- the written answers ----------------------------------------------------------------------
#
# Otter writes the built student notebook's manual questions as Markdown between two HTML
# comments: the cell that opens with ``<!-- BEGIN QUESTION -->`` holds the question, the cells
# after it, up to the cell holding ``<!-- END QUESTION -->``, are the student's answer (the
# first one holding the prompt's placeholder). The grader reads them from the submitted JSON;
# «Entrega» reads the same cells to warn about an answer still empty.

ANSWER_BEGIN = "<!-- BEGIN QUESTION -->"
ANSWER_END = "<!-- END QUESTION -->"
# The prompt the master gives every answer cell (its «BEGIN PROMPT» block); a test checks the
# built notebook still carries exactly this.
ANSWER_PLACEHOLDER = "_Escribe aquí tu respuesta._"


def _json_source(cell) -> str:
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def answer_regions(cells) -> list:
    """The cells of each marked question's answer, in the notebook's order."""
    found, current = [], None
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = _json_source(cell)
        if current is not None and ANSWER_END in source:
            found.append(current)
            current = None
        if ANSWER_BEGIN in source:
            current = []
            if source.rfind(ANSWER_END) > source.rfind(ANSWER_BEGIN):  # no answer cell
                found.append(current)
                current = None
            continue
        if current is not None:
            current.append(cell)
    if current is not None:  # a notebook that ends inside its last question
        found.append(current)
    return found


def _fenced(text: str, language: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _answer_cell_text(cell) -> str:
    source = _json_source(cell)
    kind = cell.get("cell_type")
    if kind == "markdown":
        return "\n".join(line for line in source.splitlines()
                         if line.strip() != ANSWER_PLACEHOLDER)
    if not source.strip():
        return ""
    return _fenced(source, "python" if kind == "code" else "")


def answer_text(cells) -> str:
    """One answer's text, as Markdown: its Markdown cells without the placeholder, its code
    cells fenced; empty when the student wrote nothing."""
    return "\n\n".join(t for t in (_answer_cell_text(c) for c in cells) if t.strip())
