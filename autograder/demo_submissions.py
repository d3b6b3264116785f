"""Write a lesson's demo submissions, what `make grade` grades without SUBMISSIONS=, from its
current build: the lesson's bundled ``assignments/<lesson>/examples/`` by default.

    .venv/bin/python -m autograder.demo_submissions [--lesson attention]   # after `make assign`
    .venv/bin/python -m autograder.demo_submissions --lesson L --dist DIR --out DIR

The submissions come from the lesson's own ``synthetic.demo_submissions``. A lesson that
bundles its demo keeps it in its folder (``LessonSources.examples``), and a test checks that
``assignments/attention/examples/`` holds exactly what this writes from a fresh build, so after
changing the master, rebuild and rerun this. A lesson without one gets it written into
``dist/<lesson>/demo`` by `make grade`.
"""

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "assignments", ROOT / "autograder"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from kit_autograder.build.course import DEFAULT_LESSON, LessonSources  # noqa: E402


def write_demo(lesson: str, dist: Path, out: Path):
    try:
        synthetic = importlib.import_module(f"{lesson}.synthetic")
    except ModuleNotFoundError as exc:
        if exc.name not in (lesson, f"{lesson}.synthetic"):
            raise
        raise SystemExit(f"error: assignments/{lesson}/synthetic.py: not found, so there is no "
                         "demo to grade; give make grade SUBMISSIONS=<a folder of submissions>")
    out.mkdir(parents=True, exist_ok=True)
    files = synthetic.demo_submissions(dist)
    for stale in out.iterdir():
        if stale.is_file() and stale.name not in files:
            stale.unlink()
    for name, data in files.items():
        (out / name).write_bytes(data)
    return sorted(files)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", default=DEFAULT_LESSON)
    parser.add_argument("--dist", type=Path, default=None, help="default: dist/<lesson>")
    parser.add_argument("--out", type=Path, default=None,
                        help="default: the lesson's bundled demo, assignments/<lesson>/examples")
    args = parser.parse_args(argv)
    dist = args.dist or ROOT / "dist" / args.lesson
    out = args.out or LessonSources(args.lesson, ROOT).examples
    for name in write_demo(args.lesson, dist, out):
        print(out / name)


if __name__ == "__main__":
    main()
