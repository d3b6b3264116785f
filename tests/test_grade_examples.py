"""The bundled demo submissions are exactly what the generator writes from the current build, so
a change to the master cannot leave them stale without a failing test."""

import sys
from pathlib import Path

import nbformat

from grade_fixtures import ROOT, demo_files  # noqa: F401 - fixture

BUNDLED = ROOT / "examples" / "submissions"


def test_bundled_submissions_are_what_the_generator_writes_from_the_current_build(demo_files):
    bundled = {path.name: path.read_bytes() for path in BUNDLED.iterdir() if path.is_file()}
    assert sorted(bundled) == sorted(demo_files)
    stale = [name for name, data in demo_files.items() if bundled[name] != data]
    assert not stale, (f"{stale} differ from the current build: run `make assign` and "
                       "`.venv/bin/python examples/make_submissions.py`")


def test_bundled_notebooks_carry_the_current_assignment_name(built_dist):
    from otter.nbmeta_config import NBMetadataConfig

    expected = NBMetadataConfig.from_notebook(
        nbformat.read(built_dist / "student" / "notebook_student.ipynb", as_version=4)).assignment_name
    for name in ("correcta.ipynb", "parcial.ipynb", "sin_hacer.ipynb"):
        nb = nbformat.read(BUNDLED / name, as_version=4)
        assert NBMetadataConfig.from_notebook(nb).assignment_name == expected


def test_the_generator_writes_into_any_folder(built_dist, tmp_path):
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from make_submissions import write_demo
    finally:
        sys.path.remove(str(ROOT / "examples"))
    (tmp_path / "vieja.ipynb").write_text("{}")  # a file the demo no longer has is removed
    written = write_demo(built_dist, tmp_path)
    assert sorted(path.name for path in Path(tmp_path).iterdir()) == written
