"""Judge a student's outcome on one hidden case of lesson 055: what is wrong, and why.

The engine hands over plain data: the case's inputs and the student's ``Outcome`` (float64
arrays or a checked error report). The reference runs here, in the grader. Properties every
correct answer has (rows of weights summing to 1, nothing past the mask) are checked before
closeness, because a broken property explains a mismatch better than the mismatch itself;
then the diagnosis names the mistake when it can (diagnose.py).
"""

import inspect

import numpy as np

import reference
from kit_autograder.verdicts.compare import compare_part, where
from kit_autograder.verdicts.in_process import run_in_process
from kit_autograder.verdicts.messages import error_message
from kit_autograder.verdicts.outcome import Failure

from . import tolerances
from .functions import FUNCTIONS
from .mutants import Mutant


def reference_parts(function, inputs):
    """The reference's answer on ``inputs``, as float64 arrays (kept inside the grader)."""
    outcome = run_in_process(getattr(reference, function), inputs, len(FUNCTIONS[function].parts))
    if outcome.parts is None:
        raise RuntimeError(f"the reference {function} failed on a hidden case: {outcome.error}")
    return outcome.parts


def accepted(function, inputs, expected):
    """What each returned part is compared with, and how far from it each entry may be:
    ``[(centre, allowed)]``, |student - centre| <= allowed entry by entry.

    The centre is the reference's answer and the allowance ``ATOL + RTOL·|reference|``. For
    the block, every LayerNorm epsilon in ``tolerances.LAYER_NORM_EPS`` is accepted: the centre
    and the allowance widen to the interval between the blocks built with its two ends, which
    is where any epsilon between them lands (tolerances.py says why).
    """
    allowances = [tolerances.ATOL + tolerances.RTOL * np.abs(part) for part in expected]
    centres = list(expected)
    if function == "transformer_block":
        low, high = (run_in_process(Mutant.of(function, eps=eps), inputs, 1).parts[0]
                     for eps in tolerances.LAYER_NORM_EPS)
        centres[0] = (low + high) / 2
        allowances[0] = allowances[0] + np.abs(high - low) / 2
    return list(zip(centres, allowances))


def parameters(function):
    """The reference's parameters, in order, as the statement writes them (``mask=None``)."""
    return tuple(str(p) for p in inspect.signature(getattr(reference, function))
                 .parameters.values())


def violations(function, inputs, outcome, expected):
    """Every property the outcome violates on this case; empty when it is correct."""
    spec = FUNCTIONS[function]
    if outcome.error is not None:
        return [Failure(error_message(function, outcome.error, spec.parts,
                                      parameters(function)), None,
                        {"kind": "error", "error": outcome.error["kind"]})]
    failures = []
    for name, got, (centre, allowed) in zip(spec.parts, outcome.parts,
                                            accepted(function, inputs, expected)):
        # ``allowed`` already holds RTOL's share, entry by entry.
        failures += compare_part(name, got, centre, atol=allowed, rtol=0.0)
    if function == "attention" and np.isfinite(outcome.parts[1]).all():
        properties = _attention_properties(outcome.parts[1], inputs.get("mask"))
        if properties:
            failures = properties + [f for f in failures if f.part != "los pesos"]
    return failures


def judge(function, inputs, outcome):
    """The engine's entry point: failures with their diagnosis, or [] when it passes."""
    from .diagnose import diagnose  # late: diagnose compares mutants through violations()

    expected = reference_parts(function, inputs)
    failures = violations(function, inputs, outcome, expected)
    if failures:
        failures += diagnose(function, inputs, outcome, failures, expected)
    return failures


def _attention_properties(weights, mask):
    failures = []
    if weights.ndim != 2:
        return failures
    sums = weights.sum(axis=-1)
    off = np.flatnonzero(np.abs(sums - 1) > tolerances.ROW_SUM_ATOL)
    if off.size:
        row = int(off[0])
        failures.append(Failure(f"la fila {row} de los pesos no suma 1 (suma {sums[row]:.3g})",
                                "los pesos", {"kind": "row_sum", "row": row}))
    if mask is not None and np.shape(mask) == weights.shape:
        leaked = np.where(~np.asarray(mask, dtype=bool), np.abs(weights), 0)
        if leaked.max() > tolerances.MASKED_WEIGHT_ATOL:
            index = tuple(int(i) for i in np.unravel_index(np.argmax(leaked), leaked.shape))
            failures.append(Failure(
                f"una clave prohibida por la máscara recibe peso {leaked[index]:.3g} "
                f"({where(index, leaked.shape)})", "los pesos", {"kind": "mask_leak"}))
    return failures
