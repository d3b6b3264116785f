"""Cheating strategies against the real autograder zip, through Otter's Gradescope entry point
(``otter.run.run_autograder.main``), with the grader running as root (privilege separation)
and as ``nobody`` (no root). None scores more than the plain stub and each is flagged; honest
code in other styles keeps full marks and raises no flag.

The strategies are the files of ``tests/adversarial/`` (see its README). All gradings run once,
in parallel, in a module fixture; ``security_table.md`` in its folder holds the outcome table.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME
from autograder.checks import GRADED_FUNCTIONS
from security_harness import (Job, describe, flags, grade_all, legit, scores,
                                    shortened_zip, strategies, total, write_submission,
                              ADVERSARIAL)

MODES = ("root", "sin-root")
MARKERS = ("/tmp/kit-verify-pwned-results", "/tmp/kit-verify-pwned-log")
# Attacks that leave a process behind to rewrite the results: read them a little later.
LINGER = {"write_results_json": 2.0}


@pytest.fixture(scope="module")
def security_zip(autograder_zip, tmp_path_factory):
    return shortened_zip(autograder_zip, tmp_path_factory.mktemp("zip") / autograder_zip.name)


@pytest.fixture(scope="module")
def graded(built_dist, security_zip, tmp_path_factory):
    """{(submission name, mode): summary} for the stub, the solution and every adversarial file."""
    for marker in MARKERS:
        Path(marker).unlink(missing_ok=True)
    base = tmp_path_factory.mktemp("security")
    student = built_dist / "student" / NOTEBOOK_NAME
    import nbformat

    solution = nbformat.read(str(built_dist / "solution" / SOLUTION_NAME), as_version=4)
    jobs = {}
    for name in ["stub", "useless", "solution"] + strategies() + legit():
        for mode in MODES:
            folder = base / "submissions" / f"{name}-{mode}"
            notebook = solution if name == "solution" else None
            write_submission(folder, student, name, notebook)
            jobs[(name, mode)] = Job(security_zip, folder, mode == "root",
                                     linger=LINGER.get(name, 0.0),
                                     # killing every process of its user must not hit neighbours
                                     alone=name == "kill_grader")
    summaries = grade_all(jobs, base / "runs")
    _write_table(summaries, base / "security_table.md")
    return summaries


def _write_table(summaries, path):
    lines = ["| estrategia | root: puntos (stub) | root: marcada | sin root: puntos (stub) | "
             "sin root: marcada |", "|---|---|---|---|---|"]
    for name in strategies():
        cells = []
        for mode in MODES:
            summary, stub = summaries[(name, mode)], summaries[("stub", mode)]
            cells += [f"{total(summary):g} ({total(stub):g})",
                      "sí" if flags(summary) else "no"]
        what = describe(ADVERSARIAL / f"{name}.py")
        lines.append(f"| {name}: {what} | " + " | ".join(cells) + " |")
    path.write_text("\n".join(lines) + "\n", "utf-8")
    print(f"\nsecurity table: {path}")


def _diagnostics(summary):
    return json.dumps({key: summary.get(key) for key in ("error", "read_error")}) + \
        "\n" + summary.get("output", "")[-3000:]


@pytest.mark.parametrize("mode", MODES)
def test_the_plain_stub_scores_zero_and_is_not_flagged(graded, mode):
    summary = graded[("stub", mode)]
    assert summary.get("results"), _diagnostics(summary)
    assert total(summary) == 0
    assert flags(summary) == []


@pytest.mark.parametrize("mode", MODES)
def test_the_solution_keeps_full_marks_and_is_not_flagged(graded, mode):
    summary = graded[("solution", mode)]
    results = summary.get("results") or {}
    expected = {test["name"]: test["max_score"] for test in results.get("tests", [])
                if "max_score" in test}
    assert expected and scores(summary) == expected, _diagnostics(summary)
    assert flags(summary) == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", legit())
def test_honest_code_in_other_styles_keeps_full_marks_and_is_not_flagged(graded, name, mode):
    summary = graded[(name, mode)]
    results = summary.get("results") or {}
    maxima = {test["name"]: test["max_score"] for test in results.get("tests", [])}
    assert {f: scores(summary).get(f) for f in GRADED_FUNCTIONS} == \
        {f: maxima.get(f) for f in GRADED_FUNCTIONS}, _diagnostics(summary)
    assert flags(summary) == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", strategies())
def test_a_cheating_strategy_scores_no_more_than_the_stub_and_is_flagged(graded, name, mode):
    summary, stub = graded[(name, mode)], graded[("stub", mode)]
    assert summary.get("results"), _diagnostics(summary)
    for question, score in scores(summary).items():
        assert score <= scores(stub)[question], f"{name} gained points on {question}"
    assert flags(summary), f"{name} was not flagged\n{_diagnostics(summary)}"


@pytest.mark.parametrize("marker", MARKERS)
def test_no_payload_ran_in_the_grading_process(graded, marker):
    assert not Path(marker).exists()


def test_the_grader_says_whether_it_separated_privileges(graded):
    root, plain = graded[("stub", "root")], graded[("stub", "sin-root")]
    assert root["plugin"]["privilege_separation"] is True
    assert plain["plugin"]["privilege_separation"] is False
    assert "no se ejecutaba como administrador" in plain["results"]["output"]
    assert "usuario sin privilegios" in root["results"]["output"]


def test_flags_reach_the_gradescope_output_in_spanish(graded):
    output = graded[("import_reference", "root")]["results"]["output"]
    assert "Revisión manual" in output and "usa el código del corrector (`reference`)" in output


def test_otter_run_applies_the_verification_too(built_dist, security_zip, tmp_path):
    """`otter run` (not only Gradescope's entry point) loads the plugin from the zip's config."""
    folder = write_submission(tmp_path / "sub", built_dist / "student" / NOTEBOOK_NAME,
                              "import_reference")
    out = tmp_path / "out"
    out.mkdir()
    root = Path(__file__).resolve().parent.parent
    subprocess.run([sys.executable, "-m", "otter", "run", "-a", str(security_zip), "-o", str(out),
                    str(folder / NOTEBOOK_NAME)], capture_output=True, text=True, timeout=300,
                   cwd=root)
    results = json.loads((out / "results.json").read_text())
    assert all(test.get("score", 0) == 0 for test in results["tests"])
    assert "usa el código del corrector (`reference`)" in results["output"]
