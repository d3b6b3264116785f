"""Compare a student's arrays with the reference's: shape, finiteness, closeness.

Lesson-agnostic: the names of the parts, the tolerances and any property a lesson wants to
check first come from the lesson. Messages never quote a hidden input or a reference value;
they say where the largest difference is and how large it is.
"""

import numpy as np

from .outcome import Failure


def plain_array(value):
    """A fresh float64 ndarray, never a subclass, so overridden comparisons cannot leak in."""
    return np.array(value, dtype=np.float64, copy=True, subok=False)


def where(index, shape):
    if len(shape) == 2:
        return f"fila {index[0]}, columna {index[1]}"
    if len(shape) == 1:
        return f"posición {index[0]}"
    return "el único valor" if not shape else f"índice {tuple(index)}"


def shown_shape(shape):
    """A returned array's shape as the student reads it. A size above MAX_SHOWN_INT is no
    mistake's size: it is shown only as that (a zero-size array can carry any sizes, and with
    them the hidden inputs the function was given)."""
    from ..sandbox.client import MAX_SHOWN_INT

    sizes = [str(size) if size <= MAX_SHOWN_INT else f">{MAX_SHOWN_INT}" for size in shape]
    return "(" + ", ".join(sizes) + ("," if len(sizes) == 1 else "") + ")"


def compare_part(name, got, expected, *, atol, rtol) -> list:
    """The failures of one returned array against the reference's (empty when it matches)."""
    if got.shape != expected.shape:
        hint = " (¿la devuelves traspuesta?)" if got.ndim == 2 and got.shape[::-1] == expected.shape else ""
        return [Failure(f"{name}: forma {shown_shape(got.shape)} en lugar de {expected.shape}{hint}", name,
                        {"kind": "shape", "got": list(got.shape),
                         "expected": list(expected.shape)})]
    if got.size == 0:
        return []
    bad = ~np.isfinite(got)
    if bad.any():
        kind = "NaN" if np.isnan(got).any() else "infinitos"
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        return [Failure(f"aparecen {kind} en {name} (la primera en {where(index, got.shape)})",
                        name, {"kind": "nonfinite"})]
    error = np.abs(got - expected)
    allowed = atol + rtol * np.abs(expected)
    if np.all(error <= allowed):
        return []
    index = tuple(int(i) for i in np.unravel_index(np.argmax(error - allowed), error.shape))
    abs_err = float(error[index])
    rel_err = abs_err / max(float(np.abs(expected[index])), 1e-12)
    return [Failure(
        f"{name}: valores distintos de la referencia; mayor error absoluto {abs_err:.3g} "
        f"(relativo {rel_err:.3g}) en {where(index, got.shape)}",
        name, {"kind": "values", "max_abs": abs_err, "max_rel": rel_err, "where": list(index)})]


def compare_parts(names, got, expected, *, atol, rtol) -> list:
    failures = []
    for name, mine, theirs in zip(names, got, expected):
        failures += compare_part(name, mine, theirs, atol=atol, rtol=rtol)
    return failures


def same_within(got, expected, *, atol, rtol):
    """Equal within the tolerances, with NaN and infinities in the same places."""
    if got.shape != expected.shape:
        return False
    for special in (np.isnan, np.isposinf, np.isneginf):
        if not np.array_equal(special(got), special(expected)):
            return False
    finite = np.isfinite(expected)
    return not compare_part("", np.where(finite, got, 0.0), np.where(finite, expected, 0.0),
                            atol=atol, rtol=rtol)
