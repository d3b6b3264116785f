"""A function that changes its arguments in place is told so, and loses points only where the
change is measured to change a result (issue 49, item 5).

Three correct notebooks change their own arguments and return the right values: attention
scaling Q in place, attention centring K in place, a block updating x in place. The check that
zeroed them was added for an attention whose change of its caller's mask broke the student's
own multihead: each head after the first received the mask the one before had changed. Here
that is the control: an attention that inverts the mask it receives in place (and reads it
inverted) answers every hidden call right, and still loses the cases it changed the mask on,
because the student's own multihead, which passes one mask to every head, answers otherwise
when attention gets a copy. A multihead that empties the caller's list of heads (``pop``) is
told too, and keeps its points: the student's block, which calls it once, computes the same.
Its later calls with the same list do change, and the grade measures one: the lab run in the
notebook calls it again, and the challenge's criterion that compares that run with a fresh one
fails there, where the change altered a result.
"""

import textwrap

import pytest

from grading_harness import Notebooks, grade_here, read_records, write_folder

SOFTMAX_TAIL = '''
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
'''

CHANGES = {
    # Correct: Q scaled in place, then the usual scores.
    "escala_q.ipynb": ("attention", '''
import numpy as np

def attention(Q, K, V, mask=None):
    Q /= np.sqrt(K.shape[-1])
    scores = Q @ K.T
''' + SOFTMAX_TAIL),
    # Correct: the keys centred in place, which shifts each row of scores by one number.
    "centra_k.ipynb": ("attention", '''
import numpy as np

def attention(Q, K, V, mask=None):
    K -= K.mean(axis=0)
    scores = Q @ K.T / np.sqrt(K.shape[-1])
''' + SOFTMAX_TAIL),
    # Correct: the block updates x in place at every step.
    "bloque_x.ipynb": ("transformer_block", '''
import numpy as np

def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x += multihead(x, heads, W_O, mask)
    x[:] = layer_norm(x)
    x += np.maximum(0, x @ W1 + b1) @ W2 + b2
    return layer_norm(x)
'''),
    # Correct: multihead empties the caller's list of heads as it goes.
    "cabezas_pop.ipynb": ("multihead", '''
import numpy as np

def multihead(X, heads, W_O, mask=None):
    salidas = []
    while heads:
        W_Q, W_K, W_V = heads.pop(0)
        salidas.append(attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0])
    return np.concatenate(salidas, axis=1) @ W_O
'''),
    # The control: right on every call, but the mask it leaves behind is inverted.
    "invierte_mascara.ipynb": ("attention", '''
import numpy as np

def attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        np.logical_not(mask, out=mask)  # ahora True = prohibido
        scores = np.where(mask, -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
'''),
}
CORRECT = ("escala_q.ipynb", "centra_k.ipynb", "bloque_x.ipynb")
CHANGED = {"escala_q.ipynb": "(Q)", "centra_k.ipynb": "(K)", "bloque_x.ipynb": "(x)",
           "cabezas_pop.ipynb": "(heads)"}


@pytest.fixture(scope="module")
def graded(built_dist, autograder_zip, tmp_path_factory):
    notebooks = Notebooks(built_dist)
    files = {name: notebooks.with_function("correct", function, textwrap.dedent(source))
             for name, (function, source) in CHANGES.items()}
    files["correcta.ipynb"] = notebooks.correct()
    folder = write_folder(tmp_path_factory.mktemp("efectos"), files)
    out = tmp_path_factory.mktemp("efectos-notas")
    grade_here(folder, out, autograder_zip, jobs=2)
    return read_records(out), out


def feedback(out, name):
    return (out / "feedback" / f"{name[:-len('.ipynb')]}.md").read_text("utf-8")


@pytest.mark.parametrize("name", CORRECT)
def test_a_correct_function_that_changes_its_arguments_keeps_full_marks_and_is_told(graded,
                                                                                    name):
    records, out = graded
    record = records[name]
    assert record.earned == records["correcta.ipynb"].earned == record.possible, record.scores
    function = CHANGES[name][0]
    told = [note for note in record.notes if f"tu `{function}` cambia los arrays" in note]
    assert len(told) == 1 and CHANGED[name] in told[0], record.notes
    assert f"`{function}` no pierde puntos" in told[0]
    assert f"tu `{function}` cambia los arrays o listas que recibe {CHANGED[name]}" in feedback(
        out, name)
    assert not any("side_effects.mutates_arguments" in d.ids
                   for found in record.diagnoses.values() for d in found)


def test_a_multihead_that_empties_the_callers_heads_keeps_its_points_and_the_blocks(graded):
    records, out = graded
    record = records["cabezas_pop.ipynb"]
    for question in ("attention", "multihead", "positional_encoding", "transformer_block"):
        assert record.scores[question][0] == record.scores[question][1], question
    told = [note for note in record.notes if "tu `multihead` cambia los arrays" in note]
    assert len(told) == 1 and "(heads)" in told[0]
    # A later call with the same list, which the grade does measure: the notebook's own lab
    # run, against a fresh one.
    lab = [v for v in record.verdicts if v.question == "student_extension"
           and v.case == "lab_output_unchanged"]
    assert lab and not lab[0].passed


def test_control_a_change_that_breaks_the_students_own_multihead_costs_its_cases(graded):
    records, out = graded
    record = records["invierte_mascara.ipynb"]
    earned, possible = record.scores["attention"]
    assert 0 < earned < possible, record.scores
    # Only the cases that have a mask to change: the others keep their points.
    failing = [v for v in record.verdicts if v.question == "attention" and not v.public
               and not v.passed]
    assert failing and all("(mask)" in " ".join(v.messages) for v in failing)
    assert [d.ids for d in record.diagnoses["attention"]] == [["side_effects.mutates_arguments"]]
    assert "cambia el resultado de tu `multihead`" in feedback(out, "invierte_mascara.ipynb")
    # No other function pays for it: multihead is graded with the reference's attention.
    for question in ("multihead", "positional_encoding", "transformer_block"):
        assert record.scores[question][0] == record.scores[question][1], question


def test_control_the_inverted_mask_answers_each_call_right(built_dist):
    """Called once on fresh arguments, as each hidden call is, the control's attention is
    right: only the mask it leaves behind is wrong."""
    import numpy as np
    from reference import attention as reference

    space = {}
    exec(textwrap.dedent(CHANGES["invierte_mascara.ipynb"][1]), space)
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    mask = rng.random((4, 5)) < 0.6
    mask[:, 0] = True
    kept = mask.copy()
    for got, expected in zip(space["attention"](Q, K, V, mask),
                             reference.attention(Q, K, V, kept)):
        assert np.allclose(got, expected)
    assert (mask == ~kept).all()
