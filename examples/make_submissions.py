"""Regenerate a lesson's bundled demo submissions (examples/<lesson>/) from its current build.

    .venv/bin/python examples/make_submissions.py [--lesson attention]   # after `make assign`
    .venv/bin/python examples/make_submissions.py --lesson L --dist DIR --out DIR

The submissions come from the lesson's own ``synthetic.demo_submissions``. A test checks that
``examples/attention/`` holds exactly what this writes from a fresh build, so after changing
the master, rebuild and rerun this.
"""

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "assignments", ROOT / "autograder"):
    sys.path.insert(0, str(folder))


def write_demo(lesson: str, dist: Path, out: Path):
    try:
        synthetic = importlib.import_module(f"{lesson}.synthetic")
    except ModuleNotFoundError as exc:
        if exc.name not in (lesson, f"{lesson}.synthetic"):
            raise
        raise SystemExit(f"error: lesson {lesson!r} has no synthetic.py to make a demo from: "
                         "pass SUBMISSIONS=<a folder of submissions> to make grade")
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
    parser.add_argument("--lesson", default="attention")
    parser.add_argument("--dist", type=Path, default=None, help="default: dist/<lesson>")
    parser.add_argument("--out", type=Path, default=None, help="default: examples/<lesson>")
    args = parser.parse_args(argv)
    dist = args.dist or ROOT / "dist" / args.lesson
    out = args.out or ROOT / "examples" / args.lesson
    for name in write_demo(args.lesson, dist, out):
        print(out / name)


if __name__ == "__main__":
    main()
