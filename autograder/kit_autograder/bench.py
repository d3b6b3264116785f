"""`make bench`: make grade's engine beside sequential `otter run`, in one run.

    python -m kit_autograder.bench --autograder ZIP [--dist dist] [--n 200] [--sample 8] [--jobs 2]
                                   [--no-otter-run] [--user UID]

Synthetic submissions come from the lesson (its ``synthetic`` module: correct, wrong,
untouched and broken, in turn). Everything is measured side by side, in this one run:

* the engine grading all ``n`` (``python -m kit_autograder.batch``), timed from its start,
  imports included: wall and CPU seconds per submission, the grader's peak memory, the largest
  job's, and how busy the cores were;
* the engine again on the first 100, so that the grader's peak can be compared at two sizes;
* the floor: the same notebooks' cells run in a warm fork of the same zygote, with no
  grading at all, CPU seconds per submission;
* Gradescope on a sample, cold: each upload in a fresh tree as Gradescope builds it (the
  zip unpacked in ``source/``, the upload in ``submission/``), graded by the zip's own
  ``run_autograder`` in new processes with an empty home (no font cache, no compiled kit),
  one after another, and whether its results.json scores match; the tree is the tests'
  harness's (tests/otter_paths.py), mounted at /autograder in a mount namespace of its own
  when the bench runs as root, else laid out at a temporary path that its two scripts name;
* ``otter run`` on a sample, one CLI call after another, as an instructor without Docker would
  (the zip's plugin grades each in the sandbox too), and whether its per-question scores match.

The last lines are ``gradescope_cold=<seconds per upload>s engine_floor=<x.xx>`` and
``speedup_vs_otter_run=<x.xx> scores_identical=<true|false>`` (every door's scores, make
grade's, Gradescope's and otter run's, the same).
"""

import argparse
import csv
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Run:
    seconds: float
    cpu_seconds: float  # the command and everything it waited for
    returncode: int
    stdout: str
    stderr: str


def timed(command, environment=None):
    """Run ``command``; wait4, not Popen.wait, for the CPU of it and of what it waited for."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, env=environment)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(seconds, usage.ru_utime + usage.ru_stime, proc.returncode,
                   out.read().decode("utf-8", "replace"),
                   err.read().decode("utf-8", "replace"))


def as_user(command, uid):
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"] + command \
        if uid is not None else command


def synthetic_submissions(autograder_zip, dist, n):
    """The lesson's mixed submissions, made from the build in ``dist`` (its student and
    solution notebooks) by the lesson's own ``synthetic`` module, from the checkout the bench
    runs in (the zip's copy of the lesson holds only what grading needs)."""
    from .bundle import OpenedZip

    with OpenedZip(autograder_zip) as bundle:
        name = bundle.settings["lesson"]
    checkout = Path(__file__).resolve().parents[2]
    for folder in (checkout, checkout / "assignments"):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    try:
        synthetic = importlib.import_module(f"{name}.synthetic")
    except ModuleNotFoundError as exc:
        if exc.name != f"{name}.synthetic":
            raise
        raise SystemExit(f"error: lesson {name!r} has no synthetic.py, so make bench has no "
                         "submissions to grade (docs/lesson-authors.md, «Optional parts»)")
    return synthetic.mixed_submissions(dist or checkout / "dist" / name, n)


def grade_command(submissions, out, autograder_zip, jobs):
    return [sys.executable, "-m", "kit_autograder.batch", "--submissions", str(submissions),
            "--out", str(out), "--autograder", str(autograder_zip), "--jobs", str(jobs)]


FLOOR = textwrap.dedent("""
    import json, sys
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path
    from kit_autograder.bundle import OpenedZip
    from kit_autograder.hidden_inputs import NOTEBOOK_NAME
    from kit_autograder.sandbox.client import Limits, Sandbox
    from kit_autograder.submission import load
    folder, zip_path, jobs = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    with OpenedZip(zip_path) as bundle:
        support = bundle.support_files()
        paths = sorted(folder.iterdir())
        sandbox = Sandbox(Limits(), jobs=jobs)
        with sandbox:
            def run(path):
                try:
                    loaded = load(path, bundle.assignment_name)
                except Exception:  # no cells to run: the floor of an unreadable file is 0
                    return
                job = sandbox.open_job()
                job.run_notebook(NOTEBOOK_NAME, loaded.cells,
                                 {**loaded.world(support), **support})
                job.close()
            with ThreadPoolExecutor(jobs) as pool:
                list(pool.map(run, paths))
        print(json.dumps({"jobs": len(paths), **sandbox.cpu}))
""")



def floor(submissions, autograder_zip, jobs, environment, user):
    """The cells alone, in warm forks of the zygote: CPU per submission, startup included.
    The very files the engine graded, divided by the same count, so that the ratio compares
    like with like (a notebook whose code is broken still runs its cells)."""
    run = timed(as_user([sys.executable, "-c", FLOOR, str(submissions), str(autograder_zip),
                         str(jobs)], user), environment)
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-3000:])
    report = json.loads(run.stdout.splitlines()[-1])
    return (report["cpu_self"] + report["cpu_jobs"]) / report["jobs"]


def summary_line(stdout, prefix):
    """The line of make grade's summary that starts with ``prefix``."""
    line = next((l for l in stdout.splitlines() if l.startswith(prefix)), None)
    if line is None:
        raise RuntimeError(f"make grade printed no «{prefix}» line:\n{stdout[-2000:]}")
    return line


def own_peak(stdout):
    """The grader's peak memory as it measured it (VmHWM): the rusage of a child counts the
    high-water mark of the process that started it, this bench's included."""
    return float(summary_line(stdout, "peak memory: grader ").split()[3])


def sandbox_cpu(stdout):
    """(grader, zygote, jobs) CPU seconds from make grade's summary line."""
    line = summary_line(stdout, "cpu seconds:")
    return tuple(float(part.split()[-1]) for part in line.split(":", 1)[1].split(","))


def engine_scores(out):
    with open(Path(out) / "final_grades.csv", newline="", encoding="utf-8") as f:
        return {row["file"]: row for row in csv.DictReader(f)}


OTTER_RESULTS_PLACES = 5


def as_in_results(row, theirs):
    """A CSV row's scores for the questions of ``theirs``, as results.json would hold them.
    results.json has Otter's scores rounded to 5 places (TestFile.to_gradescope_dict); the
    CSV, like otter grade's, has them whole: 5/6 of a case is 4.16667 in one and
    4.166666666666667 in the other."""
    return {question: round(float(row[question]), OTTER_RESULTS_PLACES) for question in theirs}


def otter_scores_of(results):
    return {test["name"]: float(test["score"]) for test in results["tests"] if "score" in test}


def otter_paths():
    """The tests' harness of Otter's paths (tests/otter_paths.py), from the checkout the bench
    runs in: the one description of Gradescope's tree."""
    path = Path(__file__).resolve().parents[2] / "tests" / "otter_paths.py"
    spec = importlib.util.spec_from_file_location("otter_paths", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gradescope_cold(autograder_zip, name, data, user):
    """One upload graded as Gradescope grades it, in a fresh tree and fresh processes: the
    zip's run_autograder, with this Python's venv as the image's environment. Returns the
    Run and the results.json (None if none was written)."""
    harness = otter_paths()
    root = harness.gradescope_root(autograder_zip, name, data)
    try:
        if user is not None:
            subprocess.run(["chown", "-R", f"{user}:{user}", str(root)], check=True)
        with tempfile.TemporaryDirectory(prefix="bench-gradescope-") as scratch:
            os.chmod(scratch, 0o755)
            stand_in = harness.mamba_stand_in(Path(scratch) / "bin", sys.prefix)
            environment = harness.clean_environment(scratch, [stand_in])
            home = Path(scratch) / "home"
            home.mkdir()
            if user is not None:
                os.chown(home, user, user)
            environment["HOME"] = str(home)
            if os.geteuid() == 0 and user is None and shutil.which("unshare"):
                script = (f"mount --bind {root} {harness.MOUNT_POINT} && cd {harness.MOUNT_POINT} "
                          f"&& exec {harness.MOUNT_POINT}/run_autograder")
                harness.MOUNT_POINT.mkdir(exist_ok=True)
                command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script]
            else:  # the same tree where it lies: its two scripts name /autograder
                for script in (root / "run_autograder", root / "source" / "run_otter.py"):
                    script.write_text(script.read_text("utf-8").replace(
                        str(harness.MOUNT_POINT), str(root)), "utf-8")
                command = as_user(["bash", str(root / "run_autograder")], user)
            run = timed(command, environment)
        results = root / "results" / "results.json"
        return run, (json.loads(results.read_text("utf-8")) if results.is_file() else None)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def similarity_pass(out, submissions, autograder_zip, grade_seconds, grade_cpu, n, size):
    """The similarity pass beside make grade's time. Keeping each submission's parts (make
    grade does it on each, as it grades) is timed again here on the same files; comparing and
    writing the report's section, on the n graded and on a class of ``size`` whose parts come
    from the graded ones, each changed as one student's differs from another's
    (``similarity.varied``): a thousand without grading a thousand. Pairs grow as n². Both
    wall and CPU seconds: make grade spreads over the cores, the pass runs on one, and on a
    busy machine the wall clock says more of the others than of either."""
    from .bundle import OpenedZip
    from .similarity import parts, section, varied

    def timed_call(call):
        wall, cpu = time.perf_counter(), time.process_time()
        result = call()
        return result, time.perf_counter() - wall, time.process_time() - cpu

    with OpenedZip(autograder_zip) as bundle, tempfile.TemporaryDirectory() as work:
        shared, functions = parts.Shared(bundle.settings), bundle.lesson.FUNCTIONS
        files = sorted(Path(submissions).iterdir())
        _, keep_wall, keep_cpu = timed_call(lambda: [
            parts.keep(work, path.stem, path.name, path, functions, shared) for path in files])
    keep_wall, keep_cpu = keep_wall / len(files), keep_cpu / len(files)
    _, graded_seconds, _ = timed_call(lambda: section.write(out))
    print(f"similarity pass, N = {n}: keeping the parts {1000 * keep_wall:.1f} ms per "
          f"submission; comparing and the report's section {graded_seconds:.2f} s")
    with tempfile.TemporaryDirectory() as work:
        varied.write_class(out, work, size)
        (Path(work) / "records").mkdir()
        html, wall, cpu = timed_call(lambda: section.write(work))
    listed = html.count("<li data-pair=")
    rate, rate_cpu = grade_seconds / n * size, grade_cpu * size
    total, total_cpu = wall + keep_wall * size, cpu + keep_cpu * size
    print(f"similarity pass, {size} (parts of the {n} graded, varied): comparing and the "
          f"section {wall:.1f} s, keeping {keep_wall * size:.1f} s, {listed} pairs listed; "
          f"make grade at this run's rate: {rate:.0f} s; similarity / make grade = "
          f"{total / rate:.3f} (CPU: {total_cpu:.0f} s of {rate_cpu:.0f} s, "
          f"{total_cpu / rate_cpu:.3f})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--autograder", type=Path, required=True)
    parser.add_argument("--dist", type=Path, default=None,
                        help="the build the synthetic submissions are made from "
                             "(default dist/<the zip's lesson>)")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--sample", type=int, default=8)
    parser.add_argument("--jobs", type=lambda t: int(t) if str(t).strip() else None, default=None)
    parser.add_argument("--no-otter-run", action="store_true",
                        help="skip the otter run sample (for N = 1000)")
    parser.add_argument("--similarity-class", type=int, default=1000,
                        help="the class size of the similarity pass's own figure (its parts "
                             "drawn from the graded ones)")
    parser.add_argument("--user", type=int, default=None,
                        help="run every measured command as this unprivileged uid")
    args = parser.parse_args(argv)
    jobs = args.jobs or os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="bench-"))
    os.chmod(work, 0o755)
    try:
        return compare(args, jobs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def compare(args, jobs, work):
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    autograder_zip = work / "autograder.zip"
    shutil.copy(args.autograder, autograder_zip)
    os.chmod(autograder_zip, 0o644)
    files = synthetic_submissions(autograder_zip, args.dist, args.n)
    submissions = work / "submissions"
    submissions.mkdir()
    for name, data in files.items():
        (submissions / name).write_bytes(data)
    os.chmod(submissions, 0o755)
    kinds = sorted({name.rsplit("_", 1)[1].split(".")[0] for name in files})
    who = f"as uid {args.user}" if args.user is not None else f"as uid {os.getuid()}"
    print(f"{args.n} synthetic submissions ({', '.join(kinds)}, in turn), {jobs} jobs, {who}")

    def grade(folder, out):
        """make grade's command line on ``folder``, as the bench's user, timed."""
        out.mkdir()
        if args.user is not None:
            os.chown(out, args.user, args.user)
        return timed(as_user(grade_command(folder, out, autograder_zip, jobs), args.user),
                     environment)

    out = work / "grades"
    run = grade(submissions, out)
    if run.returncode != 0:
        print(run.stderr[-3000:], file=sys.stderr)
        print("speedup_vs_otter_run=0.00 scores_identical=false")
        return 1
    records = [json.loads(p.read_text("utf-8")) for p in (out / "records").glob("*.json")]
    child_peak = max((r["sandbox"].get("peak_mb") or 0) for r in records)
    engine_per = run.seconds / args.n
    # Behind bubblewrap the zygote's CPU does not reach this process's rusage: make grade
    # prints its own, its zygote's and its jobs' (reaped by the zygote).
    grader_cpu, zygote_cpu, jobs_cpu = sandbox_cpu(run.stdout)
    engine_cpu = (grader_cpu + zygote_cpu + jobs_cpu) / args.n
    busy = engine_cpu * args.n / (run.seconds * (os.cpu_count() or 1))
    print(f"engine: {args.n} in {run.seconds:.1f} s: {engine_per:.3f} s and {engine_cpu:.3f} s "
          f"of CPU per submission (grader {grader_cpu / args.n:.3f}, sandbox "
          f"{(zygote_cpu + jobs_cpu) / args.n:.3f}); cores busy {busy:.0%}")
    grader_peak = own_peak(run.stdout)
    print(f"memory, N = {args.n}: grader {grader_peak:.0f} MiB, largest job {child_peak:.0f} MiB")
    similarity_pass(out, submissions, autograder_zip, run.seconds, engine_cpu, args.n,
                    args.similarity_class)
    # The class report must stay light enough to open before the next lecture (under 1 MB).
    print(f"class report, N = {args.n}: {(out / 'report.html').stat().st_size / 1024:.0f} KiB")
    if args.n > 100:
        first = work / "first100"
        first.mkdir()
        for path in sorted(submissions.iterdir())[:100]:
            shutil.copy(path, first / path.name)
        os.chmod(first, 0o755)
        small = grade(first, work / "grades100")
        print(f"memory, N = 100: grader {own_peak(small.stdout):.0f} MiB "
              f"(N = {args.n}: {grader_peak:.0f} MiB)")

    floor_cpu = floor(submissions, autograder_zip, jobs, environment, args.user)
    print(f"floor (the same cells in a warm fork, no grading): {floor_cpu:.3f} s of CPU per "
          f"submission; engine / floor = {engine_cpu / floor_cpu:.2f}")

    ours = engine_scores(out)
    per_kind = max(1, args.sample // len(kinds))
    sample = []
    for kind in kinds:
        sample += [n for n in sorted(files) if n.endswith(f"_{kind}.ipynb")][:per_kind]
    mismatches = []
    gradescope_seconds, gradescope_cpu, slowest = 0.0, 0.0, 0.0
    for name in sample:
        run, results = gradescope_cold(autograder_zip, name, files[name], args.user)
        gradescope_seconds += run.seconds
        gradescope_cpu += run.cpu_seconds
        slowest = max(slowest, run.seconds)
        mismatches.append(mismatch("Gradescope", name, run, results, ours))
    where = ("at /autograder" if os.geteuid() == 0 and args.user is None
             and shutil.which("unshare") else "at a temporary path")
    print(f"Gradescope, cold, one upload after another ({where}), on {len(sample)}: "
          f"{gradescope_seconds / len(sample):.3f} s per submission (slowest {slowest:.3f} s), "
          f"{gradescope_cpu / len(sample):.3f} s of CPU (the grader's processes)")

    speedup = "skipped"
    if args.no_otter_run:
        print("otter run: skipped (--no-otter-run)")
    else:
        otter_seconds, otter_cpu = 0.0, 0.0
        for name in sample:
            run_out = work / "otter-run" / name
            run_out.mkdir(parents=True)
            if args.user is not None:
                os.chown(run_out, args.user, args.user)
            otter = timed(as_user([sys.executable, "-m", "otter", "run", "-a",
                                   str(autograder_zip), "-o", str(run_out),
                                   str(submissions / name)], args.user), environment)
            otter_seconds += otter.seconds
            otter_cpu += otter.cpu_seconds
            results = run_out / "results.json"
            mismatches.append(mismatch("otter run", name, otter, json.loads(
                results.read_text("utf-8")) if results.exists() else None, ours))
        otter_per = otter_seconds / len(sample)
        print(f"otter run, one call after another, on {len(sample)}: {otter_per:.3f} s and "
              f"{otter_cpu / len(sample):.3f} s of CPU per submission")
        speedup = f"{otter_per / engine_per:.2f}"
    mismatches = [line for line in mismatches if line]
    for line in mismatches:
        print(f"MISMATCH {line}")
    print(f"gradescope_cold={gradescope_seconds / len(sample):.2f}s "
          f"engine_floor={engine_cpu / floor_cpu:.2f}")
    print(f"speedup_vs_otter_run={speedup} scores_identical={str(not mismatches).lower()}")
    return 0


def mismatch(door, name, run, results, ours):
    """How ``door``'s results.json for ``name`` differs from make grade's scores, or None."""
    if results is None:
        return f"{name}: {door} wrote no results ({run.stderr[-300:]})"
    theirs = otter_scores_of(results)
    mine = as_in_results(ours[name], theirs)
    return None if mine == theirs else f"{name}: {door} {theirs} != make grade {mine}"


if __name__ == "__main__":
    sys.exit(main())
