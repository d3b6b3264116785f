"""Command line of `make grade`: ``python -m autograder.grade [--submissions DIR] [--out DIR] ...``.

Exit status 0 when the batch ran, whatever the submissions were like; 2 when it could not run.
"""

import argparse
import os
import sys
from pathlib import Path

from .engine import Limits  # light: the heavy imports wait until the arguments are checked

ROOT = Path(__file__).resolve().parents[2]


def _optional(kind):
    """Make's ``JOBS=`` passes an empty string, which means "the default"."""
    def parse(text):
        return kind(text) if str(text).strip() else None
    return parse


def main(argv=None):
    parser = argparse.ArgumentParser(description="Grade a folder of submissions with the "
                                                 "autograder zip, without Docker.")
    parser.add_argument("--submissions", type=Path, default=ROOT / "examples" / "submissions",
                        help="folder of .ipynb files and grader.export() zips")
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "grades",
                        help="where final_grades.csv, results/ and feedback/ go")
    parser.add_argument("--autograder", type=Path, default=None,
                        help="the Otter autograder zip (default: the one `make assign` built)")
    parser.add_argument("--jobs", type=_optional(int), default=None,
                        help="submissions graded at once (default: the number of cores)")
    parser.add_argument("--timeout", type=_optional(float), default=None,
                        help=f"seconds per submission (default {Limits.timeout:g})")
    parser.add_argument("--memory-mb", type=_optional(int), default=None,
                        help=f"memory cap per submission in MB (default {Limits.memory_mb})")
    args = parser.parse_args(argv)

    autograder_zip = args.autograder
    if autograder_zip is None:
        from autograder.assign import find_autograder_zip

        autograder_zip = find_autograder_zip()
    if autograder_zip is None or not Path(autograder_zip).is_file():
        print(f"error: no autograder zip at {autograder_zip or 'dist/autograder'}; run "
              "`make assign`", file=sys.stderr)
        return 2
    if not args.submissions.is_dir():
        print(f"error: no such submissions folder: {args.submissions}", file=sys.stderr)
        return 2

    from .batch import BatchError, grade_folder
    from .bundle import BundleError
    limits = Limits(timeout=args.timeout or Limits.timeout,
                    memory_mb=args.memory_mb or Limits.memory_mb)
    try:
        from autograder.verify.make_grade import verifier_for  # issue 6: the zip's plugin

        grade_folder(args.submissions, args.out, autograder_zip=autograder_zip,
                     jobs=args.jobs or os.cpu_count(), limits=limits,
                     verifier=verifier_for(autograder_zip))
    except (BatchError, BundleError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"\nwrote {args.out / 'final_grades.csv'}, {args.out / 'results'}/ and "
          f"{args.out / 'feedback'}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
