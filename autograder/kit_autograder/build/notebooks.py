"""The class's other two notebooks, from the same master as the graded one (seed 003).

* ``notebook.ipynb``, the guided tour: the lesson's text, figures, given helpers and every
  demo with what it shows (``guided_tour``). No exercise, test, question or challenge, and
  never a graded function's source: it ships to students.
* ``notebook_solution.ipynb``, the reference solution explained: Otter's solution notebook
  as plain Python, with the master's ``solution-note`` cells after the cells they explain,
  shipped executed (``executed_solution``). For instructors to release after the deadline;
  it never enters the student folder.

Master cells tagged ``tour-only`` or ``solution-note`` exist only in those notebooks, and cells
tagged ``graded-only`` stay out of the tour.
"""

import ast
import builtins
import copy
import re
from pathlib import Path

import nbformat
import yaml

from .execute import CellRunner, execute_in_folder
from .master_error import MasterError

TOUR_ONLY, SOLUTION_NOTE, GRADED_ONLY = "tour-only", "solution-note", "graded-only"
# Otter's markers, which the solution notebook no longer shows: a note's anchor skips them.
_MARKERS = ("# BEGIN", "# END", '""" # BEGIN', '""" # END')
_QUESTION_MARKER = re.compile(r"^<!-- (BEGIN|END) QUESTION -->\s*$", re.M)
# The notebook's submission cell, the kit's own (cells/export.py).
EXPORT_CELL = (Path(__file__).with_name("cells") / "export.py").read_text("utf-8").strip()


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
                raise MasterError("a solution-note cell comes before any cell it could "
                                  "explain; move it after the cell it explains", cell.source)
            notes.append((_anchor(previous), cell))
        elif cell.cell_type != "raw":
            previous = cell
    return notes


def explained_solution(solution, master, graded_functions=()):
    """Otter's solution notebook with each of the master's notes after the cell it explains,
    as plain Python: no Otter marker, no prompt, and in each graded function none of the
    reference's comments (they are English, for maintainers; the notes explain in Spanish)."""
    solution = copy.deepcopy(solution)
    for anchor, note in solution_notes(master):
        at = [i for i, cell in enumerate(solution.cells) if _anchor(cell) == anchor]
        if len(at) != 1:
            raise MasterError(f"the solution note after «{anchor}» follows a line that "
                              f"{len(at)} cells of the solution start with; put it after a "
                              "cell whose first line is its own", note.source)
        solution.cells.insert(at[0] + 1, nbformat.v4.new_markdown_cell(note.source))
    for cell in solution.cells:
        if cell.cell_type == "code":
            graded = re.match(r"def (\w+)\(", cell.source)
            cell.source = plain_solution(cell.source, bool(graded and graded.group(1) in graded_functions))
        elif cell.cell_type == "markdown":
            # Otter's question markers, which only its PDF export reads.
            cell.source = _QUESTION_MARKER.sub("", cell.source).strip()
    solution.cells = [cell for cell in solution.cells if cell.source.strip()]
    return solution


def plain_solution(source: str, reference_code: bool = False) -> str:
    """A cell of Otter's solution notebook without Otter's markers and the student's prompt;
    with ``reference_code``, also without the full-line comments of its solution block."""
    kept, in_prompt, in_solution = [], False, False
    for line in source.splitlines():
        mark = line.strip()
        if in_prompt or mark.startswith('""" # BEGIN PROMPT'):
            in_prompt = not mark.startswith('""" # END PROMPT')
        elif mark in ("# BEGIN SOLUTION", "# BEGIN SOLUTION NO PROMPT", "# END SOLUTION"):
            in_solution = mark != "# END SOLUTION"
        elif not (in_solution and reference_code and mark.startswith("#")):
            kept.append(line)
    return "\n".join(kept).rstrip()


def executed_solution(solution, folder, name):
    """The explained solution with its outputs, run by a kernel from ``folder`` as ``name``.
    The submission cell stays unexecuted: its output would name a zip that is not there."""
    return execute_in_folder(solution, folder, name,
                             skip=lambda cell: cell.source.strip() == EXPORT_CELL)


def guided_tour(master, lesson, folder):
    """The tour: the lesson without anything graded, every step with what it shows.

    Its code cells are the demos that run without the graded functions, shipped with their
    outputs. A demo that needs a graded function (or what such a demo computed) runs here, at
    build time, with the lesson's reference standing in, and reaches the tour as a Markdown
    cell: its code, what it printed, and its figures as PNG attachments. So the tour runs from
    top to bottom in any front end (running it leaves those cells as they are), every step
    shows its result, and no graded function's source is in it. ``folder`` is where it ships:
    the demos run there, beside the files they read.
    """
    tour = nbformat.v4.new_notebook(metadata={"kernelspec": master.metadata.get("kernelspec", {}),
                                              "language_info": {"name": "python"}})
    graded = set(lesson.FUNCTIONS)
    known = set(dir(builtins))
    in_question, count, figures = False, 0, 0
    with CellRunner(folder) as runner:
        for cell in master.cells:
            if cell.cell_type == "raw":
                source = cell.source.strip()
                if source.startswith("# BEGIN QUESTION"):
                    # The question's cells stay out; from here on, its function is the reference's.
                    name = (yaml.safe_load(source[len("# BEGIN QUESTION"):]) or {}).get("name")
                    if name in graded:
                        runner.namespace[name] = getattr(lesson.REFERENCE, name)
                in_question = source.startswith("# BEGIN QUESTION") or (
                    in_question and source != "# END QUESTION")
                continue
            if in_question or {GRADED_ONLY, SOLUTION_NOTE} & set(tags(cell)):
                continue
            if cell.cell_type == "markdown":
                kept = nbformat.v4.new_markdown_cell(cell.source)
                if cell.get("attachments"):
                    kept.attachments = copy.deepcopy(cell.attachments)
                tour.cells.append(kept)
                continue
            outputs = runner.run(cell.source)
            needs, binds = _names(cell.source)
            if needs - known - binds or needs & graded:
                # Needs a graded function, or reads what a demo shown as text made.
                uses = [name for name in lesson.FUNCTIONS if name in needs]
                tour.cells.append(_shown_demo(cell.source, outputs, runner.alts, uses, figures))
                figures += len(runner.alts)
                continue
            known |= binds
            count += 1
            for output in outputs:
                if output.output_type == "execute_result":
                    output.execution_count = count
            tour.cells.append(nbformat.v4.new_code_cell(cell.source, execution_count=count,
                                                        outputs=outputs))
    return tour


def _shown_demo(source, outputs, alts, uses, figures_before):
    """A demo as Markdown: its code, what it printed, its figures attached as PNG."""
    if uses:
        names = " y ".join(", ".join(f"`{name}`" for name in uses).rsplit(", ", 1))
        caption = f"*Demostración con {names}, calculada al preparar la clase con la solución de referencia:*"
    else:
        caption = ("*Demostración que sigue con lo calculado arriba, calculada al preparar la clase "
                   "con la solución de referencia:*")
    parts, attachments, alts = [caption, _fenced(source.rstrip(), "python")], {}, iter(alts)
    for output in outputs:
        if output.output_type == "stream":
            parts.append(_fenced(output.text.rstrip("\n"), "text"))
        elif output.output_type == "execute_result":
            parts.append(_fenced(output.data["text/plain"], "text"))
        else:
            name = f"demostracion-{figures_before + len(attachments) + 1:02d}.png"
            alt = re.sub(r"[\[\]]", "", next(alts))
            parts.append(f"![{alt}](attachment:{name})")
            attachments[name] = {"image/png": output.data["image/png"]}
    cell = nbformat.v4.new_markdown_cell("\n\n".join(parts))
    if attachments:
        cell.attachments = attachments
    return cell


def _fenced(text: str, language: str) -> str:
    """``text`` as a fenced block whose fence no line of it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


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
