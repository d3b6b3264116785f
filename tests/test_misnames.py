"""The grade says only what it measured (issue 49.4): each mistake a held-out probe saw misnamed
or said vaguely, as a student's notebook cell, with its control, the same style written right,
which keeps every point and gets no diagnosis.

* multihead's locators assumed one `attention` call per head: vectorised or fused code was told
  «A tiene un número de columnas que no sale de las entradas», «sin suponer que d_k = d_v =
  d_model/h» or «mezcla sus valores», and heads summed and repeated «cada vuelta del bucle»;
* a scale mistake in attention was «un factor distinto de 1/√d_k», though the factor is
  measured: now its law of the sizes is said (√d_k, 2/d_k, a fixed number);
* RMSNorm, a LayerNorm over the whole matrix and dividing by the variance got one sentence;
  each is now told by its signature;
* a graded function's name redefined by a later cell, or its cell saved as Markdown, was
  never said (through make grade's engine, the only place that sees the notebook's cells).

In process, each cell is graded as the grader grades it: the lesson's judge on many draws of
every hidden case, the failing ones explained together, and the located place where the
explanation leaves a case unexplained.
"""

import inspect
import textwrap

import nbformat
import numpy as np
import pytest

from reference import attention as reference
from attention import locate
from attention.functions import FUNCTIONS
from draws import summaries
from kit_autograder.verdicts import summary
from kit_autograder.verdicts.in_process import run_in_process
from grading_harness import Notebooks, grade_here, read_records, write_folder

SEEDS = range(4)


def cell(source, name):
    """The student's function ``name`` defined by the notebook cell ``source``, with the
    notebook's given helpers and, for the functions that call them, the reference's."""
    namespace = {"np": np, "softmax": reference.softmax, "layer_norm": reference.layer_norm,
                 "attention": reference.attention, "multihead": reference.multihead}
    exec(textwrap.dedent(source), namespace)
    return namespace[name]


def read(function, fn, seeds=SEEDS):
    """``{seed: (failing cases, [Diagnosis])}``: what the feedback says of ``function`` on each
    draw, as the grader says it (grading._grade_function)."""
    spec = FUNCTIONS[function]
    parameters = tuple(inspect.signature(getattr(reference, function)).parameters)

    def call(name, probe):
        return run_in_process(fn, probe, len(spec.parts),
                              {n: getattr(reference, n) for n in spec.stand_ins},
                              parameters=parameters).parts

    found = {}
    for seed, (failing, diagnoses) in summaries(function, fn, seeds).items():
        if failing and not summary.explained_everywhere(diagnoses, failing):
            from draws import judged
            from attention.cases import cases_for
            items = [judged(function, fn, case, seed) for case in cases_for(function)]
            place = summary.located(locate.locate, function, [i for i in items if i.failures],
                                    call, locate.locate_raised)
            if place is not None:
                diagnoses = summary.with_located(diagnoses, place)
        found[seed] = (failing, diagnoses)
    return found


def texts(found):
    """Every draw's diagnoses, one text per draw; each draw must fail and say something."""
    assert all(failing for failing, _ in found.values()), "a draw let the mistake through"
    assert all(diagnoses for _, diagnoses in found.values()), "a draw said nothing"
    return [" ".join(d.message for d in diagnoses) for _, diagnoses in found.values()]


def ids(found):
    return {i for _, diagnoses in found.values() for d in diagnoses for i in d.ids}


def full_marks(function, fn):
    assert all(not failing for failing, _ in read(function, fn).values())


# --- attention: the scale's factor, measured --------------------------------------------------

ATTENTION = '''
def attention(Q, K, V, mask=None):
    d_k = K.shape[-1]
    scores = {scores}
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
'''


@pytest.mark.parametrize("scores, said", [
    ("Q @ K.T * np.sqrt(d_k)", "multiplicada por √d_k, no por 1/√d_k"),
    ("Q @ K.T / (d_k ** 1/2)", "multiplicada por 2/d_k, no por 1/√d_k"),
    ("Q @ K.T / np.sqrt(d_k * Q.shape[0])", "multiplicada por 1/√(n·d_k), no por 1/√d_k"),
])
def test_a_wrong_scale_says_its_factor_as_a_law_of_the_sizes(scores, said):
    found = read("attention", cell(ATTENTION.format(scores=scores), "attention"))
    assert ids(found) == {"attention.located_scale"}
    for text in texts(found):
        assert said in text and "un factor distinto" not in text


def test_a_scale_from_another_cells_d_k_says_the_fixed_number_and_asks_for_it():
    source = "D_K = 4\n" + ATTENTION.format(scores="Q @ K.T / np.sqrt(D_K)")
    found = read("attention", cell(source, "attention"))
    for text in texts(found):
        assert "un número fijo, 0,5" in text and "1/√4" in text and "(d_k = 4)" in text


def test_a_fixed_number_that_is_no_notebooks_size_is_said_without_its_digits():
    """A factor is the code's to choose (one that kept a hidden input could spell it): only a
    notebook's size is quoted. The control is the test above, whose 1/√4 is quoted."""
    source = ATTENTION.format(scores="Q @ K.T * 0.3137")
    for text in texts(read("attention", cell(source, "attention"))):
        assert "un número fijo, el mismo con cualquier tamaño" in text
        assert "0,3137" not in text and "0.3137" not in text and "Tu número" not in text


def test_the_scale_written_right_in_the_same_style_keeps_every_point():
    full_marks("attention", cell(ATTENTION.format(scores="Q @ K.T / np.sqrt(d_k)"),
                                 "attention"))
    full_marks("attention", cell(ATTENTION.format(scores="Q @ K.T / (d_k ** (1/2))"),
                                 "attention"))


# --- multihead: vectorised and fused code, said only what was measured ------------------------

FUSED = '''
def multihead(X, heads, W_O, mask=None):
    h, n = len(heads), X.shape[0]
    d_k = heads[0][0].shape[1]
    W_Q = np.concatenate([q for q, k, v in heads], axis=1)
    W_K = np.concatenate([k for q, k, v in heads], axis=1)
    W_V = np.concatenate([v for q, k, v in heads], axis=1)
    Q = (X @ W_Q).reshape(n, h, -1).transpose(1, 0, 2)
    K = (X @ W_K).reshape(n, h, -1).transpose(1, 0, 2)
    V = {values}
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt({d_k})
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return (weights @ V).transpose(1, 0, 2).reshape(n, -1) @ W_O
'''
PROJECTED = "(X @ W_V).reshape(n, h, -1).transpose(1, 0, 2)"

EINSUM = '''
def multihead(X, heads, W_O, mask=None):
    Q = np.stack([X @ q for q, k, v in heads], axis=1)
    K = np.stack([X @ k for q, k, v in heads], axis=1)
    V = np.stack([X @ v for q, k, v in heads], axis=1)
    scores = np.einsum("nhd,mhd->nhm", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where({mask}, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return np.einsum("nhm,mhd->nhd", weights, V).reshape(X.shape[0], -1) @ W_O
'''

FALSE_CLAIMS = ("no sale de las entradas", "sin suponer que d_k = d_v", "mezcla sus valores",
                "bucle")


def test_values_never_projected_in_a_vectorised_multihead_get_the_sizes_it_measured():
    """V = X in every head: its concatenation has h·d_model columns, a product of the case's
    sizes, and every case raises, those whose heads are d_model/h wide too; so neither «no sale
    de las entradas» nor the note on unusual head sizes is said."""
    found = read("multihead", cell(FUSED.format(values="np.stack([X] * h)", d_k="d_k"),
                                   "multihead"))
    for text in texts(found):
        assert "d_model·h columnas" in text
        assert not any(claim in text for claim in FALSE_CLAIMS), text


def test_a_mask_broadcast_on_the_wrong_axis_is_not_blamed_on_the_head_sizes():
    """Scores laid out (n, h, m) and the mask as (1, n, m): NumPy aligns it with (h, m). It
    raises where the heads are d_model/h wide too, so the head sizes are not the cause."""
    found = read("multihead", cell(EINSUM.format(mask="mask[None, :, :]"), "multihead"))
    for text in texts(found):
        assert not any(claim in text for claim in FALSE_CLAIMS), text


def test_the_same_vectorised_styles_written_right_keep_every_point():
    full_marks("multihead", cell(FUSED.format(values=PROJECTED, d_k="d_k"), "multihead"))
    full_marks("multihead", cell(EINSUM.format(mask="mask[:, None, :]"), "multihead"))


def test_a_scale_read_from_the_fused_projection_is_said_with_its_law():
    """d_k read from the heads' W_Q side by side, √(h·d_k): one head alone is right, and it
    was told «algo … mezcla sus valores». Each head is measured as the attention of scores
    scaled by 1/√(h·d_k); the control above divides by one head's d_k and passes."""
    found = read("multihead", cell(FUSED.format(values=PROJECTED, d_k="W_Q.shape[1]"),
                                   "multihead"))
    assert ids(found) == {"multihead.located_heads_scaled"}
    for text in texts(found):
        assert "multiplicadas por 1/√(h·d_k), no por 1/√d_k" in text
        assert "¿Tomas d_k de la W_Q de todas las cabezas juntas" in text
        assert not any(claim in text for claim in FALSE_CLAIMS), text


@pytest.mark.parametrize("source, law, asked", [
    # Q divided by √d_k before attention, which divides again: the question fits.
    ("""
    def multihead(X, heads, W_O, mask=None):
        outputs = [attention(X @ (q / np.sqrt(q.shape[1])), X @ k, X @ v, mask)[0]
                   for q, k, v in heads]
        return np.concatenate(outputs, axis=1) @ W_O
    """, "multiplicadas por 1/d_k, no por 1/√d_k", True),
    # The number of tokens for d_k, in code that never calls attention: no question about it.
    ("""
    def multihead(X, heads, W_O, mask=None):
        outputs = []
        for W_Q, W_K, W_V in heads:
            scores = (X @ W_Q) @ (X @ W_K).T / np.sqrt(len(X))
            if mask is not None:
                scores = np.where(mask, scores, -np.inf)
            outputs.append(softmax(scores) @ (X @ W_V))
        return np.concatenate(outputs, axis=1) @ W_O
    """, "multiplicadas por 1/√n, no por 1/√d_k, donde n es el número de tokens", False),
])
def test_a_heads_scale_says_its_law_and_asks_only_what_fits_it(source, law, asked):
    found = read("multihead", cell(source, "multihead"))
    assert ids(found) == {"multihead.located_head_scores_scaled"}
    for text in texts(found):
        assert law in text and "un número distinto" not in text
        assert ("attention ya divide por √d_k" in text) is asked


def test_heads_summed_into_every_block_are_named_without_a_loop():
    """An older probe's: the sum of the heads repeated in each block was told «revisa qué
    matrices usa cada vuelta del bucle». The control, one head reused in every block, is
    still «todas las cabezas valen lo mismo que head_i» (test_diagnosis)."""
    source = '''
    def multihead(X, heads, W_O, mask=None):
        total = sum(attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads)
        return np.concatenate([total] * len(heads), axis=1) @ W_O
    '''
    found = read("multihead", cell(source, "multihead"))
    assert ids(found) == {"multihead.sum_of_heads_repeated"}
    for text in texts(found):
        assert "la suma de todas las cabezas, la misma en los h bloques" in text
        assert "bucle" not in text


# --- transformer_block: each normalisation by its signature -----------------------------------

BLOCK = '''
def norm(z):
    {norm}

def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x1 = norm(x + multihead(x, heads, W_O, mask))
    return norm(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)
'''
NORMS = {
    "transformer_block.located_rms_norm":
        "return z / np.sqrt((z ** 2).mean(axis=-1, keepdims=True) + 1e-5)",
    "transformer_block.located_norm_whole_matrix":
        "return (z - z.mean()) / np.sqrt(z.var() + 1e-5)",
    "transformer_block.located_norm_by_variance":
        "return (z - z.mean(axis=-1, keepdims=True)) / (z.var(axis=-1, keepdims=True) + 1e-5)",
}


@pytest.mark.parametrize("finding_id", list(NORMS))
def test_each_normalisation_that_is_no_layer_norm_is_told_by_its_signature(finding_id):
    found = read("transformer_block", cell(BLOCK.format(norm=NORMS[finding_id]),
                                           "transformer_block"))
    assert ids(found) == {finding_id}


def test_a_normalisation_over_the_whole_matrix_passes_the_one_token_case():
    """Its signature: with one token, the matrix is the row, and it is LayerNorm there."""
    found = read("transformer_block", cell(BLOCK.format(
        norm=NORMS["transformer_block.located_norm_whole_matrix"]), "transformer_block"))
    assert all("un_token" not in failing for failing, _ in found.values())


def test_a_layer_norm_written_by_hand_over_each_row_keeps_every_point():
    full_marks("transformer_block", cell(BLOCK.format(
        norm="return (z - z.mean(axis=-1, keepdims=True)) / "
             "np.sqrt(z.var(axis=-1, keepdims=True) + 1e-5)"), "transformer_block"))


# --- the notebook's layout: a name redefined below, a cell saved as Markdown ------------------

# A later experiment's softmax over the columns, whatever axis it is asked for.
SOFTMAX_BY_COLUMNS = '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)
'''
ATTENTION_WITHOUT_SCALE = '''
def attention(Q, K, V, mask=None):
    weights = softmax(Q @ K.T if mask is None else np.where(mask, Q @ K.T, -np.inf))
    return weights @ V, weights
'''
# Right, written otherwise: a later cell that redefines the function with code that is right.
ATTENTION_REWRITTEN = '''
def attention(Q, K, V, mask=None):
    s = (Q / np.sqrt(K.shape[1])) @ K.T
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = softmax(s, axis=-1)
    return w @ V, w
'''


def _as_text_cell(notebook_bytes, function, kind):
    """The notebook with the cell that defines ``function`` turned into a ``kind`` cell."""
    nb = nbformat.reads(notebook_bytes.decode("utf-8"), as_version=4)
    for index, one in enumerate(nb.cells):
        if one.cell_type == "code" and one.source.lstrip().startswith(f"def {function}("):
            make = nbformat.v4.new_markdown_cell if kind == "markdown" else \
                nbformat.v4.new_raw_cell
            nb.cells[index] = make(one.source)
            break
    return nbformat.writes(nb).encode("utf-8")


@pytest.fixture(scope="module")
def layout(built_dist, autograder_zip, tmp_path_factory):
    notebooks = Notebooks(built_dist)
    files = {
        "softmax_debajo.ipynb": notebooks.correct([SOFTMAX_BY_COLUMNS]),
        "attention_debajo.ipynb": notebooks.correct([ATTENTION_WITHOUT_SCALE]),
        "markdown.ipynb": _as_text_cell(notebooks.correct(), "attention", "markdown"),
        "raw.ipynb": _as_text_cell(notebooks.correct(), "positional_encoding", "raw"),
        # Controls: a function redefined below with right code, and a helper of another name.
        "reescrita.ipynb": notebooks.correct([ATTENTION_REWRITTEN]),
        "otro_nombre.ipynb": notebooks.correct([SOFTMAX_BY_COLUMNS.replace(
            "def softmax(", "def softmax_columnas(")]),
    }
    folder = tmp_path_factory.mktemp("disposicion")
    out = folder / "out"
    grade_here(write_folder(folder / "in", files), out, autograder_zip)
    return read_records(out), out


def _hidden(record, function):
    return [v for v in record.verdicts if v.question == function and not v.public]


def test_a_helper_redefined_by_a_later_cell_is_said_with_its_cells(layout):
    records, out = layout
    record = records["softmax_debajo.ipynb"]
    assert not all(v.passed for v in _hidden(record, "attention"))
    (said,) = [d for d in record.diagnoses["attention"] if d.ids == ["notebook.redefined"]]
    assert "define `softmax` en las celdas [" in said.message
    assert "y tu `attention` usa esa" in said.message
    # multihead is graded with the reference's attention: softmax below cannot reach it.
    assert all(v.passed for v in _hidden(record, "multihead"))
    assert "notebook.redefined" not in str(record.diagnoses.get("multihead"))
    feedback = (out / "feedback" / "softmax_debajo.md").read_text("utf-8")
    assert "define `softmax` en las celdas" in feedback


def test_a_graded_function_redefined_below_is_said(layout):
    records, _ = layout
    record = records["attention_debajo.ipynb"]
    said = [d.message for d in record.diagnoses["attention"] if d.ids == ["notebook.redefined"]]
    assert said and "define `attention` en las celdas [" in said[0]
    assert "tu `attention` usa esa" not in said[0]  # it is the function itself


@pytest.mark.parametrize("name, function, noun", [
    ("markdown.ipynb", "attention", "de Markdown (texto)"),
    ("raw.ipynb", "positional_encoding", "Raw (texto sin formato)")])
def test_a_graded_functions_cell_saved_as_text_is_said(layout, name, function, noun):
    records, _ = layout
    record = records[name]
    assert not any(v.passed for v in _hidden(record, function))
    (said,) = [d for d in record.diagnoses[function] if d.ids == ["notebook.text_cell"]]
    assert f"`def {function}(` en una celda {noun}" in said.message


@pytest.mark.parametrize("name", ["reescrita.ipynb", "otro_nombre.ipynb"])
def test_a_notebook_whose_functions_are_right_gets_no_layout_finding(layout, name):
    records, _ = layout
    record = records[name]
    for function in FUNCTIONS:
        assert all(v.passed for v in _hidden(record, function)), function
    assert not record.diagnoses


# --- the notebook's layout, read from the cells alone -----------------------------------------

STUB = '''def attention(Q, K, V, mask=None):
    """Atención."""
    raise NotImplementedError("Implementa attention")
'''
ANSWER = '''def attention(Q, K, V, mask=None):
    weights = softmax(Q @ K.T / np.sqrt(K.shape[-1]))
    return weights @ V, weights
'''


def test_the_stub_followed_by_the_answer_is_no_redefinition_and_the_stub_below_it_is():
    from kit_autograder.notebook_causes import redefinitions

    assert redefinitions("attention", ["import numpy as np", STUB, ANSWER]) == []
    (said,) = redefinitions("attention", ["import numpy as np", ANSWER, "", STUB])
    # Jupyter numbers the cells it runs: the empty one gets none.
    assert "define `attention` en las celdas [2] y [3]" in said and "la de la celda [3]" in said


def test_a_parameter_named_as_a_global_and_a_stand_in_are_not_what_the_function_reaches():
    """multihead's X is its parameter, however many cells set a global X; its attention is
    the grader's while multihead is graded. The control: a helper it really reads."""
    from kit_autograder.notebook_causes import redefinitions

    multihead = ("def multihead(X, heads, W_O, mask=None):\n"
                 "    return scale * np.concatenate([attention(X @ q, X @ k, X @ v, mask)[0]\n"
                 "                                   for q, k, v in heads], axis=1) @ W_O\n")
    cells = ["X = 1", ANSWER, multihead, "X = 2", "scale = 1", ANSWER.replace("K.T", "K.T / 2")]
    assert redefinitions("multihead", cells, ("attention",)) == []
    (said,) = redefinitions("multihead", cells + ["scale = 2"], ("attention",))
    assert "define `scale` en las celdas [5] y [7]" in said and "tu `multihead` usa esa" in said
