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
from ..sandbox.inside.calls import _Refused, classify, split_parts
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


def run_in_process(function, inputs, parts, replacements=None) -> Outcome:
    """``function(**inputs)`` on deep copies, reduced to an ``Outcome``."""
    if function is None:
        return Outcome(error={"kind": "missing"})
    if not callable(function):
        return Outcome(error={"kind": "not_callable"})
    function = isolate(function, replacements or {})
    try:
        with np.errstate(all="ignore"):
            result = function(**copy.deepcopy(inputs))
        return Outcome(parts=split_parts(result, parts))
    except _Refused as refused:
        return Outcome(error=checked_error(refused.error))
    except Exception as exc:
        return Outcome(error=checked_error(classify(exc)))
