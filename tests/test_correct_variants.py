"""Correct implementations written differently keep full marks, and get no diagnosis.

einsum, explicit Python loops, heads vectorized with stacked weight tensors, -1e9 instead of
-inf, boolean-index masking, W_O applied block by block, their own layer norm with the same
epsilon... differ from the reference by rounding only (~1e-15 here), far inside the
tolerances. The Otter-level check of the same variants is in test_mutant_notebooks.py.
"""

import numpy as np
import pytest

import reference
from attention.cases import cases_for
from autograder.checks import GRADED_FUNCTIONS, compare, run_case
from attention.misconceptions import render_source
from correct_variants import VARIANTS, all_variants

VARIANT_IDS = [variant.__name__ for _, variant in all_variants()]


@pytest.mark.parametrize(("function", "variant"), all_variants(), ids=VARIANT_IDS)
def test_correct_variant_passes_every_hidden_case(function, variant):
    for case in cases_for(function):
        failures = compare(function, case, run_case(function, variant, case))
        assert not failures, f"{case.name}: {[f.message for f in failures]}"


@pytest.mark.parametrize(("function", "variant"), all_variants(), ids=VARIANT_IDS)
def test_correct_variant_cell_runs_standalone_in_the_notebooks_namespace(function, variant):
    source = render_source(variant, function)
    assert source.startswith(f"def {function}(")
    namespace = {"np": np, "softmax": reference.softmax, "layer_norm": reference.layer_norm,
                 "attention": reference.attention, "multihead": reference.multihead}
    exec(compile(source, f"<{variant.__name__}>", "exec"), namespace)
    for case in cases_for(function):
        assert not compare(function, case, run_case(function, namespace[function], case))


def test_every_graded_function_has_variants_of_each_promised_kind():
    assert set(VARIANTS) == set(GRADED_FUNCTIONS)
    names = set(VARIANT_IDS)
    for promised in ("attention_einsum", "attention_loops", "attention_minus_1e9",
                     "multihead_stacked_weights", "transformer_block_own_layer_norm"):
        assert promised in names


def test_variant_summary():
    """How many correct variants the checks fail by mistake (printed with -s)."""
    falsely_failed = [variant.__name__ for function, variant in all_variants()
                      if any(compare(function, case, run_case(function, variant, case))
                             for case in cases_for(function))]
    print(f"\n[checks] correct variants falsely failed: {len(falsely_failed)}/{len(VARIANT_IDS)}"
          f" {falsely_failed or ''}")
    assert not falsely_failed
