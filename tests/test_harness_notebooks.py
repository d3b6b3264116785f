"""Leaving step 4's experiment out of test submissions changes nothing a grading test sees
(grading_harness.without_experiment): the cell reads no graded function and defines no name
that a later cell reads, so every later cell runs as in the whole notebook."""

import nbformat

from attention.functions import FUNCTIONS
from grading_harness import EXPERIMENT, without_experiment
from kit_autograder.build.notebooks import _names
from kit_autograder.policy import cell_python


def leaks(notebook):
    """What the experiment cell shares with the rest: graded functions it reads, and names it
    binds that a later cell reads before a cell after it binds them again."""
    code = [cell_python(cell.source) for cell in notebook.cells if cell.cell_type == "code"]
    (index,) = [i for i, source in enumerate(code) if EXPERIMENT in source]
    read, bound = _names(code[index])
    shared, pending = read & set(FUNCTIONS), set(bound)
    for source in code[index + 1:]:
        reads, rebound = _names(source)
        shared |= pending & reads - rebound
        pending -= rebound
    return shared


def student_notebook(built_dist):
    return nbformat.read(built_dist / "student" / "notebook_student.ipynb", as_version=4)


def test_the_experiment_shares_no_name_with_the_cells_after_it(built_dist):
    nb = student_notebook(built_dist)
    assert not leaks(nb)
    assert len(without_experiment(nb).cells) == len(nb.cells) - 1


def test_control_a_later_cell_that_reads_the_experiment_is_caught(built_dist):
    nb = student_notebook(built_dist)
    nb.cells.append(nbformat.v4.new_code_cell("print(medianas[-1])"))
    assert leaks(nb) == {"medianas"}
    nb.cells.append(nbformat.v4.new_code_cell("attention = None"))
    code = [cell for cell in nb.cells if cell.cell_type == "code" and EXPERIMENT in cell.source]
    code[0].source += "\nattention(q, K, K)"
    assert leaks(nb) == {"medianas", "attention"}
