"""Where a block bug that no catalogued mistake explains first departs (issue 31.5): the
lesson's ``locate`` switches the FFN, the attention or both off and compares each answer
with the reference on the same input; the engine says that place instead of the generic
hint. In-process with pure-numpy blocks, then once through ``make grade``'s engine."""

import numpy as np
import pytest

from reference import attention as reference
from attention import cases, diagnose, locate
from attention.judge import reference_parts, judge
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


def inputs_of(case_name):
    case = next(c for c in cases.cases_for("transformer_block") if c.name == case_name)
    return case.inputs()


def located(block, case="causal"):
    return locate.locate("transformer_block", inputs_of(case),
                         lambda probe: (np.asarray(block(**probe), dtype=np.float64),))


@pytest.mark.parametrize("block, where", [
    (tanh_ffn, "transformer_block.located_ffn_sublayer"),
    (doubled_attention, "transformer_block.located_attention_sublayer"),
    (no_norm_at_all, "transformer_block.located_residuals_or_norm"),
    (second_residual_from_input, "transformer_block.located_chaining"),
])
def test_each_block_bug_is_located_where_it_departs(block, where):
    inputs = inputs_of("causal")
    outcome = Outcome(parts=(np.asarray(block(**inputs)),))
    failures = judge("transformer_block", inputs, outcome)
    assert failures  # the bug is a bug on this case
    if block is not second_residual_from_input:
        # The control: without locating, no catalogued mistake is named, only a hint.
        said = diagnose.diagnose("transformer_block", inputs, outcome, failures,
                                 reference_parts("transformer_block", inputs))
        assert said and all(f.details.get("kind") == "hint" for f in said), said
    finding_id, message = located(block)
    assert finding_id == where
    assert message.startswith("el fallo está en ") and "(paso 8)" in message


def test_a_correct_block_and_a_block_that_raises_are_not_located():
    assert located(reference.transformer_block) is None

    assert locate.locate("transformer_block", inputs_of("causal"), lambda probe: None) is None
    assert locate.locate("attention", inputs_of("causal"), lambda probe: None) is None


def test_the_messages_quote_no_number_of_the_hidden_case():
    inputs = inputs_of("sin_mascara")
    shown = {f"{value:.2f}".replace(".", ",") for value in np.ravel(inputs["x"])[:20]}
    for block in (tanh_ffn, doubled_attention, no_norm_at_all):
        _, message = located(block, "sin_mascara")
        assert not any(number in message for number in shown)


def test_make_grade_says_the_located_place_instead_of_the_generic_hint(built_dist,
                                                                      autograder_zip,
                                                                      tmp_path):
    notebooks = Notebooks(built_dist)
    files = {
        "tanh.ipynb": notebooks.with_function("correct", "transformer_block", HEAD + (
            "    x1 = layer_norm(x + multihead(x, heads, W_O, mask))\n"
            "    return layer_norm(x1 + np.tanh(x1 @ W1 + b1) @ W2 + b2)\n")),
        "doble.ipynb": notebooks.with_function("correct", "transformer_block", HEAD + (
            "    x1 = layer_norm(x + 2 * multihead(x, heads, W_O, mask))\n"
            "    return layer_norm(x1 + np.maximum(0, x1 @ W1 + b1) @ W2 + b2)\n")),
    }
    out = tmp_path / "out"
    grade_here(write_folder(tmp_path / "in", files), out, autograder_zip)
    records = read_records(out)
    for name, where in (("tanh.ipynb", "located_ffn_sublayer"),
                        ("doble.ipynb", "located_attention_sublayer")):
        (diagnosis,) = records[name].diagnoses["transformer_block"]
        assert diagnosis.ids == [f"transformer_block.{where}"]
        text = (out / "feedback" / f"{name[:-6]}.md").read_text("utf-8")
        assert "**Diagnóstico**: el fallo está en" in text
        assert "revisa las residuales, la FFN y la máscara" not in text
