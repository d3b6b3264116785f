"""Hidden calls pass their inputs as the notebook and the public tests do: positionally.

A student who names the parameters ``q, k, v`` passes the public tests (which call
``attention(Q, K, V)``) and must pass the hidden cases too; calling by keyword, as the grader
did, raised TypeError on every case (the control below). A call that still cannot start says
which parameter, by the statement's name for it. Through the sandbox, tests/test_probe.py
grades notebooks with renamed parameters, a keyword-only mask and a missing mask.
"""

import numpy as np
import pytest

from reference import attention as reference
from draws import grade
from kit_autograder.sandbox.inside.calls import _Refused, call_as_notebook
from kit_autograder.verdicts.in_process import as_called
from kit_autograder.verdicts.messages import error_message

STATEMENT = ("Q", "K", "V", "mask=None")
NAMES = ("Q", "K", "V", "mask")


def renamed(q, k, v, mask=None):
    return reference.attention(q, k, v, mask)


def keyword_only_mask(Q, K, V, *, mask=None):
    return reference.attention(Q, K, V, mask)


def without_mask(Q, K, V):
    return reference.attention(Q, K, V)


def mask_required(Q, K, V, mask):
    return reference.attention(Q, K, V, mask)


def inputs(mask=True):
    rng = np.random.default_rng(0)
    case = dict(Q=rng.normal(size=(2, 3)), K=rng.normal(size=(4, 3)), V=rng.normal(size=(4, 2)))
    if mask:
        case["mask"] = np.tril(np.ones((2, 4), dtype=bool))
    return case


def report(function, case):
    args, kwargs, names = as_called(case, NAMES)
    with pytest.raises(_Refused) as refused:
        call_as_notebook(function, args, kwargs, names)
    return refused.value.error


def test_the_inputs_go_positionally_in_the_references_order():
    args, kwargs, names = as_called(inputs(), NAMES)
    assert names == list(NAMES) and kwargs == {} and len(args) == 4
    args, kwargs, names = as_called(inputs(mask=False), NAMES)
    assert names == ["Q", "K", "V"] and len(args) == 3


def test_renamed_parameters_keep_every_hidden_case():
    assert not any(grade("attention", renamed, range(5)).values())


def test_control_renamed_parameters_fail_when_called_by_keyword():
    with pytest.raises(TypeError):
        renamed(**inputs())


def test_a_keyword_only_mask_gets_the_mask_by_its_name():
    args, kwargs, names = as_called(inputs(), NAMES)
    output, weights = call_as_notebook(keyword_only_mask, args, kwargs, names)
    assert np.allclose(weights, reference.attention(*args)[1])
    assert not any(grade("attention", keyword_only_mask, range(3)).values())


def test_a_missing_mask_parameter_is_named_by_the_statements_name():
    error = report(without_mask, inputs())
    assert error == {"kind": "arguments", "exception": "TypeError", "numbers": [4, 3, 3]}
    message = error_message("attention", error, (), STATEMENT)
    assert "le falta el parámetro de `mask`" in message
    assert "`attention(Q, K, V, mask=None)`" in message


def test_a_mask_without_default_is_told_to_take_one():
    error = report(mask_required, inputs(mask=False))
    assert error["numbers"] == [3, 3, 4]
    message = error_message("attention", error, (), STATEMENT)
    assert "sin `mask`" in message and "valor por defecto" in message


def test_an_unknown_keyword_is_named_only_when_the_caller_chose_it():
    def attention(Q, K, V, m=None):
        return reference.attention(Q, K, V, m)
    case = inputs()
    with pytest.raises(_Refused) as refused:
        call_as_notebook(attention, [case["Q"], case["K"], case["V"]], {"mask": case["mask"]})
    assert refused.value.error["name"] == "mask"
    assert "no tiene un parámetro llamado `mask`" in error_message(
        "attention", refused.value.error, (), STATEMENT)


def test_a_signature_of_the_students_own_tells_no_number_beyond_the_call():
    """``__signature__`` is the student's to write: the report's numbers are bounded by the
    count of arguments the grader passed, so it cannot spell anything else."""
    import inspect

    class Attention:
        __signature__ = inspect.Signature(
            [inspect.Parameter(f"p{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
             for i in range(4123)])

        def __call__(self, Q, K, V, mask=None):
            raise TypeError("no")
    error = report(Attention(), inputs())
    assert max(error["numbers"]) <= 5


def test_a_type_error_inside_the_function_stays_the_functions_own():
    def attention(Q, K, V, mask=None):
        return len(3), None
    args, kwargs, names = as_called(inputs(), NAMES)
    with pytest.raises(TypeError):
        call_as_notebook(attention, args, kwargs, names)


def test_a_forged_arguments_report_says_no_name_or_count_of_its_own():
    """The report crosses from the job, which the student's code runs, so it can be forged:
    a name outside the statement or a count no call of it gives is not said."""
    honest = {"kind": "arguments", "exception": "TypeError", "numbers": [3, 3, 4],
              "name": "mask"}
    assert "`mask`" in error_message("attention", honest, (), STATEMENT)  # control
    assert "con 3 argumentos" in error_message("attention", {**honest, "name": None}, (),
                                               STATEMENT)  # control
    forged = {**honest, "name": "d0_4123_d1_5521", "numbers": [4123, 5521, 7]}
    message = error_message("attention", forged, (), STATEMENT)
    assert "4123" not in message and "5521" not in message and "d0_" not in message
