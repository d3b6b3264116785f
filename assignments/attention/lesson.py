"""Lesson 055 as the grading engine sees it: see kit_autograder.lesson for the contract."""

import reference
from kit_autograder.lesson import DataQuestion, NamedMistake

from . import stand_ins
from .cases import cases_for
from .challenge import CRITERIA, grade_student_extension
from .diagnose import summarize
from .functions import FUNCTIONS
from .judge import judge

NAME = "attention"
REFERENCE = reference
STAND_INS = stand_ins  # the reference, also for a stack of heads
GRADED_FUNCTIONS = tuple(FUNCTIONS)

# The notebook variable holding the lab result extended with `student_extension`.
EXTENSION_RESULT = "resultado"

DATA_QUESTIONS = {
    "student_extension": DataQuestion((EXTENSION_RESULT,), CRITERIA,
                                      lambda values, functions: grade_student_extension(
                                          values.get(EXTENSION_RESULT), functions)),
}



def misconception_catalog():
    """Every mistake the diagnosis can name, by id, with the step of the function it breaks."""
    # Imported here: the catalog brings the mutants, which grading only needs once a case fails.
    from . import misconceptions

    return {entry.id: NamedMistake(entry.name, entry.explanation, FUNCTIONS[entry.function].step,
                                   entry.function)
            for entry in misconceptions.CATALOG}


__all__ = ["NAME", "FUNCTIONS", "cases_for", "REFERENCE", "judge", "summarize",
           "DATA_QUESTIONS", "misconception_catalog"]
