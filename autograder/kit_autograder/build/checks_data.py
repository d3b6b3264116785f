"""The public checks' data, computed at build time for any lesson (public_checks.py reads it).

A lesson that provides ``public_checks()`` (kit_autograder/lesson.py) gives, for each graded
function, public cases (fixed draws of every kind of hidden case), the allowance the grade
gives each entry, the mistakes its grade names with their mutants, known mistakes outside its
catalog, and measurements of a part. Here every one of them runs on the public cases, in the
builder's Python, and only what they return is written: the reference's answers, each
mistake's outputs where it fails, and the words. For a known mistake the words are what the
grade itself says of it on these cases (the lesson's judge, summary and locators, as the
engine runs them), so the notebook and the grade say one diagnosis.
"""

import functools
import inspect
from pathlib import Path

import numpy as np

from public_checks import DATA_NAME, FORMAT, call, case_passes, moved_inputs, save

from ..verdicts import summary
from ..verdicts.in_process import run_in_process


def write(lesson, folder):
    """``public_checks.npz`` in ``folder`` when the lesson provides public checks; its path,
    or None."""
    if not hasattr(lesson, "public_checks"):
        return None
    path = Path(folder) / DATA_NAME
    save(path, _spec(lesson))
    return path


@functools.lru_cache(maxsize=4)
def _spec(lesson):
    # One computation per build: the student folder, the solution's and the zip's get it.
    public = lesson.public_checks()
    functions = {}
    for name, graded in lesson.FUNCTIONS.items():
        cases = public.cases(name)
        if cases:
            functions[name] = _function(lesson, public, name, graded, cases)
    return {"format": FORMAT, "atol": public.ATOL, "rtol": public.RTOL, "functions": functions,
            "side_effects": side_effect_words()}


def side_effect_words():
    """What the grade says of a function's side effects (kit_autograder/grading.py), for the
    notebook to say the same: ``{function}``, ``{names}``, ``{name}`` and ``{caller}`` are
    filled in there."""
    from .. import grading

    return {"changed_harmless": grading.CHANGED_HARMLESS,
            "changed_harmful": grading.CHANGED_HARMFUL, "aliased": grading.ALIASED,
            "stale": grading.STALE}


def _function(lesson, public, name, graded, cases):
    parameters = list(inspect.signature(getattr(lesson.REFERENCE, name)).parameters)
    count = len(graded.parts)
    built = []
    def answered(inputs, case_name):
        answer = call(getattr(lesson.REFERENCE, name), inputs, count, parameters)
        if "parts" not in answer:
            raise RuntimeError(f"the reference {name} raised on its public case {case_name}: "
                               f"{answer['error']}: {answer['message']}")
        shares = public.allowances(name, inputs, answer["parts"])
        return {"inputs": inputs, "expected": [centre for centre, _ in shares],
                "allowance": [allowance for _, allowance in shares],
                "measures": public.measures(name, inputs)}

    for number, (case_name, description, inputs) in enumerate(cases):
        # Known by its number: the hidden cases' names name Otter's hidden tests, and never
        # reach students (tests/test_assign.py); its Spanish description is what they read.
        case = {"name": str(number), "description": description,
                **answered(inputs, case_name)}
        moved = moved_inputs(inputs)
        if moved is not None:  # the same shapes, other numbers: a cache by sizes shows
            case["twin"] = answered(moved, case_name)
        if hasattr(public, "locating"):
            ladder = _locating(public.locating(name, inputs), getattr(lesson.REFERENCE, name),
                               inputs, count, parameters)
            if ladder["steps"]:
                case["locating"] = ladder
        built.append(case)
    mistakes = []
    for mistake in public.mistakes(name):
        for form in mistake["forms"]:
            outcomes = _outcomes(form, built, count, parameters)
            if any(o is not None for o in outcomes.values()):
                mistakes.append({key: mistake[key] for key in
                                 ("id", "name", "explanation", "hint")} | {"outcomes": outcomes})
    for form_id, form in public.known_forms(name):
        outcomes = _outcomes(form, built, count, parameters)
        words = grade_words(lesson, name, form, cases) if any(
            o is not None for o in outcomes.values()) else []
        if words:
            mistakes.append({"id": form_id, "words": words, "outcomes": outcomes})
    return {"parts": list(graded.parts), "parameters": parameters,
            "uses": list(graded.stand_ins), "cases": built, "mistakes": mistakes,
            "places": _places_once(built)}


def _places_once(cases):
    """Each locating step's words written once for the function (``places``), the steps
    holding their index: the same few places recur in every case's ladder."""
    places = []
    for case in cases:
        for step in case.get("locating", {}).get("steps", []):
            if step["words"] is not None:
                if step["words"] not in places:
                    places.append(step["words"])
                step["words"] = places.index(step["words"])
    return places


def _locating(steps, reference, inputs, count, parameters):
    """A case's locating steps as data: each probe's inputs once (``probes``), the answers
    its tests compare with (``answers``: the reference's on the probe where the lesson gives
    none, computed here), and each step's tests by index, with the grade's words. A probe or
    answer of -1 is the case's own."""
    probes, answers, built, seen, computed = [], [], [], {}, {}

    def index(value, into, make=lambda v: v):
        if value is None:
            return -1
        if id(value) not in seen:  # the same object, one copy in the file
            seen[id(value)] = (len(into), value)  # kept alive: its id stays its own
            into.append(make(value))
        return seen[id(value)][0]

    def answered(probe):
        if id(probe) not in computed:
            answer = call(reference, probe, count, parameters)
            if "parts" not in answer:
                raise RuntimeError(f"the reference raised on a locating probe: "
                                   f"{answer['error']}")
            computed[id(probe)] = (answer["parts"], probe)
        return computed[id(probe)][0]

    for step in steps:
        tests = []
        for test in step.tests:
            answer = test.answer
            if answer is None and test.holds in REFERENCE_HOLDS:
                answer = answered(inputs if test.probe is None else test.probe)
            tests.append({key: value for key, value in {
                          "probe": index(test.probe, probes), "holds": test.holds,
                          "answer": -1 if answer is None else index(answer, answers, _stored),
                          "part": test.part, "where": test.leaks, "other": test.other,
                          **({"where_part": test.leak_part, "where_atol": test.leak_atol}
                             if test.leaks is not None else {}),
                          "columns": None if test.columns is None else list(test.columns),
                          "second": None if test.second is None else index(
                              test.second, answers, _stored),
                          "min_values": test.min_values}.items()
                          if value is not None})  # what a test leaves unset, unwritten
        # A step without a place stops the ladder with nothing said.
        built.append({"id": step.place and step.place[0], "tests": tests,
                      "words": step.place and f"Diagnóstico: {_sentence(step.message)}"})
    return {"probes": probes, "answers": answers, "steps": built}


def _stored(parts):
    """An answer's parts as the file holds them: in float32, whose rounding (1e-7 of each
    value) is far inside the tolerance they are compared with, at half the bytes."""
    return [np.asarray(part, dtype=np.float32) for part in parts]


# The tests that compare the student's answer with an answer: the reference's on the probe
# where the lesson gives none.
REFERENCE_HOLDS = ("matches", "departs", "differs", "monotone", "permuted", "rows_either")


def _outcomes(form, cases, count, parameters):
    """``{case: outcome}`` of a mistake, None where it passes the case."""
    found = {}
    for case in cases:
        outcome = call(form, case["inputs"], count, parameters)
        found[case["name"]] = None if case_passes(case, outcome) else outcome
    return found


def grade_words(lesson, function, fn, cases):
    """What the grade says of ``fn`` as the student's ``function`` on ``cases``: the lesson's
    judge on each case, its summary of them together, and, where that leaves a failing case
    unexplained, where its locators measure the function departing, as ``_grade_function``
    (kit_autograder/grading.py) does on the hidden cases. Each diagnosis as a sentence."""
    spec = lesson.FUNCTIONS[function]
    judged = []
    for case_name, description, inputs in cases:
        outcome = run_in_process(fn, inputs, len(spec.parts))
        judged.append(summary.Judged(case_name, description, inputs, outcome,
                                     lesson.judge(function, inputs, outcome)))
    failing = [j for j in judged if j.failures]
    if not failing:
        return []
    together = getattr(lesson, "summarize", None)
    diagnoses = together(function, judged) if together else summary.grouped(judged)
    if not summary.explained_everywhere(diagnoses, [j.case for j in failing]):
        found = summary.located(
            getattr(lesson, "locate", None), function, failing,
            lambda name, probe: run_in_process(fn, probe, len(spec.parts)).parts,
            getattr(lesson, "locate_raised", None))
        diagnoses = summary.with_located(diagnoses, found) if found else diagnoses
    return [f"Diagnóstico: {_sentence(d.message)}" for d in diagnoses]


def _sentence(text):
    text = str(text).strip()
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in (".", "?", "!", "…") else text + "."
