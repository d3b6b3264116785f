"""The course's shared machinery around a lesson: its salt, its order, its build folder (issue 23)."""

import base64

import nbformat
import pytest

from autograder.assign import grading_salt
from kit_autograder.bundle import Bundle, BundleError, OpenedZip
from kit_autograder.build.course import LessonSources, zip_name

PLUGIN = "kit_autograder.otter_plugin.VerificationPlugin"


def kept_master(path, lesson, salt):
    config = (f"# ASSIGNMENT CONFIG\nname: x\nplugins:\n- {PLUGIN}:\n    lesson: {lesson}\n"
              f"    salt: {salt}\n")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_raw_cell(config)]), path)
    return path


def test_a_rebuild_keeps_its_own_lessons_salt_and_never_another_lessons(tmp_path, monkeypatch):
    monkeypatch.delenv("KIT_GRADING_SALT", raising=False)
    salt = base64.b64encode(b"s" * 32).decode()
    ours = kept_master(tmp_path / "ours.ipynb", "attention", salt)
    assert grading_salt(ours, "attention") == salt
    theirs = kept_master(tmp_path / "theirs.ipynb", "rnn", salt)
    fresh = grading_salt(theirs, "attention")
    assert fresh != salt and len(base64.b64decode(fresh)) == 32


@pytest.mark.parametrize("settings", [{}, {"salt": ""}, {"salt": "no es base64!"},
                                      {"salt": base64.b64encode(b"corta").decode()}],
                         ids=["absent", "empty", "not_base64", "too_short"])
def test_a_zip_without_a_usable_salt_grades_nothing(tmp_path, settings):
    bundle = Bundle(tmp_path, {}, {"lesson": "attention", **settings})
    with pytest.raises(BundleError, match="salt"):
        bundle.salt


def test_each_lesson_builds_into_its_own_folder_and_zip():
    sources = LessonSources("rnn")
    assert sources.folder.name == "rnn" and sources.rubric.name == "rnn.yaml"
    assert zip_name("rnn") == "rnn-autograder.zip"


def test_the_zip_lists_its_questions_in_the_lessons_order(autograder_zip):
    with OpenedZip(autograder_zip) as bundle:
        assert bundle.question_names() == ["attention", "multihead", "positional_encoding",
                                           "transformer_block", "student_extension"]
