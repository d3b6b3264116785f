"""The tolerances sit between legitimate rounding and the smallest catalogued mistake.

Both sides are measured with the judge's own allowance (``judge.allowances``), as a ratio: the
largest (|student - centre| - band) / tolerance over every entry of a case, how far beyond the
accepted interval an entry lands in units of the rounding tolerance (the centre is the
reference's answer, or for the block the middle of the epsilon interval, whose half-width is
the band). A ratio below 1 passes. Every correct variant (float32, einsum, loops, -1e9 or -1e30, a LayerNorm of its own
with an epsilon from 0 to 1e-5...) must stay far below 1, and every mistake of the catalog
that shows only in its values must stay far above 1, on every draw tested.

``python tests/test_tolerances.py [DRAWS]`` prints the table that tolerances.py quotes.
"""

import sys

import numpy as np
import pytest

from attention import misconceptions, tolerances
from kit_autograder.verdicts.outcome import Outcome
from attention.cases import cases_for
from attention.standard import allowances, reference_parts, violations
from correct_variants import VARIANTS
from draws import GRADED_FUNCTIONS, SEEDS, draw, get_case, outcome

# How far inside each side of the tolerance the measurements must stay: tolerances.py
# states the measured margins, which are wider.
REQUIRED_MARGIN = 3


def own_layer_norm_block(eps):
    """A correct block with its own LayerNorm and epsilon ``eps``."""
    def norm(x):
        return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)

    def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
        from reference import attention as reference

        x = norm(x + reference.multihead(x, heads, W_O, mask))
        return norm(x + np.maximum(0, x @ W1 + b1) @ W2 + b2)

    transformer_block.__name__ = f"transformer_block_eps_{eps:g}"
    return transformer_block


LEGIT = {function: list(VARIANTS[function]) for function in GRADED_FUNCTIONS}
LEGIT["transformer_block"] += [own_layer_norm_block(eps) for eps in (0.0, 1e-7, 1e-6, 3e-6)]


def error_ratio(function, inputs, result):
    """max (|got - centre| - band) / tolerance over the case's entries; None when the outcome
    fails whatever the tolerance (an error, another shape, NaN) or breaks a property."""
    if result.parts is None:
        return None
    expected = reference_parts(function, inputs)
    if any(g.shape != e.shape or not np.isfinite(g).all() for g, e in zip(result.parts, expected)):
        return None
    failures = violations(function, inputs, result, expected)
    if any(f.details.get("kind") not in ("values",) for f in failures):
        return None
    return max(float(((np.abs(got - centre) - band) / tolerance).max())
               for got, (centre, tolerance, band) in zip(result.parts,
                                                         allowances(function, inputs, expected)))


def legit_ratio(function, fn, seeds):
    """The largest ratio of a correct variant over every case and draw."""
    ratios = [error_ratio(function, inputs, outcome(function, fn, inputs))
              for case in cases_for(function) for inputs in (draw(case, s) for s in seeds)]
    assert None not in ratios, f"{fn.__name__} fails whatever the tolerance"
    return max(ratios)


def mistake_ratio(function, mutant, seeds):
    """The smallest, over draws, of a mutant's largest ratio over the cases; draws on which it
    fails whatever the tolerance do not count. None if there is no such draw."""
    per_draw = []
    for seed in seeds:
        ratios = [error_ratio(function, inputs, outcome(function, mutant, inputs))
                  for inputs in (draw(case, seed) for case in cases_for(function))]
        if None not in ratios:
            per_draw.append(max(ratios))
    return min(per_draw) if per_draw else None


def measure(function, seeds):
    """(largest legitimate ratio and its variant, smallest mistake ratio and its entry)."""
    legit = max((legit_ratio(function, fn, seeds), fn.__name__) for fn in LEGIT[function])
    mistakes = [(mistake_ratio(function, form, seeds), entry.id)
                for entry in misconceptions.for_function(function) for form in entry.forms]
    return legit, min(m for m in mistakes if m[0] is not None)


@pytest.mark.parametrize("function", GRADED_FUNCTIONS)
def test_tolerance_sits_between_legit_rounding_and_the_smallest_mistake(function):
    (legit, variant), (mistake, entry) = measure(function, SEEDS)
    print(f"\n[tolerances] {function}: largest legitimate ratio {legit:.2g} ({variant}); "
          f"smallest mistake ratio {mistake:.3g} ({entry})")
    assert legit * REQUIRED_MARGIN < 1, f"{variant} is too close to failing: {legit:.3g}"
    assert mistake > REQUIRED_MARGIN, f"{entry} is too close to passing: {mistake:.3g}"


@pytest.mark.parametrize("eps", [0.0, 1e-7, 1e-6, 3e-6, 1e-5])
def test_a_stricter_layer_norm_epsilon_costs_no_points(eps):
    from draws import grade

    failed = {key: [f.message for f in failures]
              for key, failures in grade("transformer_block", own_layer_norm_block(eps)).items()
              if failures}
    assert not failed


def test_the_epsilon_band_covers_a_token_whose_variance_is_near_epsilon():
    """Where a row's variance before the last LayerNorm is as small as epsilon, epsilon 0 and
    1e-5 give visibly different outputs; the band still lets both pass, as it promises."""
    from reference import attention as reference
    from attention.judge import judge

    inputs = draw(get_case("transformer_block", "un_token"), 0)
    assert inputs["x"].shape[0] == 1
    h = reference.layer_norm(inputs["x"] + reference.multihead(inputs["x"], inputs["heads"],
                                                               inputs["W_O"]))
    # No FFN weight, and a b2 that cancels h up to a small ripple of variance ~1e-6.
    ripple = 1e-3 * np.random.default_rng(1).normal(size=h.shape[1])
    inputs.update(W2=np.zeros_like(inputs["W2"]), b2=(-h + 1.0 + ripple)[0])
    strict = outcome("transformer_block", own_layer_norm_block(0.0), inputs)
    expected = reference_parts("transformer_block", inputs)
    assert np.abs(strict.parts[0] - expected[0]).max() > 100 * tolerances.ATOL
    assert not judge("transformer_block", inputs, strict)
    # Only what some epsilon in the range gives is accepted: the interval, not a wide band.
    assert judge("transformer_block", inputs, outcome(
        "transformer_block", own_layer_norm_block(1e-3), inputs)), "a larger epsilon passed"
    flipped = Outcome(parts=[-expected[0]])
    assert judge("transformer_block", inputs, flipped), "the opposite output passed"


def test_keras_epsilon_fails_on_every_draw_on_tokens_of_small_variance():
    """ε = 1e-3 (Keras's default) kept full marks in most draws before the case of tokens of
    small variance; there it fails on every draw, and is named as the epsilon it is."""
    from draws import grade, named

    graded = grade("transformer_block", own_layer_norm_block(1e-3))
    small = {seed: failures for (case, seed), failures in graded.items()
             if case == "varianza_pequena"}
    assert all(small.values()), [seed for seed, failures in small.items() if not failures]
    assert all(named(failures) == ["transformer_block.layer_norm_epsilon"]
               for failures in small.values())
    # Control: on the other cases it passes in most draws, as issue 20 measured.
    others = [failures for (case, _), failures in graded.items() if case != "varianza_pequena"]
    assert sum(bool(f) for f in others) < len(others) / 10


if __name__ == "__main__":
    seeds = range(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
    for function in GRADED_FUNCTIONS:
        (legit, variant), (mistake, entry) = measure(function, seeds)
        print(f"{function:20s} legit max {legit:.2g} ({variant})  "
              f"smallest mistake {mistake:.3g} ({entry})")
