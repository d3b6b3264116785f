"""`make bench`: `make grade`'s engine against sequential `otter run` calls, in one run.

    python -m autograder.bench [--n 200] [--sample 8] [--jobs JOBS] [--dist dist]

It writes ``n`` synthetic submissions (correct, wrong, untouched stub and broken, in turn) from
the build in ``dist``, grades all of them with the command line of `make grade`, and grades
``sample`` of them (as many of each kind) with one `otter run` CLI call each, one after the
other, as an instructor without Docker would. Both sides are timed from the command's start,
imports included. It prints seconds per submission, throughput, peak memory and whether the
sample's per-question scores are identical; the last line is

    speedup_vs_otter_run=<x.xx> scores_identical=<true|false>
"""

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .grade.synthetic import KINDS, mixed_submissions

ROOT = Path(__file__).resolve().parent.parent


def pick_sample(names, size):
    """``size`` names, as many of each kind as possible, in file order."""
    per_kind = max(1, size // len(KINDS))
    sample = []
    for kind in KINDS:
        sample += [name for name in names if name.endswith(f"_{kind}.ipynb")][:per_kind]
    return sample[:size]


@dataclass
class Run:
    seconds: float
    returncode: int
    stdout: str
    stderr: str
    peak_mib: float  # the largest process of the command's tree (the kernel, for `otter run`)
    cpu_seconds: float  # user + system time of the command and everything it waited for


def timed(command):
    """Run ``command`` from the repository; wall time from its start, imports included."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err, text=True)
        # wait4, not Popen.wait, for the peak memory of the command and its waited-for children.
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(seconds, proc.returncode, out.read(), err.read(), usage.ru_maxrss / 1024,
                   usage.ru_utime + usage.ru_stime)


def engine_scores(out_dir):
    with open(out_dir / "final_grades.csv", newline="", encoding="utf-8") as f:
        rows = {row["file"]: row for row in csv.DictReader(f)}
    return rows


def otter_scores(results_path):
    results = json.loads(results_path.read_text("utf-8"))
    return {test["name"]: float(test["score"]) for test in results["tests"] if "score" in test}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--sample", type=int, default=8)
    parser.add_argument("--jobs", type=lambda text: int(text) if text.strip() else None,
                        default=None, help="default: the number of cores")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    args = parser.parse_args(argv)
    args.jobs = args.jobs or os.cpu_count() or 1

    from .assign import find_autograder_zip

    autograder_zip = find_autograder_zip(args.dist)
    if autograder_zip is None:
        print(f"error: no autograder zip in {args.dist}/autograder; run `make assign`",
              file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="bench-"))
    try:
        return compare(args, autograder_zip, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def compare(args, autograder_zip, work):
    submissions = work / "submissions"
    submissions.mkdir()
    files = mixed_submissions(args.dist, args.n)
    for name, data in files.items():
        (submissions / name).write_bytes(data)
    print(f"{args.n} synthetic submissions: {', '.join(KINDS)}, in turn")

    out = work / "grades"
    run = timed([sys.executable, "-m", "autograder.grade", "--submissions", str(submissions),
                 "--out", str(out), "--autograder", str(autograder_zip), "--jobs",
                 str(args.jobs)])
    if run.returncode != 0:
        print(run.stderr[-3000:], file=sys.stderr)
        print("speedup_vs_otter_run=0.00 scores_identical=false")
        return 1
    memory = re.search(r"peak memory: grader (\d+) MiB, largest submission (\d+) MiB",
                       run.stdout)
    grader_mib, child_mib = memory.groups() if memory else ("?", "?")
    engine_per = run.seconds / args.n
    print(f"make grade engine: {args.n} submissions in {run.seconds:.1f} s with {args.jobs} jobs: "
          f"{engine_per:.3f} s per submission ({run.cpu_seconds / args.n:.3f} s of CPU), "
          f"{args.n / run.seconds:.2f} submissions/s; "
          f"peak memory: grader {grader_mib} MiB, plus at most {args.jobs} submissions "
          f"at once of at most {child_mib} MiB each")

    ours = engine_scores(out)
    sample = pick_sample(sorted(files), args.sample)
    otter_seconds, otter_cpu, otter_peak, identical, mismatches = 0.0, 0.0, 0.0, True, []
    for name in sample:
        run_out = work / "otter-run" / name
        run_out.mkdir(parents=True)
        run = timed([sys.executable, "-m", "otter", "run", "-a", str(autograder_zip),
                     "-o", str(run_out), str(submissions / name)])
        otter_seconds += run.seconds
        otter_cpu += run.cpu_seconds
        otter_peak = max(otter_peak, run.peak_mib)
        results = run_out / "results.json"
        if not results.exists():
            identical = False
            mismatches.append(f"{name}: otter run wrote no results ({run.stderr.strip()[-200:]})")
            continue
        theirs = otter_scores(results)
        mine = {question: float(ours[name][question]) for question in theirs}
        if mine != theirs:
            identical = False
            mismatches.append(f"{name}: otter run {theirs} != make grade {mine}")
    otter_per = otter_seconds / len(sample)
    print(f"otter run, one CLI call after another on a sample of {len(sample)} "
          f"({', '.join(sample)}): {otter_seconds:.1f} s, {otter_per:.3f} s per submission "
          f"({otter_cpu / len(sample):.3f} s of CPU), "
          f"{1 / otter_per:.2f} submissions/s; peak memory {otter_peak:.0f} MiB (its largest "
          "process)")
    for line in mismatches:
        print(f"MISMATCH {line}")
    print(f"per-question scores identical on the sample: {str(identical).lower()}")
    print(f"speedup_vs_otter_run={otter_per / engine_per:.2f} "
          f"scores_identical={str(identical).lower()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
