"""``same_within``'s two quick answers agree with its full check on every kind of array.

The catalogue's matching calls ``same_within`` about a million times per test run; its quick
answers (all finite and close: equal; some place far: different) must be the full check's, NaN
and infinities included.
"""

import numpy as np

from kit_autograder.verdicts import compare

SPECIALS = (np.nan, np.inf, -np.inf)


def _pairs(rng, count):
    for _ in range(count):
        shape = tuple(rng.integers(0, 4, size=rng.integers(0, 3)))
        expected = rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4)
        got = expected + rng.normal(size=shape) * 10.0 ** rng.integers(-12, 1)
        for array in (got, expected):
            if array.size and rng.random() < 0.4:
                flat = array.reshape(-1)
                flat[rng.integers(0, flat.size)] = SPECIALS[rng.integers(0, 3)]
        if expected.size and rng.random() < 0.2:  # the same special on both sides
            place = rng.integers(0, expected.size)
            got.reshape(-1)[place] = expected.reshape(-1)[place] = SPECIALS[rng.integers(0, 3)]
        if rng.random() < 0.05:
            got = np.full(shape, 1e308) if shape else np.float64(1e308)
            expected = -got
        atol = (rng.random(shape) * 1e-6 if rng.random() < 0.3 else 10.0 ** rng.integers(-9, -3))
        rtol = 10.0 ** rng.integers(-9, -3) if rng.random() < 0.8 else 0.0
        yield np.asarray(got, float), np.asarray(expected, float), atol, rtol


def test_the_quick_answers_are_the_full_checks_on_random_arrays_with_nan_and_infinities():
    rng = np.random.default_rng(2026)
    answers = {True: 0, False: 0}
    for got, expected, atol, rtol in _pairs(rng, 20_000):
        quick = compare.same_within(got, expected, atol=atol, rtol=rtol)
        full = compare._same_within_in_full(got, expected, atol=atol, rtol=rtol)
        assert quick == full, (got, expected, atol, rtol)
        answers[full] += 1
    # Control: the draws reach both answers often, so the agreement says something.
    assert min(answers.values()) > 2_000, answers


def test_control_an_infinite_expected_value_beside_a_finite_one_is_not_close():
    # The case a bare |got - expected| <= atol + rtol·|expected| gets wrong: inf <= inf.
    got, expected = np.array([1.0, 2.0]), np.array([1.0, np.inf])
    error, allowed = np.abs(got - expected), 1e-9 + 1e-6 * np.abs(expected)
    assert np.all(error <= allowed)
    assert not compare.same_within(got, expected, atol=1e-9, rtol=1e-6)
