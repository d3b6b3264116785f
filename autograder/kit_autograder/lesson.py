"""What the engine asks of a lesson, how it finds one, and the checks that hold it to that.

A lesson is a Python package, ``assignments/<lesson>/`` in a course checkout (``files/<lesson>/``
in its zip), whose ``lesson`` module provides:

* ``NAME``: the package's name, the ``LESSON=`` of every make target;
* ``FUNCTIONS``: ``{name: GradedFunction}`` in the order the notebook teaches them. A
  function's ``stand_ins`` (graded functions the reference answers for while it is graded)
  must come before it, or it could ask them for the answers of cases it has not been given;
* ``cases_for(function)``: that function's hidden cases, each with ``name`` (a Python
  identifier, unique for the function: it names an Otter test), ``description`` (Spanish, the
  only thing a student reads of it) and ``inputs(rng=None)``: the call's arguments as
  ``{parameter: value}``, drawn from ``rng``, and from a fixed default without one;
* ``REFERENCE``: the module holding the reference implementations, by function name;
* ``judge(function, inputs, outcome)``: the failures of a student's ``Outcome`` on one case,
  empty when right. Each failure is a ``verdicts.outcome.Failure`` whose ``details`` carry a
  ``kind`` (``"misconception"`` failures carry the catalog's ``id`` too);
* ``DATA_QUESTIONS``: ``{question: DataQuestion}`` for questions graded on a variable the
  notebook leaves behind rather than on a function (``{}`` when there are none).

and may provide:

* ``TITLE``: the class as students read it («055 — Atención y arquitectura Transformer»);
* ``misconception_catalog()``: ``{id: NamedMistake}`` for every mistake its diagnosis can
  name (the ids of ``Verdict.misconceptions``), which the class report explains;
* ``STAND_INS``: the module whose functions stand in for graded ones inside others, when it
  must accept more than ``REFERENCE`` does (the calls are the student's); ``REFERENCE`` if absent;
* ``STUDENT_GUIDE``: the student's guide, a path relative to the lesson's folder
  (``assessment.md`` if absent and present);
* ``STUDENT_FILES``: more files of its folder that ship beside the notebook;
* ``write_student_files(folder)``: files made at build time that ship beside the notebook too
  (a trained model's weights): called for the student folder, the solution's and the zip's;
* ``LAB``: its lab (``lab.py`` of its folder, experiments on the shared ``lab_runner``), which
  makes the course's challenge (``student_extension``, kit_autograder/challenge.py) available;
* ``summarize(function, judged)``: ``[Diagnosis]`` explaining the function's failing cases
  together (``verdicts.summary.Judged``, one per answered case), each said once; without it,
  each case's own diagnoses are grouped (``verdicts.summary.grouped``);
* ``locate(function, inputs, call)``: when no naming diagnosis covers every failing case, where
  the function departs from the reference on the failing case ``inputs``, as ``(finding id,
  Spanish message)``, a list of them from precise to general, or None
  (``verdicts.summary.located``); ``call(probe_inputs)`` runs the student's function again in
  the sandbox and returns its parts (None if it raised), so the lesson can switch parts of it
  off;
* ``locate_raised(function, inputs, call)``: the same for a failing case that raised, from
  probes that need no answer on the case itself; without it, such cases are not located;
* ``public_checks()``: what ``grader.check`` needs to give, on public inputs, the diagnosis
  the grade gives on hidden ones (kit_autograder/build/checks_data.py computes it at build time
  and only its data ships, public_checks.npz): an object with ``ATOL`` and ``RTOL`` (how close
  a mistake's output is matched), ``cases(function)`` (``[(name, Spanish description,
  inputs)]``, fixed public draws of every kind of hidden case), ``allowances(function, inputs,
  expected)`` (``[(centre, allowance)]`` per returned part, as the judge compares),
  ``mistakes(function)`` (the catalog: ``{id, name, explanation, hint, forms}``),
  ``known_forms(function)`` (``[(id, implementation)]`` of mistakes outside the catalog, whose
  words the build asks of the grade) and ``measures(function, inputs)`` (measurements of a
  failing part, as data: public_checks.py reads ``rows_sum_to_one``, ``softmax_factor``,
  ``rows_standardised`` and ``half_precision``); optionally ``locating(function, inputs)``,
  the lesson's locators' probes derived from a public case as a ladder of steps (each a
  place in the locator's words, or None to stop, and tests: a probe, what the student's
  answer on it must do against an answer the build computes, by default the reference's),
  so that the notebook locates as the grade does (checks_data._locating);

Everything else a lesson may bring lives in its folder under a fixed name, each optional:
``master.py`` (required by ``make assign``), ``figures/``, ``explorer/index.html``, and
``synthetic.py`` (submissions for ``make bench`` and the demo). Its points live in
``rubrics/<lesson>.yaml``. The engine itself never names a function, a case or a criterion.

``load`` checks the contract's structure, one clear line per rule broken (``LessonError``);
``check_behaviour``, which ``make assign`` runs, also runs the reference through the judge.
"""

import importlib
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

REQUIRED = ("NAME", "FUNCTIONS", "cases_for", "REFERENCE", "judge", "DATA_QUESTIONS")


class LessonError(ImportError):
    """A lesson breaks its contract; the message lists every rule it breaks, one per line, and
    ``problems`` holds them, one sentence each."""

    def __init__(self, message, problems=()):
        super().__init__(message)
        self.problems = list(problems)


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

    ``grade(values, functions)`` receives the variables as parsed JSON (or None when missing
    or not JSON) and the student's graded functions as callables that run in the sandbox,
    and returns ``[(criterion id, passed, Spanish message)]`` in rubric order. ``texts(values)``,
    if given, returns ``{field: text}``: the student's own words that a person grades with the
    rubric's written part (a ``written:`` entry with ``texto: <field>``).
    """

    variables: tuple
    criteria: tuple  # ((id, Spanish title), ...) in rubric order
    grade: Callable
    texts: Optional[Callable] = None


@dataclass(frozen=True)
class NamedMistake:
    """A catalogued mistake as the class report explains it to the instructor."""

    name: str  # Spanish, short: what the student did
    explanation: str  # Spanish, one sentence: why it is wrong
    step: str  # where the notebook teaches it, in Spanish ("paso 3")
    question: str  # the graded function it belongs to


def stand_in(lesson, name):
    """The function that answers, in place of the student's ``name``, inside another one: the
    lesson's ``STAND_INS`` version if it has one, else the reference."""
    return getattr(getattr(lesson, "STAND_INS", None), name, None) or getattr(lesson.REFERENCE,
                                                                            name)


def questions(lesson):
    """Every automatically graded question, in the lesson's order: functions, then data."""
    return list(lesson.FUNCTIONS) + list(lesson.DATA_QUESTIONS)


def load(folders, name):
    """Import the lesson package ``name`` from ``folders`` (they go first on ``sys.path``) and
    return its ``lesson`` module, checked against the contract."""
    for folder in reversed([str(Path(f).resolve()) for f in folders]):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    try:
        module = importlib.import_module(f"{name}.lesson")
    except ModuleNotFoundError as exc:
        if exc.name not in (name, f"{name}.lesson"):
            raise
        raise LessonError(f"no lesson {name!r}: expected a package {name}/ with a lesson.py "
                          f"in {', '.join(map(str, folders))}") from None
    problems = contract_problems(module, name)
    if problems:
        raise LessonError(f"lesson {name!r} breaks its contract (kit_autograder/lesson.py):\n"
                          + "\n".join(f"- {problem}" for problem in problems), problems)
    return module


# --- the contract's checks ------------------------------------------------------------------


def contract_problems(module, name) -> list:
    """Every structural rule ``module`` breaks, as one English sentence each (cheap: no judge)."""
    missing = [attribute for attribute in REQUIRED if not hasattr(module, attribute)]
    if missing:
        return [f"lesson.py lacks {', '.join(missing)}"]
    problems = []
    if module.NAME != name:
        problems.append(f"NAME is {module.NAME!r}, but the package is {name!r}")
    functions = module.FUNCTIONS
    if not isinstance(functions, dict) or not functions:
        return problems + ["FUNCTIONS must be a non-empty {name: GradedFunction} dict"]
    order = list(functions)
    for position, (key, spec) in enumerate(functions.items()):
        problems += _function_problems(module, key, spec, order[:position])
    problems += _data_question_problems(module.DATA_QUESTIONS)
    if not callable(getattr(module, "summarize", callable)):
        problems.append("summarize, if given, must be a function (function, judged)")
    for hook in ("locate", "locate_raised"):
        if not callable(getattr(module, hook, callable)):
            problems.append(f"{hook}, if given, must be a function (function, inputs, call)")
    catalog = getattr(module, "misconception_catalog", None)
    if catalog is not None:
        for mistake_id, mistake in catalog().items():
            if getattr(mistake, "question", None) not in functions:
                problems.append(f"misconception {mistake_id!r} belongs to no graded function")
    return problems


def _function_problems(module, key, spec, earlier) -> list:
    if not isinstance(spec, GradedFunction) or spec.name != key:
        return [f"FUNCTIONS[{key!r}] must be GradedFunction({key!r}, ...)"]
    problems = []
    if not spec.parts or not all(isinstance(part, str) for part in spec.parts):
        problems.append(f"{key}: parts must name each returned value in Spanish")
    late = [s for s in spec.stand_ins if s not in earlier]
    if late:
        problems.append(f"{key} stands in {late}, which are not graded before it "
                        "(list them earlier in FUNCTIONS)")
    reference = getattr(module.REFERENCE, key, None)
    if not callable(reference):
        return problems + [f"REFERENCE has no function {key}"]
    parameters = set(inspect.signature(reference).parameters)
    try:
        cases = list(module.cases_for(key))
    except Exception as exc:
        return problems + [f"cases_for({key!r}) raised {type(exc).__name__}: {exc}"]
    if not cases:
        problems.append(f"{key} has no hidden case")
    names = [getattr(case, "name", None) for case in cases]
    for case, case_name in zip(cases, names):
        if not isinstance(case_name, str) or not case_name.isidentifier():
            problems.append(f"{key}: case name {case_name!r} is not a Python identifier "
                            "(it names an Otter test)")
            continue
        if names.count(case_name) > 1:
            problems.append(f"{key}: case name {case_name!r} is used twice")
        if not isinstance(getattr(case, "description", None), str) or not case.description:
            problems.append(f"{key}.{case_name}: description must be a Spanish sentence")
        try:
            inputs = case.inputs()
        except Exception as exc:
            problems.append(f"{key}.{case_name}: inputs() without an argument raised "
                            f"{type(exc).__name__}: {exc}")
            continue
        if not isinstance(inputs, dict) or not set(inputs) <= parameters:
            problems.append(f"{key}.{case_name}: inputs() must return {{parameter: value}} for "
                            f"parameters of the reference's {key}{tuple(sorted(parameters))}")
    return problems


def _data_question_problems(data_questions) -> list:
    if not isinstance(data_questions, dict):
        return ["DATA_QUESTIONS must be a {question: DataQuestion} dict ({} for none)"]
    problems = []
    for question, data in data_questions.items():
        if not isinstance(data, DataQuestion):
            problems.append(f"DATA_QUESTIONS[{question!r}] must be a DataQuestion")
            continue
        ids = [criterion for criterion, _ in data.criteria]
        if not ids or not all(isinstance(i, str) and i.isidentifier() for i in ids) \
                or len(set(ids)) != len(ids):
            problems.append(f"{question}: criteria ids must be distinct Python identifiers")
    return problems


def check_behaviour(lesson) -> None:
    """The rules only running the lesson can check; ``LessonError`` lists what breaks.

    On every case's default inputs, the reference passes its own judge, and an answer of zeros
    of the right shapes fails with failures that carry a ``kind``."""
    from .verdicts.outcome import Outcome

    problems = []
    for function, spec in lesson.FUNCTIONS.items():
        reference = getattr(lesson.REFERENCE, function)
        for case in lesson.cases_for(function):
            inputs = case.inputs()
            answer = reference(**case.inputs())
            parts = list(answer) if len(spec.parts) > 1 else [answer]
            try:
                failures = lesson.judge(function, inputs, Outcome(parts=_as_arrays(parts)))
            except Exception as exc:
                problems.append(f"judge({function}, {case.name}) raised {type(exc).__name__} "
                                f"on the reference's own answer: {exc}")
                continue
            if failures:
                problems.append(f"judge fails the reference's own answer on {function}."
                                f"{case.name}: {failures[0].message}")
            zeros = [array * 0.0 for array in _as_arrays(parts)]
            if all(not array.any() for array in _as_arrays(parts)):
                continue  # the reference's answer is zeros: nothing wrong to try
            wrong = lesson.judge(function, case.inputs(), Outcome(parts=zeros))
            if not wrong:
                problems.append(f"judge accepts zeros on {function}.{case.name}")
            elif any("kind" not in getattr(failure, "details", {}) for failure in wrong):
                problems.append(f"judge's failures on {function}.{case.name} lack details['kind']")
    if problems:
        raise LessonError(f"lesson {lesson.NAME!r} fails its behaviour checks:\n"
                          + "\n".join(f"- {problem}" for problem in problems), problems)


def _as_arrays(parts):
    import numpy as np

    return [np.array(part, dtype=np.float64) for part in parts]
