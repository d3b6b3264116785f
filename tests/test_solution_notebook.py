"""The explained solution ships executed, runs from its own folder and shows the lesson's numbers."""

import inspect
import re
import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from reference import attention as reference
from autograder.assign import SOLUTION_NAME
from attention.functions import FUNCTIONS
from seed_lines import assert_matches_seed

OTTER_MARKERS = ("# BEGIN SOLUTION", "# END SOLUTION", '""" # BEGIN PROMPT', '""" # END PROMPT',
                 "<!-- BEGIN QUESTION", "<!-- END QUESTION", "# BEGIN TESTS", "# END TESTS")
# Words of the reference's English comments that no Spanish comment has.
ENGLISH = re.compile(r"\b(the|so|before|forbidden|keys|heads|side|each|not|one|block)\b")


def printed(nb, grader=False) -> str:
    """What the code cells print; the first cell's «Listo…» only with ``grader``."""
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                   and grader == ("Grader(" in c.source)
                   for o in c.get("outputs", []) if o.output_type == "stream" and o.name == "stdout")


def error_outputs(nb):
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if o.output_type == "error"]


@pytest.fixture(scope="module")
def shipped(built_dist):
    return nbformat.read(built_dist / "solution" / SOLUTION_NAME, as_version=4)


def test_executed_solution_prints_the_numbers_of_seed_000(built_dist, tmp_path):
    # Released after the deadline as its folder is built, it runs from there: dist/solution/
    # holds the student's files (and the weights the build writes) beside it.
    folder = shutil.copytree(built_dist / "solution", tmp_path / "solution")
    notebook = folder / SOLUTION_NAME
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    errors = error_outputs(nb)
    assert not errors, errors[0].get("evalue")
    assert_matches_seed(printed(nb))
    assert "5 de 5 criterios se cumplen." in printed(nb)


def test_the_solution_ships_with_its_outputs(shipped):
    assert not error_outputs(shipped)
    code = [c for c in shipped.cells if c.cell_type == "code"]
    unrun = [c.source for c in code if c.execution_count is None]
    # Only the submission cell: its output would name a zip that is not in the folder.
    assert unrun == ["grader.export()"], unrun
    assert_matches_seed(printed(shipped))
    assert "5 de 5 criterios se cumplen." in printed(shipped)
    assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs)
    assert printed(shipped, grader=True) == \
        "Listo: cuaderno «notebook_solution.ipynb», con sus 4 funciones implementadas.\n"


def test_the_solution_is_plain_python_with_spanish_comments(shipped):
    for cell in shipped.cells:
        for marker in OTTER_MARKERS:
            assert marker not in cell.source, (marker, cell.source[:80])
    comments = [line.split("#", 1)[1] for c in shipped.cells if c.cell_type == "code"
                for line in c.source.splitlines() if line.lstrip().startswith("#")]
    assert comments, "the solution keeps the lesson's own (Spanish) comments"
    for comment in comments:
        assert not ENGLISH.search(comment), comment
    # The reference's comments are English; none reaches the solution, and the check above
    # would have caught them (the positive control).
    for name in FUNCTIONS:
        for line in inspect.getsource(getattr(reference, name)).splitlines():
            if line.strip().startswith("#"):
                assert ENGLISH.search(line)
                assert not any(line.strip() in c.source for c in shipped.cells), line


def test_each_graded_function_of_the_solution_is_the_reference_s_body(shipped):
    # The stub's Spanish docstring, then the reference's code: nothing of the prompt is left.
    for name in FUNCTIONS:
        (cell,) = [c for c in shipped.cells if c.source.startswith(f"def {name}(")]
        assert "NotImplementedError" not in cell.source and '"""' in cell.source
        namespace = {}
        exec(cell.source, {"np": __import__("numpy"), "softmax": reference.softmax,
                           "layer_norm": reference.layer_norm, **namespace}, namespace)
        assert inspect.signature(namespace[name]) == inspect.signature(getattr(reference, name))
