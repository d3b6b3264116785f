"""The zip's own Gradescope entry point, in a simulated ``/autograder``, agrees with `make grade`.

Each case gets Gradescope's layout in a temporary folder (``source/`` the unzipped zip,
``submission/``, ``results/``, ``submission_metadata.json``) and runs
``otter.run.run_autograder.main(root)``, which is what the zip's ``run_autograder`` calls on
Gradescope. Its ``results.json`` must follow Gradescope's spec and equal what `make grade`
writes for the same file.
"""

import io
import json
import sys
import zipfile

import pytest

from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME
from autograder.checks import GRADED_FUNCTIONS
from autograder.grade.synthetic import broken_code, notebook_bytes, read_build
from grade_fixtures import (  # noqa: F401 - fixtures
    demo_files, grade_cli, gradescope_schema, read_grades, read_results, run_two_at_a_time,
    with_metadata,
)

METADATA = {"id": 1, "created_at": "2026-11-29T12:00:00Z", "assignment": {"title": "055"},
            "users": [{"email": "alumna@example.com", "id": 1, "name": "Alumna"}]}
ENTRY_POINT = "import sys; from otter.run.run_autograder import main; main(sys.argv[1])"


def gradescope_folder(root, autograder_zip, files):
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(root / "source")
    for name, data in files.items():
        (root / "submission" / name).write_bytes(data)
    (root / "submission_metadata.json").write_text(json.dumps(METADATA))
    return root


@pytest.fixture(scope="module")
def cases(built_dist, demo_files):
    """``{file make grade sees: (bytes, {files Gradescope's submission/ holds})}``."""
    student, solutions = read_build(built_dist)
    solution = (built_dist / "solution" / SOLUTION_NAME).read_bytes()
    stub = (built_dist / "student" / NOTEBOOK_NAME).read_bytes()
    broken = notebook_bytes(broken_code(student, solutions))
    other = with_metadata(demo_files["correcta.ipynb"],
                          lambda m: m["otter"].__setitem__("assignment_name", "054-otra-tarea"))
    with zipfile.ZipFile(io.BytesIO(demo_files["exportada.zip"])) as zf:
        extracted = {name: zf.read(name) for name in zf.namelist()}  # Gradescope unzips uploads
    return {
        "solucion.ipynb": (solution, {"solucion.ipynb": solution}),
        "sin_hacer.ipynb": (stub, {"sin_hacer.ipynb": stub}),
        "rota_por_dentro.ipynb": (broken, {"rota_por_dentro.ipynb": broken}),
        "otra_tarea.ipynb": (other, {"otra_tarea.ipynb": other}),
        "exportada.zip": (demo_files["exportada.zip"], extracted),
    }


@pytest.fixture(scope="module")
def both_ways(cases, autograder_zip, tmp_path_factory):
    """``{file: (Gradescope's results.json, make grade's)}``; the Otter runs go two at a time."""
    roots = {name: gradescope_folder(tmp_path_factory.mktemp("autograder"), autograder_zip, files)
             for name, (_, files) in cases.items()}
    logs = run_two_at_a_time({name: ([sys.executable, "-c", ENTRY_POINT, str(root)], root)
                              for name, root in roots.items()})
    gradescope = {}
    for name, root in roots.items():
        results = root / "results" / "results.json"
        assert results.exists(), f"{name}: Otter wrote no results.json\n{logs[name][-3000:]}"
        gradescope[name] = json.loads(results.read_text("utf-8"))

    folder = tmp_path_factory.mktemp("same-files")
    for name, (data, _) in cases.items():
        (folder / name).write_bytes(data)
    out = tmp_path_factory.mktemp("same-files-grades")
    completed = grade_cli(folder, out, autograder_zip)
    assert completed.returncode == 0, completed.stderr[-3000:]
    ours = {name: read_results(out, name.rsplit(".", 1)[0]) for name in cases}
    return {name: (gradescope[name], ours[name]) for name in cases}, out


@pytest.mark.parametrize("name", ["solucion.ipynb", "sin_hacer.ipynb", "rota_por_dentro.ipynb",
                                  "otra_tarea.ipynb", "exportada.zip"])
def test_make_grade_writes_what_gradescope_would_show(both_ways, autograder_zip, name):
    gradescope, ours = both_ways[0][name]
    assert scores(ours) == scores(gradescope)
    assert ours == gradescope


@pytest.mark.parametrize("side", [0, 1])
def test_results_follow_the_gradescope_spec(both_ways, gradescope_schema, side):
    for name, pair in both_ways[0].items():
        errors = [error.message for error in gradescope_schema.iter_errors(pair[side])]
        assert not errors, f"{name}: {errors}"


def scores(results):
    return {test["name"]: (test["score"], test["max_score"])
            for test in results["tests"] if "score" in test}


def test_gradescope_gives_the_solution_full_points_and_the_stub_none(both_ways):
    solution, _ = both_ways[0]["solucion.ipynb"]
    stub, _ = both_ways[0]["sin_hacer.ipynb"]
    for name in GRADED_FUNCTIONS:
        score, possible = scores(solution)[name]
        assert score == possible > 0
        assert scores(stub)[name] == (0, possible)


def test_gradescope_scores_equal_the_csv(both_ways):
    pairs, out = both_ways
    _, rows = read_grades(out)
    for name, (gradescope, _) in pairs.items():
        for question, (score, _) in scores(gradescope).items():
            if question in rows[name]:
                assert float(rows[name][question]) == pytest.approx(score), (name, question)


def test_hidden_results_wait_for_publication_and_no_public_summary_claims_success(both_ways):
    # show_hidden: hidden cases (inside each question's box) appear once grades are published;
    # no "Public Tests" box says "All test cases passed!" while hidden tests fail (Otter #138).
    gradescope, _ = both_ways[0]["rota_por_dentro.ipynb"]
    boxes = {test["name"]: test for test in gradescope["tests"]}
    assert "Public Tests" not in boxes
    for name in GRADED_FUNCTIONS:
        assert boxes[name]["visibility"] == "after_published"
