"""Every mistake a lesson's author or an instructor can make with `make assign` or `make grade`
ends as one `error:` line that names the file, says what is wrong and what to do, with no
traceback; VERBOSE=1 adds the traceback (issue 32). Each case is listed here with the very line
it prints, as docs/lesson-authors.md and docs/instructors.md list them.

Each `make assign` case starts from the fixture lesson (tests/fixtures/lessons/rnn), one copy
of it per case, and changes one thing; the positive controls at the end build the unchanged
fixture, and the fixture with its kit cells untagged, all the way. Every refusal comes before
Otter's build, so the cases run as one batch of real processes (tests/forked_commands.py): the
commands `make assign` and `make grade` run, each with its own stderr and exit status.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "lessons" / "rnn"
MASTER = "assignments/rnn/master.py"


# --- what each case changes in its copy of the fixture ------------------------------------------


def edit(path, old, new):
    def change(root):
        file = root / path
        text = file.read_text("utf-8")
        assert old in text, f"the fixture changed: {old!r} is not in {path}"
        file.write_text(text.replace(old, new, 1), "utf-8")
    return change


def append(path, text):
    def change(root):
        with open(root / path, "a", encoding="utf-8") as file:
            file.write(text)
    return change


def demo(code):
    """A demo cell right after the master's imports."""
    return edit(MASTER, "# %%\nimport numpy as np\n", f"# %%\nimport numpy as np\n\n# %%\n{code}\n")


def ships_reference(root):
    shutil.copy(root / "reference" / "rnn" / "__init__.py", root / "assignments/rnn/reference.py")
    append("assignments/rnn/lesson.py", '\nSTUDENT_FILES = ("reference.py",)\n')(root)


KIT_CELL_TAG = '# %% deletable=false editable=false tags=["graded-only"]\n'


def untag_kit_cells(root):
    master = root / MASTER
    text = master.read_text("utf-8")
    assert text.count(KIT_CELL_TAG) == 2, "the fixture tags its init and export cells"
    master.write_text(text.replace(KIT_CELL_TAG, "# %% deletable=false editable=false\n"), "utf-8")


# (case, change, LESSON=, the line `make assign` prints). Paths are the course's, as its author
# types them.
ASSIGN_CASES = [
    ("ships_its_reference", ships_reference, "rnn",
     "assignments/rnn/reference.py: is a copy of the hidden reference reference/rnn/__init__.py, "
     "and the lesson ships it to students as reference.py; take it out of STUDENT_FILES in "
     "assignments/rnn/lesson.py"),
    ("rubric_lists_a_question_the_lesson_lacks",
     append("rubrics/rnn.yaml", "  rnn_forwardd:\n    points: 2\n"), "rnn",
     "rubrics/rnn.yaml: lists under questions: rnn_forwardd, which lesson rnn does not have (it "
     "has: rnn_step, rnn_forward); remove it or correct its name"),
    ("rubric_misses_a_question",
     edit("rubrics/rnn.yaml", "  rnn_forward:\n    points: 3\n", ""), "rnn",
     "rubrics/rnn.yaml: gives no points to rnn_forward of lesson rnn; add it under questions: "
     "with its points"),
    ("rubric_is_not_yaml", edit("rubrics/rnn.yaml", "    points: 2\n", "    points: [2\n"), "rnn",
     "rubrics/rnn.yaml:5: not valid YAML (expected ',' or ']', but got ':'); "
     "fix the file's syntax"),
    ("kit_cell_the_kit_lacks", edit(MASTER, "# <kit: export>", "# <kit: exportar>"), "rnn",
     "assignments/rnn/master.py:104: asks for the kit cell 'exportar', which the kit does not "
     "have; use one of export, init, lab, validate"),
    ("demo_writes_to_stderr", demo("import sys\nprint('hola', file=sys.stderr)"), "rnn",
     "assignments/rnn/master.py:39: the demo «import sys» wrote to stderr («hola»); print to "
     "stdout instead"),
    ("demo_raises", demo("raise ValueError('mal')"), "rnn",
     "assignments/rnn/master.py:39: the demo «raise ValueError('mal')» raised ValueError: mal; a "
     "demo must run with the reference standing in for the graded functions"),
    ("demo_warns", demo("import warnings\nwarnings.warn('cuidado')"), "rnn",
     "assignments/rnn/master.py:39: the demo «import warnings» raised the warning UserWarning: "
     "cuidado; avoid it, or catch it inside the cell (warnings.catch_warnings)"),
    ("points_in_the_master", edit(MASTER, "# name: rnn_step\n", "# name: rnn_step\n# points: 2\n"),
     "rnn",
     "assignments/rnn/master.py:40: question rnn_step sets points; delete its `points:` line: a "
     "lesson's points come from rubrics/rnn.yaml alone"),
    ("stub_signature_differs",
     edit(MASTER, "def rnn_step(h, x, W, U):", "def rnn_step(h, x, W):"), "rnn",
     "assignments/rnn/master.py:46: the stub «def rnn_step(h, x, W):» differs from the "
     "reference's «def rnn_step(h, x, W, U):»; give the stub the reference's signature"),
    ("question_not_in_functions",
     edit(MASTER, "# name: rnn_forward\n", "# name: rnn_forwardd\n"), "rnn",
     "assignments/rnn/master.py:71: question rnn_forwardd is not one lesson rnn grades (it has: "
     "rnn_step, rnn_forward); correct the name, add `manual: true` if a person grades it, or "
     "list it under practice: in the rubric with `points: 0` if it is an exercise no door "
     "grades"),
    ("reference_lacks_a_function",
     edit("reference/rnn/__init__.py", "def rnn_step(", "def rnn_stepp("), "rnn",
     "assignments/rnn/lesson.py: REFERENCE has no function rnn_step; the contract is in "
     "docs/lesson-authors.md"),
    ("lesson_does_not_import", append("assignments/rnn/lesson.py", "\nx = (\n"), "rnn",
     "assignments/rnn/lesson.py:23: SyntaxError: '(' was never closed, while `make assign` "
     "loaded lesson rnn; fix it there (VERBOSE=1 shows the traceback)"),
    ("lesson_code_raises", append("assignments/rnn/cases.py", "\nsizes = undefined_name\n"),
     "rnn",
     "assignments/rnn/cases.py:44: NameError: name 'undefined_name' is not defined, while `make "
     "assign` loaded lesson rnn; fix it there (VERBOSE=1 shows the traceback)"),
    ("lesson_the_course_lacks", None, "rnnn",
     "assignments/rnnn/, rubrics/rnnn.yaml: not found; LESSON= is one of the course's lessons "
     "(rnn), and each has its master.py and its rubric (docs/lesson-authors.md)"),
]

# (case, the batch's arguments, the line `make grade` prints), in a folder where submissions/
# holds one notebook, empty/ nothing, roster.csv is not a roster, wrong.zip is a zip of
# something else and corrupt.zip half a zip. No sandbox starts: each is refused before.
GRADE_CASES = [
    ("submissions_do_not_exist", ["--submissions", "{tmp}/entregas"],
     "{tmp}/entregas: no such folder or zip; give the folder of notebooks and export zips, or the "
     "LMS's download"),
    ("submissions_folder_is_empty", ["--submissions", "{tmp}/empty"],
     "{tmp}/empty: no .ipynb or .zip file to grade; put the students' notebooks or export zips "
     "there, or give SUBMISSIONS= the folder that has them"),
    ("roster_is_not_a_roster", ["--roster", "{tmp}/roster.csv"],
     "ROSTER={tmp}/roster.csv: roster.csv is neither Moodle's grading worksheet (a column of "
     "«Participante N»), Canvas's gradebook («Student», «ID») nor a groups CSV (a user-id and a "
     "group column); its columns are: «nombre», «nota»; give ROSTER= the class list your LMS "
     "exports (docs/lms.md)"),
    ("autograder_zip_is_missing", ["--autograder", "{tmp}/dist/rnn-autograder.zip"],
     "{tmp}/dist/rnn-autograder.zip: no readable autograder zip; build it with `make assign` "
     "(LESSON= the lesson you grade)"),
    ("autograder_zip_is_corrupt", ["--autograder", "{tmp}/corrupt.zip"],
     "{tmp}/corrupt.zip: cannot be opened as a zip (File is not a zip file); give the autograder "
     "zip that `make assign` builds, or build it again"),
    ("autograder_zip_is_another_zip", ["--autograder", "{tmp}/wrong.zip"],
     "{tmp}/wrong.zip: holds no otter_config.json; give the autograder zip that `make assign` "
     "builds, or build it again"),
    ("similarity_cutoff_is_not_a_number", ["--similarity-cutoff", "mucho"],
     "SIMILARITY_CUTOFF=mucho: not a number; give the strength from which similar submissions "
     "are listed, such as -0.5, the default (docs/instructors.md)"),
]


def assign_job(root, lesson, env=None):
    return {"command": "assign", "root": str(root), "cwd": str(ROOT), "env": env or {},
            "unset": ["VERBOSE", "KIT_TRACEBACK"],
            "argv": ["--lesson", lesson, "--dist", str(root / "dist"), "--no-run-tests"]}


def grade_job(tmp, args):
    defaults = {"--submissions": "{tmp}/submissions", "--autograder": "{tmp}/corrupt.zip",
                "--out": "{tmp}/out"}
    given = dict(zip(args[::2], args[1::2]))
    argv = [part.format(tmp=tmp) for key, value in {**defaults, **given}.items()
            for part in (key, value)]
    return {"command": "batch", "cwd": str(ROOT), "argv": argv,
            "unset": ["VERBOSE", "KIT_TRACEBACK"]}


def grading_folder(tmp):
    (tmp / "submissions").mkdir()
    shutil.copy(ROOT / "assignments/attention/examples/sin_hacer.ipynb", tmp / "submissions")
    (tmp / "empty").mkdir()
    (tmp / "roster.csv").write_text("nombre,nota\nAna,7\n", "utf-8")
    (tmp / "corrupt.zip").write_bytes(b"PK\x03\x04" + b"\0" * 100)
    subprocess.run(["zip", "-q", str(tmp / "wrong.zip"), "roster.csv"], cwd=tmp, check=True)
    (tmp / "out").mkdir()
    (tmp / "out" / "final_grades.csv").write_text("the last batch's grades\n", "utf-8")


def run_jobs(jobs, work):
    (work / "jobs.json").write_text(json.dumps(jobs), "utf-8")
    subprocess.run([sys.executable, str(ROOT / "tests" / "forked_commands.py"),
                    str(work / "jobs.json"), str(work / "results.json")],
                   cwd=ROOT, check=True, timeout=600)
    return json.loads((work / "results.json").read_text("utf-8"))


def course(base, name, change):
    root = base / name
    shutil.copytree(FIXTURE, root)
    if change:
        change(root)
    return root


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """``{case: (result, course or grading folder)}`` for every case, run as one batch."""
    base = tmp_path_factory.mktemp("cases")
    grading = base / "grading"
    grading.mkdir()
    grading_folder(grading)
    cases, jobs = [], []
    for name, change, lesson, _ in ASSIGN_CASES:
        root = course(base, name, change)
        cases.append((name, root))
        jobs.append(assign_job(root, lesson))
    for name, args, _ in GRADE_CASES:
        cases.append((name, grading))
        jobs.append(grade_job(grading, args))
    # VERBOSE=1 and its older name, on one refusal each: the same line, after the traceback.
    for name in ("VERBOSE", "KIT_TRACEBACK"):
        root = course(base, f"verbose_{name}", ASSIGN_CASES[1][1])
        cases.append((name, root))
        jobs.append({**assign_job(root, "rnn", {name: "1"}), "unset": []})
    return {name: (result, folder) for (name, folder), result in
            zip(cases, run_jobs(jobs, base))}


@pytest.mark.parametrize("case,line", [(c[0], c[3]) for c in ASSIGN_CASES],
                         ids=[c[0] for c in ASSIGN_CASES])
def test_make_assign_refuses_in_one_line(refused, case, line):
    result, root = refused[case]
    assert result["status"] == 2, result
    assert result["stderr"].splitlines() == [f"error: {line}"], result["stderr"][-3000:]
    assert not (root / "dist" / "student").exists(), "nothing is left to ship"


@pytest.mark.parametrize("case,line", [(c[0], c[2]) for c in GRADE_CASES],
                         ids=[c[0] for c in GRADE_CASES])
def test_make_grade_refuses_in_one_line(refused, case, line):
    result, folder = refused[case]
    assert result["status"] == 2, result
    assert result["stderr"].splitlines() == [f"error: {line.format(tmp=folder)}"], (
        result["stderr"][-3000:])
    # A batch that cannot run leaves the last batch's grades as they were.
    assert (folder / "out" / "final_grades.csv").read_text("utf-8") == "the last batch's grades\n"


@pytest.mark.parametrize("name", ["VERBOSE", "KIT_TRACEBACK"])
def test_verbose_shows_the_traceback_before_the_same_line(refused, name):
    result, _ = refused[name]
    assert result["status"] == 2
    lines = result["stderr"].splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-1] == f"error: {ASSIGN_CASES[1][3]}"


def test_the_guides_list_every_line():
    # The lines a person looks up: the lesson authors' guide lists make assign's, the
    # instructors' guide make grade's (for a course in curso/), word for word.
    authors = (ROOT / "docs" / "lesson-authors.md").read_text("utf-8")
    instructors = (ROOT / "docs" / "instructors.md").read_text("utf-8")
    assert [c[0] for c in ASSIGN_CASES if f"error: {c[3]}" not in authors] == []
    assert [c[0] for c in GRADE_CASES
            if f"error: {c[2].format(tmp='curso')}" not in instructors] == []


# --- the positive controls: without the mistake, the same fixture builds ----------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("builds")
    roots = [course(base, "unchanged", None), course(base, "kit_cells_untagged", untag_kit_cells)]
    return dict(zip(["unchanged", "kit_cells_untagged"],
                    zip(run_jobs([assign_job(root, "rnn") for root in roots], base), roots)))


@pytest.mark.slow
@pytest.mark.parametrize("case", ["unchanged", "kit_cells_untagged"])
def test_the_fixture_lesson_builds(built, case):
    # The control of every refusal above; untagged, the kit's cells are tagged by the build.
    result, root = built[case]
    assert result["status"] == 0, result["stderr"][-3000:]
    assert "error" not in result["stderr"].lower() and "Traceback" not in result["stderr"]
    student = root / "dist" / "student"
    assert (student / "notebook_student.ipynb").is_file()
    tour = (student / "notebook.ipynb").read_text("utf-8")
    assert "grader" not in tour, "the tour has no kit cell: they talk to the notebook's grader"
