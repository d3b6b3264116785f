"""The check library's messages help the student without revealing hidden inputs."""

import numpy as np
import pytest

import reference
from attention.cases import cases_for
from autograder.checks import check


def leaky_attention(Q, K, V, mask=None):
    raise ValueError(Q)


def test_student_exception_cannot_echo_hidden_inputs():
    for case in cases_for("attention"):
        with pytest.raises(AssertionError) as failure:
            check("attention", leaky_attention, case.name)
        message = str(failure.value)
        assert "ValueError" in message
        for value in case.inputs()["Q"].ravel():
            assert f"{value:.3f}"[:5] not in message.replace("(índices desde 0", "")


def test_numpy_shape_errors_keep_their_shapes():
    def broken(Q, K, V, mask=None):
        return Q + K, Q

    with pytest.raises(AssertionError, match=r"shapes \(4,3\) \(6,3\)"):
        check("attention", broken, "rectangular")


@pytest.mark.parametrize("case", cases_for("attention"), ids=lambda c: c.name)
def test_reference_passes_every_hidden_case(case):
    check("attention", reference.attention, case.name)


def test_array_subclass_that_equals_everything_is_judged_by_its_values():
    class AlwaysEqual(np.ndarray):
        def __eq__(self, other):
            return np.ones(np.shape(self), dtype=bool)

    def cheating(Q, K, V, mask=None):
        zeros = np.zeros((Q.shape[0], V.shape[1])).view(AlwaysEqual)
        return zeros, np.zeros((Q.shape[0], K.shape[0])).view(AlwaysEqual)

    with pytest.raises(AssertionError):
        check("attention", cheating, "rectangular")
