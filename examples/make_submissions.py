"""Regenerate the bundled demo submissions from the current build.

    .venv/bin/python examples/make_submissions.py            # from dist/ (run `make assign` first)
    .venv/bin/python examples/make_submissions.py --dist DIR --out DIR

A test checks that ``examples/submissions/`` holds exactly what this writes from a fresh
build, so after changing the master, rebuild and rerun this.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "assignments"))
from attention.synthetic import demo_submissions  # noqa: E402


def write_demo(dist: Path, out: Path):
    out.mkdir(parents=True, exist_ok=True)
    files = demo_submissions(dist)
    for stale in out.iterdir():
        if stale.is_file() and stale.name not in files:
            stale.unlink()
    for name, data in files.items():
        (out / name).write_bytes(data)
    return sorted(files)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--out", type=Path, default=ROOT / "examples" / "submissions")
    args = parser.parse_args(argv)
    for name in write_demo(args.dist, args.out):
        print(args.out / name)


if __name__ == "__main__":
    main()
