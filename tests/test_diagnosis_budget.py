"""The diagnosis of one graded function measures at most a stated number of probes
(verdicts/budget.py, issue 52): past it, the feedback says only what was measured."""

import pytest

from kit_autograder.verdicts import budget
from kit_autograder.verdicts.in_process import run_in_process


def identity(x):
    return x


def test_a_diagnosis_stops_at_its_budget_of_probes():
    made = 0
    with pytest.raises(budget.Spent):
        with budget.probes(5):
            for _ in range(1000):
                run_in_process(identity, {"x": 1.0}, 1, parameters=("x",))
                made += 1
    assert made == 5


def test_control_outside_a_diagnosis_nothing_is_counted():
    for _ in range(budget.PROBES_PER_FUNCTION + 10):
        assert run_in_process(identity, {"x": 1.0}, 1, parameters=("x",)).parts is not None


def test_a_lessons_except_exception_does_not_swallow_the_end_of_the_budget():
    def careless_summary():
        for _ in range(1000):
            try:
                run_in_process(identity, {"x": 1.0}, 1, parameters=("x",))
            except Exception:  # what a lesson may write around a mutant
                continue
        return ["a guess made after the budget ran out"]

    with pytest.raises(budget.Spent):
        with budget.probes(3):
            careless_summary()


def test_past_the_budget_the_grader_says_only_the_cases_own_symptoms(monkeypatch):
    from types import SimpleNamespace

    from kit_autograder.grading import Grader

    def summarize(function, judged):
        for _ in range(50):
            run_in_process(identity, {"x": 1.0}, 1, parameters=("x",))
        return ["what a summary names"]

    grader = object.__new__(Grader)
    grader.lesson = SimpleNamespace(summarize=summarize)
    with budget.probes():  # control: within the budget the summary is said
        assert grader._summarize("attention", []) == ["what a summary names"]
    monkeypatch.setattr(budget, "PROBES_PER_FUNCTION", 10)
    with budget.probes():  # summary.grouped of no failing case: nothing named
        assert grader._summarize("attention", []) == []
