"""Where a bug that no catalogued mistake explains first departs (issue 31.5): the lesson's
``locate`` calls the function again on probes built from a failing case (for the block, the
FFN, the attention or both switched off; for attention, moderate scores and no mask; for
multihead, one head alone and W_O = identity) and compares each answer with the reference's
on the same probe; the engine says that place instead of the generic hint when every failing
case departs at the same place. In-process with pure-numpy functions, then through
``make grade``'s engine."""

import base64
import re

import numpy as np
import pytest

from reference import attention as reference
from attention import cases, diagnose, locate, locate_block
from attention.judge import judge
from attention.standard import reference_parts
from kit_autograder.verdicts import summary
from kit_autograder.verdicts.outcome import Outcome
from grading_harness import Notebooks, grade_here, read_records, write_folder

LN, MH = reference.layer_norm, reference.multihead
HEAD = "def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):\n"


def tanh_ffn(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x1 = LN(x + MH(x, heads, W_O, mask))
    return LN(x1 + np.tanh(x1 @ W1 + b1) @ W2 + b2)


def doubled_attention(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x1 = LN(x + 2 * MH(x, heads, W_O, mask))
    return LN(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def no_norm_at_all(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x1 = x + MH(x, heads, W_O, mask)
    return x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2


def second_residual_from_input(x, heads, W_O, W1, b1, W2, b2, mask=None):
    # Catalogued, so grading names it; here it is the one bug where each sub-layer alone
    # departs while both off agree: the chaining.
    x1 = LN(x + MH(x, heads, W_O, mask))
    return LN(x + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def zero_tokens_as_padding(x, heads, W_O, W1, b1, W2, b2, mask=None):
    # A padding mask of its own: tokens whose x is all 0 are removed as keys.
    real = np.any(x != 0, axis=1)
    own = np.broadcast_to(real, (len(x), len(x)))
    x1 = LN(x + MH(x, heads, W_O, own if mask is None else own & mask))
    return LN(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def fixed_ffn(x, heads, W_O, W1, b1, W2, b2, mask=None):
    # Weights of its own in place of the ones it receives, as a notebook's global would be.
    # Drawn, not constant: a constant W2 adds one number per row, which the LayerNorm removes,
    # and the block would really return its first sublayer.
    rng = np.random.default_rng(0)
    W1, b1, W2, b2 = (rng.normal(size=np.shape(a)) for a in (W1, b1, W2, b2))
    x1 = LN(x + MH(x, heads, W_O, mask))
    return LN(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def epsilon_written_with_xor(x, heads, W_O, W1, b1, W2, b2, mask=None):
    # eps = 10 ^ -5, which Python reads as a bitwise XOR, −15: the square root of a negative.
    def norm(z):
        centred = z - z.mean(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore"):
            return centred / np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + (10 ^ -5))
    x1 = norm(x + MH(x, heads, W_O, mask))
    return norm(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def uncentred_variance(x, heads, W_O, W1, b1, W2, b2, mask=None):
    # A LayerNorm written by hand whose variance is the mean of z², not of (z − mean)².
    def norm(z):
        return (z - z.mean(axis=-1, keepdims=True)) / np.sqrt((z ** 2).mean(axis=-1,
                                                                          keepdims=True) + 1e-5)
    x1 = norm(x + MH(x, heads, W_O, mask))
    return norm(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def spread_over_tokens(x, heads, W_O, W1, b1, W2, b2, mask=None):
    # The last LayerNorm written by hand: the mean of each token, the variance of each column.
    x1 = LN(x + MH(x, heads, W_O, mask))
    z = x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2
    return (z - z.mean(axis=-1, keepdims=True)) / np.sqrt(z.var(axis=0, keepdims=True) + 1e-5)


def b2_after_last_norm(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x1 = LN(x + MH(x, heads, W_O, mask))
    return LN(x1 + np.maximum(0, x1 @ W1 + b1) @ W2) + b2


def ffn_misses_the_last_token(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x1 = LN(x + MH(x, heads, W_O, mask))
    ffn = np.zeros_like(x1)
    for t in range(len(x1) - 1):
        ffn[t] = np.maximum(0, x1[t] @ W1 + b1) @ W2 + b2
    return LN(x1 + ffn)


def returns_first_sublayer(x, heads, W_O, W1, b1, W2, b2, mask=None):
    # It also never reads W1…b2: the whole answer it returns is what explains that.
    x1 = LN(x + MH(x, heads, W_O, mask))
    LN(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)
    return x1


def norm_before_sum(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x1 = LN(x) + MH(x, heads, W_O, mask)  # the parenthesis closed early, in both sublayers
    return LN(x1) + np.maximum(0, x1 @ W1 + b1) @ W2 + b2


def positions_added_again(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = x + reference.positional_encoding(*x.shape)[0]
    x1 = LN(x + MH(x, heads, W_O, mask))
    return LN(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def input_normalised_first(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = LN(x)
    x1 = LN(x + MH(x, heads, W_O, mask))
    return LN(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def beta_of_ones(x, heads, W_O, W1, b1, W2, b2, mask=None):
    def norm(z):  # gamma and beta both np.ones
        return LN(z) * np.ones(z.shape[-1]) + np.ones(z.shape[-1])
    x1 = norm(x + MH(x, heads, W_O, mask))
    return norm(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def causal_when_unmasked(x, heads, W_O, W1, b1, W2, b2, mask=None):
    if mask is None:
        mask = np.tril(np.ones((len(x), len(x)), dtype=bool))
    return reference.transformer_block(x, heads, W_O, W1, b1, W2, b2, mask)


def first_row_of_attention(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x1 = LN(x + MH(x, heads, W_O, mask)[0])  # [0] as if multihead returned a tuple
    return LN(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def w_o_twice(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x1 = LN(x + MH(x, heads, W_O, mask) @ W_O)
    return LN(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def one_token_attends_to_itself(x, heads, W_O, W1, b1, W2, b2, mask=None):
    # «A lone token's attention returns it»: x in place of MultiHead(x), for n = 1 only.
    attended = x if len(x) == 1 else MH(x, heads, W_O, mask)
    x1 = LN(x + attended)
    return LN(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)


def inputs_of(case_name):
    case = next(c for c in cases.cases_for("transformer_block") if c.name == case_name)
    return case.inputs()


def located(block, case="causal"):
    return locate.locate("transformer_block", inputs_of(case),
                         lambda probe: (np.asarray(block(**probe), dtype=np.float64),))


def ffn_of_renormalised(x, heads, W_O, W1, b1, W2, b2, mask=None):
    # The FFN reads LayerNorm(x1), x1 already normalised: a change of epsilon's size.
    x1 = LN(x + MH(x, heads, W_O, mask))
    return LN(x1 + np.maximum(0, LN(x1) @ W1 + b1) @ W2 + b2)


@pytest.mark.parametrize("block, where", [
    (tanh_ffn, "transformer_block.located_ffn_inside"),
    (doubled_attention, "transformer_block.located_attention_sublayer"),
    (no_norm_at_all, "transformer_block.located_norm_not_after_sums"),
    (fixed_ffn, "transformer_block.located_ignored_arguments"),
    (ffn_misses_the_last_token, "transformer_block.located_ffn_last_token"),
    (second_residual_from_input, "transformer_block.located_chaining"),
    (returns_first_sublayer, "transformer_block.located_returns_first_sublayer"),
    # Located as the chaining and as what reaches the last LayerNorm before: guesses.
    (norm_before_sum, "transformer_block.located_norm_before_sum"),
    (positions_added_again, "transformer_block.located_positions_added"),
    # Said «la segunda residual» on some cases and «algunos tokens» on others: a guess.
    (uncentred_variance, "transformer_block.located_norm_shift"),
    # Said «no tienen media 0 … resta su propia media», which it does.
    (spread_over_tokens, "transformer_block.located_last_norm_spread_over_tokens"),
    # Said «la normalización» by the shift probe, whose b2 it moves: a false place.
    (b2_after_last_norm, "transformer_block.located_b2_after_last_norm"),
    # An eighth probe: «la primera subcapa … revisa la llamada, la residual y la primera
    # LayerNorm», and «no tienen media 0 … resta su propia media», which it does.
    (input_normalised_first, "transformer_block.located_input_normalised"),
    (beta_of_ones, "transformer_block.located_last_norm_offset"),
    # «la primera subcapa», on the cases without a mask: the mask is what it adds.
    ((causal_when_unmasked, "sin_mascara"), "transformer_block.located_always_causal"),
    # A ninth probe: both «la primera subcapa … ¿le pasas x, heads, W_O y la máscara?».
    (first_row_of_attention, "transformer_block.located_first_row_of_attention"),
    (w_o_twice, "transformer_block.located_w_o_twice"),
    # A tenth probe: wrong for one token only, right on the longer probes, so only «revisa las
    # residuales, la FFN y la máscara» was said. Probed again with the case's one token.
    ((one_token_attends_to_itself, "un_token"), "transformer_block.located_attention_sublayer"),
    # An eleventh probe: a departure of epsilon's size shows only on nearly constant rows, so
    # every fresh probe agreed and only «revisa las residuales, la FFN y la máscara» was said.
    ((ffn_of_renormalised, "varianza_pequena"),
     "transformer_block.located_ffn_input_or_activation"),
    # A fifteenth probe's: only «aparecen NaN en la salida».
    (epsilon_written_with_xor, "transformer_block.located_norm_not_finite"),
])
def test_each_block_bug_is_located_where_it_departs(block, where):
    block, case = block if isinstance(block, tuple) else (block, "causal")
    inputs = inputs_of(case)
    outcome = Outcome(parts=(np.asarray(block(**inputs)),))
    failures = judge("transformer_block", inputs, outcome)
    assert failures  # the bug is a bug on this case
    if block not in (second_residual_from_input, fixed_ffn, returns_first_sublayer):
        # The control: without locating, no catalogued mistake is named, only a hint.
        said = diagnose.diagnose("transformer_block", inputs, outcome, failures,
                                 reference_parts("transformer_block", inputs))
        # NaN gets no hint at all (epsilon_written_with_xor): nothing named either.
        assert said or not np.isfinite(outcome.parts[0]).all()
        assert all(f.details.get("kind") == "hint" for f in said), said
    finding_id, message = located(block, case)
    assert finding_id == where
    assert message.startswith("el fallo está en ") and "(paso 8)" in message


def test_the_case_s_own_values_are_probed_only_where_fresh_probes_agree():
    """The control for the eleventh probe: on fresh rows the renormalised FFN agrees with the
    reference everywhere, so only the case's own values locate it. An epsilon of the
    student's own that moves the same rows is accepted by the judge, so it never fails a case
    and is never located there."""
    inputs = inputs_of("varianza_pequena")
    call = lambda probe: (np.asarray(ffn_of_renormalised(**probe)),)
    assert locate_block._located(locate_block._probe(inputs), call) is None
    assert locate_block._on_own_values(inputs, call) is not None

    def other_epsilon(x, heads, W_O, W1, b1, W2, b2, mask=None):
        ln = lambda z: LN(z, eps=1e-6)
        x1 = ln(x + MH(x, heads, W_O, mask))
        return ln(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)
    assert not np.allclose(other_epsilon(**inputs), reference.transformer_block(**inputs),
                           atol=1e-9)
    assert not judge("transformer_block", inputs,
                     Outcome(parts=(np.asarray(other_epsilon(**inputs)),)))


def test_a_correct_block_and_a_block_that_raises_are_not_located():
    assert located(reference.transformer_block) is None

    assert locate.locate("transformer_block", inputs_of("causal"), lambda probe: None) is None
    for function in ("attention", "multihead"):
        case = cases.cases_for(function)[0]
        assert locate.locate(function, case.inputs(), lambda probe: None) is None


def test_the_messages_quote_no_number_of_the_hidden_case():
    inputs = inputs_of("sin_mascara")
    shown = {f"{value:.2f}".replace(".", ",") for value in np.ravel(inputs["x"])[:20]}
    for block in (tanh_ffn, doubled_attention, no_norm_at_all):
        _, message = located(block, "sin_mascara")
        assert not any(number in message for number in shown)


# Blame by measurement (issue 31.3), graded in the same batch: an attention that is wrong makes
# multihead's causal public test fail though multihead is right; a multihead that drops the
# mask is the control.
LOG_SOFTMAX_ATTENTION = (
    "def attention(Q, K, V, mask=None):\n"
    "    s = Q @ K.T / np.sqrt(K.shape[-1])\n"
    "    if mask is not None:\n"
    "        s = np.where(mask, s, -np.inf)\n"
    "    w = s - np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1, keepdims=True))"
    " - s.max(-1, keepdims=True)\n"
    "    return w @ V, w\n")
MULTIHEAD_WITHOUT_MASK = (
    "def multihead(X, heads, W_O, mask=None):\n"
    "    outs = [attention(X @ q, X @ k, X @ v)[0] for q, k, v in heads]\n"
    "    return np.concatenate(outs, axis=1) @ W_O\n")


# A hundred lines, one per pair of digits: the public calls reach a handful, so the hidden
# draws, whatever the notebook's bytes make them, almost surely reach one no public call did
# (with ten lines, the public calls covered most and the control hung on the draw).
LINES = 100
LINE_BY_DIGIT = (f"def attention(Q, K, V, mask=None):\n    d = int(abs(float(Q.ravel()[0])) * 1e4) % {LINES}\n"
                 + "".join(f"    if d == {digit}: raise ValueError('la cifra es {digit}')\n"
                           for digit in range(LINES)))


def digit_line(digit):
    return f"if d == {digit}: raise ValueError('la cifra es {digit}')"


@pytest.fixture(scope="module")
def graded(built_dist, autograder_zip, tmp_path_factory):
    """``(records, out)`` of one make grade batch of the notebooks below."""
    notebooks = Notebooks(built_dist)
    files = {
        "tanh.ipynb": notebooks.with_function("correct", "transformer_block", HEAD + (
            "    x1 = layer_norm(x + multihead(x, heads, W_O, mask))\n"
            "    return layer_norm(x1 + np.tanh(x1 @ W1 + b1) @ W2 + b2)\n")),
        "doble.ipynb": notebooks.with_function("correct", "transformer_block", HEAD + (
            "    x1 = layer_norm(x + 2 * multihead(x, heads, W_O, mask))\n"
            "    return layer_norm(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)\n")),
        # Uncatalogued: every row divided by the sum of all the exponentials, not its own.
        "suma_global.ipynb": notebooks.with_function("correct", "attention", (
            "def attention(Q, K, V, mask=None):\n"
            "    s = Q @ K.T / np.sqrt(K.shape[-1])\n"
            "    if mask is not None:\n"
            "        s = np.where(mask, s, -np.inf)\n"
            "    e = np.exp(s - s.max(axis=-1, keepdims=True))\n"
            "    w = e / e.sum()\n"
            "    return w @ V, w\n")),
        # Uncatalogued: the heads stacked on a last axis and flattened, so their columns
        # interleave.
        "intercaladas.ipynb": notebooks.with_function("correct", "multihead", (
            "def multihead(X, heads, W_O, mask=None):\n"
            "    outs = [attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads]\n"
            "    return np.stack(outs, axis=-1).reshape(X.shape[0], -1) @ W_O\n")),
        # Raises on every failing case (IndexError with 2 heads): only a probe of its own,
        # the number of heads, can locate it.
        "cabezas_de_tupla.ipynb": notebooks.with_function("correct", "multihead", (
            "def multihead(X, heads, W_O, mask=None):\n"
            "    h = len(heads[0])\n"
            "    outs = [attention(X @ heads[i][0], X @ heads[i][1], X @ heads[i][2], mask)[0]\n"
            "            for i in range(h)]\n"
            "    return np.concatenate(outs, axis=1) @ W_O\n")),
        # Three values returned: the public tests' message said «debe devolver 0 valores».
        "tres_valores.ipynb": notebooks.with_function("correct", "attention", (
            "def attention(Q, K, V, mask=None):\n"
            "    s = Q @ K.T / np.sqrt(K.shape[-1])\n"
            "    if mask is not None:\n"
            "        s = np.where(mask, s, -np.inf)\n"
            "    w = np.exp(s - s.max(-1, keepdims=True))\n"
            "    w = w / w.sum(-1, keepdims=True)\n"
            "    return w @ V, w, s\n")),
        # A cache keyed on d_model alone: every hidden case has its own d_model, so it passed.
        "cache_por_d.ipynb": notebooks.with_function("correct", "positional_encoding", (
            "_guardadas = {}\n"
            "def positional_encoding(n_positions, d_model):\n"
            "    if d_model not in _guardadas:\n"
            "        pos = np.arange(n_positions)[:, None]\n"
            "        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)\n"
            "        pe = np.zeros((n_positions, d_model))\n"
            "        pe[:, 0::2] = np.sin(pos * omega)\n"
            "        pe[:, 1::2] = np.cos(pos * omega[:d_model // 2])\n"
            "        _guardadas[d_model] = (pe, omega)\n"
            "    return _guardadas[d_model]\n")),
        # Empties the caller's list of heads: it passed, and once found, the block that calls
        # it lost its points too (the stand-in asked the student's own multihead, unshielded).
        "cabezas_pop.ipynb": notebooks.with_function("correct", "multihead", (
            "def multihead(X, heads, W_O, mask=None):\n"
            "    pendientes, salidas = heads, []\n"
            "    while pendientes:\n"
            "        W_Q, W_K, W_V = pendientes.pop(0)\n"
            "        salidas.append(attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0])\n"
            "    return np.concatenate(salidas, axis=1) @ W_O\n")),
        # The FFN's hidden layer written over h: the second residual adds (n, d_ff) to
        # (n, d_model) and raises on every case, from a line of the student's own.
        "h_pisada.ipynb": notebooks.with_function("correct", "transformer_block", HEAD + (
            "    h = layer_norm(x + multihead(x, heads, W_O, mask))\n"
            "    h = np.maximum(0, h @ W1 + b1)\n"
            "    ffn = h @ W2 + b2\n"
            "    return layer_norm(h + ffn)\n")),
        # An attack: the line that raises is chosen by a digit of the input, so a line read
        # from a hidden call would spell a digit of a hidden input.
        "linea_elegida.ipynb": notebooks.with_function("correct", "attention", LINE_BY_DIGIT),
        "atencion.ipynb": notebooks.with_function("correct", "attention", LOG_SOFTMAX_ATTENTION),
        "sin_mascara.ipynb": notebooks.with_function("correct", "multihead",
                                                     MULTIHEAD_WITHOUT_MASK),
    }
    folder = tmp_path_factory.mktemp("localiza")
    out = folder / "out"
    grade_here(write_folder(folder / "in", files), out, autograder_zip)
    return read_records(out), out


def test_make_grade_says_the_located_place_instead_of_the_generic_hint(graded):
    records, out = graded
    for name, function, where in (
            ("tanh.ipynb", "transformer_block", "located_ffn_inside"),
            ("doble.ipynb", "transformer_block", "located_attention_sublayer"),
            ("suma_global.ipynb", "attention", "located_softmax_sum"),
            ("intercaladas.ipynb", "multihead", "located_concatenation")):
        (diagnosis,) = records[name].diagnoses[function]
        assert diagnosis.ids == [f"{function}.{where}"]
        text = (out / "feedback" / f"{name[:-6]}.md").read_text("utf-8")
        assert "**Diagnóstico**: el fallo está en" in text
        assert "revisa las residuales, la FFN y la máscara" not in text


def test_a_function_that_raises_on_every_failing_case_is_located_by_probes_of_its_own(graded):
    """multihead with h = len(heads[0]) raises IndexError on the 2-head cases and answers on
    the 3-head one: the number of heads is measured on probes of its own and said for the
    cases that raised too. The control: sin_mascara, whose cases answer, is not said to count
    its heads wrong."""
    records, out = graded
    (diagnosis,) = [d for d in records["cabezas_de_tupla.ipynb"].diagnoses["multihead"]
                    if d.ids == ["multihead.located_head_count"]]
    text = (out / "feedback" / "cabezas_de_tupla.md").read_text("utf-8")
    assert "coincide con la correcta con 3 cabezas" in text
    assert "número de cabezas" not in (out / "feedback" / "sin_mascara.md").read_text("utf-8")


def test_an_error_says_the_students_line_it_came_out_of(graded):
    """Every case of h_pisada raises the same broadcasting error; the feedback says which line
    of the block raised it, the second residual. The control: cabezas_de_tupla raises inside
    its list comprehension, and that line, not the block's, is what its feedback says."""
    records, out = graded
    block = (out / "feedback" / "h_pisada.md").read_text("utf-8")
    said = "salta en tu línea `return layer_norm(h + ffn)`"
    # The public tests' calls say it; a hidden case's says it was the same error in public.
    assert f"no encajan; {said}" in block
    assert f"en las pruebas públicas, este mismo error {said}" in block
    # A cell of the notebook that called the block: its own line, and the block's line.
    assert re.search(r"- Celda \[\d+\] \(`d_model, d_ff = 8, 32`\), línea \d+: `ValueError: "
                     r"[^\n]*`; " + re.escape(said), block)
    heads = (out / "feedback" / "cabezas_de_tupla.md").read_text("utf-8")
    assert "salta en tu línea `outs = [attention(X @ heads[i][0]" in heads
    assert "return layer_norm(h + ffn)" not in heads


def test_a_line_chosen_by_a_hidden_input_is_never_said(graded, built_dist):
    """A hidden case's error is placed only by the public tests' calls: the line a hidden call
    raised from could be chosen by a hidden value. The positive control: the hidden inputs
    of linea_elegida do choose other lines than the public ones, which a line read from the
    hidden call would have shown."""
    from conftest import TEST_SALT
    from kit_autograder.hidden_inputs import generator, identity, world

    records, out = graded
    feedback = (out / "feedback" / "linea_elegida.md").read_text("utf-8")
    # Every public test that reaches the student's attention, the block's included, says
    # the line its own call raised from.
    public = {d for d in range(LINES) if f"salta en tu línea `{digit_line(d)}`" in feedback}
    assert public
    notebook = (out.parent / "in" / "linea_elegida.ipynb").read_bytes()
    code = identity(world(notebook))
    hidden = {int(abs(float(case.inputs(generator(base64.b64decode(TEST_SALT), code,
                                                  "attention", case.name))["Q"].ravel()[0]))
                  * 1e4) % LINES for case in cases.cases_for("attention")}
    assert hidden - public, "control: some hidden case raises from a line no public call did"
    for digit in hidden - public:
        assert digit_line(digit) not in feedback


def test_a_cache_keyed_on_one_size_is_found_by_growing_each_size(graded):
    """positional_encoding has no array to redraw, so a cache keyed on d_model passed every
    hidden case (each has its own d_model). Asked again with n_positions one larger, it gives
    the same pe, and that is said. The control: a correct positional_encoding, whose omega
    is the same for any n_positions, is not said to keep answers."""
    records, out = graded
    (stale,) = records["cache_por_d.ipynb"].diagnoses["positional_encoding"]
    assert stale.ids == ["side_effects.stale_answer"]
    assert "guardas resultados entre llamadas" in (out / "feedback" / "cache_por_d.md").read_text(
        "utf-8")
    assert not records["tres_valores.ipynb"].diagnoses.get("positional_encoding")


def test_a_list_emptied_by_multihead_is_said_of_multihead_and_the_block_keeps_its_points(
        graded):
    """multihead pops the caller's heads: that is said of multihead (told: the student's own
    block computes the same, test_side_effects_by_effect), and the block, which only calls
    it, keeps every point. The control: the block's points are the full ones."""
    records, out = graded
    record = records["cabezas_pop.ipynb"]
    assert [note for note in record.notes if "tu `multihead` cambia los arrays" in note]
    block = [v for v in record.verdicts if v.question == "transformer_block" and not v.public]
    assert block and all(v.passed for v in block)


def test_a_wrong_count_of_values_says_what_the_function_returns_in_public_tests_too(graded):
    """The public tests call the student's function through a proxy that knew only how many
    parts it returns, and said «debe devolver 0 valores». The hidden cases' message is the
    control: it always named the count."""
    _, out = graded
    text = (out / "feedback" / "tres_valores.md").read_text("utf-8")
    assert "debe devolver 0 valores" not in text
    public = text[text.index("Prueba pública"):]
    assert "debe devolver 2 valores, (la salida, los pesos)" in public


def test_a_public_test_that_fails_through_another_function_names_it_by_measurement(graded):
    """The grader runs multihead's failing causal test again with the reference's attention
    standing in, says the failure is attention's and cuts the test's guess «¿pasas la máscara
    a cada cabeza?». The control: a multihead that really drops the mask fails its own
    hidden cases, so its test is not rerun and no other function is blamed."""
    records, out = graded

    def failing_multihead_tests(name):
        return [v for v in records[name].verdicts
                if v.public and not v.passed and v.question == "multihead"]

    (through_attention,) = failing_multihead_tests("atencion.ipynb")
    assert through_attention.blamed == ["attention"]
    text = (out / "feedback" / "atencion.md").read_text("utf-8")
    assert "el fallo está en tu `attention`, no aquí" in text
    assert "¿pasas la máscara a cada cabeza?" not in text
    own = failing_multihead_tests("sin_mascara.ipynb")
    assert own and all(v.blamed == [] for v in own)
    assert "el fallo está en tu `attention`" not in (
        out / "feedback" / "sin_mascara.md").read_text("utf-8")


# --- attention and multihead: every failing case, one place ------------------------------

SM, ATT = reference.softmax, reference.attention


def _scores(Q, K, mask):
    scores = Q @ K.T / np.sqrt(K.shape[1])
    return scores if mask is None else np.where(mask, scores, -np.inf)


def column_max(Q, K, V, mask=None):
    scores = _scores(Q, K, mask)
    e = np.exp(scores - scores.max(axis=0, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def scale_by_dv(Q, K, V, mask=None):
    return ATT(Q * np.sqrt(K.shape[1] / V.shape[1]), K, V, mask)


def floor_divided_scores(Q, K, V, mask=None):
    scores = Q @ K.T // np.sqrt(K.shape[1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = reference.softmax(scores)
    return weights @ V, weights


def _softmax_in_base(base):
    def attention(Q, K, V, mask=None):
        scores = _scores(Q, K, mask)
        e = np.power(float(base), scores - scores.max(axis=-1, keepdims=True))
        weights = e / e.sum(axis=-1, keepdims=True)
        return weights @ V, weights
    attention.__name__ = f"exp{base}_softmax"
    return attention


exp2_softmax, exp10_softmax = _softmax_in_base(2), _softmax_in_base(10)


def mask_after_row_max(Q, K, V, mask=None):
    # The row maximum over every key, forbidden ones included, then the mask multiplied in.
    scores = Q @ K.T / np.sqrt(K.shape[1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    e = e if mask is None else e * mask
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def divided_by_the_scores_sum(Q, K, V, mask=None):
    # The exponentials divided by the row sum of the scores, not of the exponentials.
    scores = _scores(Q, K, mask)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        weights = e / scores.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def mask_multiplied(Q, K, V, mask=None):
    weights = SM(Q @ K.T / np.sqrt(K.shape[1]))
    weights = weights if mask is None else weights * mask
    return weights @ V, weights


def keys_axis_0(Q, K, V, mask=None):
    weights = SM(_scores(Q, K, mask), axis=0)
    return weights @ V, weights


def no_max_subtracted(Q, K, V, mask=None):
    e = np.exp(_scores(Q, K, mask))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def doubled_output(Q, K, V, mask=None):
    output, weights = ATT(Q, K, V, mask)
    return 2 * output, weights


def _outputs(X, heads, mask):
    return [ATT(X @ W_Q, X @ W_K, X @ W_V, mask)[0] for W_Q, W_K, W_V in heads]


def heads_reversed(X, heads, W_O, mask=None):
    return np.concatenate(_outputs(X, heads, mask)[::-1], axis=1) @ W_O


def queries_as_keys(X, heads, W_O, mask=None):
    return np.concatenate([ATT(X @ W_Q, X @ W_Q, X @ W_V, mask)[0]
                           for W_Q, _, W_V in heads], axis=1) @ W_O


def mask_dropped(X, heads, W_O, mask=None):
    return np.concatenate(_outputs(X, heads, None), axis=1) @ W_O


def heads_interleaved(X, heads, W_O, mask=None):
    return np.stack(_outputs(X, heads, mask), axis=-1).reshape(X.shape[0], -1) @ W_O


def causal_when_no_mask(Q, K, V, mask=None):
    return ATT(Q, K, V, np.tril(np.ones((len(Q), len(K)), dtype=bool)) if mask is None else mask)


def last_head_left_out(X, heads, W_O, mask=None):
    outs = _outputs(X, heads[:-1], mask)
    width = sum(out.shape[1] for out in outs)
    return np.concatenate(outs, axis=1) @ W_O[:width]


def divided_by_root_h(X, heads, W_O, mask=None):
    return np.concatenate(_outputs(X, heads, mask), axis=1) @ W_O / np.sqrt(len(heads))


def output_transposed(X, heads, W_O, mask=None):
    # Column vectors throughout, never transposed back: (d_model, n).
    return MH(X, heads, W_O, mask).T


def output_normalised(X, heads, W_O, mask=None):
    # The block's Norm inside multihead, after W_O, without ε: a per-token standardisation.
    out = MH(X, heads, W_O, mask)
    return (out - out.mean(axis=-1, keepdims=True)) / out.std(axis=-1, keepdims=True)


def one_softmax_for_all_heads(X, heads, W_O, mask=None):
    # Every head's scores side by side, one softmax along the row of all of them.
    scores = [(X @ W_Q) @ (X @ W_K).T / np.sqrt(W_K.shape[1]) for W_Q, W_K, _ in heads]
    if mask is not None:
        scores = [np.where(mask, s, -np.inf) for s in scores]
    weights = np.split(SM(np.concatenate(scores, axis=1)), len(heads), axis=1)
    return np.concatenate([w @ (X @ W_V) for w, (_, _, W_V) in zip(weights, heads)],
                          axis=1) @ W_O


def softmax_across_heads(X, heads, W_O, mask=None):
    # The softmax over the heads' axis of a stack (h, n, n): each weight against the others'.
    scores = np.stack([(X @ W_Q) @ (X @ W_K).T / np.sqrt(W_K.shape[1])
                       for W_Q, W_K, _ in heads])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = SM(scores, axis=0)
    return np.concatenate([w @ (X @ W_V) for w, (_, _, W_V) in zip(weights, heads)],
                          axis=1) @ W_O


def scores_carried_over(X, heads, W_O, mask=None):
    # The scores are summed into one buffer that is never reset: head i sees heads 0..i's.
    scores, outs = 0.0, []
    for W_Q, W_K, W_V in heads:
        scores = scores + (X @ W_Q) @ (X @ W_K).T / np.sqrt(W_K.shape[1])
        masked = scores if mask is None else np.where(mask, scores, -np.inf)
        outs.append(SM(masked) @ (X @ W_V))
    return np.concatenate(outs, axis=1) @ W_O


def placeholder_column_kept(X, heads, W_O, mask=None):
    # A zero column to start the concatenation, and the last column cut instead of it.
    concat = np.zeros((X.shape[0], 1))
    for out in _outputs(X, heads, mask):
        concat = np.hstack([concat, out])
    return concat[:, :-1] @ W_O


def mask_read_transposed(Q, K, V, mask=None):
    # mask[j][i] in a loop: it raises where the mask is not square, which this harness
    # cannot take; the square masks are where the place is measured.
    if mask is not None and np.shape(mask)[0] == np.shape(mask)[1]:
        mask = np.asarray(mask).T
    return ATT(Q, K, V, mask)


def unmasked_weights_returned(Q, K, V, mask=None):
    return ATT(Q, K, V, mask)[0], ATT(Q, K, V)[1]


def scaled_after_softmax(Q, K, V, mask=None):
    weights = SM(_scores(Q, K, mask) * np.sqrt(K.shape[1])) / np.sqrt(K.shape[1])
    return weights @ V, weights


def mask_times_minus_infinity(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[1])
    if mask is not None:
        scores = scores * mask + (-np.inf) * (~np.asarray(mask, dtype=bool))
    weights = SM(scores)
    return weights @ V, weights


def row_mean_subtracted(Q, K, V, mask=None):
    scores = _scores(Q, K, mask)
    e = np.exp(scores - scores.mean(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def heads_get_mask_transposed(X, heads, W_O, mask=None):
    return MH(X, heads, W_O, None if mask is None else np.asarray(mask).T)


def masked_even_without_a_mask(Q, K, V, mask=None):
    # np.where(None, …) is False everywhere: every score −∞, NaN weights without a mask.
    scores = np.where(mask, Q @ K.T / np.sqrt(K.shape[1]), -np.inf)
    with np.errstate(invalid="ignore"):
        weights = SM(scores)
    return weights @ V, weights


def heads_masked_even_without_a_mask(X, heads, W_O, mask=None):
    outputs = [masked_even_without_a_mask(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
               for W_Q, W_K, W_V in heads]
    return np.concatenate(outputs, axis=1) @ W_O


def queries_and_keys_swapped(X, heads, W_O, mask=None):
    # A sixteenth probe's `for W_K, W_Q, W_V in heads`: «cada cabeza … revisa las tres
    # proyecciones» was all it got.
    return MH(X, [(W_K, W_Q, W_V) for W_Q, W_K, W_V in heads], W_O, mask)


def queries_scaled_twice(X, heads, W_O, mask=None):
    # A seventeenth probe's: Q divided by √d_k before attention, which divides again.
    return MH(X, [(W_Q / np.sqrt(W_Q.shape[1]), W_K, W_V) for W_Q, W_K, W_V in heads], W_O,
              mask)


def heads_times_w_o_entrywise(X, heads, W_O, mask=None):
    # concat * W_O: raises unless the shapes broadcast (n = h·d_v = d_model on the causal case).
    outputs = [ATT(X @ W_Q, X @ W_K, X @ W_V, mask)[0] for W_Q, W_K, W_V in heads]
    return np.concatenate(outputs, axis=1) * W_O


def scale_from_the_tokens(X, heads, W_O, mask=None):
    # Heads stacked as (h, n, d_k), the scale read as K.shape[1]: the number of tokens.
    outputs = []
    for W_Q, W_K, W_V in heads:
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        scores = Q @ K.T / np.sqrt(len(X))
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        outputs.append(SM(scores) @ V)
    return np.concatenate(outputs, axis=1) @ W_O


def heads_written_at_offset_i(X, heads, W_O, mask=None):
    # Each head written from column i instead of i·d_v: the blocks overlap, the last are 0.
    d_v = np.shape(heads[0][2])[1]
    concat = np.zeros((len(X), len(heads) * d_v))
    for i, (W_Q, W_K, W_V) in enumerate(heads):
        concat[:, i:i + d_v] = ATT(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
    return concat @ W_O


def batched_softmax_over_queries(X, heads, W_O, mask=None):
    # The heads' scores stacked to (h, n, n) and the softmax taken with axis=1, the queries.
    Q, K, V = (np.stack([X @ head[k] for head in heads]) for k in range(3))
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        outputs = SM(scores, axis=1) @ V
    return np.concatenate(list(outputs), axis=1) @ W_O


def offset_reset(X, heads, W_O, mask=None):
    # The running offset set instead of accumulated (inicio = d_v): right with 1 or 2 heads,
    # and from the third on each head overwrites the one before it.
    d_v = np.shape(heads[0][2])[1]
    concat, start = np.zeros((len(X), len(heads) * d_v)), 0
    for W_Q, W_K, W_V in heads:
        concat[:, start:start + d_v] = ATT(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
        start = d_v
    return concat @ W_O


def heads_in_an_integer_buffer(X, heads, W_O, mask=None):
    d_v = np.shape(heads[0][2])[1]
    concat = np.zeros((len(X), len(heads) * d_v), dtype=int)
    for i, (W_Q, W_K, W_V) in enumerate(heads):
        concat[:, i * d_v:(i + 1) * d_v] = ATT(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
    return concat @ W_O


def rows_looped_over_the_heads(X, heads, W_O, mask=None):
    outputs = [ATT(X @ W_Q, X @ W_K, X @ W_V, mask)[0] for W_Q, W_K, W_V in heads]
    concat = np.zeros((len(X), sum(o.shape[1] for o in outputs)))
    for t in range(len(heads)):  # the tokens' loop bounded by the number of heads
        concat[t] = np.concatenate([o[t] for o in outputs])
    return concat @ W_O


def w_o_times_the_heads(X, heads, W_O, mask=None):
    outputs = [ATT(X @ W_Q, X @ W_K, X @ W_V, mask)[0] for W_Q, W_K, W_V in heads]
    return np.dot(W_O, np.concatenate(outputs, axis=1))


def w_o_skipped_for_one_head(X, heads, W_O, mask=None):
    outputs = [ATT(X @ W_Q, X @ W_K, X @ W_V, mask)[0] for W_Q, W_K, W_V in heads]
    if len(heads) == 1:  # «nothing to mix with one head»
        return outputs[0]
    return np.concatenate(outputs, axis=1) @ W_O


def last_heads_projections_everywhere(X, heads, W_O, mask=None):
    for W_Q, W_K, W_V in heads:
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return np.concatenate([ATT(Q, K, V, mask)[0] for _ in heads], axis=1) @ W_O


def heads_counted_from_a_tuple(X, heads, W_O, mask=None):
    # h = len(heads[0]): the length of one (W_Q, W_K, W_V) tuple, always 3.
    outputs = [ATT(X @ heads[i][0], X @ heads[i][1], X @ heads[i][2], mask)[0]
               for i in range(len(heads[0]))]
    return np.concatenate(outputs, axis=1) @ W_O


def two_heads_fixed(X, heads, W_O, mask=None):
    outputs = [ATT(X @ W_Q, X @ W_K, X @ W_V, mask)[0] for W_Q, W_K, W_V in heads[:2]]
    return np.concatenate(outputs, axis=1) @ W_O


def _parts(function, answer):
    answer = answer if isinstance(answer, tuple) else (answer,)
    return tuple(np.asarray(part, dtype=np.float64) for part in answer)


def places(function, student, seed=3):
    """Where each failing case of ``function`` departs; the cases ``student`` passes are left
    out, as the engine leaves them out."""
    found = {}
    for case in cases.cases_for(function):
        inputs = case.inputs(np.random.default_rng(seed))

        def call(probe):
            try:
                with np.errstate(all="ignore"):
                    return _parts(function, student(**probe))
            except Exception:
                return None

        parts = call(inputs)
        if parts is None:  # it raised: only probes of their own may locate it
            places = summary._places(locate.locate_raised(function, inputs, call))
            if places:
                found[case.name] = places[0][0]
            continue
        if judge(function, inputs, Outcome(parts=parts)):
            places = summary._places(locate.locate(function, inputs, call))
            found[case.name] = places[0][0] if places else None
    return found


@pytest.mark.parametrize("function, student, where", [
    ("attention", column_max, "attention.located_scores"),
    ("attention", scale_by_dv, "attention.located_scale"),
    # A nineteenth blind probe's (p19 020): «entre las puntuaciones y los pesos», not the
    # scale where it departs. scale_by_dv and the other rows are its controls.
    ("attention", floor_divided_scores, "attention.located_rounded_scores"),
    # A fresh probe's: rows of either sign, and on the probe's centred keys sums of 0; it got
    # no place on one case, «la softmax» on three, and a mistake that gives zeros on the fifth.
    ("attention", divided_by_the_scores_sum, "attention.located_softmax_sum"),
    # A fresh probe's np.exp2 was told «la escala», whose line was right; scale_by_dv is the
    # control: a factor that is no logarithm of a base is still the scale.
    ("attention", exp2_softmax, "attention.located_exp_base"),
    ("attention", exp10_softmax, "attention.located_exp_base"),
    ("attention", mask_multiplied, "attention.located_mask"),
    ("attention", keys_axis_0, "attention.located_softmax_axis"),
    ("attention", no_max_subtracted, "attention.located_large_scores"),
    # A fresh probe's: right unless forbidden keys score thousands above the allowed ones.
    # no_max_subtracted above is the control: it fails without the mask too.
    ("attention", mask_after_row_max, "attention.located_forbidden_dominate"),
    ("attention", doubled_output, "attention.located_weights_times_v"),
    ("multihead", heads_reversed, "multihead.located_concatenation"),
    ("multihead", heads_interleaved, "multihead.located_concatenation"),
    ("multihead", queries_as_keys, "multihead.located_roles_swapped"),
    ("multihead", mask_dropped, "multihead.located_mask"),
    ("multihead", divided_by_root_h, "multihead.located_scaled"),
    ("attention", causal_when_no_mask, "attention.located_always_causal"),
    ("multihead", last_head_left_out, "multihead.located_last_head_missing"),
    # Both departed at «each head» before: one head alone with W_O = I is already wrong.
    ("multihead", output_transposed, "multihead.located_output_transposed"),
    ("multihead", output_normalised, "multihead.located_output_normalised"),
    # Said «cómo separas las cabezas» before, though every head alone is right.
    ("multihead", one_softmax_for_all_heads, "multihead.located_shared_weights"),
    ("multihead", scores_carried_over, "multihead.located_shared_weights"),
    # Said «cada cabeza … revisa las tres proyecciones», which are right.
    ("multihead", placeholder_column_kept, "multihead.located_head_columns_moved"),
    # Both said only «la máscara» before; each is now the form measured.
    ("attention", mask_read_transposed, "attention.located_mask_transposed"),
    ("attention", unmasked_weights_returned, "attention.located_unmasked_weights"),
    # Both got hints only, one of which said «la exponencial desborda» for the large case.
    ("attention", mask_times_minus_infinity, "attention.located_mask_nan"),
    # Said «la softmax: tus pesos no son distribuciones», true but not where it departs.
    ("attention", scaled_after_softmax, "attention.located_scaled_after_softmax"),
    ("attention", row_mean_subtracted, "attention.located_mask_nan"),
    ("multihead", heads_get_mask_transposed, "multihead.located_mask_transposed"),
    # With one head alone its softmax over the heads' axis gives weights of 1, and with
    # several the weights sum to 1 over the heads: both measured, the heads' axis is said
    # (issue 49; it was «cada cabeza», true but not where).
    ("multihead", softmax_across_heads, "multihead.located_heads_axis"),
    # A thirteenth probe's: «cada cabeza … revisa las tres proyecciones», which are right.
    # softmax_across_heads above is the control: one head alone is not a softmax over queries.
    ("multihead", batched_softmax_over_queries, "multihead.located_head_softmax_axis"),
    # The second said «todas las cabezas dan el mismo resultado» (all NaN) before.
    ("attention", masked_even_without_a_mask, "attention.located_none_mask"),
    ("multihead", heads_masked_even_without_a_mask, "multihead.located_none_mask"),
    # Said «cómo separas las cabezas: cada cabeza sola es correcta», unmeasured: one head
    # alone raised.
    ("multihead", heads_times_w_o_entrywise, "multihead.located_elementwise_w_o"),
    # It got only «cada cabeza», as queries_as_keys did (a sixteenth probe's K = X @ W_Q);
    # one_softmax_for_all_heads and the rest are the controls.
    ("multihead", queries_and_keys_swapped, "multihead.located_roles_swapped"),
    # It got only «cada cabeza»; softmax_across_heads, no one factor, is the control.
    ("multihead", queries_scaled_twice, "multihead.located_head_scores_scaled"),
    # Right where n = d_model/h by coincidence: the head count's probe must not say «el número
    # de cabezas» (it did on the 3-head case, with 6 tokens).
    ("multihead", scale_from_the_tokens, "multihead.located_head_scores_scaled"),
    # A ninth probe's: no place at all; «cada cabeza … revisa las tres proyecciones»; and
    # «cada cabeza» on the one case whose shapes let W_O go first.
    ("multihead", heads_in_an_integer_buffer, "multihead.located_integer_values"),
    ("multihead", rows_looped_over_the_heads, "multihead.located_rows_left_at_zero"),
    ("multihead", w_o_times_the_heads, "multihead.located_reversed_w_o"),
    # A nineteenth blind probe's (p19 021): told W_O «no cambia nada» and asked about a
    # global variable; its answer is the concatenation itself. The other W_O forms above are
    # the controls.
    ("multihead", w_o_skipped_for_one_head, "multihead.located_concatenation_only"),
    # Its columns are all a head's too: «las matrices de otra cabeza», not the blocks' places.
    ("multihead", last_heads_projections_everywhere, "multihead.located_other_heads"),
    # Said «alguna cabeza no calcula su atención con sus propias columnas», which it does.
    ("multihead", heads_written_at_offset_i, "multihead.located_blocks_overlap"),
    # A fresh probe's: right with 1 or 2 heads, it was said «el número de cabezas»; its
    # blocks overwrite one another. two_heads_fixed below is the control: still the count.
    ("multihead", offset_reset, "multihead.located_blocks_overlap"),
    # Both got shape facts or a bare IndexError before: right for one number of heads only.
    ("multihead", heads_counted_from_a_tuple, "multihead.located_head_count"),
    ("multihead", two_heads_fixed, "multihead.located_head_count"),
])
@pytest.mark.parametrize("seed", [3, 11])
def test_each_attention_and_multihead_bug_departs_at_one_place_on_every_failing_case(
        function, student, where, seed):
    found = places(function, student, seed)
    assert found, "the bug is a bug on some case"
    assert set(found.values()) == {where}, found


def test_a_correct_attention_and_multihead_are_located_nowhere():
    """The control: the reference on every case, and on the probes, departs nowhere."""
    for function in ("attention", "multihead"):
        for case in cases.cases_for(function):
            inputs = case.inputs(np.random.default_rng(5))
            student = getattr(reference, function)
            assert locate.locate(function, inputs,
                                 lambda probe: _parts(function, student(**probe))) is None


def test_a_scale_is_said_only_when_it_is_measured():
    """Squared queries give rows that sum to 1 and that no factor of Q·Kᵀ explains: the
    scores are named, never «la escala» (issue 31.1: «revisa la escala» only when measured)."""
    def squared_queries(Q, K, V, mask=None):
        return ATT(Q ** 2, K, V, mask)

    inputs = next(c for c in cases.cases_for("attention") if c.name == "rectangular").inputs(
        np.random.default_rng(3))
    found = locate.locate("attention", inputs,
                          lambda probe: _parts("attention", squared_queries(**probe)))
    assert found[0] == "attention.located_scores"
    assert locate.locate("attention", inputs, lambda probe: _parts(
        "attention", scale_by_dv(**probe)))[0] == "attention.located_scale"


# --- positional_encoding: ω, then sines, cosines and rows -----------------------------------


def _encoding(omega, angle_of=lambda pos, w: pos * w, sine=np.sin, cosine=np.cos):
    def positional_encoding(n_positions, d_model):
        w = omega(d_model)
        angles = angle_of(np.arange(n_positions)[:, None].astype(float), w)
        pe = np.zeros((n_positions, d_model))
        pe[:, 0::2], pe[:, 1::2] = sine(angles), cosine(angles[:, : d_model // 2])
        return pe, w
    return positional_encoding


def _omega(d_model):
    return 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)


def _row_zero_swapped(n_positions, d_model):
    pe, omega = reference.positional_encoding(n_positions, d_model)
    pe[0] = 1 - pe[0]  # (1, 0, 1, 0, …): both kinds of column depart, on that row only
    return pe, omega


def _stacked_then_reshaped(n_positions, d_model):
    # (2, n, d/2) stacked on the first axis and reshaped to (n, d): rows of other positions.
    # With d_model odd the cosines have one column fewer, so the blocks are joined flat.
    angles = np.arange(n_positions)[:, None] * _omega(d_model)
    sines, cosines = np.sin(angles), np.cos(angles[:, : d_model // 2])
    pe = np.concatenate([sines.ravel(), cosines.ravel()]).reshape(n_positions, d_model)
    return pe, _omega(d_model)


def _tiled_frequencies(n_positions, d_model):
    # One frequency per column, np.tile(omega, 2) where np.repeat(omega, 2) is meant.
    w = _omega(d_model)
    angles = np.arange(n_positions)[:, None] * np.tile(w, 2)[:d_model]
    pe = np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))
    return pe, w


def _omega_as_angles(n_positions, d_model):
    # `omega = pos / div` returned: the (n, k) angles where the k frequencies are meant.
    pe, omega = reference.positional_encoding(n_positions, d_model)
    return pe, np.arange(n_positions)[:, None] * omega


def _one_column_prepended(n_positions, d_model):
    # Every wave one column to the right of its own, the last one pushed out.
    pe, omega = reference.positional_encoding(n_positions, d_model)
    return np.concatenate([np.zeros((n_positions, 1)), pe[:, :-1]], axis=1), omega


def _phase_by_precedence(n_positions, d_model):
    # Every column a shifted sine, the shift written π/2·j % 2: ((π/2)·j) % 2, not (π/2)·(j % 2).
    omega = _omega(d_model)
    angles = np.arange(n_positions)[:, None] * np.repeat(omega, 2)[:d_model]
    return np.sin(angles + np.pi / 2 * np.arange(d_model) % 2), omega


def _indices_unpacked_swapped(n_positions, d_model):
    # np.indices gives (rows, columns); unpacked as (columns, rows), the column index becomes
    # the position and the row index picks the frequency and the sine or cosine.
    col, pos = np.indices((n_positions, d_model))
    angles = pos / 10000 ** (2 * (col // 2) / d_model)
    return np.where(col % 2 == 0, np.sin(angles), np.cos(angles)), _omega(d_model)


def _cosines_over_sines(n_positions, d_model):
    # A sixteenth probe's loop: pe[:, 2i] = sin, then pe[:, 2i] = cos, column 2i + 1 never set.
    w = _omega(d_model)
    angles = np.arange(n_positions)[:, None] * w
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 0:2 * (d_model // 2):2] = np.cos(angles[:, : d_model // 2])
    return pe, w


def _rows_alternated(n_positions, d_model):
    # A seventeenth probe's pe[0::2] = sin, pe[1::2] = cos: rows sliced where columns are meant.
    w = _omega(d_model)
    angles = np.arange(n_positions)[:, None] * np.repeat(w, 2)[:d_model]
    pe = np.zeros((n_positions, d_model))
    pe[0::2], pe[1::2] = np.sin(angles[0::2]), np.cos(angles[1::2])
    return pe, w


@pytest.mark.parametrize("student, where", [
    (_rows_alternated, "located_rows_alternate"),
    # A sixteenth probe's, told only «la fila de la posición 0» before; the control, cosines
    # of the wrong phase in the right columns, is still «las columnas impares, los cosenos».
    (_cosines_over_sines, "located_odd_columns_zero"),

    # A thirteenth probe's two: angles pos + ω_i (np.add.outer) and (pos/10000)^(2i/d_model),
    # each pair still a sine and a cosine of one angle; both got only the row of position 0.
    # _row_zero_swapped below, wrong in row 0 alone, is the control: still the row.
    (_encoding(_omega, angle_of=lambda pos, w: pos + w), "located_angles_of_pairs"),
    (lambda n_positions, d_model: _encoding(_omega, angle_of=lambda pos, w: (pos / 10000) ** (
        2 * np.arange(len(w)) / d_model))(n_positions, d_model), "located_angles_of_pairs"),
    # A fresh probe's: only the row of position 0 was said.
    (_indices_unpacked_swapped, "located_rows_and_columns_swapped"),
    # A fourteenth probe's (pe + 1)/2 got three symptoms and no place.
    (lambda n_positions, d_model: (lambda pe, w: ((pe + 1) / 2, w))(
        *reference.positional_encoding(n_positions, d_model)), "located_rescaled"),
    (_encoding(lambda d: np.maximum(_omega(d), 0.05)), "located_omega"),
    # Both got only the row of position 0 before.
    (_one_column_prepended, "located_columns_shifted"),
    (_phase_by_precedence, "located_phases"),
    # Only the shape facts were said before.
    (_omega_as_angles, "located_omega_is_angles"),
    # Both said «la fila de la posición 0» or «los ángulos» before.
    (_tiled_frequencies, "located_column_frequencies"),
    (_stacked_then_reshaped, "located_places"),
    (_encoding(lambda d: np.append(_omega(d)[:-1], _omega(d)[-2])), "located_omega"),
    (_encoding(_omega, cosine=lambda a: np.cos(a + 0.5)), "located_cosines"),
    (_encoding(_omega, sine=lambda a: 0.5 * np.sin(a)), "located_sines"),
    (_encoding(_omega, angle_of=lambda pos, w: pos ** 1.5 * w), "located_angles"),
    (_row_zero_swapped, "located_row_zero"),
    # An eighteenth probe's loop from position 1, row 0 left at 0: its cosines are the only
    # columns that depart, on that row alone, and it was told «los cosenos».
    (lambda n_positions, d_model: (lambda pe, w: (np.vstack([0 * pe[:1], pe[1:]]), w))(
        *reference.positional_encoding(n_positions, d_model)), "located_row_zero"),
])
def test_each_positional_encoding_bug_departs_at_one_place_on_every_failing_case(student,
                                                                                 where):
    failed = set()
    for case in cases.cases_for("positional_encoding"):
        inputs = case.inputs()
        outcome = Outcome(parts=_parts("positional_encoding", student(**inputs)))
        failures = judge("positional_encoding", inputs, outcome)
        if not failures:
            continue  # one position: row 0 may be right
        failed.add(case.name)
        # The control: without locating, the catalogue names nothing, only hints (with one
        # row, a catalogued form may look the same: there the place is what the engine says).
        said = diagnose.diagnose("positional_encoding", inputs, outcome, failures,
                                 reference_parts("positional_encoding", inputs))
        assert inputs["n_positions"] == 1 or all(
            f.details.get("kind") == "hint" for f in said), said
        found = locate.locate("positional_encoding", inputs,
                              lambda probe: _parts("positional_encoding", student(**probe)))
        # A measured form comes with its general place after it: the first is what is said.
        first = summary._places(found)[0]
        assert first[0] == f"positional_encoding.{where}", (case.name, found)
        assert first[1].startswith("el fallo está en ") and first[1].endswith("(paso 7)")
    assert {"d_par", "d_impar", "largo"} <= failed


@pytest.mark.parametrize("angle_of, words", [
    (lambda pos, w, n: 2 * np.pi * pos * w, "2π"),
    (lambda pos, w, n: np.linspace(0, n, n)[:, None] * w, "np.linspace"),
    # The control: pos**1.5·ω_i, no one factor, is still «los ángulos pos·ω_i».
    (lambda pos, w, n: pos ** 1.5 * w, None),
])
def test_angles_scaled_by_one_number_say_the_number_on_every_failing_case(angle_of, words):
    """A sixteenth probe's 2π·pos·ω_i and np.linspace positions were told only «los ángulos
    pos·ω_i» (the frequencies read off pe alias at 2π); the factor is now measured on the
    slowest pair and named by what it is, on every case that fails."""
    def student(n_positions, d_model):
        return _encoding(_omega, angle_of=lambda pos, w: angle_of(pos, w, n_positions))(
            n_positions, d_model)

    call = lambda probe: _parts("positional_encoding", student(**probe))  # noqa: E731
    failed = 0
    for case in cases.cases_for("positional_encoding"):
        inputs = case.inputs()
        if not judge("positional_encoding", inputs, Outcome(parts=call(inputs))):
            continue
        failed += 1
        first = summary._places(locate.locate("positional_encoding", inputs, call))[0]
        if words is None:
            assert first[0] == "positional_encoding.located_angles", first
        else:
            assert first[0] == "positional_encoding.located_angles_scaled", first
            assert words in first[1], first
    assert failed >= 3


def _located_only_where_d_model_is_odd(student, where):
    """Every case with d_model odd that fails is located at ``where``; every even one is
    right and located nowhere (the control); cases of both kinds are seen."""
    seen = set()
    for case in cases.cases_for("positional_encoding"):
        inputs = case.inputs()
        found = locate.locate("positional_encoding", inputs,
                              lambda probe: _parts("positional_encoding", student(**probe)))
        right = not judge("positional_encoding", inputs,
                          Outcome(parts=_parts("positional_encoding", student(**inputs))))
        odd = inputs["d_model"] % 2 == 1
        if odd and right:  # one position may be right: nothing to locate
            assert inputs["n_positions"] == 1 and found is None
            continue
        seen.add(odd)
        if odd:
            assert summary._places(found)[0][0] == f"positional_encoding.{where}"
        else:
            assert right and found is None
    assert seen == {True, False}


def test_the_first_sine_cropped_instead_of_the_last_cosine_is_located_as_shifted_columns():
    """ceil(d_model/2) pairs built and the surplus column cut with [:, -d_model:]: with
    d_model odd every wave sits one column to the left. The control: even d_model crops
    nothing, is right, and is located nowhere."""
    def cropped(n_positions, d_model):
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        angles = np.arange(n_positions)[:, None] * omega
        pairs = np.stack([np.sin(angles), np.cos(angles)], axis=2).reshape(n_positions, -1)
        return pairs[:, -d_model:], omega

    _located_only_where_d_model_is_odd(cropped, "located_columns_shifted")


def test_sines_and_cosines_alternated_over_the_flat_array_are_located_as_such():
    """pe.flat[0::2] = sines, pe.flat[1::2] = cosines: right for d_model even, and with
    d_model odd the alternation slips a cell on every row (a fresh probe's got only the row
    of position 0 or the angles). The control: even d_model is right and located nowhere."""
    def flat(n_positions, d_model):
        omega = _omega(d_model)
        angles = np.arange(n_positions)[:, None] * omega
        pe = np.zeros((n_positions, d_model))
        pe.flat[0::2] = np.sin(angles).ravel()
        pe.flat[1::2] = np.cos(angles)[:, : d_model // 2].ravel()
        return pe, omega

    _located_only_where_d_model_is_odd(flat, "located_flat_interleaved")


def _block_located_at(case_name, student, where):
    """``student`` fails the block case ``case_name`` and is located at ``where``; tanh_ffn,
    the control, fails it too and is located elsewhere."""
    (case,) = [c for c in cases.cases_for("transformer_block") if c.name == case_name]
    inputs = case.inputs(np.random.default_rng(3))
    for one, said in ((student, True), (tanh_ffn, False)):
        call = lambda probe: _parts("transformer_block", one(**probe))  # noqa: E731
        assert judge("transformer_block", inputs, Outcome(parts=call(inputs)))
        first = summary._places(locate.locate("transformer_block", inputs, call))[0][0]
        assert (first == f"transformer_block.{where}") is said, (one, first)


def test_a_block_that_treats_zero_tokens_as_padding_is_located_at_the_zero_tokens():
    """The unmasked block case has one token of zeros; a block that drops such tokens as keys
    (a twelfth probe's passed every case before) fails there, and is told so. The control:
    tanh_ffn fails the same case and is not said to be about zero tokens."""
    _block_located_at("sin_mascara", zero_tokens_as_padding, "located_zero_tokens")


def test_a_recurrence_seeded_with_two_rows_fails_one_position_and_is_located_there():
    """Rows of positions 0 and 1 put first, so one position gets two rows (a twelfth probe's
    passed every case before the case of one position). It is right with more positions, and
    that is what is said; the control, a row 0 of (1, 0, 1, 0, …) everywhere, departs with
    more positions too and is located there, at the row of position 0."""
    def two_rows_first(n_positions, d_model):
        pe, omega = reference.positional_encoding(max(n_positions, 2), d_model)
        return pe, omega

    (one,) = [c for c in cases.cases_for("positional_encoding") if c.name == "una_posicion"]
    inputs = one.inputs()
    for student, where in ((two_rows_first, "located_one_position"),
                           (_row_zero_swapped, "located_row_zero")):
        call = lambda probe: _parts("positional_encoding", student(**probe))  # noqa: E731
        assert judge("positional_encoding", inputs, Outcome(parts=call(inputs)))
        found = locate.locate("positional_encoding", inputs, call)
        assert summary._places(found)[0][0] == f"positional_encoding.{where}", found


def test_weights_squeezed_fail_the_one_key_case_and_are_located_there():
    """A squeeze of the weights drops the key axis when there is one key (a thirteenth and a
    fifteenth probe's m = 1 bugs passed every case before the case of one key). It is right
    with more keys, and that is what is said; the control, an output doubled, departs with
    more keys too and is located by the ordinary probe, at the weights times V."""
    def squeezed(Q, K, V, mask=None):
        output, weights = ATT(Q, K, V, mask)
        return output, np.squeeze(weights)

    def doubled(Q, K, V, mask=None):
        output, weights = ATT(Q, K, V, mask)
        return 2 * output, weights

    (one,) = [c for c in cases.cases_for("attention") if c.name == "una_clave"]
    inputs = one.inputs()
    for student, said in ((squeezed, True), (doubled, False)):
        call = lambda probe: _parts("attention", student(**probe))  # noqa: E731
        assert judge("attention", inputs, Outcome(parts=call(inputs)))
        found = summary._places(locate.locate("attention", inputs, call))
        assert (found[0][0] == "attention.located_one_key") is said, found


def test_one_maximum_for_the_whole_matrix_fails_the_large_case_and_is_located_there():
    """The softmax shifted by the matrix's maximum, not each row's: exact at ordinary scores,
    0/0 in a row far below the others (a seventeenth probe's passed 187 of 200 draws of the
    large case before its queries' lengths were set apart). The control, the row maximum, is
    right on the same draws."""
    def shifted_by(maximum):
        def attention(Q, K, V, mask=None):
            scores = Q @ K.T / np.sqrt(K.shape[1])
            if mask is not None:
                scores = np.where(mask, scores, -np.inf)
            e = np.exp(scores - maximum(scores))
            weights = e / e.sum(axis=1, keepdims=True)
            return weights @ V, weights
        return attention

    (case,) = [c for c in cases.cases_for("attention") if c.name == "puntuaciones_grandes"]
    for seed in range(30):
        inputs = case.inputs(np.random.default_rng(seed))
        for maximum, fails in ((lambda s: s.max(), True),
                               (lambda s: s.max(axis=1, keepdims=True), False)):
            student = shifted_by(maximum)

            def call(probe):
                with np.errstate(all="ignore"):
                    return _parts("attention", student(**probe))

            assert bool(judge("attention", inputs, Outcome(parts=call(inputs)))) is fails, seed
            if fails:
                place = summary._places(locate.locate("attention", inputs, call))[0][0]
                assert place == "attention.located_large_scores", (seed, place)


def test_a_head_size_taken_as_the_smaller_of_d_k_and_d_v_fails_a_case():
    """Each head scaled by √min(d_k, d_v): right wherever d_k ≤ d_v, so only a case with
    d_k > d_v fails it (a fifteenth probe's d_k > d_v bug had no such case). The control:
    the case with d_k < d_v passes it."""
    def smaller_size(X, heads, W_O, mask=None):
        outputs = []
        for W_Q, W_K, W_V in heads:
            d = min(W_K.shape[1], W_V.shape[1])
            outputs.append(ATT(X @ W_Q * np.sqrt(W_K.shape[1] / d), X @ W_K, X @ W_V, mask)[0])
        return np.concatenate(outputs, axis=1) @ W_O

    verdicts = {case.name: judge("multihead", case.inputs(),
                                 Outcome(parts=_parts("multihead", smaller_size(**case.inputs()))))
                for case in cases.cases_for("multihead")}
    assert verdicts["una_cabeza"] and not verdicts["dk_distinto_dv"], verdicts


def test_tokens_no_query_sees_dropped_from_x_fail_a_case_and_are_located_at_the_mask():
    """Rows of X zeroed for the keys no query may see (padding) change those tokens as
    queries too; a multihead case now has such a key (a thirteenth probe's passed every case).
    The control: on the same case with the key seen by some query, it is right."""
    def padding_dropped(X, heads, W_O, mask=None):
        if mask is not None:
            X = X * np.asarray(mask, dtype=bool).any(axis=0)[:, None]
        return MH(X, heads, W_O, mask)

    (case,) = [c for c in cases.cases_for("multihead") if c.name == "dk_distinto_dv"]
    inputs = case.inputs()
    call = lambda probe: _parts("multihead", padding_dropped(**probe))  # noqa: E731
    assert judge("multihead", inputs, Outcome(parts=call(inputs)))
    seen = np.asarray(inputs["mask"], dtype=bool).copy()
    seen[0, :] = True
    assert not judge("multihead", dict(inputs, mask=seen), Outcome(parts=call(dict(inputs,
                                                                                mask=seen))))
    assert summary._places(locate.locate("multihead", inputs, call))[0][0] == \
        "multihead.located_mask"


def test_a_block_whose_ffn_reads_the_first_sublayer_without_the_mask_is_located_at_it():
    """The first sublayer written twice, the copy fed to the FFN without the mask (a
    fourteenth probe's got «revisa las residuales, la FFN y la máscara»): every probe with a
    part switched off agrees, the block with the mask departs and without it agrees. The
    control: tanh_ffn departs without the mask too, and is not said to be the mask."""
    def ffn_without_the_mask(x, heads, W_O, W1, b1, W2, b2, mask=None):
        x1 = LN(x + MH(x, heads, W_O, mask))
        again = LN(x + MH(x, heads, W_O))
        return LN(x1 + np.maximum(0, again @ W1 + b1) @ W2 + b2)

    _block_located_at("causal", ffn_without_the_mask, "located_mask_with_both")


def test_integer_rows_that_are_not_the_right_values_truncated_are_no_integer_type():
    """ω aliased and scaled in place by pos = 0 leaves every row (0, 1, 0, 1, …), integers
    that a fifteenth probe's was told came from an integer array. They are not the right
    values truncated, so the omega of zeros is said instead. (The integer buffer, the
    control, is the kit probe's pe_int_buffer, still located as integers.)"""
    def omega_zeroed(n_positions, d_model):
        pe, omega = reference.positional_encoding(n_positions, d_model)
        return np.tile(pe[:1], (n_positions, 1)), np.zeros_like(omega)

    for case in cases.cases_for("positional_encoding"):
        inputs = case.inputs()
        if inputs["n_positions"] == 1:
            continue  # one row: right, whatever ω did
        found = locate.locate("positional_encoding", inputs, lambda probe: _parts(
            "positional_encoding", omega_zeroed(**probe)))
        assert summary._places(found)[0][0] == "positional_encoding.located_omega", found


def test_positions_counted_in_eight_bits_fail_the_long_case_and_are_located():
    """uint8 positions wrap after 255 (a twelfth probe's passed every case when the long one
    drew at most 200 positions), and are told that the positions restart at row 256. The
    control: at 256 positions and fewer it is right. (The angles' own test, pos ** 1.5,
    is the control that no restart is said where rows do not repeat.)"""
    def eight_bits(n_positions, d_model):
        pos = np.arange(n_positions, dtype=np.uint8)[:, None].astype(float)
        omega = _omega(d_model)
        pe = np.zeros((n_positions, d_model))
        pe[:, 0::2], pe[:, 1::2] = np.sin(pos * omega), np.cos(pos * omega[: d_model // 2])
        return pe, omega

    (long,) = [c for c in cases.cases_for("positional_encoding") if c.name == "largo"]
    inputs = long.inputs()
    assert judge("positional_encoding", inputs,
                 Outcome(parts=_parts("positional_encoding", eight_bits(**inputs))))
    short = dict(inputs, n_positions=256)
    assert not judge("positional_encoding", short,
                     Outcome(parts=_parts("positional_encoding", eight_bits(**short))))
    found = locate.locate("positional_encoding", inputs,
                          lambda probe: _parts("positional_encoding", eight_bits(**probe)))
    first = summary._places(found)[0]
    assert first[0] == "positional_encoding.located_positions_restart"
    assert "hasta la 255, y desde la 256" in first[1]


def test_a_table_of_fixed_length_is_located_as_such_and_a_cache_is_not():
    """A table built once for MAX_LEN positions and cut: right below that length, short
    beyond it (an eleventh probe's MAX_LEN = 64 passed every case, then was told «una caché
    o una variable global»). The control: a cache keyed on n_positions is not said to be
    a fixed table."""
    max_len = 64

    def fixed(n_positions, d_model):
        pe, omega = reference.positional_encoding(max_len, d_model)
        return pe[:n_positions], omega

    inputs = next(c for c in cases.cases_for("positional_encoding") if c.name == "largo").inputs()
    assert inputs["n_positions"] > max_len
    found = locate.locate("positional_encoding", inputs,
                          lambda probe: _parts("positional_encoding", fixed(**probe)))
    assert found[0] == "positional_encoding.located_fixed_table", found
    student = _cached_by_length()
    student(inputs["n_positions"], inputs["d_model"] + 2)
    found = locate.locate("positional_encoding", inputs,
                          lambda probe: _parts("positional_encoding", student(**probe)))
    assert found[0] == "positional_encoding.located_other_arguments", found


def _cached_by_length():
    kept = {}

    def positional_encoding(n_positions, d_model):
        if n_positions not in kept:
            kept[n_positions] = reference.positional_encoding(n_positions, d_model)
        return kept[n_positions]
    return positional_encoding


def _global_d_model(n_positions, d_model):
    return reference.positional_encoding(n_positions, 16)  # the notebook's d_model = 16


def test_one_row_too_many_for_every_length_is_not_said_to_be_another_calls_answer():
    """np.arange(n_positions + 1) gives the right encoding of n_positions + 1 positions, and
    was said to come from «otra llamada … una caché»: its rows grow with n_positions, so it
    follows its arguments. The control is the test below, where the answer does not."""
    def one_row_more(n_positions, d_model):
        return reference.positional_encoding(n_positions + 1, d_model)

    for case in cases.cases_for("positional_encoding"):
        found = locate.locate("positional_encoding", case.inputs(), lambda probe: _parts(
            "positional_encoding", one_row_more(**probe)))
        assert not found or found[0] != "positional_encoding.located_other_arguments", found


@pytest.mark.parametrize("make", [_cached_by_length, lambda: _global_d_model])
def test_the_right_encoding_of_other_sizes_is_located_in_the_arguments(make):
    """A cache keyed on n_positions (filled by the notebook's own call of another d_model),
    or a global d_model: the answer is the right one for other sizes, and that is said."""
    student = make()
    located_somewhere = False
    for case in cases.cases_for("positional_encoding"):
        inputs = case.inputs()
        student(inputs["n_positions"], inputs["d_model"] + 2)  # an earlier call, same length
        found = locate.locate("positional_encoding", inputs,
                              lambda probe: _parts("positional_encoding", student(**probe)))
        right = reference.positional_encoding(**inputs)
        if all(np.shape(a) == np.shape(b) and np.allclose(a, b)
               for a, b in zip(student(**inputs), right)):
            assert found is None  # the control: where its answer is right, nothing is said
            continue
        located_somewhere = True
        assert found[0] == "positional_encoding.located_other_arguments", (case.name, found)
        assert "¿Guardas resultados entre llamadas" in found[1]
    assert located_somewhere


def test_a_correct_positional_encoding_is_located_nowhere_and_a_catalogued_one_is_named():
    for case in cases.cases_for("positional_encoding"):
        inputs = case.inputs()
        assert locate.locate("positional_encoding", inputs, lambda probe: _parts(
            "positional_encoding", reference.positional_encoding(**probe))) is None
    # Multiplying by 10000^(2i/d) instead of dividing is catalogued: the findings name it,
    # so the engine never asks where it departs.
    inputs = cases.cases_for("positional_encoding")[0].inputs()
    student = _encoding(lambda d: 1 / _omega(d))
    outcome = Outcome(parts=_parts("positional_encoding", student(**inputs)))
    said = diagnose.diagnose("positional_encoding", inputs, outcome,
                             judge("positional_encoding", inputs, outcome),
                             reference_parts("positional_encoding", inputs))
    assert any(f.details.get("kind") != "hint" for f in said), said


def test_no_place_says_each_head_alone_is_right_when_one_head_alone_raised():
    """A multihead that raises with one head alone and is wrong with several: nothing
    measured that each head alone is right, so no place may say so (it said «cómo separas las
    cabezas: cada cabeza sola es correcta»). The control: the same wrong multihead that
    answers with one head alone departs there, at «cada cabeza»."""
    def raises_alone(X, heads, W_O, mask=None):
        if len(heads) == 1:
            raise ValueError("one head")
        return np.tanh(MH(X, heads, W_O, mask))

    def answers_alone(X, heads, W_O, mask=None):
        return np.tanh(MH(X, heads, W_O, mask))

    inputs = next(c for c in cases.cases_for("multihead") if c.name == "dos_cabezas").inputs(
        np.random.default_rng(3))

    def where(student):
        def call(probe):
            try:
                return _parts("multihead", student(**probe))
            except ValueError:
                return None
        return locate.locate("multihead", inputs, call)

    found = where(raises_alone)
    assert found is None or "cada cabeza sola es correcta" not in found[1], found
    assert where(answers_alone)[0] in ("multihead.located_each_head",
                                       "multihead.located_after_heads")


def test_a_relu_on_the_heads_is_located_alike_on_every_draw():
    """A tenth probe's multihead put a ReLU on the concatenation. Its hidden inputs are drawn
    per student, and on some draws one head alone has no negative value (the ReLU changes
    nothing there) or only negative ones (zeros, «scaled by 0», «integer values»): the
    places differed from case to case and nothing was said. Every head alone is now tried,
    and zeros are no scale and no integers."""
    def relu_on_the_heads(X, heads, W_O, mask=None):
        outputs = [ATT(X @ W_Q, X @ W_K, X @ W_V, mask)[0] for W_Q, W_K, W_V in heads]
        return np.maximum(0, np.concatenate(outputs, axis=1)) @ W_O

    found = {place for seed in range(24) for place in places("multihead", relu_on_the_heads,
                                                             seed).values()}
    assert found == {"multihead.located_after_heads"}, found


def test_an_integer_buffer_is_located_alike_on_every_draw():
    """A ninth probe's int buffer truncates small head values to 0; on some students' draws
    the answer was all zeros, which no redrawn argument changes, and it was said to ignore
    its arguments on those cases, so no place was shared. Zeros say nothing of what a
    function reads."""
    found = {place for seed in range(20) for place in places(
        "multihead", heads_in_an_integer_buffer, seed).values()}
    assert found == {"multihead.located_integer_values"}, found


def test_a_negated_softmax_skipped_rows_and_nan_marks_are_each_located():
    """Three forms of an eleventh blind probe, each now said as measured, with a control: the
    softmax of −scores is «el signo», not «la escala» (the control: a doubled scale stays «la
    escala»); a row 0 never computed is «las filas que calculas», not «la softmax»; NaN as the
    mark of a forbidden key is said as such, and −∞ times 0 keeps the general NaN place."""
    def negated(Q, K, V, mask=None):
        s = -(Q @ K.T) / np.sqrt(K.shape[-1])
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        w = reference.softmax(s, axis=-1)
        return w @ V, w

    def doubled(Q, K, V, mask=None):
        return reference.attention(2 * Q, K, V, mask)

    def row_zero_skipped(Q, K, V, mask=None):
        out, w = reference.attention(Q, K, V, mask)
        out, w = out.copy(), w.copy()
        out[0], w[0] = 0, 0
        return out, w

    def nan_marked(Q, K, V, mask=None):
        out, w = reference.attention(Q, K, V, mask)
        if mask is not None:
            w = np.where(mask, w, np.nan)
        return out, w

    case = cases.cases_for("attention")[0]
    masked = [c for c in cases.cases_for("attention") if c.name == "mascara_aleatoria"][0]

    def found(fn, on):
        inputs = on.inputs()
        return locate.locate("attention", inputs, lambda probe: fn(**probe))

    def ids(result):
        return [r[0] for r in (result if isinstance(result, list) else [result])] if result else []
    assert ids(found(negated, case)) == ["attention.located_negated"]
    assert ids(found(doubled, case)) == ["attention.located_scale"]
    assert ids(found(row_zero_skipped, case)) == ["attention.located_rows_skipped"]
    assert ids(found(nan_marked, masked)) == ["attention.located_mask_nan_marked"]
    assert ids(found(mask_times_minus_infinity, masked)) == ["attention.located_mask_nan"]
