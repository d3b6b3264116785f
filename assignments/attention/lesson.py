"""Lesson 055 as the grading engine sees it: see kit_autograder.lesson for the contract."""

import reference
from kit_autograder.lesson import DataQuestion

from .cases import cases_for
from .challenge import CRITERIA, grade_student_extension
from .functions import FUNCTIONS
from .judge import judge

NAME = "attention"
REFERENCE = reference
GRADED_FUNCTIONS = tuple(FUNCTIONS)

# The notebook variable holding the lab result extended with `student_extension`.
EXTENSION_RESULT = "resultado"

DATA_QUESTIONS = {
    "student_extension": DataQuestion((EXTENSION_RESULT,), CRITERIA,
                                      lambda values, functions: grade_student_extension(
                                          values.get(EXTENSION_RESULT), functions)),
}

__all__ = ["NAME", "FUNCTIONS", "cases_for", "REFERENCE", "judge", "DATA_QUESTIONS"]
