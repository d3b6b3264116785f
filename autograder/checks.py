"""Check a student's graded function against the hidden reference, case by case.

Grading one case is split in two halves on purpose:

* ``run_case`` calls the student's function and reduces whatever it returns to plain float
  arrays. It is the only half that executes student code.
* ``compare`` judges those arrays against the reference. It never calls student code, so
  it can run in a different process from ``run_case`` (the out-of-kernel verifier does so).

``check`` joins the halves for the in-kernel Otter tests and raises ``AssertionError`` with
a Spanish message that names what failed and where, never the hidden inputs or the
reference's numbers.
"""

import re
import types
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

import reference

from attention import tolerances
from attention.cases import Case, get_case
from attention.lesson import GRADED_DEPENDENCIES, GRADED_FUNCTIONS, RETURN_PARTS, STEP_OF  # noqa: F401

MAX_MESSAGE_CHARS = 200


@dataclass
class Outcome:
    """What one call of a student's function produced, reduced to plain data."""

    parts: Optional[list] = None  # plain float64 arrays, one per returned part
    error: Optional[str] = None  # a Spanish explanation when there are no parts


@dataclass
class Failure:
    """One property that a student's output violates on one hidden case."""

    message: str
    part: Optional[str] = None
    details: dict = field(default_factory=dict)


# --- running student code -------------------------------------------------------------------


def isolate(student_fn, replacements):
    """A copy of ``student_fn`` whose global names in ``replacements`` point to the reference.

    Helpers defined in the same notebook are rebound too, so a student's ``multihead`` that
    calls its own ``one_head`` helper, which calls ``attention``, still gets the reference.
    """
    if not isinstance(student_fn, types.FunctionType) or not replacements:
        return student_fn
    original = student_fn.__globals__
    rebound = dict(original)

    def rebind(fn):
        copy = types.FunctionType(fn.__code__, rebound, fn.__name__, fn.__defaults__, fn.__closure__)
        copy.__kwdefaults__ = fn.__kwdefaults__
        return copy

    for name, value in original.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is original:
            rebound[name] = rebind(value)
    rebound.update(replacements)
    return rebind(student_fn)


def _plain_array(value):
    """A fresh float64 ndarray, never a subclass, so overridden comparisons cannot leak in."""
    return np.array(value, dtype=np.float64, copy=True, subok=False)


# A student's exception message is shown back to them, but it could carry hidden inputs
# (`raise ValueError(Q)`). Real numbers and array brackets are blanked; integers survive,
# because shapes such as "(4,3) (6,3)" are what makes numpy's errors useful.
_REAL_NUMBER = re.compile(r"[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?|[-+]?\d+[eE][-+]?\d+|\b(nan|inf)\b")
_ARRAY_TEXT = re.compile(r"\[[^\[\]]*\]")


def _short(text):
    text = str(text).strip().splitlines()[0] if str(text).strip() else ""
    text = _REAL_NUMBER.sub("…", text)
    while _ARRAY_TEXT.search(text):
        text = _ARRAY_TEXT.sub("…", text)
    if "[" in text:  # an array cut by the first-line rule leaves an unclosed bracket
        text = text[:text.index("[")] + "[…]"
    return text[:MAX_MESSAGE_CHARS]


def run_case(function, student_fn, case: Case) -> Outcome:
    """Call the student's function on a hidden case and return its result as plain arrays."""
    if student_fn is None:
        return Outcome(error=f"no encuentro la función `{function}` en tu cuaderno: "
                             "no cambies su nombre ni borres su celda")
    if not callable(student_fn):
        return Outcome(error=f"`{function}` ya no es una función: ¿la sobrescribiste con otro valor?")
    replacements = {name: getattr(reference, name) for name in GRADED_DEPENDENCIES[function]}
    fn = isolate(student_fn, replacements)
    try:
        with np.errstate(all="ignore"):
            result = fn(**case.inputs())
    except NotImplementedError:
        return Outcome(error=f"todavía no has implementado `{function}`: la celda aún lanza "
                             "NotImplementedError")
    except Exception as exc:  # any student bug becomes a message, never a crash of the grader
        return Outcome(error=f"tu función lanzó {type(exc).__name__}: {_short(exc)}")
    return _split_parts(function, result)


def _split_parts(function, result) -> Outcome:
    expected = len(RETURN_PARTS[function])
    if expected > 1:
        if not isinstance(result, (tuple, list)):
            names = ", ".join(RETURN_PARTS[function])
            return Outcome(error=f"debe devolver una tupla ({names}), no un solo valor")
        if len(result) != expected:
            return Outcome(error=f"debe devolver {expected} valores y devolvió {len(result)}")
        values = list(result)
    else:
        if isinstance(result, tuple):
            return Outcome(error=f"debe devolver un solo array, no una tupla de {len(result)}")
        values = [result]
    try:
        return Outcome(parts=[_plain_array(v) for v in values])
    except (TypeError, ValueError) as exc:
        return Outcome(error=f"lo que devuelve no se puede leer como array de números ({_short(exc)})")


# --- judging plain arrays -------------------------------------------------------------------


def reference_parts(function, case: Case):
    """The reference's result on a case, as plain arrays (kept inside the grader)."""
    with np.errstate(all="ignore"):
        result = getattr(reference, function)(**case.inputs())
    values = result if isinstance(result, tuple) else (result,)
    return [_plain_array(v) for v in values]


def _where(index, shape):
    if len(shape) == 2:
        return f"fila {index[0]}, columna {index[1]}"
    if len(shape) == 1:
        return f"posición {index[0]}"
    return "el único valor"


def compare_part(name, got, expected) -> list:
    """Shape, finiteness and closeness of one returned array."""
    if got.shape != expected.shape:
        if got.shape[::-1] == expected.shape and got.ndim == 2:
            hint = " (¿la devuelves traspuesta?)"
        else:
            hint = ""
        return [Failure(f"{name}: forma {got.shape} en lugar de {expected.shape}{hint}", name,
                        {"kind": "shape", "got": got.shape, "expected": expected.shape})]
    if got.size == 0:
        return []
    bad = ~np.isfinite(got)
    if bad.any():
        kind = "NaN" if np.isnan(got).any() else "infinitos"
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        return [Failure(f"aparecen {kind} en {name} (la primera en {_where(index, got.shape)})",
                        name, {"kind": "nonfinite"})]
    error = np.abs(got - expected)
    allowed = tolerances.ATOL + tolerances.RTOL * np.abs(expected)
    if np.all(error <= allowed):
        return []
    index = tuple(int(i) for i in np.unravel_index(np.argmax(error - allowed), error.shape))
    abs_err = float(error[index])
    rel_err = abs_err / max(float(np.abs(expected[index])), 1e-12)
    return [Failure(
        f"{name}: valores distintos de la referencia; mayor error absoluto {abs_err:.3g} "
        f"(relativo {rel_err:.3g}) en {_where(index, got.shape)}",
        name, {"kind": "values", "max_abs": abs_err, "max_rel": rel_err, "where": index},
    )]


def _attention_properties(weights, mask) -> list:
    """Properties every attention matrix must have, whatever the inputs: checked first because
    they explain a mismatch better than the mismatch itself."""
    failures = []
    if weights.ndim != 2:
        return failures
    sums = weights.sum(axis=-1)
    off = np.flatnonzero(np.abs(sums - 1) > tolerances.ROW_SUM_ATOL)
    if off.size:
        row = int(off[0])
        failures.append(Failure(f"la fila {row} de los pesos no suma 1 (suma {sums[row]:.3g})",
                                "los pesos", {"kind": "row_sum", "row": row}))
    if mask is not None and mask.shape == weights.shape:
        leaked = np.where(~mask, np.abs(weights), 0)
        if leaked.max() > tolerances.MASKED_WEIGHT_ATOL:
            index = tuple(int(i) for i in np.unravel_index(np.argmax(leaked), leaked.shape))
            failures.append(Failure(
                f"una clave prohibida por la máscara recibe peso {leaked[index]:.3g} "
                f"({_where(index, leaked.shape)})", "los pesos", {"kind": "mask_leak"}))
    return failures


def compare(function, case: Case, outcome: Outcome) -> list:
    """Every property the student's outcome on ``case`` violates, then what explains them;
    empty when it is correct."""
    failures = violations(function, case, outcome)
    if failures:
        from attention.diagnose import diagnose  # late: diagnose builds on this module

        failures += diagnose(function, case, outcome, failures)
    return failures


def violations(function, case: Case, outcome: Outcome) -> list:
    """Every property the student's outcome on ``case`` violates; empty when it is correct."""
    if outcome.error is not None:
        return [Failure(outcome.error, None, {"kind": "error"})]
    names = RETURN_PARTS[function]
    expected = reference_parts(function, case)
    failures = []
    for name, got, want in zip(names, outcome.parts, expected):
        failures += compare_part(name, got, want)
    if function == "attention" and np.isfinite(outcome.parts[1]).all():
        properties = _attention_properties(outcome.parts[1], case.inputs().get("mask"))
        if properties:
            # A broken property says more than "values differ", so it replaces that line.
            failures = properties + [f for f in failures if f.part != "los pesos"]
    return failures


def describe(function, case: Case, failures) -> str:
    """The Spanish message a student reads for one failed hidden case."""
    lines = [f"`{function}` falla en el caso oculto «{case.description}»:"]
    lines += [f"  - {failure.message}" for failure in failures]
    lines.append(f"  (índices desde 0; repasa el {STEP_OF[function]} del cuaderno)")
    return "\n".join(lines)


def check(function, student_fn, case_name):
    """The one-line body of every hidden Otter test: raise unless the case passes."""
    case = get_case(function, case_name)
    failures = compare(function, case, run_case(function, student_fn, case))
    if failures:
        raise AssertionError(describe(function, case, failures))
