"""Call a function in this process and reduce what it returns exactly as the sandbox does.

For trusted code only: the catalog's mutants and the reference in the grader, the tests, and
Otter's in-kernel hidden tests (which decide nothing: the sandbox's verdicts replace them).
The reduction and the error report are the sandbox's own functions, so an outcome computed
here and one that came from a job compare like for like.
"""

import copy
import types

import numpy as np

from ..sandbox.client import checked_error
from ..sandbox.inside.calls import _Refused, call_as_notebook, classify, split_parts
from . import budget
from .outcome import Outcome


def isolate(function, replacements):
    """A copy of ``function`` whose global names in ``replacements`` point elsewhere.

    Functions defined beside it are rebound too, so a ``multihead`` that calls its own
    ``one_head`` helper, which calls ``attention``, still gets the replacement.
    """
    if not isinstance(function, types.FunctionType) or not replacements:
        return function
    original = function.__globals__
    rebound = dict(original)

    def rebind(fn):
        clone = types.FunctionType(fn.__code__, rebound, fn.__name__, fn.__defaults__,
                                   fn.__closure__)
        clone.__kwdefaults__ = fn.__kwdefaults__
        return clone

    for name, value in original.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is original:
            rebound[name] = rebind(value)
    rebound.update(replacements)
    return rebind(function)


def as_called(inputs, parameters):
    """``inputs`` as the notebook and its public tests pass them: positionally, in the order of
    ``parameters`` (the reference's), up to the first one the case leaves out; the rest by name.
    Returns (args, kwargs, the names of args)."""
    names = []
    for name in parameters:
        if name not in inputs:
            break
        names.append(name)
    return ([inputs[name] for name in names],
            {name: value for name, value in inputs.items() if name not in names}, names)


def run_in_process(function, inputs, parts, replacements=None, parameters=None,
                   copy_inputs=True) -> Outcome:
    """``function(**inputs)`` on deep copies, reduced to an ``Outcome``; with ``parameters``,
    called positionally in their order, as the sandbox calls a student's function.
    ``copy_inputs=False`` for trusted code that never changes its arguments (the mutants).
    Within a diagnosis each call is one of its probes (budget.py)."""
    budget.spend()
    if function is None:
        return Outcome(error={"kind": "missing"})
    if not callable(function):
        return Outcome(error={"kind": "not_callable"})
    function = isolate(function, replacements or {})
    try:
        args, kwargs, names = as_called(copy.deepcopy(inputs) if copy_inputs else inputs,
                                        parameters or ())
        with np.errstate(all="ignore"):
            result = call_as_notebook(function, args, kwargs, names)
        return Outcome(parts=split_parts(result, parts))
    except _Refused as refused:
        return Outcome(error=checked_error(refused.error))
    except Exception as exc:
        return Outcome(error=checked_error(classify(exc)))
