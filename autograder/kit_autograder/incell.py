"""The body of every hidden Otter test: one call, inside Otter's kernel.

Otter runs the zip's tests in the student's kernel. There they decide nothing: the kit's
plugin runs the notebook again in the sandbox and replaces every verdict (grading.py). They
exist so that the zip is a complete Otter assignment: ``otter assign`` checks the solution
against them, and Otter's results have one test case per hidden case, with its points. They
use the same lesson, the same judge and the same default inputs as the sandbox path.
"""

import inspect
import os

from . import lesson as lesson_module
from .verdicts.in_process import run_in_process


def _lesson(name):
    # Otter copies the zip's files/ beside the notebook: the lesson, and the student folder's
    # modules (the lab runner and the validator) in student/.
    return lesson_module.load([os.getcwd(), os.path.join(os.getcwd(), "student")], name)


def check(lesson_name, function_name, student_function, case_name):
    """Raise ``AssertionError`` with the Spanish reason unless the case passes."""
    lesson = _lesson(lesson_name)
    spec = lesson.FUNCTIONS[function_name]
    case = next(c for c in lesson.cases_for(function_name) if c.name == case_name)
    inputs = case.inputs()
    stand_ins = {name: lesson_module.stand_in(lesson, name) for name in spec.stand_ins}
    parameters = tuple(inspect.signature(getattr(lesson.REFERENCE, function_name)).parameters)
    outcome = run_in_process(student_function, inputs, len(spec.parts), stand_ins, parameters)
    failures = lesson.judge(function_name, inputs, outcome)
    if failures:
        lines = [f"`{function_name}` falla en el caso oculto «{case.description}»:"]
        lines += [f"  - {failure.message}" for failure in failures]
        raise AssertionError("\n".join(lines))


def check_data(lesson_name, question, criterion, values, functions):
    """The same for one criterion of a data question; ``functions`` are the kernel's own."""
    lesson = _lesson(lesson_name)
    results = lesson.DATA_QUESTIONS[question].grade(values, functions)
    for criterion_id, passed, message in results:
        if criterion_id == criterion and not passed:
            raise AssertionError(message)
