"""The explained solution runs beside the student folder's files and shows the lesson's numbers."""

import shutil

import nbformat
from nbclient import NotebookClient

from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME
from seed_lines import assert_matches_seed


def test_executed_solution_prints_the_numbers_of_seed_000(built_dist, tmp_path):
    # Released after the deadline, it sits beside the student's files (the support files and
    # those the build writes, such as step 9's weights), under its own name: the init cell finds
    # it by its assignment, not by the graded notebook's name.
    for path in (built_dist / "student").iterdir():
        if path.is_file() and path.name != NOTEBOOK_NAME:
            shutil.copy(path, tmp_path / path.name)
    notebook = shutil.copy(built_dist / "solution" / SOLUTION_NAME, tmp_path / SOLUTION_NAME)
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert not errors, errors[0].get("evalue")
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.get("outputs", []) if o.output_type == "stream"
                      and o.name == "stdout")
    assert_matches_seed(printed)
    assert "5 de 5 criterios se cumplen." in printed
