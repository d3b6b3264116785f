"""The class's other two notebooks, from the same master as the graded one (seed 003).

* ``notebook.ipynb``, the guided tour: the lesson's text, figures and given helpers, with the
  code cells that run without the four graded functions. No exercise, test, question or
  challenge, and never a graded function's solution: it ships to students.
* ``notebook_solution.ipynb``, the reference solution explained: Otter's solution notebook
  with the master's ``solution-note`` cells after the cells they explain. For instructors to
  release after the deadline; it never enters the student folder.

Master cells tagged ``tour-only`` or ``solution-note`` exist only in those notebooks, and cells
tagged ``graded-only`` stay out of the tour.
"""

import ast
import builtins
import copy

import nbformat

TOUR_ONLY, SOLUTION_NOTE, GRADED_ONLY = "tour-only", "solution-note", "graded-only"
# Otter's markers, which the solution notebook no longer shows: a note's anchor skips them.
_MARKERS = ("# BEGIN", "# END", '""" # BEGIN', '""" # END')


def tags(cell) -> list:
    return cell.get("metadata", {}).get("tags", [])


def graded_cells(nb):
    """The master without the tour's and the solution's own cells: what Otter Assign gets."""
    nb = copy.deepcopy(nb)
    nb.cells = [cell for cell in nb.cells if not {TOUR_ONLY, SOLUTION_NOTE} & set(tags(cell))]
    return nb


def _anchor(cell) -> str:
    """The first line of a cell that is not an Otter marker: the same in master and solution."""
    lines = [line.strip() for line in cell.source.splitlines()]
    return next((line for line in lines if line and not line.startswith(_MARKERS)), "")


def solution_notes(master) -> list:
    """``(anchor, note)`` for every ``solution-note`` cell: the note and the cell it follows."""
    notes, previous = [], None
    for cell in master.cells:
        if SOLUTION_NOTE in tags(cell):
            if previous is None:
                raise ValueError("a solution note must follow the cell it explains")
            notes.append((_anchor(previous), cell))
        elif cell.cell_type != "raw":
            previous = cell
    return notes


def explained_solution(solution, master):
    """Otter's solution notebook with each of the master's notes after the cell it explains."""
    solution = copy.deepcopy(solution)
    for anchor, note in solution_notes(master):
        at = [i for i, cell in enumerate(solution.cells) if _anchor(cell) == anchor]
        if len(at) != 1:
            raise ValueError(f"the note after {anchor!r} matches {len(at)} cells of the solution")
        solution.cells.insert(at[0] + 1, nbformat.v4.new_markdown_cell(note.source))
    return solution


def guided_tour(master, graded_functions):
    """The tour: the lesson without anything graded, runnable from top to bottom."""
    tour = nbformat.v4.new_notebook(metadata={"kernelspec": master.metadata.get("kernelspec", {}),
                                              "language_info": {"name": "python"}})
    known = set(dir(builtins))
    in_question = False
    for cell in master.cells:
        if cell.cell_type == "raw":
            source = cell.source.strip()
            in_question = source.startswith("# BEGIN QUESTION") or (in_question and source != "# END QUESTION")
            continue
        if in_question or {GRADED_ONLY, SOLUTION_NOTE} & set(tags(cell)):
            continue
        if cell.cell_type == "code":
            needs, binds = _names(cell.source)
            # A demo that calls a graded function, or reads what a dropped demo made, stays out.
            if needs - known - binds or needs & set(graded_functions):
                continue
            known |= binds
            tour.cells.append(nbformat.v4.new_code_cell(cell.source))
        else:
            kept = nbformat.v4.new_markdown_cell(cell.source)
            if cell.get("attachments"):
                kept.attachments = copy.deepcopy(cell.attachments)
            tour.cells.append(kept)
    return tour


def _names(source: str):
    """(names a cell reads, names it binds), generously: parameters count as bound."""
    tree = ast.parse(source)
    reads, binds = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (reads if isinstance(node.ctx, ast.Load) else binds).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            binds.add(node.name)
        elif isinstance(node, ast.arg):
            binds.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            binds |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return reads, binds
