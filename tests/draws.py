"""Grade a function in this process as the grader does, over many draws of every hidden case.

Each submission gets its own draw of every case (kit_autograder.hidden_inputs), so a promise
about the grading must hold on many draws, not on the cases' default seeds: draw ``seed`` of a
case here is ``default_rng([seed, case.default_seed])``. A function is called through
``run_in_process`` with the reference standing in for the graded functions it calls, as the
sandbox does, and judged by the lesson's own ``judge``.
"""

import inspect

import numpy as np

import reference
from attention.cases import cases_for
from attention.functions import FUNCTIONS
from attention.judge import judge
from kit_autograder.verdicts.in_process import run_in_process

SEEDS = range(30)
GRADED_FUNCTIONS = list(FUNCTIONS)


def draw(case, seed):
    return case.inputs(np.random.default_rng([seed, case.default_seed]))


def outcome(function, fn, inputs):
    """``fn``'s outcome on ``inputs``, called and reduced as the sandbox calls a student's
    function and reduces its answer (positionally, in the reference's order)."""
    spec = FUNCTIONS[function]
    return run_in_process(fn, inputs, len(spec.parts),
                          {name: getattr(reference, name) for name in spec.stand_ins},
                          parameters=tuple(inspect.signature(getattr(reference, function))
                                           .parameters))


def grade(function, fn, seeds=SEEDS):
    """``{(case name, seed): failures}`` over every hidden case of ``function``."""
    graded = {}
    for case in cases_for(function):
        for seed in seeds:
            inputs = draw(case, seed)
            graded[case.name, seed] = judge(function, inputs, outcome(function, fn, inputs))
    return graded


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
    """``fn`` fails on every draw (on each of ``cases`` when given); every failing case names
    some of ``ids`` and nothing else (where one of two mistakes does not show, only the other
    is named), and every draw names all of them. Returns the failing cases."""
    failing = caught_on_every_draw(function, fn, seeds)
    if cases:
        missed = {(case, seed) for case in cases for seed in seeds} - set(failing)
        assert not missed, f"these draws let it through: {sorted(missed)}"
    wrong = {key: named(failures) for key, failures in failing.items()
             if not named(failures) or not set(named(failures)) <= set(ids)}
    assert not wrong, wrong
    for seed in seeds:
        said = {i for (_, s), failures in failing.items() if s == seed for i in named(failures)}
        assert said == set(ids), f"draw {seed} names only {sorted(said)}"
    return failing
