"""What a correct answer to one hidden case of lesson 055 is, and what an outcome violates of
it: the reference's answer, the allowance around each part, and the properties every correct
answer has (rows of weights summing to 1, nothing past the mask), checked before closeness,
because a broken property explains a mismatch better than the mismatch itself; a wrong shape
is always said.

Below both the judge (judge.py, which adds the diagnosis) and the diagnosis (diagnose.py,
which judges its mutants with the same ``Standard``), so each imports it and neither imports
the other back. Every number of the student's that a message shows goes through the case's
sizes (shapes.case_sizes), and no message says how far a value is from the reference's, or
what a sum or a weight of the student's came to: both would be numbers the student's code
chose.
"""

import functools
import inspect

import numpy as np

from reference import attention as reference
from kit_autograder.verdicts.compare import compare_part, in_another_order, where
from kit_autograder.verdicts.in_process import run_in_process
from kit_autograder.verdicts.messages import error_message
from kit_autograder.verdicts.outcome import Failure

from . import tolerances
from .functions import FUNCTIONS
from .mutants import Mutant
from .shapes import case_sizes


def reference_parts(function, inputs):
    """The reference's answer on ``inputs``, as float64 arrays (kept inside the grader)."""
    outcome = run_in_process(getattr(reference, function), inputs, len(FUNCTIONS[function].parts))
    if outcome.parts is None:
        raise RuntimeError(f"the reference {function} failed on a hidden case: {outcome.error}")
    return outcome.parts


def allowances(function, inputs, expected):
    """What each returned part is compared with, and how far from it each entry may be, in two
    shares: ``[(centre, tolerance, band)]``, |student - centre| <= tolerance + band entry by
    entry.

    The tolerance is ``ATOL + RTOL·|reference|``, for rounding. The band is zero but for the
    block, where every LayerNorm epsilon in ``tolerances.LAYER_NORM_EPS`` is accepted: the
    centre moves to the middle of the interval between the blocks built with its two ends, and
    the band is half that interval, which is where any epsilon between them lands
    (tolerances.py says why).
    """
    shares = []
    for index, part in enumerate(expected):
        centre, band = part, np.zeros_like(part)
        if function == "transformer_block" and index == 0:
            low, high = (run_in_process(Mutant.of(function, eps=eps), inputs, 1).parts[0]
                         for eps in tolerances.LAYER_NORM_EPS)
            centre, band = (low + high) / 2, np.abs(high - low) / 2
        shares.append((centre, tolerances.atol(function, index) + tolerances.RTOL * np.abs(part),
                       band))
    return shares


@functools.lru_cache(maxsize=None)
def parameters(function):
    """The reference's parameters, in order, as the statement writes them (``mask=None``).
    Cached: every error message of every case asks (inspect.signature, 2 ms a stub)."""
    return tuple(str(p) for p in inspect.signature(getattr(reference, function))
                 .parameters.values())


def violations(function, inputs, outcome, expected):
    """Every property the outcome violates on this case; empty when it is correct."""
    return Standard(function, inputs, expected).violations(outcome)


class Standard:
    """One hidden case's yardstick: what each part is compared with and the sizes a message
    may show, computed once. The diagnosis judges some sixty mutants on the same case, and the
    block's allowance alone runs two blocks; none of it depends on the outcome judged."""

    def __init__(self, function, inputs, expected):
        self.function, self.inputs, self.expected = function, inputs, expected
        self._shares = self._sizes = None

    @property
    def shares(self):
        """``allowances`` of the case."""
        if self._shares is None:
            self._shares = allowances(self.function, self.inputs, self.expected)
        return self._shares

    @property
    def sizes(self):
        if self._sizes is None:
            self._sizes = case_sizes(self.function, self.inputs)
        return self._sizes

    def violations(self, outcome):
        function, spec, sizes = self.function, FUNCTIONS[self.function], self.sizes
        if outcome.error is not None:
            return [Failure(error_message(function, outcome.error, spec.parts,
                                          parameters(function), sizes=sizes), None,
                            {"kind": "error", "error": outcome.error["kind"]})]
        failures = []
        for name, got, (centre, tolerance, band) in zip(spec.parts, outcome.parts, self.shares):
            # The allowance already holds RTOL's share, entry by entry.
            failures += compare_part(name, got, centre, atol=tolerance + band, rtol=0.0,
                                     sizes=sizes)
        if failures and all(f.details.get("kind") == "shape" for f in failures):
            # Every part of the right values, in another order ((omega, pe)): said as that.
            allowance = max(np.max(tolerance + band) for _, tolerance, band in self.shares)
            swapped = in_another_order(spec.parts, outcome.parts, self.expected,
                                       atol=allowance, rtol=0.0)
            if swapped is not None:
                return [swapped]
        weights = outcome.parts[1] if function == "attention" else None
        # Properties read rows and the mask's positions, so only weights of the right shape
        # have them; a shape failure is always reported, never replaced (weights.T is not a
        # softmax bug).
        if (weights is not None and weights.shape == self.expected[1].shape
                and np.isfinite(weights).all()):
            properties = _attention_properties(weights, self.inputs.get("mask"))
            if properties:
                failures = properties + [f for f in failures if f.part != "los pesos"]
        return failures


def _attention_properties(weights, mask):
    failures = []
    if weights.ndim != 2:
        return failures
    sums = weights.sum(axis=-1)
    off = np.flatnonzero(np.abs(sums - 1) > tolerances.ROW_SUM_ATOL)
    if off.size:
        row = int(off[0])
        # More or less than 1, not how much: the sum is a number the student's code chose.
        said = ("suma más de 1" if sums[row] > 1 else "suma menos de 1" if sums[row] < 1
                else "su suma no es un número")
        failures.append(Failure(f"la fila {row} de los pesos no suma 1 ({said})",
                                "los pesos", {"kind": "row_sum", "row": row}))
    if mask is not None and np.shape(mask) == weights.shape:
        leaked = np.where(~np.asarray(mask, dtype=bool), np.abs(weights), 0)
        if leaked.max() > tolerances.MASKED_WEIGHT_ATOL:
            index = tuple(int(i) for i in np.unravel_index(np.argmax(leaked), leaked.shape))
            failures.append(Failure(
                f"una clave prohibida por la máscara recibe peso (en {where(index, leaked.shape)})",
                "los pesos", {"kind": "mask_leak"}))
    return failures
