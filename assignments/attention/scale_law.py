"""The factor a student's code multiplies its scores by, measured as a law of the sizes.

A locator that finds the weights to be softmax(c·Q·Kᵀ) for some c ≠ 1/√d_k knows c on one
probe only. Said as «un factor distinto de 1/√d_k», it tells the student nothing they can
look for. Here c is measured again on probes where one size at a time changes (d_k, d_v, the
number of queries...), which gives the exponent of each size in c, and the number left once
they are divided out. When every exponent is a multiple of 1/2 and the number is a simple one
(1, 2, ½...), the law is said as a formula of the notebook's names: √d_k, 2/d_k, 1/√d_v, or a
fixed number that no size moves (a d_k read from another cell's variable). Each law is checked
against every probe before it is said; anything else says nothing.
"""

import numpy as np

from .probe_compare import agrees

# Numbers a formula of this lesson multiplies by, as written: 2 from `d_k ** 1/2`.
SIMPLE = ((1.0, "1"), (2.0, "2"), (0.5, "1/2"), (4.0, "4"), (0.25, "1/4"))
# The sizes a fixed factor 1/√d_k is said to come from, with its digits: a notebook's own
# sizes. A factor is the student's code's to choose, and code that kept a hidden input could
# choose it, so any other fixed number is said without its digits (a handful of sizes carry
# almost nothing of a hidden value).
SHOWN_FIXED_SIZES = frozenset(range(2, 17)) | {32, 64, 128, 256, 512, 1024}


def _exponent(base, other, size, new_size):
    """The exponent p with other/base = (new_size/size)^p, rounded to a half, or None."""
    if base is None or other is None or base <= 0 or other <= 0:
        return None
    p = np.log(other / base) / np.log(new_size / size)
    rounded = np.round(2 * p) / 2
    return float(rounded) if abs(p - rounded) < 0.02 else None


def measured_law(measure, sizes, grown):
    """``(exponents, constant)`` with ``measure(sizes) == constant · Π size^exponent`` on the
    base sizes and on each of ``grown`` ({name: another value}), or None.

    ``measure(sizes)`` returns the factor on a probe of those sizes, or None when the code
    raised there or its weights are no softmax of a multiple of the scores."""
    base = measure(dict(sizes))
    if base is None or base <= 0:
        return None
    exponents = {}
    for name, new in grown.items():
        other = measure(dict(sizes, **{name: new}))
        exponent = _exponent(base, other, sizes[name], new)
        if exponent is None:
            return None
        exponents[name] = exponent
    constant = base / np.prod([sizes[name] ** p for name, p in exponents.items()])
    # Three sizes changed at once: a law of the sizes holds there too, a coincidence does not.
    together = {name: grown[name] for name in list(grown)[:3]}
    again = measure(dict(sizes, **together))
    predicted = constant * np.prod([dict(sizes, **together)[name] ** p
                                    for name, p in exponents.items()])
    if again is None or not agrees(np.array([again]), np.array([predicted])):
        return None
    return exponents, float(constant)


def _power(name, exponent):
    """``name`` to a positive ``exponent`` (a multiple of 1/2), as the notebook writes it."""
    whole, half = int(exponent), exponent % 1 == 0.5
    parts = [name] * whole + ([f"√{name}"] if half else [])
    return "·".join(parts)


def formula(exponents, constant):
    """The law as a formula (``2/d_k``, ``√d_k``, ``1/√(h·d_k)``), or None when its number
    is no simple one."""
    simple = next((said for value, said in SIMPLE if np.isclose(constant, value, rtol=1e-3)),
                  None)
    if simple is None:
        return None
    up = [_power(n, p) for n, p in exponents.items() if p > 0]
    down = [(n, -p) for n, p in exponents.items() if p < 0]
    numerator_number, denominator_number = (simple.split("/") + ["1"])[:2]
    top = "·".join(([numerator_number] if numerator_number != "1" else []) + up) or "1"
    if not down and denominator_number == "1":
        return top
    roots = [n for n, p in down if p == 0.5]
    plain = [_power(n, p) for n, p in down if p != 0.5]
    numbers = [denominator_number] if denominator_number != "1" else []
    if len(roots) > 1:  # one root over several sizes: √(h·d_k), as it is computed
        rooted = [f"√({'·'.join(roots)})"]
    else:
        rooted = [f"√{root}" for root in roots]
    below = numbers + plain + rooted
    bottom = below[0] if len(below) == 1 else f"({'·'.join(below)})"
    return f"{top}/{bottom}"


def fixed_size(constant):
    """The d_k of SHOWN_FIXED_SIZES whose 1/√d_k is ``constant``, else None."""
    if constant <= 0:
        return None
    size = 1 / constant ** 2
    whole = int(round(size))
    return whole if whole in SHOWN_FIXED_SIZES and abs(size - whole) < 1e-3 * whole else None


def decimal(value):
    """A number as the notebook writes it: 0,5."""
    return f"{value:.4g}".replace(".", ",")
