"""Diagnoses beyond single catalogued mistakes: two at once, properties of the output, and
shape errors explained with the notebook's sizes.

Every function here is a student's, written independently of the mutants, and is graded on
many draws of every hidden case. "Named" means the diagnosis gives exactly the expected ids
on every case the function fails, and the function fails on every draw; a mistake outside
everything the diagnosis knows must get no name at all.
"""

import numpy as np
import pytest

from reference import attention as reference
from draws import (assert_named, caught_on_every_draw, named, said, summaries,
                   summary_ids)

# --- helpers -----------------------------------------------------------------------------------


def messages(found):
    """Every diagnosis the feedback gives on ``assert_named``'s draws, at least one a draw."""
    assert all(diagnoses for _, diagnoses in found.values()), "a draw got no diagnosis"
    return said(found)


def per_draw(found):
    """What the feedback says about the function on each draw, as one text."""
    return [" ".join(d.message for d in diagnoses) for _, diagnoses in found.values()]


def _heads(X, heads, mask):
    return [reference.attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0] for W_Q, W_K, W_V in heads]


def _pe(n_positions, d_model, omega, first=np.sin, second=np.cos, start=0):
    angles = np.arange(start, start + n_positions)[:, None] * omega
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = first(angles)
    pe[:, 1::2] = second(angles[:, : d_model // 2])
    return pe


def _norm(x, eps=1e-5):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)


# --- two catalogued mistakes at once -------------------------------------------------------------


def test_no_scale_and_softmax_over_queries_are_named_together():
    def attention(Q, K, V, mask=None):
        scores = Q @ K.T
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        weights = np.exp(scores - scores.max(axis=0))
        weights = weights / weights.sum(axis=0)
        return weights @ V, weights
    assert_named("attention", attention, "attention.no_sqrt_dk",
                 "attention.softmax_over_queries")


def test_mask_not_passed_and_w_o_transposed_are_named_together():
    def multihead(X, heads, W_O, mask=None):
        return np.concatenate(_heads(X, heads, None), axis=1) @ W_O.T
    failing = assert_named("multihead", multihead, "multihead.mask_not_passed",
                           "multihead.w_o_transposed", cases=["causal"])
    assert all("dos errores típicos reconocidos a la vez" in m for m in messages(failing))


def test_swapped_sines_counted_from_one_are_named_together():
    def positional_encoding(n_positions, d_model):
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        return _pe(n_positions, d_model, omega, np.cos, np.sin, start=1), omega
    assert_named("positional_encoding", positional_encoding,
                 "positional_encoding.sin_cos_swapped", "positional_encoding.positions_from_one")


def test_pre_ln_with_gelu_is_named_as_both():
    def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
        from math import erf

        gelu = np.vectorize(lambda z: 0.5 * z * (1 + erf(z / np.sqrt(2))))
        x = x + reference.multihead(_norm(x, 1e-6), heads, W_O, mask)
        return x + gelu(_norm(x, 1e-6) @ W1 + b1) @ W2 + b2
    assert_named("transformer_block", transformer_block, "transformer_block.pre_ln",
                 "transformer_block.gelu_instead_of_relu")


def test_gpt2s_pre_ln_with_a_last_layer_norm_is_named_pre_ln():
    """A fifth blind probe's block: pre-LN with GPT-2's LayerNorm after the last sum was said
    to depart at «cómo se encadenan las dos subcapas». The control: post-LN passes."""
    def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
        x = x + reference.multihead(_norm(x), heads, W_O, mask)
        x = x + np.maximum(0, _norm(x) @ W1 + b1) @ W2 + b2
        return _norm(x)
    assert_named("transformer_block", transformer_block, "transformer_block.pre_ln")
    assert not summaries("transformer_block", reference.transformer_block, range(3))[0][0]


def test_nan_with_a_mask_and_large_scores_names_both_causes_and_how_to_tell():
    """With a mask and scores of 1000 a NaN may come from either cause, and the hint cannot
    call the function: it said «la exponencial desborda» for a mask multiplied by −∞ (a fifth
    blind probe). Without a mask only the overflow is possible, and only it is said."""
    from attention.diagnose import _attention_hints
    from kit_autograder.verdicts.outcome import Failure

    def attention(Q, K, V, mask=None):
        scores = Q @ K.T / np.sqrt(K.shape[1])
        if mask is not None:
            scores = scores * mask + (-np.inf) * (~np.asarray(mask, dtype=bool))
        weights = reference.softmax(scores)
        return weights @ V, weights

    with np.errstate(all="ignore"):
        found = summaries("attention", attention, range(2))
    said = " ".join(d.message for _, diagnoses in found.values() for d in diagnoses)
    assert "dos causas posibles" in said and "multiplicar −∞ por 0" in said
    # The control, the branch itself: the same large case without its mask says the overflow.
    from draws import get_case, draw
    large = draw(get_case("attention", "puntuaciones_grandes"), 0)
    nan = [Failure("aparecen NaN", "la salida", {"kind": "nonfinite"})]
    for inputs, expected in ((large, "dos causas posibles"),
                             (dict(large, mask=None), "con puntuaciones grandes: la exponencial")):
        parts = reference.attention(**inputs)
        (hint,) = _attention_hints(inputs, parts, nan, parts)
        assert expected in hint
    (hint,) = _attention_hints(dict(large, mask=None), parts, nan, parts)
    assert "−∞" not in hint


@pytest.mark.parametrize(("attention", "said"), [
    # An eighth probe: np.NINF, removed in NumPy 2.0, got «usa un atributo que no existe».
    (lambda Q, K, V, mask=None: (np.NINF, None), "usa np.NINF, que NumPy 2 ya no tiene"),
    (lambda Q, K, V, mask=None: (Q.transpose_all, None), "usa `.transpose_all` en un valor de "
     "tipo `ndarray`"),
    (lambda Q, K, V, mask=None: (np.split(Q, 3), None), "np.split no puede partir el eje"),
    # A tenth probe's float default mask inverted with ~, and a tuple put in a list.
    (lambda Q, K, V, mask=None: (~np.ones((len(Q), len(K))), None), "usa ~ sobre un array"),
    (lambda Q, K, V, mask=None: (np.array([(Q, K[:1])]), None), "piezas de formas distintas"),
    # A thirteenth probe's heads counted through a generator that then gave nothing, and a
    # map given to np.hstack: both reached the student as a bare error.
    (lambda Q, K, V, mask=None: (np.concatenate([], axis=1), None), "una lista vacía"),
    (lambda Q, K, V, mask=None: (np.hstack(map(np.asarray, [Q, Q])), None),
     "no un map ni un generador"),
    # A fourteenth probe's four bare errors: float indices (np.fromfunction), a function
    # added without calling it, math.sin on an array, and a zip(*…) unpacked in three names.
    (lambda Q, K, V, mask=None: (Q[np.array([0.0, 1.0])], None), "con decimales (float)"),
    (lambda Q, K, V, mask=None: (Q + (lambda z: z), None), "¿te faltan los paréntesis"),
    (lambda Q, K, V, mask=None: (__import__("math").sin(Q), None), "usa la de NumPy, np.sin"),
    (lambda Q, K, V, mask=None: ([a for a, b, c in zip(*[Q, K])], None), "desempaqueta en 3"),
    # A fifteenth probe's: a slice bound from a true division, a 2-D boolean mask on a 3-D
    # array, and a reshape into pairs with −1 that an odd width cannot take.
    (lambda Q, K, V, mask=None: (Q[: len(Q) / 2], None), "corta (a:b) con un número con"),
    (lambda Q, K, V, mask=None: (np.stack([Q, Q])[np.ones((len(Q), 3), dtype=bool)], None),
     "una máscara de True/False que no tiene su forma"),
    (lambda Q, K, V, mask=None: (np.ones(7).reshape(2, -1, 2), None), "una forma con −1"),
])
def test_an_attribute_that_does_not_exist_and_an_unequal_split_are_said_with_their_names(
        attention, said):
    """The attribute looked up and what on (names of the student's code) are said; NumPy's
    «array split does not result in an equal division» is explained. The control: an
    AttributeError of the student's own, with no name, stays general."""
    from draws import get_case, draw, outcome
    from attention.standard import reference_parts, violations

    def own_error(Q, K, V, mask=None):
        raise AttributeError("no me gusta")

    inputs = draw(get_case("attention", "rectangular"), 0)  # 4 queries: not a multiple of 3
    expected = reference_parts("attention", inputs)
    (failure,) = violations("attention", inputs, outcome("attention", attention, inputs), expected)
    assert said in failure.message, failure.message
    (control,) = violations("attention", inputs, outcome("attention", own_error, inputs), expected)
    assert "usa un atributo o un método que no existe" in control.message


def test_twice_the_columns_asks_whether_two_arrays_are_joined_where_they_are_summed():
    """A fourteenth probe's block concatenated its residual, (n, 2·d_model), and got only the
    shape. The control: one column too many is not said to be doubled."""
    from kit_autograder.verdicts.compare import compare_part

    rng = np.random.default_rng(0)
    expected = rng.normal(size=(5, 8))
    (doubled,) = compare_part("la salida", rng.normal(size=(5, 16)), expected, atol=1e-6,
                              rtol=1e-6)
    assert "el doble de columnas" in doubled.message and "np.concatenate" in doubled.message
    (one_more,) = compare_part("la salida", rng.normal(size=(5, 9)), expected, atol=1e-6,
                               rtol=1e-6)
    assert "el doble" not in one_more.message


def test_an_array_used_as_a_condition_is_explained_not_left_as_a_bare_valueerror():
    """A seventh blind probe's `if mask:` raised NumPy's «truth value … is ambiguous», which
    reached the student as «lanzó ValueError» and nothing else. The control: a ValueError of
    the student's own, which the kit cannot explain, stays bare."""
    from draws import get_case, draw, outcome
    from attention.standard import reference_parts, violations

    def attention(Q, K, V, mask=None):
        scores = Q @ K.T / np.sqrt(K.shape[1])
        if mask:
            scores = np.where(mask, scores, -np.inf)
        weights = reference.softmax(scores)
        return weights @ V, weights

    def own_error(Q, K, V, mask=None):
        raise ValueError("no me gusta esta máscara")

    inputs = draw(get_case("attention", "causal"), 0)
    expected = reference_parts("attention", inputs)
    (failure,) = violations("attention", inputs, outcome("attention", attention, inputs), expected)
    assert "ni verdadero ni falso" in failure.message and "is not None" in failure.message
    (control,) = violations("attention", inputs, outcome("attention", own_error, inputs), expected)
    assert "ni verdadero ni falso" not in control.message


def test_mistakes_matched_by_an_error_report_alone_are_said_as_possibilities():
    """A seventh blind probe's multihead computed only the last head (attention after the
    loop); the product with W_O raised as if the heads were summed, and the feedback said it
    «se comporta como» summing the heads. Where every failing case raised, the match is the
    error report alone and is hedged; the control, a mistake matched by values, is not."""
    def last_head_only(X, heads, W_O, mask=None):
        for W_Q, W_K, W_V in heads:
            Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        head, _ = reference.attention(Q, K, V, mask)
        return head @ W_O

    said = " ".join(d.message for _, diagnoses in summaries("multihead", last_head_only,
                                                             range(2)).values()
                    for d in diagnoses)
    assert "comprueba si es el tuyo" in said and "se comporta como" not in said

    def input_overwritten(X, heads, W_O, mask=None):
        # An eighth probe: X replaced by each head's output inside the loop. The error matched
        # a pair of mistakes («sumas las cabezas … y multiplicas por la traspuesta de W_O»).
        outputs = []
        for W_Q, W_K, W_V in heads:
            X, _ = reference.attention(X @ W_Q, X @ W_K, X @ W_V, mask)
            outputs.append(X)
        return np.concatenate(outputs, axis=1) @ W_O

    found = [d for _, diagnoses in summaries("multihead", input_overwritten, range(2)).values()
             for d in diagnoses]
    assert found and not [d for d in found if d.kind == "misconception" and len(d.ids) == 2]
    assert "reconocidos a la vez" not in " ".join(d.message for d in found)

    def heads_summed(X, heads, W_O, mask=None):
        total = sum(reference.attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads)
        return np.hstack([total] * len(heads)) @ W_O

    said = " ".join(d.message for _, diagnoses in summaries("multihead", heads_summed,
                                                             range(2)).values()
                    for d in diagnoses)
    assert said and "comprueba si es el tuyo" not in said


def test_parts_returned_in_another_order_are_said_so_and_errors_are_explained():
    """A seventh blind probe: (omega, pe) returned for (pe, omega) got only two shape facts;
    np.max(0, z) raised a bare TypeError; X passed as V with n = d_model was told it had
    concatenated the weights. The controls: a pe with wrong values keeps its own facts; a
    multihead that concatenates the weights, where n ≠ d_model, is still told so."""
    from draws import get_case, draw, outcome
    from attention.standard import reference_parts, violations

    def swapped(n_positions, d_model):
        pe, omega = reference.positional_encoding(n_positions, d_model)
        return omega, pe

    def swapped_and_wrong(n_positions, d_model):
        pe, omega = reference.positional_encoding(n_positions, d_model)
        return omega, 2 * pe

    inputs = draw(get_case("positional_encoding", "d_par"), 0)
    expected = reference_parts("positional_encoding", inputs)
    (failure,) = violations("positional_encoding", inputs,
                            outcome("positional_encoding", swapped, inputs), expected)
    assert "devuelves (omega, pe) en lugar de (pe, omega)" in failure.message
    # Nothing else is said of it: a hint read «omega es correcta» from the parts' order.
    found = summaries("positional_encoding", swapped, range(2))
    assert all(not diagnoses for _, diagnoses in found.values()), found
    control = violations("positional_encoding", inputs,
                         outcome("positional_encoding", swapped_and_wrong, inputs), expected)
    assert len(control) == 2 and "en otro orden" not in " ".join(f.message for f in control)

    def max_for_maximum(x, heads, W_O, W1, b1, W2, b2, mask=None):
        h = reference.layer_norm(x + reference.multihead(x, heads, W_O, mask))
        return reference.layer_norm(h + np.max(0, h @ W1 + b1) @ W2 + b2)
    block = draw(get_case("transformer_block", "causal"), 0)
    (failure,) = violations("transformer_block", block,
                            outcome("transformer_block", max_for_maximum, block),
                            reference_parts("transformer_block", block))
    assert "np.maximum(0, x)" in failure.message

    def x_as_values(X, heads, W_O, mask=None):
        return np.hstack([reference.attention(X @ q, X @ k, X, mask)[0]
                          for q, k, _ in heads]) @ W_O

    def weights_concatenated(X, heads, W_O, mask=None):
        return np.hstack([reference.attention(X @ q, X @ k, X @ v, mask)[1]
                          for q, k, v in heads]) @ W_O
    said = {name: " ".join(d.message for _, ds in summaries("multihead", fn, range(2)).values()
                           for d in ds)
            for name, fn in (("x", x_as_values), ("weights", weights_concatenated))}
    assert "¿Concatenas los pesos de las cabezas" not in said["x"]
    assert "¿Concatenas los pesos de las cabezas" in said["weights"]


def test_no_ffn_residual_and_no_biases_are_named_together():
    def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
        x = _norm(x + reference.multihead(x, heads, W_O, mask))
        return _norm(np.maximum(0, x @ W1) @ W2)
    assert_named("transformer_block", transformer_block, "transformer_block.no_ffn_residual",
                 "transformer_block.ffn_without_biases")


# --- multihead: properties of the output --------------------------------------------------------


def test_sum_of_heads_through_a_slice_of_w_o_is_named():
    def multihead(X, heads, W_O, mask=None):
        total = sum(_heads(X, heads, mask))
        return total @ W_O[: total.shape[1]]
    assert_named("multihead", multihead, "multihead.sum_of_heads")


def test_mean_of_heads_through_a_slice_of_w_o_is_named():
    def multihead(X, heads, W_O, mask=None):
        outputs = _heads(X, heads, mask)
        return np.mean(outputs, axis=0) @ W_O[: outputs[0].shape[1]]
    assert_named("multihead", multihead, "multihead.mean_of_heads")


def test_last_head_reused_for_every_head_is_named_with_its_number():
    def multihead(X, heads, W_O, mask=None):
        last = _heads(X, heads[-1:], mask)[0]
        return np.concatenate([last] * len(heads), axis=1) @ W_O
    failing = assert_named("multihead", multihead, "multihead.same_head_everywhere")
    assert any("head_2" in m or "head_3" in m for m in messages(failing))


def test_heads_that_all_give_one_unknown_output_are_named():
    """Averaged projections in every head: all blocks equal, and equal to no real head."""
    def multihead(X, heads, W_O, mask=None):
        W_Q, W_K, W_V = (sum(head[i] for head in heads) / len(heads) for i in range(3))
        out = reference.attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
        return np.concatenate([out] * len(heads), axis=1) @ W_O
    assert_named("multihead", multihead, "multihead.same_head_everywhere")


def test_heads_in_another_order_are_named():
    def multihead(X, heads, W_O, mask=None):
        outputs = _heads(X, heads, mask)
        return np.concatenate(outputs[1:] + outputs[:1], axis=1) @ W_O
    assert_named("multihead", multihead, "multihead.heads_out_of_order")


# --- positional_encoding: the frequencies, base and exponent apart ---------------------------


def _pe_with(omega_of):
    def positional_encoding(n_positions, d_model):
        omega = omega_of(d_model)
        return _pe(n_positions, d_model, omega), omega
    return positional_encoding


@pytest.mark.parametrize(("omega_of", "said"), [
    (lambda d: 1 / 1000 ** (np.arange(0, d, 2) / d), "la base es 1000 en lugar de 10000; el "
                                                       "exponente 2i/d_model está bien"),
    (lambda d: 1 / 1000 ** (np.arange((d + 1) // 2) / d), "el exponente es i/d_model en lugar "
                                                           "de 2i/d_model y la base es 1000"),
    (lambda d: 1 / 10 ** (np.arange(0, d, 2) / d), "la base es 10 en lugar de 10000"),
    (lambda d: 1 / 10000 ** (np.arange(2, d + 2, 2) / d), "la primera no vale ω_0 = 1"),
    (lambda d: np.exp(-np.log10(10000) * np.arange(0, d, 2) / d),
     "con np.log10 en lugar de np.log"),
    (lambda d: np.exp(-7.0 * np.arange(0, d, 2) / d), "decrecen a otro ritmo"),
    # 10e4 for 10000: with d_model = 5 the same frequencies as an exponent over d_model − 1,
    # which a fifteenth probe's was told on the odd cases; odd cases now start at 7.
    (lambda d: 1 / 10e4 ** (np.arange(0, d, 2) / d), "la base es 100000 en lugar de 10000"),
], ids=["base_1000", "base_1000_exponent_i", "base_10", "starts_at_2", "log10", "no_law",
        "base_10e4"])
def test_wrong_frequencies_are_named_with_base_and_exponent_apart(omega_of, said):
    failing = assert_named("positional_encoding", _pe_with(omega_of),
                           "positional_encoding.frequencies")
    assert all(said in m for m in messages(failing))
    # With one position pe is (0, 1, 0, 1, …) whatever ω is: how it was built is not measured
    # there, and is not said; on every other case it is.
    for _, diagnoses in failing.values():
        for d in diagnoses:
            one_row = set(d.cases) == {"una_posicion"}
            assert ("pe está bien construida a partir de ellas" in d.message) is not one_row


def test_an_exponent_over_d_model_plus_one_is_named_and_n_positions_only_beside_it():
    """np.linspace(0, d_model, ⌈d_model/2⌉, endpoint=False) as the even indices: with
    d_model odd the exponent is 2i/(d_model + 1). A fourteenth probe's was told «se divide
    por n_positions» on a case where n_positions = d_model + 1 by chance; d_model + 1 is now
    read on every case, and n_positions only beside it where the two are equal."""
    def positional_encoding(n_positions, d_model):
        k = (d_model + 1) // 2
        omega = 1 / 10000 ** (np.linspace(0, d_model, k, endpoint=False) / d_model)
        return _pe(n_positions, d_model, omega), omega
    found = summaries("positional_encoding", positional_encoding, [0, 1, 2])
    for failing, diagnoses in found.values():
        assert failing and set(failing) <= {"d_impar", "largo", "una_posicion"}
        for d in diagnoses:
            assert "se divide por d_model + 1" in d.message, d.message


def test_frequencies_that_reach_one_ten_thousandth_are_said_to_include_the_end():
    """np.geomspace(1, 1e-4, ⌈d_model/2⌉): the last ω is exactly 1/10000, which 2i/d_model < 1
    never gives (a nineteenth blind probe, p19 023, got «otro ritmo» on its even case). With
    d_model odd the same frequencies are the exponent over d_model − 1, and are named so."""
    def positional_encoding(n_positions, d_model):
        omega = np.geomspace(1, 1e-4, (d_model + 1) // 2)
        return _pe(n_positions, d_model, omega), omega
    found = summaries("positional_encoding", positional_encoding, [0, 1, 2])
    for failing, diagnoses in found.values():
        assert "d_par" in failing
        (even,) = [d for d in diagnoses if "d_par" in d.cases]
        assert "con el extremo incluido (np.geomspace" in even.message, even.message
        assert "otro ritmo" not in even.message


def test_a_right_pe_beside_a_wrong_omega_is_said():
    """pe from pos / 10000^(2i/d_model), right, with that divisor returned as omega (a
    nineteenth blind probe, p19 006): told only that ω grows with i. Control: on the
    one-position case pe measures no frequency, and nothing is said of it."""
    def positional_encoding(n_positions, d_model):
        divisor = 10000 ** (np.arange(0, d_model, 2) / d_model)
        return _pe(n_positions, d_model, 1 / divisor), divisor
    found = summaries("positional_encoding", positional_encoding, [0, 1, 2])
    for failing, diagnoses in found.values():
        for d in diagnoses:
            said = "tu pe sí es la correcta" in d.message
            assert said is (set(d.cases) != {"una_posicion"}), d.message


def test_base_10_reads_also_as_base_100_with_exponent_i():
    failing = assert_named("positional_encoding",
                           _pe_with(lambda d: 1 / 10 ** (np.arange(0, d, 2) / d)),
                           "positional_encoding.frequencies")
    assert all("la base es 100 en lugar de 10000" in m for m in messages(failing))


def test_right_omega_with_pe_built_on_other_frequencies_is_named():
    def positional_encoding(n_positions, d_model):
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        return _pe(n_positions, d_model, 1 / 1000 ** (np.arange(0, d_model, 2) / d_model)), omega
    failing = assert_named("positional_encoding", positional_encoding,
                           "positional_encoding.frequencies")
    assert all(m.startswith("omega es correcta, pero no las frecuencias con las que construyes pe")
               for m in messages(failing))


def test_odd_d_model_with_one_frequency_short_is_named():
    def positional_encoding(n_positions, d_model):
        omega = 1 / 10000 ** (2 * np.arange(d_model // 2) / d_model)
        angles = np.arange(n_positions)[:, None] * omega
        pe = np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(n_positions, -1)
        return pe, omega
    failing = assert_named("positional_encoding", positional_encoding,
                           "positional_encoding.omega_short", cases=["d_impar", "largo"])
    # Only the cases of odd d_model fail: even d_model has no frequency short (one position
    # draws either).
    for seed, (cases, _) in failing.items():
        assert set(cases) - {"d_impar", "largo"} <= {"una_posicion"}, seed


# --- transformer_block: a LayerNorm epsilon too large ---------------------------------------


@pytest.mark.parametrize("eps", [1e-3, 1e-2])
def test_a_larger_layer_norm_epsilon_is_named_wherever_it_fails(eps):
    def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
        x = _norm(x + reference.multihead(x, heads, W_O, mask), eps)
        return _norm(x + np.maximum(0, x @ W1 + b1) @ W2 + b2, eps)
    # The case of tokens of small variance makes both fail on every draw.
    found = assert_named("transformer_block", transformer_block,
                         "transformer_block.layer_norm_epsilon", cases=["varianza_pequena"])
    power = "10⁻" + str(round(-np.log10(eps))).translate(str.maketrans("0123456789",
                                                                      "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    assert all(f"ε ≈ {power}" in m for m in messages(found))
    # The old hint blamed the residuals and the FFN for what is the normalisation's epsilon.
    assert not any("residuales" in m for m in messages(found))


# --- shape errors, explained with the notebook's sizes -------------------------------------------


def test_reshape_that_assumes_d_model_over_h_is_explained_with_the_sizes():
    def multihead(X, heads, W_O, mask=None):
        h = len(heads)
        size = W_O.shape[1] // h
        q, k, v = (np.concatenate([head[i] for head in heads], axis=1) for i in range(3))
        Q, K, V = ((X @ w).reshape(len(X), h, size).transpose(1, 0, 2) for w in (q, k, v))
        scores = Q @ K.transpose(0, 2, 1) / np.sqrt(size)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        out = reference.softmax(scores) @ V
        return out.transpose(1, 0, 2).reshape(len(X), -1) @ W_O
    failing = assert_named("multihead", multihead, "multihead.head_sizes",
                           cases=["dk_distinto_dv", "una_cabeza"])
    # The two cases whose head size is not d_model/h (one head of d_k = 2 in d_model = 6).
    assert all(cases == ["dk_distinto_dv", "una_cabeza"] for cases, _ in failing.values())
    for text in per_draw(failing):
        # 42 is no size of the case, so it is said by its name alone (issue 19).
        assert "cambias de forma n·h·d_k números a (7, 2, 4) = (n, h, d_model/h)" in text
        assert "42" not in text
        assert "W_Q y W_K de forma (d_model, d_k) y W_V (d_model, d_v)" in text


def test_one_head_size_for_q_k_and_v_is_explained_on_the_d_k_d_v_case():
    def multihead(X, heads, W_O, mask=None):
        d_k = heads[0][0].shape[1]
        outputs = []
        for W_Q, W_K, W_V in heads:
            out = reference.attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
            outputs.append(out[:, :d_k])  # the head's output cut to d_k columns
        return np.concatenate(outputs, axis=1) @ W_O
    failing = assert_named("multihead", multihead, "multihead.head_sizes",
                           cases=["dk_distinto_dv"])
    for text in per_draw(failing):
        assert "d_k = 3 (columnas de W_Q y W_K) y d_v = 5 (columnas de W_V)" in text


def test_a_fused_projection_cut_in_three_equal_parts_is_explained_by_the_head_sizes():
    """np.split(X @ [W_Q|W_K|W_V], 3) holds only where d_k = d_v; NumPy's error gives no sizes,
    so the case's are said (a nineteenth blind probe, p19 033, got the bare error alone). The
    cases whose heads have d_k = d_v are its control: they pass."""
    def multihead(X, heads, W_O, mask=None):
        outputs = []
        for W_Q, W_K, W_V in heads:
            Q, K, V = np.split(X @ np.concatenate([W_Q, W_K, W_V], axis=1), 3, axis=1)
            outputs.append(reference.attention(Q, K, V, mask)[0])
        return np.concatenate(outputs, axis=1) @ W_O
    failing = assert_named("multihead", multihead, "multihead.head_sizes",
                           cases=["dk_distinto_dv", "una_cabeza"])
    for text in per_draw(failing):
        assert "sin suponer que d_k = d_v = d_model/h" in text


def test_a_size_is_not_named_twice_by_names_that_are_equal_for_every_case_of_its_h():
    """A concatenation buffer of d_model columns (np.zeros_like(X)): a nineteenth blind probe
    (p19 013) read «(n, d_v = (h − 1)·d_v)» with two heads and «d_v = h·d_v filas» with one,
    the same size written twice, as if it were a finding. Control: with three heads
    (h − 1)·d_v is a size of its own, and is still named (test_probe's missing head)."""
    def multihead(X, heads, W_O, mask=None):
        concat, start = np.zeros_like(X), 0
        for W_Q, W_K, W_V in heads:
            out = reference.attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
            concat[:, start:start + out.shape[1]] = out
            start += out.shape[1]
        return concat @ W_O
    failing = assert_named("multihead", multihead, "multihead.head_sizes",
                           cases=["dk_distinto_dv", "una_cabeza"])
    for text in per_draw(failing):
        assert "(h − 1)·d_v" not in text and "d_v = h·d_v" not in text
        assert "d_model = d_model/h" not in text
    from attention import shapes
    three = {"n": 4, "d_model": 12, "h": 3, "d_k": 4, "d_v": 4, "h·d_k": 12, "h·d_v": 12,
             "(h − 1)·d_v": 8, "h·n": 12, "d_model/h": 4}
    assert shapes.name_of(8, three, None) == "(h − 1)·d_v"


def test_odd_d_model_broadcast_is_explained_with_sines_and_cosines():
    def positional_encoding(n_positions, d_model):
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        pe = np.zeros((n_positions, d_model))
        pe[:, 0::2] = np.sin(np.arange(n_positions)[:, None] * omega)
        pe[:, 1::2] = np.cos(np.arange(n_positions)[:, None] * omega)
        return pe, omega
    failing = assert_named("positional_encoding", positional_encoding,
                           "positional_encoding.odd_d_model", cases=["d_impar"])
    for text in per_draw(failing):
        # n_positions may equal d_model on a draw, and is then named both ways.
        assert "⌈d_model/2⌉) donde cabe uno" in text and "⌊d_model/2⌋)" in text
        assert "la última columna es un seno sin pareja" in text


def test_one_frequency_too_many_is_explained_where_d_model_is_even():
    """np.arange(0, d_model + 1, 2): one frequency more than the pairs when d_model is even,
    and right when it is odd (a seventeenth probe's got «otro tamaño» and a ±1 question).
    The odd cases are its control: they pass."""
    def positional_encoding(n_positions, d_model):
        omega = 1 / 10000 ** (np.arange(0, d_model + 1, 2) / d_model)
        angles = np.arange(n_positions)[:, None] * omega
        pe = np.zeros((n_positions, d_model))
        pe[:, 0::2] = np.sin(angles)
        pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
        return pe, omega
    failing = assert_named("positional_encoding", positional_encoding,
                           "positional_encoding.one_frequency_too_many", cases=["d_par"])
    assert all(set(cases) == {"d_par"} for cases, _ in failing.values())
    for text in per_draw(failing):
        assert "d_model/2 + 1) donde cabe uno" in text and "np.arange(0, d_model + 1, 2)" in text


def test_an_error_every_case_gives_is_not_blamed_on_odd_d_model():
    """A row of angles that is empty at position 0 (a Python list times pos) raises on every
    case alike: its sizes, 0 and ⌈d_model/2⌉, are not the odd cases' one cosine fewer, so the
    odd-d_model note is not said there (a fresh probe's was). The control is the test above,
    whose error is the cosine fewer and gets the note."""
    def positional_encoding(n_positions, d_model):
        omega = list(1 / 10000 ** (np.arange(0, d_model, 2) / d_model))
        pe = np.zeros((n_positions, d_model))
        for pos in range(n_positions):
            pe[pos, 0::2] = np.sin(pos * omega)
            pe[pos, 1::2] = np.cos(pos * omega)[: d_model // 2]
        return pe, np.array(omega)
    found = summaries("positional_encoding", positional_encoding, [0, 1])
    for failing, diagnoses in found.values():
        assert "d_impar" in failing
        assert not any("la última columna es un seno sin pareja" in d.message
                       for d in diagnoses), [d.message for d in diagnoses]


def test_np_dot_without_transpose_is_named_like_the_at_operator():
    """The same mistake raises "not aligned" through np.dot and "matmul" through @."""
    def attention(Q, K, V, mask=None):
        scores = np.dot(Q, K) / np.sqrt(K.shape[-1])
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        weights = reference.softmax(scores)
        return np.dot(weights, V), weights
    failing = caught_on_every_draw("attention", attention)
    assert all(named(f) == ["attention.k_not_transposed"] for f in failing.values())


def test_every_shape_error_gets_more_than_the_error_sentence():
    """Raw NumPy text never reaches a student, and the sentence about the error is not alone:
    a shape error on these cases always comes with its sizes named."""
    def attention(Q, K, V, mask=None):
        weights = reference.softmax(Q @ K.T / np.sqrt(K.shape[1]))
        return weights @ V.T, weights  # V transposed: (m, d_v) becomes (d_v, m)
    for failures in caught_on_every_draw("attention", attention).values():
        kinds = [f.details.get("kind") for f in failures]
        # The case's sizes, then what the notebook asks for, which the feedback says once.
        assert kinds == ["error", "explanation", "explanation"], kinds
        assert "columnas y B tiene d_v filas" in failures[1].message
        assert "V (m, d_v)" in failures[2].message


# --- nothing named that is not there ------------------------------------------------------------


@pytest.mark.parametrize("function,fn", [
    ("transformer_block", lambda x, heads, W_O, W1, b1, W2, b2, mask=None:
        reference.layer_norm(x + reference.multihead(x, heads, W_O, mask))),
    ("transformer_block", lambda x, heads, W_O, W1, b1, W2, b2, mask=None:
        reference.transformer_block(x, heads, W_O, W1, b1, W2, b2, mask) * 1.5),
    ("multihead", lambda X, heads, W_O, mask=None: reference.multihead(X, heads, 2 * W_O, mask)),
    ("positional_encoding", lambda n_positions, d_model: (
        reference.positional_encoding(n_positions, d_model)[0] * 0.5,
        reference.positional_encoding(n_positions, d_model)[1])),
], ids=["no_ffn", "output_scaled", "w_o_doubled", "pe_halved"])
def test_a_mistake_nothing_knows_is_not_named(function, fn):
    for key, failures in caught_on_every_draw(function, fn).items():
        assert not named(failures), f"false name on {key}: {named(failures)}"
    for seed, (_, diagnoses) in summaries(function, fn, range(10)).items():
        assert not summary_ids(diagnoses), f"false name on draw {seed}: {summary_ids(diagnoses)}"


# --- issue 20: one name for the function, said once, and never a dropped shape -----------------


def test_dividing_by_the_number_of_queries_gets_one_name_not_three():
    """Each case alone fits another entry (n = 1 is no scale at all; n = m is the number of
    keys; √n = d_k is dividing by d_k): issue 20 read three contradictory names. The cases
    together fit only one."""
    def attention(Q, K, V, mask=None):
        scores = Q @ K.T / np.sqrt(Q.shape[0])
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        weights = reference.softmax(scores)
        return weights @ V, weights
    found = assert_named("attention", attention, "attention.sqrt_of_num_queries")
    assert all(len(diagnoses) == 1 for _, diagnoses in found.values())


def test_a_shape_failure_is_reported_beside_the_properties_it_breaks():
    """weights.T has the right shape only when n = m; elsewhere the shape is what is wrong,
    and it is said, never replaced by row sums that a transposed matrix cannot have."""
    from draws import get_case
    from attention.standard import reference_parts, violations
    from draws import draw, outcome

    def attention(Q, K, V, mask=None):
        output, weights = reference.attention(Q, K, V, mask)
        return output, weights.T
    inputs = draw(get_case("attention", "rectangular"), 0)
    failures = violations("attention", inputs, outcome("attention", attention, inputs),
                          reference_parts("attention", inputs))
    assert [f.details["kind"] for f in failures] == ["shape"]
    assert "¿la devuelves traspuesta?" in failures[0].message
    assert_named("attention", attention, "attention.weights_transposed")


@pytest.mark.parametrize(("reshape", "said", "control_never_says"), [
    (lambda omega: omega[None, :], "un eje de tamaño 1 de más", ("tamaño 1",)),
    (lambda omega: omega[:, None], "un eje de tamaño 1 de más", ("tamaño 1",)),
    # One frequency too many (np.arange(0, d_model + 1, 2)) or too few.
    (lambda omega: np.append(omega, omega[-1] / 2), "los primeros valores son los correctos, "
     "pero sobran valores al final", ("sobran", "faltan")),
    (lambda omega: omega[:-1], "faltan los últimos", ("sobran", "faltan")),
    (lambda omega: omega[1:], "faltan los primeros", ("sobran", "faltan")),
    # A ninth probe's omega, recomputed in the loop: only the last frequency, a float.
    (lambda omega: omega[-1], "un solo número, el último de la respuesta correcta",
     ("el último",)),
])
def test_a_shape_note_on_the_values_is_said_only_when_they_are_right(reshape, said,
                                                                   control_never_says):
    """omega returned as a (1, k) row or a (k, 1) column, or with a frequency too many or too
    few, holds the right values where it overlaps the reference: the shape failure says so.
    The control, the same shape with wrong values, must not."""
    from draws import get_case, draw, outcome
    from attention.standard import reference_parts, violations

    def positional_encoding(n_positions, d_model):
        pe, omega = reference.positional_encoding(n_positions, d_model)
        return pe, reshape(omega)

    def wrong_values(n_positions, d_model):
        pe, omega = reference.positional_encoding(n_positions, d_model)
        return pe, reshape(omega * 1.5)
    inputs = draw(get_case("positional_encoding", "d_par"), 0)
    expected = reference_parts("positional_encoding", inputs)
    failures = violations("positional_encoding", inputs,
                          outcome("positional_encoding", positional_encoding, inputs), expected)
    assert [f.details["kind"] for f in failures] == ["shape"]
    assert said in failures[0].message
    control = violations("positional_encoding", inputs,
                         outcome("positional_encoding", wrong_values, inputs), expected)
    assert [f.details["kind"] for f in control] == ["shape"]
    assert not any(word in control[0].message for word in control_never_says)


@pytest.mark.parametrize(("function", "source", "entry"), [
    ("attention", "scores = scores + mask", "attention.mask_added"),
    ("multihead", "one attention", "multihead.heads_not_split"),
    ("positional_encoding", "reshape", "positional_encoding.reshaped_not_transposed"),
    ("transformer_block", "leaky 0.2", "transformer_block.leaky_relu"),
    ("transformer_block", "b1 after relu", "transformer_block.b1_after_relu"),
    ("transformer_block", "residual from input", "transformer_block.second_residual_from_input"),
], ids=lambda value: value if isinstance(value, str) and " " not in value else None)
def test_issue_20s_generic_and_partial_mistakes_are_named(function, source, entry):
    """Written as students write them, not as the mutants are."""
    def attention(Q, K, V, mask=None):
        scores = Q @ K.T / np.sqrt(K.shape[-1])
        if mask is not None:
            scores = scores + mask
        weights = reference.softmax(scores)
        return weights @ V, weights

    def multihead(X, heads, W_O, mask=None):
        stacked = [np.hstack([head[i] for head in heads]) for i in range(3)]
        return reference.attention(*(X @ w for w in stacked), mask)[0] @ W_O

    def positional_encoding(n_positions, d_model):
        pe, omega = reference.positional_encoding(n_positions, d_model)
        return pe.T.copy().reshape(n_positions, d_model), omega

    def block_with(ffn, residual_from_input=False):
        def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
            h = _norm(x + reference.multihead(x, heads, W_O, mask))
            return _norm((x if residual_from_input else h) + ffn(h, W1, b1, W2, b2))
        return transformer_block

    chosen = {
        "scores = scores + mask": attention, "one attention": multihead,
        "reshape": positional_encoding,
        "leaky 0.2": block_with(lambda h, W1, b1, W2, b2:
                                np.maximum(0.2 * (h @ W1 + b1), h @ W1 + b1) @ W2 + b2),
        "b1 after relu": block_with(lambda h, W1, b1, W2, b2:
                                    (np.maximum(h @ W1, 0) + b1) @ W2 + b2),
        "residual from input": block_with(lambda h, W1, b1, W2, b2:
                                          np.maximum(h @ W1 + b1, 0) @ W2 + b2, True),
    }[source]
    assert_named(function, chosen, entry, seeds=range(10))


def test_float16_is_named_as_precision_not_as_a_scale():
    """Issue 20 read float16 as a scale mistake (the weights more or less spread)."""
    def attention(Q, K, V, mask=None):
        Q, K, V = (a.astype(np.float16) for a in (Q, K, V))
        scores = Q @ K.T / np.float16(np.sqrt(K.shape[-1]))
        if mask is not None:
            scores = np.where(mask, scores, np.float16(-np.inf))
        weights = reference.softmax(scores)
        return weights @ V, weights
    found = assert_named("attention", attention, "precision.float16")
    assert not any("escala" in message for message in said(found))


def test_a_shape_error_of_hidden_sizes_gets_what_the_notebook_asked_not_a_sentence_per_case():
    """Sizes the case does not declare are «otro tamaño»: a sentence of only those repeated
    the error's own line once per case. What the notebook asked for is said instead."""
    from attention.shapes import ASKED, FOREIGN_SIZE, explain_error
    from draws import draw, get_case

    inputs = draw(get_case("attention", "rectangular"), 0)
    hidden = {"kind": "broadcast", "numbers": [], "shapes": [[4123, 5521], [7777, 4904]]}
    # Sizes from nowhere in the inputs: where they come from is asked, once for every case.
    assert explain_error("attention", inputs, hidden) == [FOREIGN_SIZE, (None, ASKED["attention"])]
    n, d_k = inputs["Q"].shape
    known = {**hidden, "shapes": [[n, d_k], [7777, 4904]]}  # control: one size of the case
    said = explain_error("attention", inputs, known)
    assert len(said) == 3 and "en este caso" in said[0][1]
    # The control of the question: an error whose sizes are all the case's does not ask it.
    m = inputs["K"].shape[0]
    own = {**hidden, "shapes": [[n, m], [n, d_k]]}
    assert FOREIGN_SIZE not in explain_error("attention", inputs, own)


def test_a_count_of_a_size_from_nowhere_reads_as_spanish():
    """«A tiene d_model columnas» names a size; a count the case does not declare reads «un
    número de columnas que no es ningún tamaño de las entradas…», never «otro tamaño
    columnas», nor «que no sale de las entradas», which nothing measured (issue 49.4: a
    vectorised multihead that never projects V has h·d_model columns, a product of them)."""
    from attention.shapes import error_in_sizes
    from draws import draw, get_case

    inputs = draw(get_case("multihead", "dos_cabezas"), 0)
    d_model, h = inputs["X"].shape[1], len(inputs["heads"])
    said = error_in_sizes("multihead", inputs, {"kind": "matmul", "numbers": [d_model, 7777],
                                                "shapes": []})
    assert ("A tiene un número de columnas que no es ningún tamaño de las entradas ni el "
            "producto de dos o tres de ellos y B tiene d_model") in said
    assert "otro tamaño columnas" not in said and "no sale de las entradas" not in said
    # A product of the case's sizes is named as one.
    said = error_in_sizes("multihead", inputs, {"kind": "matmul",
                                                "numbers": [d_model, h * d_model],
                                                "shapes": []})
    assert "A tiene d_model·h columnas" in said, said
    # The control: a count the case declares is named as before.
    said = error_in_sizes("multihead", inputs, {"kind": "matmul", "numbers": [d_model, d_model],
                                                "shapes": []})
    assert "A tiene d_model" in said and "columnas y B tiene d_model" in said


# --- mistakes met in notebooks in the wild (issue 31) ------------------------------------------


def test_subtracting_each_columns_maximum_is_named_on_every_failing_case():
    """The column-max softmax was called «revisa la escala 1/√d_k» on four of its five cases."""
    def attention(Q, K, V, mask=None):
        scores = Q @ K.T / np.sqrt(K.shape[1])
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        e = np.exp(scores - np.max(np.where(np.isfinite(scores), scores, -np.inf), axis=0))
        weights = e / e.sum(axis=1, keepdims=True)
        return weights @ V, weights

    found = assert_named("attention", attention, "attention.column_max_shift")
    assert not any("escala" in m for m in messages(found))


def test_an_exponent_over_d_model_minus_one_is_named_not_read_as_another_base():
    """With odd d_model, 2i/(d_model − 1) reads exactly as base 100000 (10000^(5/4) = 10^5)."""
    def positional_encoding(n_positions, d_model):
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / (d_model - 1))
        return _pe(n_positions, d_model, omega), omega

    found = assert_named("positional_encoding", positional_encoding,
                         "positional_encoding.exponent_over_d_minus_one")
    assert not any("está bien" in m for m in messages(found))


def test_an_exponent_2i_plus_1_is_named():
    def positional_encoding(n_positions, d_model):
        omega = 1 / 10000 ** ((np.arange(0, d_model, 2) + 1) / d_model)
        return _pe(n_positions, d_model, omega), omega

    assert_named("positional_encoding", positional_encoding,
                 "positional_encoding.exponent_2i_plus_1")


def test_a_cosine_in_every_column_is_named():
    def positional_encoding(n_positions, d_model):
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        return _pe(n_positions, d_model, omega, first=np.cos), omega

    assert_named("positional_encoding", positional_encoding, "positional_encoding.cos_everywhere")


def test_a_layer_norm_on_the_ffn_alone_is_named():
    def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
        h = _norm(x + reference.multihead(x, heads, W_O, mask))
        f = np.maximum(0, h @ W1 + b1) @ W2 + b2
        return h + _norm(f)

    found = assert_named("transformer_block", transformer_block,
                         "transformer_block.layer_norm_on_ffn_only")
    assert any("no tienen media 0 ni varianza 1" in m for m in messages(found))


def test_heads_that_all_give_nan_are_not_said_to_be_the_same_head():
    """An output of NaN everywhere (np.where(None, …) without a mask) fits any span, so it was
    read as «todas las cabezas dan el mismo resultado». The control: one head's output in
    every block is still said to be the same head everywhere."""
    from draws import get_case, draw
    from attention import findings

    inputs = draw(get_case("multihead", "dos_cabezas"), 0)
    expected = (reference.multihead(**inputs),)
    nan = np.full_like(expected[0], np.nan)
    assert not [f for f in findings.multihead_findings(inputs, (nan,), expected)
                if f.details.get("id") == "multihead.same_head_everywhere"]
    X, heads, W_O = inputs["X"], inputs["heads"], inputs["W_O"]
    first = reference.attention(X @ heads[0][0], X @ heads[0][1], X @ heads[0][2])[0] * 1.3
    same = np.concatenate([first] * len(heads), axis=1) @ W_O
    assert [f for f in findings.multihead_findings(inputs, (same,), expected)
            if f.details.get("id") == "multihead.same_head_everywhere"]


def test_a_last_column_left_at_zero_fails_where_positions_are_many_and_d_model_odd():
    """An eighth blind probe filled the pairs with `range(d_model // 2)`, leaving the last
    sine column at 0 for odd d_model, and passed: that sine, of the slowest frequency, stays
    below the tolerance over few positions. The long case now has odd d_model and catches it
    on every draw; the control: the short odd case alone lets it through on some draw."""
    def positional_encoding(n_positions, d_model):
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        pe, pos = np.zeros((n_positions, d_model)), np.arange(n_positions)
        for i in range(d_model // 2):
            pe[:, 2 * i], pe[:, 2 * i + 1] = np.sin(pos * omega[i]), np.cos(pos * omega[i])
        return pe, omega

    found = summaries("positional_encoding", positional_encoding)
    assert all("largo" in failing for failing, _ in found.values())
    assert not all("d_impar" in failing for failing, _ in found.values())


def test_the_last_row_returned_for_a_matrix_is_said_to_be_a_loops_variable():
    """A tenth probe's attention kept its weights in one variable per row and returned the
    last row. The control: the first row, which is no loop's leftover, gets no such note."""
    from draws import get_case, draw, outcome
    from attention.standard import reference_parts, violations

    def last_row(Q, K, V, mask=None):
        output, weights = reference.attention(Q, K, V, mask)
        return output, weights[-1]

    def first_row(Q, K, V, mask=None):
        output, weights = reference.attention(Q, K, V, mask)
        return output, weights[0]

    inputs = draw(get_case("attention", "rectangular"), 0)
    expected = reference_parts("attention", inputs)
    (failure,) = violations("attention", inputs, outcome("attention", last_row, inputs), expected)
    assert "una sola fila, la última" in failure.message
    (control,) = violations("attention", inputs, outcome("attention", first_row, inputs),
                            expected)
    assert "la última" not in control.message


def test_frequencies_all_one_name_both_causes_and_claim_neither():
    """ω_i = 1 for every pair comes from an exponent that is 0 (integer division) or from a
    base of 1 (an eighteenth probe's base n_positions, on the case of one position): the text
    says both. The control: frequencies that are all equal but not 1 say neither."""
    from attention.findings import describe_frequencies
    ones, _ = describe_frequencies(np.ones(4), 7, 1)
    assert "división entera" in ones and "la base vale 1" in ones
    same, _ = describe_frequencies(np.full(4, 0.5), 7, 1)
    assert "división entera" not in same and "base" not in same
