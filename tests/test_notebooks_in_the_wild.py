"""Correct notebooks written the way students write them lose no point (issue 31.4).

A cell that takes too long is stopped, reported as slow with its first line, and the run goes
on, so the functions defined after it are graded; «no encuentro la función» is said only when
the function is not in the notebook."""

import nbformat
import pytest

from grading_harness import Notebooks, grade_here, read_records, total, write_folder

SLOW_CELL = "import time\nfor _ in range(10_000):\n    time.sleep(1)  # un experimento largo\n"


def with_cell_after(notebooks, function, source):
    nb = nbformat.from_dict(notebooks._correct)
    at = next(i for i, cell in enumerate(nb.cells)
              if cell.cell_type == "code" and cell.source.lstrip().startswith(f"def {function}("))
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(source))
    return notebooks.to_bytes(nb)


@pytest.fixture(scope="module")
def graded(built_dist, autograder_zip, tmp_path_factory):
    notebooks = Notebooks(built_dist)
    nb = nbformat.from_dict(notebooks._correct)
    cell = next(c for c in nb.cells if c.cell_type == "code"
                and c.source.lstrip().startswith("def multihead("))
    cell.source = SLOW_CELL + "\n" + cell.source  # never reaches its def
    files = {"lenta.ipynb": with_cell_after(notebooks, "attention", SLOW_CELL),
             "correcta.ipynb": notebooks.correct(),
             "define_lenta.ipynb": notebooks.to_bytes(nb)}
    folder = write_folder(tmp_path_factory.mktemp("entregas"), files)
    out = tmp_path_factory.mktemp("notas")
    # 60 s for the notebook: one cell may take a quarter of it (15 s), then it is stopped.
    rows = grade_here(folder, out, autograder_zip, timeout=60)
    return rows, read_records(out), out


def test_a_slow_cell_is_stopped_and_every_later_function_is_graded(graded):
    rows, records, out = graded
    assert total(rows["lenta.ipynb"]) == total(rows["correcta.ipynb"]) \
        == float(rows["points-per-question"]["total_points_earned"])
    record = records["lenta.ipynb"]
    (slow,) = [e for e in record.cell_errors if e["kind"] == "time"]
    assert slow["slow"] and "import time" in slow["first_line"]
    feedback = next(out.glob("feedback/lenta*.md")).read_text("utf-8")
    assert "tardó más de 15 s, el máximo de una celda, y se detuvo" in feedback
    assert "no encuentro la función" not in feedback


def test_a_function_whose_own_cell_was_stopped_is_said_so_not_missing(graded):
    rows, records, out = graded
    feedback = next(out.glob("feedback/define_lenta*.md")).read_text("utf-8")
    assert "que define `multihead` tardó más de 15 s y se detuvo" in feedback
    assert "no encuentro la función `multihead`" not in feedback
    # The functions after it are graded: only multihead's points are lost.
    lost = float(rows["points-per-question"]["multihead"])
    assert total(rows["define_lenta.ipynb"]) == total(rows["correcta.ipynb"]) - lost
