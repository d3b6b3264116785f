"""Lesson 055 as the grading engine sees it: see kit_autograder.lesson for the contract."""

from reference import attention as reference
from kit_autograder import challenge
from kit_autograder.lesson import NamedMistake

from . import lab, stand_ins
from .cases import cases_for
from .diagnose import summarize
from .functions import FUNCTIONS
from .judge import judge
from .locate import locate, locate_raised

NAME = "attention"
TITLE = "055 — Atención y arquitectura Transformer"
# The ablation lab: the student runs it when they choose (python ablacion.py), never the grader.
STUDENT_FILES = ("ablacion.py",)
REFERENCE = reference
STAND_INS = stand_ins  # the reference, also for a stack of heads
LAB = lab
# The course-wide student guide (assessment.md at the top of the course) is this lesson's.
STUDENT_GUIDE = "../../assessment.md"

DATA_QUESTIONS = {"student_extension": challenge.question(LAB)}


def write_student_files(folder):
    """The files the build makes for the student folder: step 9's trained model."""
    from .trained_model import write_trained_model

    write_trained_model(folder)


def misconception_catalog():
    """Every mistake the diagnosis can name, by id, with the step of the function it breaks."""
    # Imported here: the catalog brings the mutants, which grading only needs once a case fails.
    from . import misconceptions

    return {entry.id: NamedMistake(entry.name, entry.explanation, FUNCTIONS[entry.function].step,
                                   entry.function)
            for entry in misconceptions.CATALOG}


def public_checks():
    """The notebook's public checks (kit_autograder/build/checks_data.py): built at
    ``make assign`` only, and only their data ships."""
    from .diagnosis import public

    return public
