"""Judge a student's outcome on one hidden case of lesson 055: what is wrong, and why.

The engine hands over plain data: the case's inputs and the student's ``Outcome`` (float64
arrays or a checked error report). The reference runs here, in the grader. What the outcome
violates of a correct answer comes first (standard.py: its properties, then closeness, a wrong
shape always said); then the diagnosis names the mistake when it can (diagnose.py), and
``summarize`` says what explains the function's failing cases together.
"""

from .diagnose import diagnose
from .standard import reference_parts, violations


def judge(function, inputs, outcome):
    """The engine's entry point: failures with their diagnosis, or [] when it passes."""
    expected = reference_parts(function, inputs)
    failures = violations(function, inputs, outcome, expected)
    if failures:
        failures += diagnose(function, inputs, outcome, failures, expected)
    return failures
