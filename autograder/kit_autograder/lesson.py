"""What the engine asks of a lesson, and how it finds one.

A lesson is a Python package (``assignments/<lesson>/`` in the repository, ``files/<lesson>/``
in the zip) whose ``lesson`` module provides:

* ``NAME``: the package's name;
* ``FUNCTIONS``: ``{name: GradedFunction}`` in the order the notebook teaches them;
* ``cases_for(function)``: that function's hidden cases, each with ``name``, ``description``
  (Spanish) and ``inputs(rng)``;
* ``REFERENCE``: the module holding the reference implementations, by function name;
* ``judge(function, inputs, outcome)``: the failures of a student's ``Outcome`` on one case
  (comparison, the lesson's properties, and the diagnosis of the mistake), empty when right;
* ``DATA_QUESTIONS``: ``{question: DataQuestion}`` for questions graded on a variable the
  notebook leaves behind rather than on a function.

and may provide:

* ``misconception_catalog()``: ``{id: NamedMistake}`` for every mistake its diagnosis can
  name (the ids of ``Verdict.misconceptions``), which the class report explains;
* ``STAND_INS``: the module whose functions stand in for graded ones inside others, when it
  must accept more than ``REFERENCE`` does (the calls are the student's); ``REFERENCE`` if absent;
* ``summarize(function, judged)``: ``[Diagnosis]`` explaining the function's failing cases
  together (``verdicts.summary.Judged``, one per answered case), each said once; without it,
  each case's own diagnoses are grouped (``verdicts.summary.grouped``).

The engine itself never names a function, a case or a criterion.
"""

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REQUIRED = ("NAME", "FUNCTIONS", "cases_for", "REFERENCE", "judge", "DATA_QUESTIONS")


@dataclass(frozen=True)
class GradedFunction:
    """A function students implement."""

    name: str
    parts: tuple  # Spanish names of what it returns, one per returned value
    stand_ins: tuple = ()  # graded functions replaced by the reference while it is graded
    step: str = ""  # where the notebook teaches it, in Spanish ("paso 3")


@dataclass(frozen=True)
class DataQuestion:
    """A question graded on notebook variables (JSON data), one verdict per criterion.

    ``grade(values, functions, report)`` receives the variables as parsed JSON (or None when
    missing or not JSON), the student's graded functions as callables that run in the
    sandbox, and returns ``[(criterion id, passed, Spanish message)]`` in rubric order.
    """

    variables: tuple
    criteria: tuple  # ((id, Spanish title), ...) in rubric order
    grade: Callable


@dataclass(frozen=True)
class NamedMistake:
    """A catalogued mistake as the class report explains it to the instructor."""

    name: str  # Spanish, short: what the student did
    explanation: str  # Spanish, one sentence: why it is wrong
    step: str  # where the notebook teaches it, in Spanish ("paso 3")
    question: str  # the graded function it belongs to


def stand_in(lesson, name):
    """The function that answers, in place of the student's ``name``, inside another one."""
    return getattr(getattr(lesson, "STAND_INS", lesson.REFERENCE), name)


def load(folders, name):
    """Import the lesson package ``name`` from ``folders`` (they go first on ``sys.path``) and
    return its ``lesson`` module, checked for what the engine needs."""
    for folder in reversed([str(Path(f).resolve()) for f in folders]):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    module = importlib.import_module(f"{name}.lesson")
    missing = [attribute for attribute in REQUIRED if not hasattr(module, attribute)]
    if missing:
        raise ImportError(f"lesson {name!r} lacks {', '.join(missing)}")
    return module
