"""One comparison for every probe of locate*.py: the grader's tolerances, entry by entry."""

import numpy as np

from . import tolerances


def agrees(got, expected, atol=tolerances.ATOL):
    """True when ``got`` has ``expected``'s shape, is finite and is close to it everywhere
    (``atol``: ``tolerances.atol`` for a part compared relatively)."""
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if got.shape != expected.shape or not np.isfinite(got).all():
        return False
    return bool(np.allclose(got, expected, atol=atol, rtol=tolerances.RTOL))
