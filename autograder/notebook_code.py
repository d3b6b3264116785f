"""Pull a student's function definitions out of a notebook without running its other cells.

The lab, the validator and the out-of-kernel verifier all need the student's functions but
none of the notebook's demo code (plots, prints, random draws, grader calls). So this module
reads the notebook with nbformat, parses each code cell with ``ast``, and keeps only the
top-level statements that *bind* something a requested function needs:

* ``def`` and ``class`` statements;
* ``import`` statements;
* constants assigned a literal (``EPS = 1e-9``), since a helper may read one.

Those statements run, in notebook order, in a fresh namespace that already holds numpy as
``np``. When a name is bound twice, the later binding wins, as when the notebook runs from
top to bottom. Cells that do not parse are skipped, and IPython magics and shell lines are
blanked out first, so one broken cell costs only its own definitions.

This file ships to students beside ``lab.py``, so it uses only the standard library,
nbformat and numpy, and its error messages are in Spanish.
"""

import ast
import builtins
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Union

import nbformat
import numpy as np

__all__ = ["NotebookCodeError", "read_notebook", "extract_definitions", "load_functions"]

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


def read_notebook(notebook: Union[str, Path, dict]) -> nbformat.NotebookNode:
    """A notebook node from a path, a node, or a plain dict with the notebook's JSON."""
    if isinstance(notebook, nbformat.NotebookNode):
        return notebook
    if isinstance(notebook, dict):
        return nbformat.from_dict(notebook)
    path = Path(notebook)
    if not path.is_file():
        raise NotebookCodeError(f"No encuentro el cuaderno «{path}».")
    try:
        return nbformat.read(str(path), as_version=4)
    except Exception as exc:  # nbformat raises several unrelated types for a broken file
        raise NotebookCodeError(
            f"No puedo leer «{path.name}» como cuaderno de Jupyter ({type(exc).__name__}). "
            "Ábrelo en Jupyter y guárdalo de nuevo."
        ) from None


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


def _bindings(notebook: nbformat.NotebookNode) -> dict:
    """Name -> the last top-level statement of the notebook that binds it."""
    found = {}
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        parsed = _parse_cell(cell.source)
        if parsed is None:
            continue
        source, tree = parsed
        for node in tree.body:
            names = bound_names(node)
            if names:
                binding = _Binding(names, node, number, source)
                for name in names:
                    found[name] = binding
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
    if isinstance(node, ast.Assign) and _is_literal(node.value):
        if all(isinstance(target, ast.Name) for target in node.targets):
            return tuple(target.id for target in node.targets)
    if isinstance(node, ast.AnnAssign) and node.value is not None and _is_literal(node.value):
        if isinstance(node.target, ast.Name):
            return (node.target.id,)
    return ()


def _is_literal(node: ast.expr) -> bool:
    # Only literals: any other right-hand side could depend on the notebook's demo state.
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _select(bindings: dict, names: Optional[Iterable[str]]) -> list:
    """The bindings that ``names`` need, transitively, in notebook order."""
    if names is None:
        selected = {id(b): b for b in bindings.values()}
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
            binding = bindings.get(pending.pop())
            if binding is not None and id(binding) not in selected:
                selected[id(binding)] = binding
                pending.extend(_names_used(binding.node))
    return sorted(selected.values(), key=lambda b: (b.cell, b.node.lineno, b.node.col_offset))


def _names_used(node: ast.AST) -> set:
    """Every name a statement reads: generous on purpose, since an unused extra is harmless."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _statement_source(binding: _Binding) -> str:
    node = binding.node
    segment = ast.get_source_segment(binding.source, node)
    decorators = getattr(node, "decorator_list", [])
    if decorators:
        # The node starts at `def`; its decorators sit on the lines above it.
        lines = binding.source.splitlines()[decorators[0].lineno - 1 : node.lineno - 1]
        segment = "\n".join(lines + [segment])
    return segment
