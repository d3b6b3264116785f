"""The zip grades the solution with full marks and the untouched stub with zero, via `otter run`."""

import json
import subprocess
import sys

import pytest

from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME
from autograder.checks import GRADED_FUNCTIONS
from autograder.rubric import load_rubric, question_points


def otter_run(autograder_zip, notebook, out_dir):
    out_dir.mkdir()
    completed = subprocess.run(
        [sys.executable, "-m", "otter", "run", "-a", str(autograder_zip), "-o", str(out_dir),
         str(notebook)], capture_output=True, text=True, timeout=300)
    results = out_dir / "results.json"
    assert results.exists(), f"otter run produced no results:\n{completed.stderr[-2000:]}"
    return {test["name"]: test for test in json.loads(results.read_text())["tests"]}


@pytest.fixture(scope="module")
def solution_results(built_dist, autograder_zip, tmp_path_factory):
    notebook = built_dist / "solution" / SOLUTION_NAME
    return otter_run(autograder_zip, notebook, tmp_path_factory.mktemp("run") / "solution")


@pytest.fixture(scope="module")
def stub_results(built_dist, autograder_zip, tmp_path_factory):
    notebook = built_dist / "student" / NOTEBOOK_NAME
    return otter_run(autograder_zip, notebook, tmp_path_factory.mktemp("run") / "stub")


@pytest.mark.parametrize("name", GRADED_FUNCTIONS)
def test_otter_run_gives_the_solution_full_points(solution_results, name):
    expected = question_points(load_rubric(), name)
    assert solution_results[name]["max_score"] == expected
    assert solution_results[name]["score"] == expected


@pytest.mark.parametrize("name", GRADED_FUNCTIONS)
def test_otter_run_gives_the_untouched_stub_zero_with_a_spanish_reason(stub_results, name):
    assert stub_results[name]["score"] == 0
    assert stub_results[name]["max_score"] == question_points(load_rubric(), name)
    assert "todavía no has implementado" in stub_results[name]["output"]


def test_otter_run_gives_the_solution_every_extension_criterion(solution_results):
    expected = sum(question_points(load_rubric(), "student_extension"))
    assert solution_results["student_extension"]["score"] == expected == \
        solution_results["student_extension"]["max_score"]


def test_otter_run_gives_the_untouched_extension_zero(stub_results):
    assert stub_results["student_extension"]["score"] == 0
