"""Grade a folder: the chain of ``autograder.grade`` over every submission, and the outputs.

Outputs, in ``out``:

* ``final_grades.csv``: `otter grade`'s format (Otter's ``merge_scores_to_df``), one row per
  file, with a first row of points per question; a ``flags`` column after Otter's columns only
  when a verifier runs;
* ``results/<stem>.json``: the Gradescope results for the submission;
* ``feedback/<stem>.md``: the Spanish report for the student.

No submission can stop the batch: whatever goes wrong with one becomes its row, with 0 points
and the reason in ``grading_status``. Progress goes to ``log`` (stderr) as submissions finish.
"""

import json
import os
import resource
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import feedback
from .bundle import open_bundle
from .diagnose import Diagnosis, diagnose
from .engine import ForkServer, Limits
from .load import Rejected, find_submissions, load_submission
from .results import build_results, failed_results, final_grades, gradescope_results
from .verify import verify

ROOT = Path(__file__).resolve().parents[2]


class BatchError(Exception):
    """The batch itself cannot run (no submissions folder, no autograder zip...)."""


@dataclass
class Graded:
    """One submission's outcome: Otter's results, the Gradescope dict and the diagnosis."""

    file: str
    stem: str
    results: object  # otter.test_files.GradingResults
    gradescope: dict
    diagnosis: Diagnosis
    peak_rss_mb: Optional[float] = None  # of the child that ran it, when one did


def output_stems(paths):
    """``name -> stem`` for the per-submission files, unique even for ``a.ipynb`` and ``a.zip``."""
    stems = [path.stem for path in paths]
    return {path.name: path.stem if stems.count(path.stem) == 1 else path.name.replace(".", "_")
            for path in paths}


def grade_folder(submissions, out, *, autograder_zip, jobs=None, limits=Limits(), verifier=None,
                 log=sys.stderr):
    """Grade every submission in ``submissions`` into ``out``; the list of ``Graded``."""
    submissions, out = Path(submissions), Path(out)
    if not submissions.is_dir():
        raise BatchError(f"no such submissions folder: {submissions}")
    paths = find_submissions(submissions)
    if not paths:
        raise BatchError(f"no .ipynb or .zip files in {submissions}")
    _prepare_out(out)
    jobs = jobs or os.cpu_count() or 1
    started = time.monotonic()
    bundle, cleanup = open_bundle(autograder_zip)
    server = None
    try:
        if bundle.config.plugins and verifier is None:
            print(f"warning: the zip declares Otter plugins {bundle.config.plugins}; make grade "
                  "runs them only through a verifier", file=log)
        batch = _Batch(bundle, out, output_stems(paths), verifier, log)
        runnable = []
        for path in paths:  # step 1
            try:
                runnable.append((path.name, load_submission(path, bundle.assignment_name)))
            except Rejected as rejection:
                batch.conclude(path.name, failed_results(path.name, rejection.reason),
                               otter_error=rejection.otter_error)
        if runnable:  # step 2, in parallel; steps 3-5 as each submission finishes
            server = ForkServer(bundle, limits, jobs, grader_paths=(ROOT, os.getcwd()))
            submissions_by_name = dict(runnable)
            server.run(runnable, on_done=lambda name, execution: batch.executed(
                name, submissions_by_name[name], execution))
        outcomes = [batch.graded[path.name] for path in paths]
        flags = {o.file: o.diagnosis.flags for o in outcomes} if verifier is not None else None
        final_grades([o.results for o in outcomes], flags).to_csv(out / "final_grades.csv",
                                                                  index=False)
        _summary(outcomes, time.monotonic() - started, jobs)
        return outcomes
    finally:
        if server is not None:
            server.close()
        cleanup()


class _Batch:
    """Steps 3 to 5 for each submission, as its execution (or rejection) becomes known."""

    def __init__(self, bundle, out, stems, verifier, log):
        self.bundle, self.out, self.stems, self.verifier, self.log = (bundle, out, stems,
                                                                     verifier, log)
        self.graded = {}

    def executed(self, name, submission, execution):
        if execution.ran:
            results = build_results(self.bundle, name, execution)
        else:
            results = failed_results(name, execution.failure)
        self.conclude(name, results, submission, execution)

    def conclude(self, name, results, submission=None, execution=None, otter_error=None):
        flags = []
        if submission is not None:
            checked = verify(self.verifier, submission.notebook, results,
                             data=execution.data if execution is not None else None,
                             confined=execution is not None and execution.confined)
            results, flags = checked.results, checked.flags
        diagnosis = diagnose(name, results, bundle=self.bundle, execution=execution,
                             submission=submission, flags=flags)
        outcome = Graded(name, self.stems[name], results,
                         gradescope_results(results, self.bundle.config, otter_error), diagnosis,
                         execution.peak_rss_mb if execution is not None else None)
        _write_submission(self.out, outcome)
        self.graded[name] = outcome
        _progress(self.log, len(self.graded), len(self.stems), outcome)


def _prepare_out(out: Path):
    """A clean ``out``: results and feedback of an earlier batch would be mistaken for these."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        for sub in ("results", "feedback"):
            shutil.rmtree(out / sub, ignore_errors=True)
            (out / sub).mkdir()
        (out / "final_grades.csv").unlink(missing_ok=True)
    except OSError as exc:
        raise BatchError(f"cannot write to {out}: {exc}") from exc


def _write_submission(out: Path, outcome: Graded):
    (out / "results" / f"{outcome.stem}.json").write_text(
        json.dumps(outcome.gradescope, indent=4, ensure_ascii=False), encoding="utf-8")
    (out / "feedback" / f"{outcome.stem}.md").write_text(feedback.render(outcome.diagnosis),
                                                         encoding="utf-8")


def _points(diagnosis):
    return f"{feedback.number(diagnosis.score)}/{feedback.number(diagnosis.possible)}"


def _progress(log, done, total, outcome: Graded):
    d = outcome.diagnosis
    timing = f" in {d.seconds:.1f} s" if d.seconds is not None else ""
    state = _points(d) if d.graded else f"0 ({d.status})"
    print(f"[{done}/{total}] {outcome.file}: {state}{timing}", file=log, flush=True)


def _summary(outcomes, seconds, jobs, stream=None):
    stream = stream or sys.stdout
    width = max(len("file"), *(len(o.file) for o in outcomes))
    print(f"\n{'file':<{width}}  {'points':>9}  status", file=stream)
    for o in outcomes:
        status = o.diagnosis.status if len(o.diagnosis.status) <= 90 else \
            o.diagnosis.status[:89] + "…"
        print(f"{o.file:<{width}}  {_points(o.diagnosis):>9}  {status}", file=stream)
    completed = sum(o.diagnosis.graded for o in outcomes)
    print(f"\n{len(outcomes)} submissions in {seconds:.1f} s with {jobs} jobs: {completed} graded, "
          f"{len(outcomes) - completed} could not be graded", file=stream)
    children = [o.peak_rss_mb for o in outcomes if o.peak_rss_mb is not None]
    grader = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory: grader {grader:.0f} MiB, largest submission "
          f"{max(children, default=0):.0f} MiB", file=stream)

