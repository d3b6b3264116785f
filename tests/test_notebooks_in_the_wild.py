"""Correct notebooks written the way students write them lose no point (issue 31.4).

A cell that takes too long is stopped, reported as slow with its first line, and the run goes
on, so the functions defined after it are graded; «no encuentro la función» is said only when
the function is not in the notebook."""

import nbformat
import pytest

from grading_harness import Notebooks, grade_here, read_records, total, write_folder

# A block as a PyTorch habit writes it: dropout on each sub-layer, with no seed and no switch.
DROPOUT_BLOCK = """def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    def dropout(z, p=0.1):
        keep = np.random.random(z.shape) >= p
        return z * keep / (1 - p)
    h = layer_norm(x + dropout(multihead(x, heads, W_O, mask)))
    return layer_norm(h + dropout(np.maximum(0, h @ W1 + b1) @ W2 + b2))
"""
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
    dropout = nbformat.from_dict(notebooks._correct)
    block = next(c for c in dropout.cells if c.cell_type == "code"
                 and c.source.lstrip().startswith("def transformer_block("))
    block.source = DROPOUT_BLOCK
    files = {"lenta.ipynb": with_cell_after(notebooks, "attention", SLOW_CELL),
             "dropout.ipynb": notebooks.to_bytes(dropout),
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


def test_a_block_with_unseeded_dropout_is_told_it_is_random_not_sent_to_attention(graded):
    rows, records, out = graded
    record = records["dropout.ipynb"]
    (diagnosis,) = record.diagnoses["transformer_block"]
    assert "no da el mismo resultado dos veces" in diagnosis.message and "dropout" in diagnosis.message
    feedback = next(out.glob("feedback/dropout*.md")).read_text("utf-8")
    assert "revisa sobre todo tu attention" not in feedback
    # A measured finding is written as a clause; the feedback says it as a sentence.
    assert not diagnosis.message.endswith(".")
    assert "y vuelve a comprobarla.\n" in feedback
    # The block's points are lost, and the challenge's unchanged-output criterion, which a
    # random block cannot meet: its message says why, instead of «No edites su salida» alone.
    lost = [v for v in record.verdicts if not v.passed]
    assert {v.question for v in lost} == {"transformer_block", "student_extension"}
    (criterion,) = [v for v in lost if v.question == "student_extension"]
    assert criterion.case == "lab_output_unchanged"
    assert any("dropout o números al azar" in m for m in criterion.messages)
