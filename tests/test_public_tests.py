"""The master's public tests: what they catch, and the Spanish names the feedback shows.

A public test is one function of a ``BEGIN TESTS`` cell; students read its name in the feedback
and in tests/, so it is Spanish. The positional encoding's public tests check the base 10000
of the formula the notebook states, and nothing beyond it.
"""

import re

import numpy as np
import pytest

from reference import attention as reference
from kit_autograder.build.otter_master import load_master
from lesson055 import MASTER

BASE_TEST = "test_positional_encoding_usa_la_base_10000"
# Words of the English names the public tests once had that are not Spanish words too.
ENGLISH_WORDS = {"with", "the", "keeps", "gets", "has", "and", "shapes", "shape", "first", "row",
                 "pairs", "lie", "on", "unit", "circle", "right", "every", "gives", "weight",
                 "future", "ignores", "reproduces", "worked", "example", "sums", "normalizes",
                 "each", "trained", "model", "running", "maximum", "filled", "texts", "five"}


def public_tests():
    """{name: function} of every public test of the master, in the master's order."""
    tests = {}
    for cell in load_master(MASTER).cells:
        match = re.search(r"^def (test_\w+)\(", cell.source, re.M)
        if cell.cell_type == "code" and match and "BEGIN TEST CONFIG" in cell.source:
            namespace = {}
            exec(cell.source, namespace)
            tests[match.group(1)] = namespace[match.group(1)]
    return tests


def positional_encoding_with_base(base):
    """The notebook's positional encoding, with another base than the formula's 10000."""
    def positional_encoding(n_positions, d_model):
        pe, _ = reference.positional_encoding(n_positions, d_model)
        omega = base ** -(np.arange(0, d_model, 2) / d_model)
        positions = np.arange(n_positions)[:, None]
        pe[:, 0::2] = np.sin(positions * omega)
        pe[:, 1::2] = np.cos(positions * omega[: d_model // 2])
        return pe, omega
    return positional_encoding


def positional_encoding_tests():
    return {name: test for name, test in public_tests().items()
            if name.startswith("test_positional_encoding_")}


def test_every_public_test_has_a_spanish_name_after_its_question():
    names = list(public_tests())
    assert len(names) == 17, names
    questions = ("attention", "multihead", "positional_encoding", "transformer_block",
                 "student_extension", "modelo_entrenado",
                 # the practice exercises' checks (test_practice.py)
                 "cruzada", "relleno", "cabezas", "cache_kv", "coste")
    for name in names:
        question = next((q for q in questions if name.startswith(f"test_{q}_")), None)
        assert question, name
        words = set(name[len(f"test_{question}_"):].split("_"))
        assert not words & ENGLISH_WORDS, (name, words & ENGLISH_WORDS)


def test_the_base_test_passes_with_the_reference_at_its_own_base():
    positional_encoding_tests()[BASE_TEST](positional_encoding_with_base(10000))
    positional_encoding_tests()[BASE_TEST](reference.positional_encoding)


@pytest.mark.parametrize("base", [100, 1000])
def test_another_base_fails_the_base_test_and_only_it(base):
    wrong = positional_encoding_with_base(base)
    tests = positional_encoding_tests()
    # The positive control: the other public tests of the function pass with the wrong base,
    # so before the base test nothing public caught it.
    for name, test in tests.items():
        if name != BASE_TEST:
            test(wrong)
    with pytest.raises(AssertionError, match="¿usas la base 10000?"):
        tests[BASE_TEST](wrong)


def test_the_base_test_also_catches_a_pe_that_ignores_its_own_omega():
    def mismatched(n_positions, d_model):
        pe, _ = positional_encoding_with_base(100)(n_positions, d_model)
        return pe, reference.positional_encoding(n_positions, d_model)[1]

    with pytest.raises(AssertionError, match="el seno y el coseno de los ángulos 2·ω_i, con tu omega"):
        positional_encoding_tests()[BASE_TEST](mismatched)


def test_the_base_test_states_only_what_the_notebook_states():
    # Its numbers follow from the formula the notebook prints for d_model = 4: ω = (1, 1/100).
    (source,) = [c.source for c in load_master(MASTER).cells if f"def {BASE_TEST}(" in c.source]
    assert "10000" in source and "0.01" in source
    assert "np.arange" not in source, "the test must not carry a vectorised implementation"


RESIDUAL_TEST = "test_transformer_block_suma_la_entrada_en_cada_subcapa"


def block_namespace(block=None):
    """A notebook's namespace with the reference's functions, and ``block`` as its
    transformer_block cell (the reference's when None)."""
    from attention import mutants  # noqa: F401 (the misconceptions' forms)
    from attention.functions import FUNCTIONS
    from attention.misconceptions import render_source

    namespace = {"np": np, "softmax": reference.softmax, "layer_norm": reference.layer_norm}
    for name in FUNCTIONS:
        source = block if name == "transformer_block" and block else getattr(reference, name)
        exec(render_source(source, name), namespace)
    return namespace


def test_the_residual_test_passes_with_the_reference():
    public_tests()[RESIDUAL_TEST](block_namespace()["transformer_block"])


@pytest.mark.parametrize("misconception", ["transformer_block.no_attention_residual",
                                           "transformer_block.no_ffn_residual"])
def test_a_block_without_a_residual_fails_the_residual_test_and_only_it(misconception):
    """Issue 30.1: a block with no residuals passed every public check."""
    from attention import mutants

    (mutant, *_) = mutants.forms(misconception)
    block = block_namespace(mutant)["transformer_block"]
    tests = {n: t for n, t in public_tests().items() if n.startswith("test_transformer_block_")}
    # Positive control: the block's other public tests pass without the residual.
    for name, test in tests.items():
        if name != RESIDUAL_TEST:
            test(block)
    with pytest.raises(AssertionError, match="conexión residual"):
        tests[RESIDUAL_TEST](block)


ROW_SUMS_TEST = "test_attention_da_formas_correctas_y_filas_que_suman_1"


def _weights_then(change):
    def attention(Q, K, V, mask=None):
        _, weights = reference.attention(Q, K, V, mask)
        weights = change(Q @ K.T / np.sqrt(K.shape[1]), weights)
        return weights @ V, weights
    return attention


@pytest.mark.parametrize(("change", "asked"), [
    # An eighth blind probe rounded the weights to 4 decimals and was asked about the axis.
    (lambda scores, weights: np.round(weights, 4), "¿redondeas o recortas los pesos"),
    (lambda scores, weights: reference.softmax(scores.T).T, "por columnas (axis=0)"),
    (lambda scores, weights: np.exp(scores), "¿divides la exponencial de cada puntuación"),
])
def test_the_row_sums_test_asks_the_question_its_weights_point_to(change, asked):
    """The row-sum test asked «¿aplicas la softmax por filas?» of every failure; now each
    failure gets its own question, and the others' questions are not asked."""
    test = public_tests()[ROW_SUMS_TEST]
    test(_weights_then(lambda scores, weights: weights))  # the control: right weights pass
    with pytest.raises(AssertionError) as failed:
        test(_weights_then(change))
    assert asked in str(failed.value)
    others = [other for other in ("¿redondeas", "por columnas", "¿divides la exponencial")
              if other not in asked]
    assert not any(other in str(failed.value) for other in others)
