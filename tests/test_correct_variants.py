"""Correct implementations written differently keep full marks, and get no diagnosis.

einsum, explicit Python loops, heads vectorized with stacked weight tensors, -1e9 or -1e30
instead of -inf, boolean-index masking, W_O applied block by block, float32 arithmetic, their
own layer norm with the same or a smaller epsilon... differ from the reference by rounding
and by the epsilon, which the tolerances absorb (test_tolerances.py measures by how much).
Each is graded on many draws of every hidden case, as submissions are.
"""

import numpy as np
import pytest

from reference import attention as reference
from attention.misconceptions import render_source
from attention.cases import cases_for
from correct_variants import VARIANTS, all_variants
from draws import GRADED_FUNCTIONS, draw, grade, outcome
from attention.judge import judge

VARIANT_IDS = [variant.__name__ for _, variant in all_variants()]


def _failed(function, fn, seeds=None):
    graded = grade(function, fn) if seeds is None else grade(function, fn, seeds)
    return {key: [f.message for f in failures] for key, failures in graded.items() if failures}


@pytest.mark.parametrize(("function", "variant"), all_variants(), ids=VARIANT_IDS)
def test_correct_variant_passes_every_hidden_case_on_every_draw(function, variant):
    assert not _failed(function, variant)


@pytest.mark.parametrize(("function", "variant"), all_variants(), ids=VARIANT_IDS)
def test_correct_variant_cell_runs_standalone_in_the_notebooks_namespace(function, variant):
    source = render_source(variant, function)
    assert source.startswith(f"def {function}(")
    namespace = {"np": np, "softmax": reference.softmax, "layer_norm": reference.layer_norm,
                 "attention": reference.attention, "multihead": reference.multihead}
    exec(compile(source, f"<{variant.__name__}>", "exec"), namespace)
    for case in cases_for(function):
        inputs = draw(case, 0)
        assert not judge(function, inputs, outcome(function, namespace[function], inputs))


def test_every_graded_function_has_variants_of_each_promised_kind():
    assert set(VARIANTS) == set(GRADED_FUNCTIONS)
    names = set(VARIANT_IDS)
    for promised in ("attention_einsum", "attention_loops", "attention_minus_1e9",
                     "attention_minus_1e30", "attention_float32", "multihead_stacked_weights",
                     "multihead_float32", "positional_encoding_float32",
                     "transformer_block_own_layer_norm", "transformer_block_layer_norm_eps_1e6",
                     "transformer_block_std_plus_eps", "transformer_block_float32"):
        assert promised in names


def test_variant_summary():
    """How many correct variants the judge fails by mistake (printed with -s)."""
    falsely_failed = [variant.__name__ for function, variant in all_variants()
                      if _failed(function, variant, range(10))]
    print(f"\n[judge] correct variants falsely failed: {len(falsely_failed)}/{len(VARIANT_IDS)}"
          f" {falsely_failed or ''}")
    assert not falsely_failed
