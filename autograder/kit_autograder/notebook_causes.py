"""Causes of a failing graded function that live in the notebook's layout, not in its code.

The grade runs the notebook once, top to bottom, and then calls each graded function. Two
things a student cannot see in the function's own cell change what it computes there:

* a name it uses defined again further down (``softmax`` rewritten for an experiment with
  ``axis=0``, or the graded function itself redefined by a later test cell): the grade calls
  the last definition, while the student checked the first one;
* the function's cell saved as Markdown or Raw (the M key in command mode): its code is text,
  never runs, and the function is the stub or does not exist.

Both are read from the cells' text alone, so they are said as what the notebook holds, for a
function that lost points, never as the mistake: the student judges whether it is theirs.
Names the grader answers itself while grading the function (its stand-ins) are left out:
their redefinitions cannot change its grade. Every lesson shares this: no lesson's names.
"""

import ast
import functools

from . import policy

REDEFINED = "notebook.redefined"
TEXT_CELL = "notebook.text_cell"
# Nested functions that call each other: the names a function reaches are followed this deep.
MAX_DEPTH = 8


def _tree(source):
    """A cell's tree from the grader's one parse cache (policy's): bounded, so the grader's
    memory does not grow with the class, and shared with the reviewer's hints."""
    return policy.cell_tree(source)


def _bindings(tree):
    """``{name: node}`` of what a cell binds at its top level: functions, classes and plain
    assignments (``softmax = lambda …``)."""
    bound = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = node
    return bound


def jupyter_numbers(cells):
    """The number Jupyter shows beside each code cell after «Restart & Run All», [n], by
    position: empty cells are not run and get none (as the sandbox numbers them)."""
    numbers, count = {}, 1
    for position, source in enumerate(cells):
        if source.strip():
            numbers[position] = count
            count += 1
    return numbers


def _stub(node):
    """True for a function whose body only raises NotImplementedError (after a docstring):
    the notebook's own placeholder, which the student's answer may follow in a new cell."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = node.body[1:] if (node.body and isinstance(node.body[0], ast.Expr)
                             and isinstance(node.body[0].value, ast.Constant)) else node.body
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def definitions(cells):
    """``{name: [(position, source of the binding, whether it is a stub)]}`` over the
    notebook's code cells, in order."""
    found = {}
    for position, source in enumerate(cells):
        for name, segment, stub in _cell_definitions(source):
            found.setdefault(name, []).append((position, segment, stub))
    return found


@functools.lru_cache(maxsize=512)
def _cell_definitions(source):
    """``((name, source of the binding, whether it is a stub), ...)`` of one cell. Cached by
    its text: get_source_segment splits the whole cell again for each binding, and most cells
    of a class's notebooks are the ones everybody received. Only text is kept, no tree."""
    tree = _tree(source)
    if tree is None:
        return ()
    return tuple((name, ast.get_source_segment(source, node) or ast.dump(node), _stub(node))
                 for name, node in _bindings(tree).items())


def _used_names(node):
    """The global names ``node`` reads: what it loads, less its parameters and what it
    assigns itself (a parameter X is not the notebook's X, however often a cell sets X)."""
    local = {n.arg for n in ast.walk(node) if isinstance(n, ast.arg)}
    local |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
              and isinstance(n.ctx, (ast.Store, ast.Del))}
    local -= {name for n in ast.walk(node) if isinstance(n, ast.Global) for name in n.names}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):  # softmax = lambda …: its own target
        local -= {t.id for t in ast.walk(node) if isinstance(t, ast.Name)
                  and t in getattr(node, "targets", [getattr(node, "target", None)])}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)} - local


def reached(function, cells, skipped=()):
    """The notebook's top-level names ``function`` reaches through its last definition and
    those of the functions it calls, itself included, without ``skipped`` (the stand-ins)."""
    last = {}
    for position, source in enumerate(cells):
        tree = _tree(source)
        if tree is not None:
            last.update(_bindings(tree))
    seen, frontier = {function}, [function]
    for _ in range(MAX_DEPTH):
        following = []
        for name in frontier:
            node = last.get(name)
            if node is None:
                continue
            for used in _used_names(node):
                if used in last and used not in seen and used not in skipped:
                    seen.add(used)
                    following.append(used)
        frontier = following
        if not frontier:
            break
    return seen


def redefinitions(function, cells, skipped=()):
    """Spanish sentences, one per name ``function`` reaches that the notebook binds in more
    than one cell with different code: which cells, and that the grade uses the last."""
    numbers, bound = jupyter_numbers(cells), definitions(cells)
    said = []
    for name in sorted(reached(function, cells, skipped), key=lambda n: (n != function, n)):
        # A stub followed by the answer in a cell of its own is no competing definition; a
        # stub that comes last is what the grade called, and is said.
        places = [place for index, place in enumerate(bound.get(name, []))
                  if not place[2] or index == len(bound[name]) - 1]
        if len({source for _, source, _ in places}) < 2:
            continue
        shown = [f"[{numbers[position]}]" for position, _, _ in places if position in numbers]
        if len(shown) < 2:
            continue
        cells_said = ", ".join(shown[:-1]) + f" y {shown[-1]}"
        whose = ("" if name == function else f", y tu `{function}` usa esa")
        said.append(
            f"tu cuaderno define `{name}` en las celdas {cells_said}, con código distinto. "
            f"La nota ejecuta el cuaderno entero, de arriba abajo, y se queda con la "
            f"última definición, la de la celda {shown[-1]}{whose}: si la comprobaste con otra, "
            "¿es esta la que querías? Si la de más abajo es una prueba, dale otro nombre")
    return said


def text_cell_definitions(function, text_cells):
    """A Spanish sentence when a Markdown or Raw cell holds Python code that defines
    ``function`` (a code cell whose type was changed, the M key), else None."""
    for kind, source in text_cells:
        tree = _tree(source)
        if tree is None:
            continue
        if any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and node.name == function for node in tree.body):
            noun = "de Markdown (texto)" if kind == "markdown" else "Raw (texto sin formato)"
            return (f"tu cuaderno tiene `def {function}(` en una celda {noun}, no de código: "
                    "esa celda no se ejecuta, así que la nota no ve esa versión de la función. "
                    "Selecciónala, cambia su tipo a Code (en el menú de la celda, o con la "
                    "tecla Y en modo de mando) y vuelve a ejecutarla")
    return None
