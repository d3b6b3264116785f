"""Grade a function in this process as the grader does, over many draws of every hidden case.

Each submission gets its own draw of every case (kit_autograder.hidden_inputs), so a promise
about the grading must hold on many draws, not on the cases' default seeds: draw ``seed`` of a
case here is ``default_rng([seed, case.default_seed])``. A function is called through
``run_in_process`` with the reference standing in for the graded functions it calls, as the
sandbox does, judged by the lesson's own ``judge`` case by case, and its failing cases of one
draw explained together by the lesson's ``summarize``, which is what the student reads.
"""

import inspect

import numpy as np

from reference import attention as reference
from attention import diagnose
from attention.cases import cases_for
from attention.diagnose import summarize
from attention.functions import FUNCTIONS
from attention.judge import judge
from kit_autograder.verdicts.in_process import run_in_process
from kit_autograder.verdicts.summary import Judged

SEEDS = range(30)
GRADED_FUNCTIONS = list(FUNCTIONS)


def draw(case, seed):
    return case.inputs(np.random.default_rng([seed, case.default_seed]))


def get_case(function, name):
    """The hidden case ``name`` of ``function``."""
    (case,) = [case for case in cases_for(function) if case.name == name]
    return case


def outcome(function, fn, inputs):
    """``fn``'s outcome on ``inputs``, called and reduced as the sandbox calls a student's
    function and reduces its answer (positionally, in the reference's order)."""
    spec = FUNCTIONS[function]
    return run_in_process(fn, inputs, len(spec.parts),
                          {name: getattr(reference, name) for name in spec.stand_ins},
                          parameters=tuple(inspect.signature(getattr(reference, function))
                                           .parameters))


# One judgement per (function, fn, case, seed): a module's tests grade the same mutant case by
# case and explained together (grade, summaries), and judging is where their time goes.
_JUDGED = {}

# Judging a failing case runs the catalog's mutants on it, and the diagnosis remembers them per
# inputs object (diagnose._mutants_of), as the grader does between judging a submission's case
# and summarizing its function. Here every mutant and variant is judged on the same draws, so
# each draw is one object for the whole session and the memory holds them all: the catalog runs
# once per draw, not once per draw and function judged. ``draw`` itself stays fresh, since
# some tests change the inputs they get.
_SHARED_DRAWS = {}
diagnose.RECENT_CASES = max(diagnose.RECENT_CASES, 4096)


def shared_draw(case, seed):
    key = (case.function, case.name, seed)
    if key not in _SHARED_DRAWS:
        _SHARED_DRAWS[key] = draw(case, seed)
    return _SHARED_DRAWS[key]


def judged(function, fn, case, seed) -> Judged:
    """``fn`` on draw ``seed`` of ``case``: its inputs, outcome and failures, judged once."""
    key = (function, fn, case.name, seed)
    if key not in _JUDGED:
        inputs = shared_draw(case, seed)
        result = outcome(function, fn, inputs)
        _JUDGED[key] = Judged(case.name, case.description, inputs, result,
                              judge(function, inputs, result))
    return _JUDGED[key]


def grade(function, fn, seeds=SEEDS):
    """``{(case name, seed): failures}`` over every hidden case of ``function``."""
    return {(case.name, seed): judged(function, fn, case, seed).failures
            for case in cases_for(function) for seed in seeds}


def summaries(function, fn, seeds=SEEDS):
    """``{seed: (failing cases' names, [Diagnosis])}``: each draw's failing cases explained
    together, as the feedback explains them."""
    found = {}
    for seed in seeds:
        items = [judged(function, fn, case, seed) for case in cases_for(function)]
        found[seed] = ([item.case for item in items if item.failures],
                       summarize(function, items))
    return found


def summary_ids(diagnoses):
    """Every id the function's diagnoses name, in order."""
    return list(dict.fromkeys(i for diagnosis in diagnoses for i in diagnosis.ids))


def named(failures):
    """The catalog ids and finding ids the diagnosis gave, in order."""
    return [f.details["id"] for f in failures if "id" in f.details]


def diagnoses(failures):
    return [f for f in failures
            if f.details.get("kind") in ("misconception", "explanation", "finding", "hint")]


def caught_on_every_draw(function, fn, seeds=SEEDS):
    """``{(case, seed): failures}`` of the failing cases, asserting every draw has one."""
    graded = grade(function, fn, seeds)
    missed = [seed for seed in seeds
              if not any(failures for (_, s), failures in graded.items() if s == seed)]
    assert not missed, f"draws {missed} let the mistake through"
    return {key: failures for key, failures in graded.items() if failures}


def assert_named(function, fn, *ids, cases=None, seeds=SEEDS):
    """``fn`` fails on every draw (on each of ``cases`` when given), and on every draw the
    function's diagnoses name exactly ``ids``, with every failing case explained by one of
    them. Returns ``{seed: (failing cases, diagnoses)}``."""
    found = summaries(function, fn, seeds)
    missed = [seed for seed, (failing, _) in found.items() if not failing]
    assert not missed, f"draws {missed} let the mistake through"
    if cases:
        unfailed = {(case, seed) for seed, (failing, _) in found.items()
                    for case in cases if case not in failing}
        assert not unfailed, f"these draws let it through: {sorted(unfailed)}"
    wrong = {seed: [(d.kind, d.ids, d.cases) for d in diagnoses]
             for seed, (_, diagnoses) in found.items() if set(summary_ids(diagnoses)) != set(ids)}
    assert not wrong, wrong
    for seed, (failing, diagnoses) in found.items():
        explained = {case for d in diagnoses if d.ids for case in d.cases}
        assert explained >= set(failing), f"draw {seed}: {sorted(set(failing) - explained)}"
    return found


def said(found):
    """Every diagnosis message of ``assert_named``'s draws."""
    return [d.message for _, diagnoses in found.values() for d in diagnoses]
