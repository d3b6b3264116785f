"""The executed solution notebook shows students the same numbers as the lesson."""

import shutil

import nbformat
from nbclient import NotebookClient

from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME
from seed_lines import assert_matches_seed


def test_executed_solution_prints_the_numbers_of_seed_000(built_dist, tmp_path):
    # Run beside a copy of itself, as a student would, so Otter's init cell finds its file.
    notebook = shutil.copy(built_dist / "solution" / SOLUTION_NAME, tmp_path / NOTEBOOK_NAME)
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
