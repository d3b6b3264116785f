"""Both ways: the demo graded by sequential `otter run` CLI calls and by `make grade`'s engine
gives the same per-question scores and the same Gradescope results."""

import json
import sys

import pytest

from grade_fixtures import (  # noqa: F401 - fixtures
    demo_files, demo_folder, demo_graded, read_grades, read_results, run_two_at_a_time,
)

GRADED_BY_OTTER = ("correcta.ipynb", "parcial.ipynb", "sin_hacer.ipynb", "exportada.zip")


@pytest.fixture(scope="module")
def otter_run_results(demo_folder, autograder_zip, tmp_path_factory):
    outs = {name: tmp_path_factory.mktemp("otter-run") for name in GRADED_BY_OTTER}
    commands = {name: ([sys.executable, "-m", "otter", "run", "-a", str(autograder_zip),
                        "-o", str(outs[name]), str(demo_folder / name)], outs[name])
                for name in GRADED_BY_OTTER}
    logs = run_two_at_a_time(commands)
    results = {}
    for name, out in outs.items():
        path = out / "results.json"
        assert path.exists(), f"otter run wrote no results for {name}:\n{logs[name][-3000:]}"
        results[name] = json.loads(path.read_text("utf-8"))
    return results


def per_question(results):
    return {test["name"]: test["score"] for test in results["tests"] if "score" in test}


@pytest.mark.parametrize("name", GRADED_BY_OTTER)
def test_otter_run_and_make_grade_give_identical_per_question_scores(
        otter_run_results, demo_graded, name):
    _, out = demo_graded
    _, rows = read_grades(out)
    theirs = per_question(otter_run_results[name])
    ours = {question: float(rows[name][question]) for question in theirs}
    assert ours == pytest.approx(theirs)
    assert per_question(read_results(out, name.rsplit(".", 1)[0])) == theirs


@pytest.mark.parametrize("name", GRADED_BY_OTTER)
def test_otter_run_and_make_grade_write_identical_results_json(
        otter_run_results, demo_graded, autograder_zip, name):
    _, out = demo_graded
    assert read_results(out, name.rsplit(".", 1)[0]) == otter_run_results[name]
