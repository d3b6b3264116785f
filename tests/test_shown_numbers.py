"""A number a student's code chose reaches them only if it is a size of the case (issue 19).

The property, for every kind of error the sandbox reports and every path that puts it into
words (the engine's sentence, the lesson's explanation with the notebook's names, the shape
of a returned array): the message depends on the student's numbers only through those that
are sizes of the case. Replace every other number by any other non-size and the message is
the same, character for character: nothing in it can spell a digit of a hidden input.
"""

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from attention.cases import cases_for
from attention.functions import FUNCTIONS
from attention.shapes import case_sizes
from attention.standard import violations, reference_parts
from attention.shapes import explain_error
from kit_autograder.sandbox.client import ERROR_KINDS
from kit_autograder.verdicts.compare import compare_part
from kit_autograder.verdicts.messages import error_message
from kit_autograder.verdicts.outcome import Outcome
from kit_autograder.verdicts.sizes import NO_SIZES, OTHER_SIZE, CaseSizes

CASES = [(function, case) for function in FUNCTIONS for case in cases_for(function)]
# Small integers too: a digit, a pair of digits, four digits, and any size a case has.
NUMBERS = st.one_of(st.integers(0, 9), st.integers(10, 99), st.integers(100, 9999),
                    st.integers(-5, 2**40))
SHAPE = st.lists(NUMBERS, max_size=6)


def replaced(value, sizes, other):
    """``value`` (an error report's numbers or shapes) with each non-size set to ``other``."""
    if isinstance(value, list):
        return [replaced(item, sizes, other) for item in value]
    return value if sizes.allows(value) else other


def said(function, inputs, error):
    parts = FUNCTIONS[function].parts
    sizes = case_sizes(function, inputs)
    return [error_message(function, error, parts, sizes=sizes)] + [
        text for _, text in explain_error(function, inputs, error)]


@settings(max_examples=400, deadline=None)
@given(case=st.sampled_from(CASES), kind=st.sampled_from(sorted(ERROR_KINDS)),
       numbers=st.lists(NUMBERS, max_size=6), shapes=st.lists(SHAPE, max_size=4),
       others=st.tuples(st.integers(10_001, 10**12), st.integers(10_001, 10**12)))
def test_an_errors_message_depends_only_on_the_numbers_that_are_sizes_of_the_case(
        case, kind, numbers, shapes, others):
    function, spec = case
    inputs = spec.inputs()
    sizes = case_sizes(function, inputs)
    error = {"kind": kind, "exception": "ValueError", "numbers": numbers, "shapes": shapes}
    first, second = ({**error, "numbers": replaced(numbers, sizes, other),
                      "shapes": replaced(shapes, sizes, other)} for other in others)
    assert said(function, inputs, first) == said(function, inputs, second)


@settings(max_examples=200, deadline=None)
@given(case=st.sampled_from(CASES), dims=st.lists(st.integers(0, 99_999), max_size=3),
       others=st.tuples(st.integers(10_001, 99_999), st.integers(10_001, 99_999)))
def test_a_returned_shape_shows_only_the_sizes_of_the_case(case, dims, others):
    function, spec = case
    inputs = spec.inputs()
    sizes = case_sizes(function, inputs)
    expected = reference_parts(function, inputs)

    def message(other):
        # An empty array can have any sizes: the way code spells numbers into a shape.
        shape = [0] + replaced(dims, sizes, other)
        parts = [np.zeros(shape)] + [np.zeros_like(part) for part in expected[1:]]
        return [f.message for f in violations(function, inputs, Outcome(parts=parts), expected)]

    assert message(others[0]) == message(others[1])


def test_control_the_numbers_show_when_they_are_the_cases_sizes():
    sizes = CaseSizes.of({"Q": np.zeros((4, 3)), "K": np.zeros((6, 3)), "heads": [1, 2]})
    error = {"kind": "broadcast", "exception": "ValueError", "shapes": [[4, 6], [7777, 3]]}
    assert error_message("attention", error, sizes=sizes) == (
        "lanzó ValueError: opera elemento a elemento arrays de formas (4, 6) y "
        f"({OTHER_SIZE}, 3), que no encajan")
    assert sizes.allows(2) and not sizes.allows(7777) and not sizes.allows(True)
    # Without a case's sizes, no number at all: what a caller that forgets them gets.
    assert "4" not in error_message("attention", error, sizes=NO_SIZES)
    assert NO_SIZES.shape((1, 2, 3, 4, 5, 6)) == f"({', '.join([OTHER_SIZE] * 4)}, …)"


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_a_zeros_answer_reads_no_value_of_the_reference(function):
    # Zeros of the right shape: the largest difference would be the reference's largest
    # value, and where it is. The message says only from which row on the values differ.
    for spec in cases_for(function):
        inputs = spec.inputs()
        expected = reference_parts(function, inputs)
        zeros = Outcome(parts=[np.zeros_like(part) for part in expected])
        largest = max(float(np.abs(part).max()) for part in expected)
        for failure in violations(function, inputs, zeros, expected):
            # No number with decimals at all, so certainly not the reference's largest value.
            assert not re.search(r"\d[.,]\d", failure.message), (largest, failure.message)
