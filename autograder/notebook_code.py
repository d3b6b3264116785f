"""Pull a student's function definitions out of a notebook without running its other cells.

The lab, the validator and the out-of-kernel verifier all need the student's functions but
none of the notebook's demo code (plots, prints, random draws, grader calls). So this module
reads the notebook's JSON, parses each code cell with ``ast``, and keeps only the top-level
statements that *bind* something a requested function needs:

* ``def`` and ``class`` statements, with their decorators;
* ``import`` statements;
* assignments to plain names (``EPS = 1e-9``, ``NEG_INF = -np.inf``, ``relu = lambda z: ...``,
  ``row_softmax = partial(softmax, axis=-1)``), since a function may read one;
* statements that change something bound above in place (``setattr(Attention, "__call__",
  forward)``, ``Attention.forward = forward``, ``CONFIG["eps"] = 1e-6``): d2l's way of adding
  methods to a class, and the notebook's way of configuring a helper.

Only what a requested function needs is kept, transitively, so a demo cell's plots and draws
never run unless a function reads their result. Those statements run, in notebook order, in a
fresh namespace that already holds numpy as ``np``. When a name is bound twice, the later
binding (and what changes it afterwards) wins, as when the notebook runs from top to bottom. Cells that do not parse are skipped, and IPython magics and shell lines are
blanked out first, so one broken cell costs only its own definitions.

It also finds *which* notebook is the student's (``find_notebook``): the one a Jupyter or VS
Code kernel says it runs, else the only one in the folder that carries the assignment's Otter
name, whatever the file is called, since browsers and LMSs rename downloads.

This file ships to students beside ``lab.py``, so it needs only the standard library and
numpy (nbformat only for notebooks older than format 4), and its messages are in Spanish.
"""

import ast
import builtins
import json
import os
import re
import symtable
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Union

import numpy as np

__all__ = ["NotebookCodeError", "read_notebook", "extract_definitions", "load_functions",
           "find_notebook", "assignment_name"]

# Each cell's code is compiled under this file name, so a failure can be traced to its cell.
CELL_FILENAME = "<celda {number}>"
CELL_FILENAME_PATTERN = re.compile(r"^<celda (\d+)>$")

# IPython syntax that is not Python: `%magic`, `!shell`, `x = !ls`, `obj?` and `obj??`.
_IPYTHON_LINE = re.compile(
    r"""^(?P<indent>\s*)(?:
          [%!]                              # line magic or shell escape
        | [\w.,\s]+=\s*[%!]                 # x = !ls   /   t = %timeit f()
        | [\w.]+\s*\?{1,2}\s*$              # np.sum?
    )""",
    re.VERBOSE,
)


class NotebookCodeError(Exception):
    """The notebook cannot provide what was asked. The message is meant for the student."""


@dataclass(frozen=True)
class _Binding:
    """One top-level statement of a cell and the names it binds."""

    names: tuple
    node: ast.stmt
    cell: int  # 1-based position of the cell in the notebook
    source: str  # the cell's source after blanking IPython lines


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
    return otter.get("assignment_name") if isinstance(otter, dict) else None


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


def find_notebook(folder: Union[str, Path], assignment: str) -> Path:
    """The student's notebook in ``folder``, whatever its name; a Spanish error if unsure.

    In order: the notebook this kernel runs (inside Jupyter or VS Code); the only notebook of
    the folder whose metadata carries ``assignment``; the only notebook of the folder at all.
    """
    folder = Path(folder)
    own = kernel_notebook()
    if own is not None and own.resolve().parent == folder.resolve():
        return own
    notebooks = sorted(folder.glob("*.ipynb"))
    ours = [path for path in notebooks if assignment_name(path) == assignment]
    if len(ours) == 1:
        return ours[0]
    if not ours and len(notebooks) == 1:
        return notebooks[0]
    if not notebooks:
        raise NotebookCodeError(f"No hay ningún cuaderno .ipynb en la carpeta «{folder}».")
    names = ", ".join(f"«{path.name}»" for path in (ours or notebooks))
    raise NotebookCodeError(
        f"Hay varios cuadernos de esta tarea en «{folder}» ({names}) y no sé cuál es el tuyo. "
        "Deja solo uno en la carpeta (mueve o borra las copias) o indica cuál con --notebook."
    )


def extract_definitions(notebook, names: Optional[Iterable[str]] = None) -> str:
    """The source of the statements that define ``names`` and what they need, in notebook order.

    With ``names=None`` it returns every definition, import and literal constant of the
    notebook. Each statement is preceded by a comment naming its cell.
    """
    chunks = []
    for binding in _select(_bindings(read_notebook(notebook)), names):
        chunks.append(f"# celda {binding.cell}\n{_statement_source(binding)}\n")
    return "\n".join(chunks)


def load_functions(notebook, names: Iterable[str]) -> dict:
    """Run the definitions that ``names`` need in a fresh namespace; return name -> object."""
    names = list(names)
    namespace = {"__name__": "cuaderno_del_estudiante", "__builtins__": builtins, "np": np}
    for binding in _select(_bindings(read_notebook(notebook)), names):
        module = ast.Module(body=[binding.node], type_ignores=[])
        code = compile(module, CELL_FILENAME.format(number=binding.cell), "exec")
        try:
            exec(code, namespace)
        except ImportError as exc:
            raise NotebookCodeError(
                f"La celda {binding.cell} importa un módulo que no está disponible "
                f"({exc.name or exc}). Instálalo o quita esa importación."
            ) from None
        except Exception as exc:
            raise NotebookCodeError(
                f"La celda {binding.cell} falla al definir {', '.join(binding.names)}: "
                f"{type(exc).__name__}: {exc}"
            ) from None
    return {name: namespace[name] for name in names}


def _bindings(notebook: dict) -> dict:
    """Name -> the statements that give it its final value: the last top-level statement
    that binds it, then those that change it in place afterwards."""
    found = {}
    for number, cell in enumerate(notebook.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        parsed = _parse_cell(cell_source(cell))
        if parsed is None:
            continue
        source, tree = parsed
        for node in tree.body:
            names = bound_names(node)
            for name in names:
                found[name] = [_Binding(names, node, number, source)]
            for name in changed_names(node):
                if name in found and name not in names:
                    found[name].append(_Binding((name,), node, number, source))
    return found


def _parse_cell(source: str):
    """``(python_source, tree)`` for a code cell, or ``None`` if it is not Python."""
    # Plain Python first: blanking is only for cells that need it, since a continuation
    # line such as `    % args` would otherwise be taken for a magic.
    candidates = [source, _blank_ipython_lines(source)]
    for candidate in candidates:
        if candidate is None:
            continue
        try:
            return candidate, ast.parse(candidate)
        except (SyntaxError, ValueError):
            continue
    # A cell that does not parse defines nothing; the others still count.
    return None


def _blank_ipython_lines(source: str) -> Optional[str]:
    """The cell as Python: IPython-only lines become ``pass``; ``None`` for a cell magic."""
    lines = source.splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("%%"):
        return None
    # `pass` keeps the indentation and the line numbers, so messages point at the real line.
    return "\n".join(
        f"{match.group('indent')}pass" if (match := _IPYTHON_LINE.match(line)) else line
        for line in lines
    )


def bound_names(node: ast.stmt) -> tuple:
    """The names a top-level statement binds, if it is one this module keeps."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (node.name,)
    if isinstance(node, ast.Import):
        return tuple((alias.asname or alias.name).split(".")[0] for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        # `from x import *` binds names nobody can see statically, so it cannot be selected.
        return tuple(alias.asname or alias.name for alias in node.names if alias.name != "*")
    if isinstance(node, ast.Assign):
        names = [_plain_names(target) for target in node.targets]
        if all(n is not None for n in names):
            return tuple(name for group in names for name in group)
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        if isinstance(node.target, ast.Name):
            return (node.target.id,)
    return ()


def _plain_names(target: ast.expr) -> Optional[tuple]:
    """``a`` or ``a, b`` (any nesting): the names; anything else (``a.b``, ``a[0]``): None."""
    if isinstance(target, ast.Name):
        return (target.id,)
    if isinstance(target, (ast.Tuple, ast.List)):
        parts = [_plain_names(element) for element in target.elts]
        return None if None in parts else tuple(n for part in parts for n in part)
    return None


def changed_names(node: ast.stmt) -> tuple:
    """The names whose object a top-level statement changes in place: ``setattr(C, ...)``,
    ``C.attr = ...``, ``C[key] = ...`` (and their augmented forms)."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        if (isinstance(call.func, ast.Name) and call.func.id == "setattr" and call.args
                and isinstance(call.args[0], ast.Name)):
            return (call.args[0].id,)
        return ()
    targets = (node.targets if isinstance(node, ast.Assign)
               else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
    found = []
    for target in targets:
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            target = target.value
            if isinstance(target, ast.Name):
                found.append(target.id)
    return tuple(found)


def _select(bindings: dict, names: Optional[Iterable[str]]) -> list:
    """The bindings that ``names`` need, transitively, in notebook order."""
    if names is None:
        selected = {id(b.node): b for group in bindings.values() for b in group}
    else:
        names = list(names)
        missing = [name for name in names if name not in bindings]
        if missing:
            raise NotebookCodeError(
                f"No encuentro en el cuaderno la definición de: {', '.join(missing)}. "
                "Comprueba que su celda («def ...(») sigue en el cuaderno con ese nombre "
                "y que guardaste el cuaderno."
            )
        selected, pending = {}, list(names)
        while pending:
            for binding in bindings.get(pending.pop(), []):
                if id(binding.node) not in selected:  # one statement may change two names
                    selected[id(binding.node)] = binding
                    pending.extend(_names_used(binding.node))
    return sorted(selected.values(), key=lambda b: (b.cell, b.node.lineno, b.node.col_offset))


def _names_used(node: ast.AST) -> set:
    """The notebook-level names a statement reads: for a ``def`` or a ``class``, the globals
    its body uses, not its parameters or locals. A parameter called ``x`` must not pull in a
    demo cell's ``x = transformer_block(...)``, which would run the student's code at load
    time. Python's own symbol table decides what is global."""
    try:
        table = symtable.symtable(ast.unparse(node), "<celda>", "exec")
    except (SyntaxError, ValueError, RecursionError):  # the generous reading: every name
        return {n.id for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    names, tables = set(), [table]
    while tables:
        current = tables.pop()
        for symbol in current.get_symbols():
            if symbol.is_referenced() and (current is table or symbol.is_global()):
                names.add(symbol.get_name())
        tables.extend(current.get_children())
    return names


def _statement_source(binding: _Binding) -> str:
    node = binding.node
    segment = ast.get_source_segment(binding.source, node)
    decorators = getattr(node, "decorator_list", [])
    if decorators:
        # The node starts at `def`; its decorators sit on the lines above it.
        lines = binding.source.splitlines()[decorators[0].lineno - 1 : node.lineno - 1]
        segment = "\n".join(lines + [segment])
    return segment
