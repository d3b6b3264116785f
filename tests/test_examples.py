"""The bundled demo submissions are exactly what the generator writes from the current build,
so a change to the master cannot leave them stale without a failing test."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "examples" / "attention"


def test_bundled_submissions_are_what_the_generator_writes_from_the_current_build(built_dist):
    from attention.synthetic import demo_submissions

    written = demo_submissions(built_dist)
    bundled = {path.name: path.read_bytes() for path in BUNDLED.iterdir() if path.is_file()}
    assert sorted(bundled) == sorted(written)
    stale = [name for name, data in written.items() if bundled[name] != data]
    assert not stale, (f"{stale} differ from the current build: run `make assign` and "
                       "`.venv/bin/python examples/make_submissions.py --lesson attention`")


def test_the_generator_writes_into_any_folder_and_removes_what_the_demo_lost(built_dist,
                                                                             tmp_path):
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from make_submissions import write_demo
    finally:
        sys.path.remove(str(ROOT / "examples"))
    (tmp_path / "vieja.ipynb").write_text("{}")
    written = write_demo("attention", built_dist, tmp_path)
    assert sorted(path.name for path in Path(tmp_path).iterdir()) == written
