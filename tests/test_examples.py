"""The bundled demo submissions are exactly what the generator writes from the current build,
so a change to the master cannot leave them stale without a failing test; they live in the
lesson's own folder, and no build ships them."""

import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "assignments" / "attention" / "examples"


def test_bundled_submissions_are_what_the_generator_writes_from_the_current_build(built_dist):
    from attention.synthetic import demo_submissions

    written = demo_submissions(built_dist)
    bundled = {path.name: path.read_bytes() for path in BUNDLED.iterdir() if path.is_file()}
    assert sorted(bundled) == sorted(written)
    stale = [name for name, data in written.items() if bundled[name] != data]
    assert not stale, (f"{stale} differ from the current build: run `make assign` and "
                       "`.venv/bin/python -m autograder.demo_submissions --lesson attention`")


def test_the_generator_writes_into_any_folder_and_removes_what_the_demo_lost(built_dist,
                                                                             tmp_path):
    from autograder.demo_submissions import write_demo

    (tmp_path / "vieja.ipynb").write_text("{}")
    written = write_demo("attention", built_dist, tmp_path)
    assert sorted(path.name for path in Path(tmp_path).iterdir()) == written


def test_the_bundled_demo_is_the_lessons_and_reaches_no_one(built_dist):
    # make grade's default, named in the Makefile and in course.py: the same folder.
    from kit_autograder.build.course import LessonSources

    assert LessonSources("attention").examples == BUNDLED
    assert "DEMO := assignments/$(LESSON)/" + BUNDLED.name in (ROOT / "Makefile").read_text()
    names = {p.name for p in BUNDLED.iterdir()}
    with zipfile.ZipFile(built_dist / "autograder" / "attention-autograder.zip") as zf:
        shipped = zf.namelist()
    assert shipped and not [n for n in shipped if "/examples/" in n or Path(n).name in names]
    folders = [built_dist / "student", built_dist / "solution", built_dist / "otter"]
    assert not [p for folder in folders for p in folder.rglob("*") if p.name in names]
