"""The explained solution runs from its own folder and shows the lesson's numbers."""

import shutil

import nbformat
from nbclient import NotebookClient

from autograder.assign import SOLUTION_NAME
from seed_lines import assert_matches_seed


def test_executed_solution_prints_the_numbers_of_seed_000(built_dist, tmp_path):
    # Released after the deadline as its folder is built, it runs from there: dist/solution/
    # holds the student's files (and the weights the build writes) beside it.
    folder = shutil.copytree(built_dist / "solution", tmp_path / "solution")
    notebook = folder / SOLUTION_NAME
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert not errors, errors[0].get("evalue")
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.get("outputs", []) if o.output_type == "stream"
                      and o.name == "stdout")
    assert_matches_seed(printed)
    assert "5 de 5 criterios se cumplen." in printed
