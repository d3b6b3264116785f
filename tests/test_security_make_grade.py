"""The same adversarial submissions through `make grade`'s engine, with the verifier plugged
into its hook (``autograder.verify.make_grade.verifier_for``): none scores more than the stub;
each is flagged, or, when its kernel never finished, rejected with the reason in
``grading_status`` (the engine's hook does not verify results it never got).

Each child of the engine is confined (``autograder.grade.confine``): as root it runs as the
kernel user under Landlock, and in every case its signals cannot leave its sandbox, so
``kill_grader`` (``os.kill(-1, SIGKILL)``) kills only itself. The children export the data
questions' variables, so in-kernel patches cannot forge the lab question either.
"""

import io
import zipfile

import nbformat
import pytest

from autograder.assign import NOTEBOOK_NAME
from autograder.checks import GRADED_FUNCTIONS
from autograder.grade import grade_folder
from autograder.grade.engine import Limits
from autograder.grade.results import FLAGS_COLUMN, final_grades
from autograder.verify.make_grade import verifier_for
from security_harness import ADVERSARIAL, legit, shortened_zip, strategies, submission_notebook


@pytest.fixture(scope="module")
def batch(built_dist, autograder_zip, tmp_path_factory):
    """{name: Graded} for the stub and every adversarial file, graded in one batch."""
    base = tmp_path_factory.mktemp("make-grade-security")
    zip_path = shortened_zip(autograder_zip, base / autograder_zip.name)
    folder = base / "submissions"
    folder.mkdir()
    student = built_dist / "student" / NOTEBOOK_NAME
    for name in ["stub", "useless"] + strategies() + legit():
        notebook = submission_notebook(student, name)
        extra = ADVERSARIAL / f"{name}.files"
        if extra.is_dir():  # as grader.export() would zip it, with the student's own folder
            with zipfile.ZipFile(folder / f"{name}.zip", "w") as zf:
                zf.writestr(NOTEBOOK_NAME, nbformat.writes(notebook))
                for path in sorted(extra.rglob("*")):
                    if path.is_file():
                        zf.write(path, path.relative_to(extra).as_posix())
        else:
            nbformat.write(notebook, str(folder / f"{name}.ipynb"))
    outcomes = grade_folder(folder, base / "out", autograder_zip=zip_path, jobs=2,
                            limits=Limits(timeout=20, memory_mb=2048),
                            verifier=verifier_for(zip_path), log=io.StringIO())
    return {outcome.stem: outcome for outcome in outcomes}


def grading_status(outcome):
    return final_grades([outcome.results])["grading_status"].iloc[-1]


@pytest.mark.parametrize("name", strategies())
def test_a_cheating_strategy_scores_no_more_than_the_stub_and_is_flagged_or_rejected(batch, name):
    outcome, stub = batch[name], batch["stub"]
    for question in GRADED_FUNCTIONS + ("student_extension",):
        score = outcome.results.get_score(question) if question in outcome.results.results else 0
        assert score <= stub.results.get_score(question), f"{name} gained points on {question}"
    assert outcome.diagnosis.flags or grading_status(outcome) != "Completed", name


@pytest.mark.parametrize("name", legit())
def test_honest_code_keeps_full_marks_and_is_not_flagged(batch, name):
    outcome = batch[name]
    for question in GRADED_FUNCTIONS:
        test_file = outcome.results.get_result(question)
        assert test_file.score == test_file.possible, question
    assert outcome.diagnosis.flags == []


def test_flags_go_to_a_column_after_otters(batch):
    grades = final_grades([o.results for o in batch.values()],
                          {o.file: o.diagnosis.flags for o in batch.values()})
    assert list(grades.columns)[-1] == FLAGS_COLUMN
    flagged = dict(zip(grades["file"], grades[FLAGS_COLUMN]))
    assert "usa el código del corrector (`reference`)" in flagged["import_reference.ipynb"]
    assert flagged["stub.ipynb"] == ""
