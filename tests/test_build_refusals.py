"""`make assign` fails closed, in one line per problem (issue 32): a lesson that would ship its
reference to students, a rubric that grades another set of questions, an unclean demo.

Each case starts from the fixture lesson (tests/fixtures/lessons/rnn), which builds, and
changes one thing; the build's own command line is what a lesson author runs."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.assign import build

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "lessons" / "rnn"

pytestmark = pytest.mark.slow


def course(tmp_path, change=None):
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    if change:
        change(root)
    return root


def assign(root, dist):
    """``python -m autograder.assign`` as make assign runs it, for a course at ``root``."""
    script = ("import sys; from pathlib import Path; import autograder.assign as a; "
              f"a.build.__defaults__ = (None, True, Path({str(root)!r})); "
              f"sys.exit(a.main(['--lesson', 'rnn', '--dist', {str(dist)!r}]))")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def ships_reference(root):
    lesson = root / "assignments" / "rnn"
    shutil.copy(root / "reference" / "rnn" / "__init__.py", lesson / "reference.py")
    text = (lesson / "lesson.py").read_text("utf-8")
    (lesson / "lesson.py").write_text(text + '\nSTUDENT_FILES = ("reference.py",)\n', "utf-8")


def test_the_fixture_lesson_builds(tmp_path):
    # Positive control for the refusals below: unchanged, it builds and ships no reference.
    dist = build("rnn", tmp_path / "dist", run_tests=False, root=course(tmp_path))
    assert (dist / "student" / "notebook_student.ipynb").is_file()


def test_a_lesson_that_ships_its_reference_does_not_build(tmp_path):
    dist = tmp_path / "dist"
    done = assign(course(tmp_path, ships_reference), dist)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: the student folder would ship what is hidden")
    assert any("student/reference.py is a copy of the hidden reference" in line for line in lines)
    assert "Traceback" not in done.stderr
    assert not (dist / "student").exists(), "nothing is left to ship"


def test_a_rubric_with_a_question_the_lesson_lacks_does_not_build(tmp_path):
    def extra_question(root):
        rubric = root / "rubrics" / "rnn.yaml"
        rubric.write_text(rubric.read_text("utf-8") + "  rnn_forwardd:\n    points: 2\n", "utf-8")

    done = assign(course(tmp_path, extra_question), tmp_path / "dist")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: rnn.yaml lists under questions: rnn_forwardd, which lesson rnn does not have "
        "(it has: rnn_step, rnn_forward)"]
