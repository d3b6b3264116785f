"""Compare a student's arrays with the reference's: shape, finiteness, closeness.

Lesson-agnostic: the names of the parts, the tolerances and any property a lesson wants to
check first come from the lesson. Messages never quote a hidden input or a reference value:
a returned shape is shown through the case's sizes (sizes.py), and a mismatch says from which
row on the values differ, never by how much. A magnitude would give a reference value away
(zeros of the right shape would read the reference's largest entry and where it is); a first
row can only be one of the case's rows.
"""

import numpy as np

from .outcome import Failure
from .sizes import NO_SIZES


def where(index, shape):
    """Where in an array of ``shape`` (the reference's) ``index`` falls, by its first axis:
    the row of a matrix, the position in a vector. The index is one of that shape's own."""
    if not shape:
        return "el único valor"
    if len(shape) == 1:
        return f"la posición {index[0]}"
    if len(shape) == 2:
        return f"la fila {index[0]}"
    return f"el índice {index[0]} del primer eje"


def _shape(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _size_one_axis(got, expected, *, atol, rtol):
    """A hint when the values are the reference's and only a size-1 axis is extra or missing
    (a .squeeze(), a [None] or a reshape(1, -1)): measured, so it is said only when true."""
    if got.size != expected.size or np.squeeze(got).shape != np.squeeze(expected).shape:
        return ""
    if not same_within(np.squeeze(got), np.squeeze(expected), atol=atol, rtol=rtol):
        return ""
    if got.ndim > expected.ndim:
        return (" (los valores son los correctos, pero con un eje de tamaño 1 de más: "
                "¿un reshape, un [None] o un np.newaxis?)")
    if got.ndim < expected.ndim:
        return (" (los valores son los correctos, pero falta un eje de tamaño 1: "
                "¿un .squeeze() o un índice [0] que lo quita?)")
    return (" (los valores son los correctos, pero el eje de tamaño 1 está en otro sitio: "
            "¿un reshape o una traspuesta de más?)")


def _one_differing_axis(got, expected):
    """The one axis along which two arrays of as many axes differ in size, or None."""
    if got.ndim != expected.ndim:
        return None
    differ = [axis for axis in range(got.ndim) if got.shape[axis] != expected.shape[axis]]
    return differ[0] if len(differ) == 1 else None


def _doubled_axis(got, expected):
    """A question when the shapes differ along one axis only, and there ``got`` has twice
    the reference's size: two arrays joined where one was meant (a concatenation in place of
    a sum). It names no size."""
    axis = _one_differing_axis(got, expected)
    if axis is None or got.shape[axis] != 2 * expected.shape[axis]:
        return ""
    words, _ = _axis_words(got.ndim, axis)
    return (f" (el doble de {words}: ¿juntas dos arrays con np.concatenate, np.hstack o "
            "np.vstack donde van sumados, elemento a elemento?)")


def _tolerance_at(tolerance, expected, index):
    """The part ``index`` of a tolerance given entry by entry (of the reference's shape), or
    the tolerance itself when it is one number for all entries."""
    return tolerance[index] if np.shape(tolerance) == expected.shape else tolerance


def _axis_words(ndim, axis):
    """The plural noun for the entries along ``axis`` and whether it is feminine."""
    if ndim == 1:
        return "valores", False
    if ndim == 2:
        return ("filas", "columnas")[axis], True
    return f"índices del eje {axis}", False


def _cut_short_or_long(got, expected, *, atol, rtol):
    """A hint when the shapes differ along one axis only and the shared part is the
    reference's, at the start or at the end of that axis: a range that stops one short or goes
    one too far. Measured, so it is said only when true; it names no size."""
    axis = _one_differing_axis(got, expected)
    if axis is None or got.size == 0 or expected.size == 0:
        return ""
    shared = min(got.shape[axis], expected.shape[axis])

    def cut(length, at_start):
        index = [slice(None)] * got.ndim
        index[axis] = slice(0, shared) if at_start else slice(length - shared, length)
        return tuple(index)

    def agrees_cut(at_start):
        mine, theirs = cut(got.shape[axis], at_start), cut(expected.shape[axis], at_start)
        return same_within(got[mine], expected[theirs],
                           atol=_tolerance_at(atol, expected, theirs),
                           rtol=_tolerance_at(rtol, expected, theirs))

    at_start = next((start for start in (True, False) if agrees_cut(start)), None)
    if at_start is None:
        return ""
    noun, feminine = _axis_words(got.ndim, axis)
    the, right = ("las", "correctas") if feminine else ("los", "correctos")
    first, last = ("primeras", "últimas") if feminine else ("primeros", "últimos")
    if got.shape[axis] > expected.shape[axis]:
        return (f" ({the} {first if at_start else last} {noun} son {the} {right}, pero sobran "
                f"{noun} {'al final' if at_start else 'al principio'}: ¿un range o un arange "
                "que llega más allá de lo que debe?)")
    return (f" ({the} {noun} que devuelves son {the} {right}, pero faltan "
            f"{the} {last if at_start else first}: "
            "¿un range o un arange que se queda corto?)")


def _one_value_of_many(got, expected, *, atol, rtol):
    """A hint when what is returned is the reference's last value (a number where a vector
    goes) or last row (a row where a matrix goes): a loop's variable returned after the
    loop, in place of what the loop filled."""
    if expected.ndim == 0 or got.shape != expected.shape[1:] or expected.shape[0] < 2:
        return ""
    if not same_within(got, expected[-1], atol=_tolerance_at(atol, expected, -1),
                       rtol=_tolerance_at(rtol, expected, -1)):
        return ""
    what = "un solo número, el último" if got.ndim == 0 else "una sola fila, la última"
    return (f" (es {what} de la respuesta correcta: ¿devuelves la variable de un bucle en "
            "lugar de lo que el bucle rellena?)")


def compare_part(name, got, expected, *, atol, rtol, sizes=NO_SIZES) -> list:
    """The failures of one returned array against the reference's (empty when it matches).
    ``sizes``: the case's (sizes.py), the only numbers of the student's shape that are shown."""
    if got.shape != expected.shape:
        hint = (_size_one_axis(got, expected, atol=atol, rtol=rtol)
                or _cut_short_or_long(got, expected, atol=atol, rtol=rtol)
                or _one_value_of_many(got, expected, atol=atol, rtol=rtol)
                or (" (¿la devuelves traspuesta?)"
                    if got.ndim == 2 and got.shape[::-1] == expected.shape else "")
                or _doubled_axis(got, expected))
        return [Failure(f"{name}: forma {sizes.shape(got.shape)} en lugar de "
                        f"{_shape(expected.shape)}{hint}", name,
                        {"kind": "shape", "got": list(got.shape),
                         "expected": list(expected.shape)})]
    if got.size == 0:
        return []
    bad = ~np.isfinite(got)
    if bad.any():
        kind = "NaN" if np.isnan(got).any() else "infinitos"
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        return [Failure(f"aparecen {kind} en {name} (el primero en {where(index, got.shape)})",
                        name, {"kind": "nonfinite"})]
    error = np.abs(got - expected)
    allowed = atol + rtol * np.abs(expected)
    if np.all(error <= allowed):
        return []
    index = tuple(int(i) for i in np.argwhere(~(error <= allowed))[0])
    said = ("distinto del de la referencia" if not got.shape
            else f"distintos de la referencia a partir de {where(index, got.shape)}")
    return [Failure(f"{name}: {'valor' if not got.shape else 'valores'} {said}", name,
                    {"kind": "values", "where": list(index)})]


def compare_parts(names, got, expected, *, atol, rtol, sizes=NO_SIZES) -> list:
    swapped = in_another_order(names, got, expected, atol=atol, rtol=rtol)
    if swapped:
        return [swapped]
    failures = []
    for name, mine, theirs in zip(names, got, expected):
        failures += compare_part(name, mine, theirs, atol=atol, rtol=rtol, sizes=sizes)
    return failures


def in_another_order(names, got, expected, *, atol, rtol):
    """One failure when the parts are the reference's exactly, but returned in another order
    (measured: every part equals another one's), else None."""
    got, expected = list(got), list(expected)
    if len(got) != len(expected) or len(got) < 2 or any(
            getattr(part, "shape", None) is None for part in got + expected):
        return None
    order = []
    for mine in got:
        match = next((j for j, theirs in enumerate(expected) if j not in order
                      and same_within(mine, theirs, atol=atol, rtol=rtol)), None)
        if match is None:
            return None
        order.append(match)
    if order == list(range(len(order))):
        return None
    returned = ", ".join(names[j] for j in order)
    wanted = ", ".join(names)
    return Failure(f"devuelves ({returned}) en lugar de ({wanted}): los valores son los "
                   "correctos, pero en otro orden", None, {"kind": "shape", "order": order})


def same_within(got, expected, *, atol, rtol):
    """Equal within the tolerances, with NaN and infinities in the same places."""
    if got.shape != expected.shape:
        return False
    # The catalogue's matching asks this about a million times per test run, mostly of float
    # arrays that are all finite: cheap answers first, each the full check's (tested).
    if got.dtype.kind == "f" and expected.dtype.kind == "f" and got.size:
        if _far_at_an_end(got, expected, atol, rtol):
            return False
        with np.errstate(invalid="ignore", over="ignore"):
            error = np.abs(got - expected)
            allowed = atol + rtol * np.abs(expected)
        if np.all(error <= allowed) and np.isfinite(error).all():
            return True  # every place finite in both, and close
        if np.any(error > allowed):
            return False  # a place finite in expected where got is far, or infinite
    return _same_within_in_full(got, expected, atol=atol, rtol=rtol)


def _far_at_an_end(got, expected, atol, rtol):
    """Whether the first or the last place is far, in plain floats: most arrays the matching
    compares differ everywhere, and this costs no NumPy call. A far place means "not the same"
    whatever it holds: a finite expected value beside an infinite or distant one."""
    if not isinstance(atol, (float, int)) or not isinstance(rtol, (float, int)):
        return False
    flat_got, flat_expected = got.reshape(-1), expected.reshape(-1)
    for index in (0, -1):
        mine, theirs = float(flat_got[index]), float(flat_expected[index])
        if abs(mine - theirs) > atol + rtol * abs(theirs):
            return True
    return False


def _same_within_in_full(got, expected, *, atol, rtol):
    for special in (np.isnan, np.isposinf, np.isneginf):
        if not np.array_equal(special(got), special(expected)):
            return False
    finite = np.isfinite(expected)
    return not compare_part("", np.where(finite, got, 0.0), np.where(finite, expected, 0.0),
                            atol=atol, rtol=rtol)
