"""A second lesson, written against the documented contract, grades through every door with no
change to the kit (issue 23).

``tests/fixtures/lessons/rnn/`` is a tiny «054 — redes recurrentes»: two graded functions, three
hidden cases, one catalogued mistake, no lab, no challenge. It is exactly a lesson's three places
(``assignments/rnn/``, ``reference/rnn/``, ``rubrics/rnn.yaml``), laid in a course of its own;
the build takes every shared part from this checkout. Its submissions are graded by ``make
grade``'s engine, by Gradescope's entry point and by ``otter run``, and must score the same.
"""

import concurrent.futures
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.assign import NOTEBOOK_NAME, build, find_autograder_zip
from kit_autograder.lesson import LessonError, load

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "lessons" / "rnn"
QUESTIONS = ("rnn_step", "rnn_forward")
GOOD = {"rnn_step": "    return np.tanh(h @ W + x @ U)\n",
        "rnn_forward": ("    states, h = [], h0\n    for x in X:\n        h = rnn_step(h, x, W, U)\n"
                        "        states.append(h)\n    return np.array(states)\n")}
# What every door must give: the catalogued mistake costs rnn_step alone (rnn_forward is graded
# with the reference's rnn_step standing in), the stub nothing, another class's notebook nothing.
EXPECTED = {"correcta.ipynb": {"rnn_step": 2.0, "rnn_forward": 3.0},
            "sin_tanh.ipynb": {"rnn_step": 0.0, "rnn_forward": 3.0},
            "sin_hacer.ipynb": {"rnn_step": 0.0, "rnn_forward": 0.0}}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course holding only the fixture lesson's three places."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="module")
def rnn_dist(course, tmp_path_factory):
    return build("rnn", tmp_path_factory.mktemp("dist_rnn"), run_tests=True, root=course)


def _with_bodies(student, bodies):
    nb = nbformat.read(student, as_version=4)
    for cell in nb.cells:
        for name, body in bodies.items():
            if cell.cell_type == "code" and cell.source.startswith(f"def {name}("):
                cell.source = cell.source.splitlines()[0] + "\n" + body
    return nbformat.writes(nb).encode()


@pytest.fixture(scope="module")
def uploads(rnn_dist, tmp_path_factory):
    student = rnn_dist / "student" / NOTEBOOK_NAME
    folder = tmp_path_factory.mktemp("rnn_uploads")
    files = {"correcta.ipynb": _with_bodies(student, GOOD),
             "sin_tanh.ipynb": _with_bodies(student, {**GOOD, "rnn_step": "    return h @ W + x @ U\n"}),
             "sin_hacer.ipynb": student.read_bytes(),
             "de_la_055.ipynb": (ROOT / "assignments/attention/examples/correcta.ipynb").read_bytes()}
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def test_the_lesson_builds_into_its_own_folder_with_only_its_parts(rnn_dist):
    zip_path = find_autograder_zip(rnn_dist)
    assert zip_path.name == "rnn-autograder.zip"
    student = {path.name for path in (rnn_dist / "student").iterdir()}
    # No lab, no explorer: none of their files; the course's shared grader files only.
    assert {"notebook_student.ipynb", "notebook.ipynb", "notebook_grader.py", "notebook_code.py",
            "public_checks.py", "assessment.md", "requirements.txt", "tests"} == student
    import zipfile

    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
    assert "files/reference/rnn/__init__.py" in names
    assert not [n for n in names if "attention" in n], "another lesson's files reached the zip"
    assert sorted(n for n in names if n.startswith("tests/")) == ["tests/rnn_forward.py",
                                                                  "tests/rnn_step.py"]


def test_make_grade_grades_the_second_lesson(rnn_dist, uploads, tmp_path):
    from grading_harness import grade_here

    rows = grade_here(uploads, tmp_path / "out", find_autograder_zip(rnn_dist))
    for name, scores in EXPECTED.items():
        assert {q: float(rows[name][q]) for q in QUESTIONS} == scores, name
    assert "otra tarea" in rows["de_la_055.ipynb"]["grading_status"]
    # The questions come in the lesson's order, not Otter's alphabetical one.
    header = (tmp_path / "out" / "final_grades.csv").read_text("utf-8").splitlines()[0]
    assert header.startswith("file,rnn_step,rnn_forward,")
    feedback = (tmp_path / "out" / "feedback" / "sin_tanh.md").read_text("utf-8")
    assert "falta la tanh" in feedback


def _scores(results):
    return {t["name"]: float(t["score"]) for t in results["tests"] if "score" in t}


def test_gradescope_and_otter_run_give_the_same_scores(rnn_dist, uploads, otter_venvs, tmp_path):
    from otter_paths import otter_run
    from test_otter_paths import gradescope

    zip_path = find_autograder_zip(rnn_dist)

    def scope(name):
        return gradescope(otter_venvs.image, zip_path, name, (uploads / name).read_bytes())

    def run(name):
        out = tmp_path / "otter-run" / name
        done = otter_run(otter_venvs.instructor, zip_path, uploads / name, out)
        return done, json.loads((out / "results.json").read_text("utf-8"))

    # Each run is a process of its own that waits part of its time: three at once.
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        scoped = {name: pool.submit(scope, name) for name in [*EXPECTED, "de_la_055.ipynb"]}
        ran = {name: pool.submit(run, name) for name in EXPECTED}
        for name, scores in EXPECTED.items():
            results, log = scoped[name].result()
            assert results is not None and _scores(results) == scores, (name, log[-2000:])
            done, results = ran[name].result()
            assert _scores(results) == scores, (name, done.stdout[-2000:] + done.stderr[-2000:])
        refused, _ = scoped["de_la_055.ipynb"].result()
    assert refused["score"] == 0 and "otra tarea" in refused["output"]


# --- the contract is checked at load, one line per rule broken ---------------------------------


def _replace(path, *pairs):
    text = path.read_text("utf-8")
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text, "utf-8")


def _broken_copy(course, tmp_path, name, edit):
    """A copy of the fixture lesson, renamed ``name`` and edited by ``edit(folder)``."""
    folder = tmp_path / name
    shutil.copytree(course / "assignments" / "rnn", folder)
    _replace(folder / "lesson.py", ('NAME = "rnn"', f'NAME = "{name}"'))
    edit(folder)
    return folder


def test_a_lesson_that_breaks_several_rules_is_told_each_of_them(course, tmp_path):
    def break_it(folder):
        _replace(folder / "cases.py", ('"un_paso"', '"un paso"'), ('"un_token"', '"secuencia"'))
        _replace(folder / "lesson.py",
                 ('("el estado",), (), "paso 1"', '("el estado",), ("rnn_forward",), "paso 1"'))

    _broken_copy(course, tmp_path, "rota", break_it)
    with pytest.raises(LessonError) as raised:
        load([tmp_path, course], "rota")
    message = str(raised.value)
    assert "case name 'un paso' is not a Python identifier" in message
    assert "case name 'secuencia' is used twice" in message
    assert "rnn_step stands in ['rnn_forward'], which are not graded before it" in message


def test_inputs_that_need_an_argument_and_a_missing_reference_are_told(course, tmp_path):
    def break_it(folder):
        _replace(folder / "cases.py",
                 ("return self.build(rng if rng is not None else np.random.default_rng(54))",
                  "return self.build(rng)"))
        _replace(folder / "lesson.py",
                 ("REFERENCE = reference",
                  "import types\nREFERENCE = types.SimpleNamespace(rnn_step=reference.rnn_step)"))

    _broken_copy(course, tmp_path, "sin_referencia", break_it)
    with pytest.raises(LessonError) as raised:
        load([tmp_path, course], "sin_referencia")
    assert "inputs() without an argument raised" in str(raised.value)
    assert "REFERENCE has no function rnn_forward" in str(raised.value)


def test_a_lesson_whose_judge_fails_its_own_reference_is_refused_by_the_build(course, tmp_path):
    from kit_autograder.lesson import check_behaviour

    def break_it(folder):
        _replace(folder / "judge.py", ("expected = getattr(reference, function)(**inputs)",
                                       "expected = getattr(reference, function)(**inputs) + 1"))

    _broken_copy(course, tmp_path, "juez_roto", break_it)
    with pytest.raises(LessonError, match="judge fails the reference's own answer"):
        check_behaviour(load([tmp_path, course], "juez_roto"))
