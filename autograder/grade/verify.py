"""Step 3: verify the graded functions outside the kernel (the hook for issue 6).

The in-kernel results were produced by code that ran in the student's own process, so a
submission could have tampered with them. A verifier re-checks the submission from outside and
may correct the scores. It is any callable

    verifier(notebook, results, *, data=None, confined=False) -> (results, flags)

taking the submission's notebook (``nbformat.NotebookNode``, version 4, as submitted) and the
in-kernel ``otter.test_files.GradingResults``, and returning the results to keep (adjusted or
the same object) and a list of short flags for a human to review. Flags go to a ``flags``
column after Otter's columns in ``final_grades.csv`` and to the feedback; a flag alone never
changes a score. This is where Otter's ``after_grading`` plugins belong in `make grade`.

With no verifier, the in-kernel results stand and the CSV keeps Otter's exact columns.
"""

from dataclasses import dataclass, field
from typing import Callable, Optional

from otter.test_files import GradingResults

Verifier = Callable[[object, GradingResults], tuple]

VERIFIER_FAILED_FLAG = "verificación fallida"


@dataclass
class Verification:
    results: GradingResults
    flags: list = field(default_factory=list)


def verify(verifier: Optional[Verifier], notebook, results: GradingResults, *, data=None,
           confined=False) -> Verification:
    """Run ``verifier`` on one graded submission; a crashing verifier flags it, never aborts.

    ``data``: the data questions' variables the child exported; ``confined``: whether the child
    ran as an unprivileged user, which could not run the hidden tests itself.
    """
    if verifier is None or results.has_catastrophic_failure():
        return Verification(results)
    try:
        checked, flags = verifier(notebook, results, data=data, confined=confined)
    except Exception as exc:  # the in-kernel results stand, and a human is told
        return Verification(results, [f"{VERIFIER_FAILED_FLAG}: {type(exc).__name__}: {exc}"])
    checked.file = results.file
    return Verification(checked, list(flags))
