"""What the diagnosis of one graded function may measure: a number of probes, said once here.

A probe is one measurement the diagnosis makes beyond the hidden cases themselves: an
evaluation of one of the catalog's mutants in the grader (``run_in_process``, while the
lesson's ``summarize`` explains the failures), or one call of the student's function on an
input the lesson's ``locate`` builds. Each graded function of a submission gets
``PROBES_PER_FUNCTION`` of them. Past that, the measurement stops (``Spent``) and the
feedback says only what was measured: the cases' own symptoms instead of a summary, what the
summary said instead of a place. A count, not a clock: the same submission gets the same
feedback on any machine, however loaded.

The lesson's catalog asks far less of the budget (the probe notebooks, 127 styles and
mistakes: at most 287 evaluations for one function's summary, 84 calls for its place), and a
probe costs about a millisecond of CPU, so a failing submission's diagnosis costs at most
about ``4 * PROBES_PER_FUNCTION`` ms more than a passing one's, whatever its code does.
"""

import contextlib
import contextvars

PROBES_PER_FUNCTION = 600


class Spent(BaseException):
    """The budget is spent: the diagnosis stops here. A BaseException, so that no lesson's
    ``except Exception`` around a mutant takes it for the mutant's own failure."""


_left = contextvars.ContextVar("diagnosis_probes_left", default=None)


@contextlib.contextmanager
def probes(count=None):
    """Within this block every ``spend`` counts against ``count`` probes (by default
    ``PROBES_PER_FUNCTION``)."""
    token = _left.set([PROBES_PER_FUNCTION if count is None else count])
    try:
        yield
    finally:
        _left.reset(token)


def spend():
    """One probe, if a budget is running here; ``Spent`` if it is used up."""
    left = _left.get()
    if left is None:
        return
    if left[0] <= 0:
        raise Spent()
    left[0] -= 1
