"""Grade a function in this process as the grader does, over many draws of every hidden case.

Each submission gets its own draw of every case (kit_autograder.hidden_inputs), so a promise
about the grading must hold on many draws, not on the cases' default seeds: draw ``seed`` of a
case here is ``default_rng([seed, case.default_seed])``. A function is called through
``run_in_process`` with the reference standing in for the graded functions it calls, as the
sandbox does, and judged by the lesson's own ``judge``.
"""

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
    """``fn``'s outcome on ``inputs``, reduced as the sandbox reduces a student's answer."""
    spec = FUNCTIONS[function]
    return run_in_process(fn, inputs, len(spec.parts),
                          {name: getattr(reference, name) for name in spec.stand_ins})


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

