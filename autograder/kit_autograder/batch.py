"""`make grade`: a folder of submissions -> one sandbox -> verdicts -> CSV, feedback, report.

    python -m kit_autograder.batch --submissions DIR_OR_ZIP --out DIR [--jobs N] [--timeout S] ...

The submissions are a folder of notebooks and export zips, or what an LMS gives (Moodle,
Canvas, Gradescope; a folder or its download zip): lms/ turns either into the files to grade
and whose they are (``OUT/submissions.json``).

Outputs, in ``OUT``:

* ``final_grades.csv``: ``otter grade``'s format (Otter's ``merge_scores_to_df``), one row
  per file after a first ``points-per-question`` row, plus a ``flags`` column;
* ``results/<stem>.json``: the Gradescope results; ``feedback/<stem>.md``: the student's
  Spanish report; ``records/<stem>.json``: the verdicts all of them come from;
* ``report.html``: the class report (report/class_report.py);
* ``written/<stem>.json``: the written answers, read from the notebook, for the review page
  (written/); once ``written_scores.csv`` exists, its points join the CSV and the feedback.

One zygote serves the batch; ``jobs`` submissions are graded at once, each in a thread that
drives its job, so that judging one submission overlaps running the next. Submissions are
read one at a time, never all up front, so the grader's memory does not grow with their
number. No submission can stop the batch: a file that cannot be graded gets its row, with 0
points and the reason in ``grading_status``; a bug of the grader's on one file is that
file's row, with a flag for a person.
"""

import argparse
import hashlib
import collections
import concurrent.futures
import os
import resource
import shutil
import sys
import threading
import time
import traceback
from pathlib import Path, PurePath

from . import error_lines, lms
from .bundle import BundleError, OpenedZip
from .grading import Grader
from .report import class_report
from .report.outputs import Outputs
from .similarity import flags as similarity_flags
from .similarity import parts as similarity_parts
from .sandbox.client import Limits, Sandbox, SandboxError
from .submission import shown_name
from .verdicts.record import Flag, Record
from .written import answers as written_answers, merge as written_merge

INTERNAL = "error interno del corrector al evaluar esta entrega (no es culpa tuya)"
INTERNAL_LOG = "internal-errors.log"
# A file our grader failed on is tried once more in a fresh job: a failure of ours that does
# not repeat (a job lost under load) must not cost a student the grade.
ATTEMPTS = 2


class BatchError(Exception):
    """The batch itself cannot run (no submissions folder, no usable zip, no sandbox)."""


# A stem's budget in UTF-8 bytes: with "_written.json" and the like it stays far below the
# 255 bytes a file name may have, whatever the student or the LMS named the file.
MAX_STEM_BYTES = 100


def output_stems(paths):
    """``name -> stem`` of each submission's files in OUT. Two files never share one, or one
    student's results/feedback/records would overwrite another's: a stem shared by two files
    (``a.ipynb``, ``a.zip``) takes its suffix (``a_zip``), and one still taken (by a file that
    was called ``a_zip.ipynb``, or differs only in case or in undecodable bytes) a number. A
    long name is cut, with a hash of the whole, to MAX_STEM_BYTES."""
    stems = [_bounded(shown_name(path.stem)) for path in paths]
    shared = collections.Counter(stem.casefold() for stem in stems)
    taken, result = set(), {}
    for path, stem in zip(paths, stems):
        wanted = stem if shared[stem.casefold()] == 1 else _bounded(
            shown_name(path.name).replace(".", "_"))
        unique, number = wanted, 1
        while unique.casefold() in taken:
            number += 1
            unique = f"{wanted}_{number}"
        taken.add(unique.casefold())
        result[path.name] = unique
    return result


def _bounded(stem):
    raw = stem.encode("utf-8", "replace")
    if len(raw) <= MAX_STEM_BYTES:
        return stem
    digest = hashlib.sha256(raw).hexdigest()[:10]
    cut = raw[:MAX_STEM_BYTES - 11].decode("utf-8", "ignore")
    return f"{cut}_{digest}"


UNCONFINED = (
    "this host lets the sandbox neither make namespaces, nor change user (not root), nor use "
    "Landlock: a submission could write any file of yours, the outputs included. Grade as "
    "root, install bubblewrap, or pass --unconfined-ok if you accept that (see the README's "
    "'Seguridad y limitaciones').")


def unconfined(description):
    """True when a job would run as the grader's own user with nothing to keep it out of the
    grader's files: no namespaces, no user of its own, no Landlock."""
    return (description.get("mode") == "none" and not description.get("namespaces")
            and not description.get("landlock_abi"))


def grade_folder(submissions, out, *, autograder_zip, jobs=None, limits=Limits(), log=sys.stderr,
                 allow_bwrap=True, unconfined_ok=False, roster=None, picks=(),
                 similarity_cutoff=None):
    """Grade every submission in ``submissions`` (a folder, or an LMS's download zip) into
    ``out``; returns a summary. ``roster``: the LMS's class list (ROSTER=), to check who is
    who; ``picks``: files of the download the instructor chose to grade (PICK=);
    ``similarity_cutoff``: the report's SIMILARITY_CUTOFF= (None: its default)."""
    submissions, out = Path(submissions), Path(out)
    try:
        listed = lms.read_roster(roster) if roster else None
        if listed is not None:
            print(lms.roster_summary(listed), file=log)
        ingested = lms.ingest(submissions, roster=listed, picks=picks)
    except lms.RosterError as exc:
        raise BatchError(f"ROSTER={roster}: {exc}; give ROSTER= the class list your LMS "
                         "exports (docs/lms.md)") from exc
    except lms.IngestError as exc:
        raise BatchError(str(exc)) from exc
    with ingested:  # the files extracted from a download zip are removed after grading
        return _grade(ingested, out, autograder_zip, jobs, limits, log, allow_bwrap,
                      unconfined_ok, similarity_cutoff)


def _grade(ingested, out, autograder_zip, jobs, limits, log, allow_bwrap, unconfined_ok,
           similarity_cutoff):
    entries = ingested.entries
    if not entries:
        raise BatchError(f"{ingested.source}: no .ipynb or .zip file to grade; put the "
                         "students' notebooks or export zips there, or give SUBMISSIONS= the "
                         "folder that has them")
    for note in ingested.notes:
        print(note, file=log)
    notices = _notices(ingested)
    for line in notices:
        print(line, file=log)
    jobs = max(1, int(jobs or os.cpu_count() or 1))
    started = time.monotonic()
    stems = output_stems([PurePath(entry.name_hint) for entry in entries])
    try:
        with OpenedZip(autograder_zip) as bundle:
            # OUT is cleared once the zip has opened: a file that is not one leaves the last
            # batch's grades as they were.
            _prepare(out)
            ingested.write_manifest(out, stems)
            grader = Grader(bundle)
            outputs = Outputs(out, grader, written_merge.identities(
                ingested.manifest(stems)))
            with Sandbox(limits, jobs=jobs, allow_bwrap=allow_bwrap) as sandbox:
                if not unconfined_ok and unconfined(sandbox.description):
                    raise BatchError(UNCONFINED)
                _run(grader, sandbox, outputs, entries, stems, jobs, log)
                description = dict(sandbox.description)
            description["cpu"] = dict(sandbox.cpu)
            outputs.write_csv([stems[entry.name_hint] for entry in entries])
            written_merge.after_grading(out, grader.lesson.NAME)
            class_report.write(out, lesson=grader.lesson, title=bundle.assignment_name,
                               similarity_cutoff=similarity_cutoff)
    except (BundleError, SandboxError) as exc:
        raise BatchError(str(exc)) from exc
    seconds = time.monotonic() - started
    summary = _summary(out, entries, stems, seconds, jobs, description)
    if (out / INTERNAL_LOG).exists():
        summary += (f"\n\nthe grader itself met a bug of the kit's (not the students') on some "
                    f"files: a file that failed was tried {ATTEMPTS} times and, still failing, has "
                    f"0 points and says so in its row; a bug met on one case leaves that case "
                    f"unverified. The tracebacks are in {out / INTERNAL_LOG}; please report them")
    if notices:
        summary += ("\n\nthe download, file by file, is in ingest.csv; look at these before "
                    "publishing grades:\n" + "\n".join(notices))
    print(summary, file=sys.stdout)
    return summary


def _run(grader, sandbox, outputs, entries, stems, jobs, log):
    done = [0]
    lock = threading.Lock()
    lesson, questions = grader.lesson.NAME, outputs.written.questions
    shared = similarity_parts.Shared(grader.bundle.settings)

    def graded(entry, stem):
        if entry.refusal:
            record = grader.rejected(entry.file, stem, entry.refusal)
        else:
            caught = []
            record = grader.grade_file(sandbox, entry.path, stem, caught)
            if caught:
                _keep_caught(outputs.out, entry.file, caught, lock)
        record.file = entry.file  # its path in the LMS's download, unique in the class
        record.notes += entry.notes
        outputs.write(record)
        return record

    def one(entry):
        stem = stems[entry.name_hint]
        record = None
        for attempt in range(1, ATTEMPTS + 1):
            try:
                record = graded(entry, stem)
                break
            except Exception:  # a bug of ours: kept for a person, and the file tried again
                _keep_traceback(outputs.out, entry.file, attempt, lock, log)
        if record is None:  # the row says so, and the batch goes on
            record = grader.rejected(entry.file, stem, INTERNAL)
            record.flags.append(Flag("ejecución", INTERNAL))
            outputs.write(record)
        if questions:
            written_answers.save(outputs.out, stem, entry.file, entry.path, lesson, questions,
                                 entry.refusal, record.texts)
        similarity_parts.keep(outputs.out, stem, entry.file, None if entry.refusal else entry.path,
                              grader.lesson.FUNCTIONS, shared, record.texts)
        with lock:
            done[0] += 1
            state = (f"{_points(record.earned)}/{_points(record.possible)}" if record.graded
                     else f"0 ({record.reason})")
            print(f"[{done[0]}/{len(entries)}] {record.file}: {state}", file=log, flush=True)

    # A bounded window of submissions in flight: the rest are not even read yet.
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        pending = set()
        for entry in entries:
            if len(pending) >= 2 * jobs:
                finished, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in finished:
                    future.result()
            pending.add(pool.submit(one, entry))
        for future in concurrent.futures.as_completed(pending):
            future.result()


def _notices(ingested):
    """What the instructor must see: every file without a row, every choice and doubt."""
    lines = [f"! {notice.kind}: {notice.en}" for notice in ingested.notices]
    for absent in ingested.absent:
        who = " ".join(part for part in (absent.student_name, absent.student_id) if part)
        lines.append(f"! not graded: {who or absent.origin}: {absent.reason}")
    return lines


def _keep_caught(out, file, tracebacks, lock):
    """Bugs of ours that a file met and the grade survived (those cases count as unverified,
    and the row says so): their tracebacks, for a person to report, in the log only."""
    with lock:
        _append_internal(out, "".join(f"--- {file}: contained, the grade went on\n{text}"
                                      for text in tracebacks))


def _keep_traceback(out, file, attempt, lock, log):
    """A grader bug's traceback, in ``OUT/internal-errors.log``: the row alone says only that
    something of ours failed, and an instructor reporting it needs what and where."""
    text = (f"--- {file}: attempt {attempt} of {ATTEMPTS} raised\n"
            f"{traceback.format_exc()}")
    with lock:
        print(text, file=log, end="")
        _append_internal(out, text)


def _append_internal(out, text):
    """``text`` at the end of ``OUT/internal-errors.log``; the caller holds the lock."""
    try:
        with open(out / INTERNAL_LOG, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError:
        pass


def _prepare(out: Path):
    """A clean ``out``: files of an earlier batch would be mistaken for these."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        # written_scores.csv stays: a person's grading survives a regrade.
        for folder in ("results", "feedback", "records", written_answers.FOLDER,
                       similarity_parts.FOLDER):
            shutil.rmtree(out / folder, ignore_errors=True)
        for name in ("final_grades.csv", "report.html", lms.entries.MANIFEST,
                     lms.entries.INGEST_CSV, INTERNAL_LOG):
            (out / name).unlink(missing_ok=True)
    except OSError as exc:
        raise BatchError(f"cannot write to {out}: {exc}") from exc


def _own_peak_mib():
    """This process's peak memory since it started. Not ru_maxrss: Linux carries the parent's
    high-water mark across a vfork and exec, so a grader started by a large process (a test
    suite, a notebook) would report its parent's peak. VmHWM is this program's own."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _summary(out, entries, stems, seconds, jobs, description):
    # One record at a time, as everywhere else: the grader's memory must not grow with N.
    width = max(len("file"), *(len(entry.file) for entry in entries))
    lines = [f"\n{'file':<{width}}  {'points':>9}  status"]
    graded = peak = 0
    for stem in (stems[entry.name_hint] for entry in entries):
        r = Record.from_json((out / "records" / f"{stem}.json").read_text("utf-8"))
        status = "Completed" if r.graded else _cut(r.reason, 90)
        lines.append(f"{r.file:<{width}}  {_points(r.earned):>5}/{_points(r.possible):<4}  "
                     f"{status}")
        graded += r.graded
        peak = max(peak, r.sandbox.get("peak_mb") or 0)
    grader_mb = _own_peak_mib()
    lines.append(f"\n{len(entries)} submissions in {seconds:.1f} s with {jobs} jobs: {graded} "
                 f"graded, {len(entries) - graded} could not be graded")
    lines += sandbox_lines(description)
    lines.append(f"peak memory: grader {grader_mb:.0f} MiB, largest submission {peak:.0f} MiB")
    own = resource.getrusage(resource.RUSAGE_SELF)
    cpu = description.get("cpu", {})
    lines.append(f"cpu seconds: grader {own.ru_utime + own.ru_stime:.2f}, zygote "
                 f"{cpu.get('cpu_self', 0):.2f}, jobs {cpu.get('cpu_jobs', 0):.2f}")
    return "\n".join(lines)


BWRAP_HINT = ("hint: install bubblewrap (sudo apt install bubblewrap), the sandbox make grade "
              "prefers: with it every submission runs in namespaces of its own, as root or "
              "not (docs/security.md)")
BWRAP_UNUSABLE = ("hint: bubblewrap is installed but cannot make its namespaces here (a "
                  "container's seccomp profile, or user namespaces turned off): see "
                  "docs/security.md")


def sandbox_lines(description):
    """The sandbox the batch ran in, and what to do where it is not bubblewrap."""
    lines = [f"sandbox: {description.get('mode')}, namespaces "
             f"{description.get('namespaces') or 'none'}, Landlock ABI "
             f"{description.get('landlock_abi') or 0}"]
    if description.get("mode") != "bubblewrap":
        lines.append(BWRAP_HINT if not shutil.which("bwrap") else BWRAP_UNUSABLE)
    return lines


def _points(value):
    """Points as the CSV rounds them: 15.83, not 15.8333."""
    return f"{round(float(value), 2):g}"


def _cut(text, limit):
    """``text`` in at most ``limit`` characters, cut between words, with «…» when cut."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    return text[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _optional(kind):
    """Make's ``JOBS=`` passes an empty string, which means "the default"."""
    def parse(text):
        return kind(str(text).replace(",", ".")) if str(text).strip() else None
    return parse


def main(argv=None):
    parser = argparse.ArgumentParser(description="Grade a folder of submissions with the "
                                                 "autograder zip, in the kit's sandbox.")
    parser.add_argument("--submissions", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--autograder", type=Path, required=True, help="the autograder zip")
    parser.add_argument("--jobs", type=_optional(int), default=None)
    parser.add_argument("--timeout", type=_optional(float), default=None,
                        help=f"seconds for a notebook's cells (default {Limits.notebook_seconds:g})")
    parser.add_argument("--call-timeout", type=_optional(float), default=None,
                        help="seconds for each call of a student's function on a hidden input "
                             f"(default {Limits.call_seconds:g})")
    parser.add_argument("--memory-mb", type=_optional(int), default=None,
                        help=f"memory per submission (default {Limits.memory_mb})")
    parser.add_argument("--roster", type=lambda text: Path(text) if text.strip() else None,
                        default=None,
                        help="the LMS's class list: Moodle's grading worksheet, Canvas's "
                             "gradebook or groups CSV, to check identities and teams")
    parser.add_argument("--pick", action="append", default=[],
                        help="a file of the download to grade for its student, where they "
                             "handed in several (as ingest.csv names it); repeatable")
    parser.add_argument("--unconfined-ok", action="store_true",
                        help="grade even where a submission could write the grader's files")
    parser.add_argument("--similarity-cutoff", default="",
                        help="the strength from which the report lists similar submissions "
                             "(SIMILARITY_CUTOFF=; docs/instructors.md)")
    args = parser.parse_args(argv)
    try:
        similarity_cutoff = similarity_flags.cutoff_setting(args.similarity_cutoff)
    except ValueError as exc:
        return error_lines.report(None, [str(exc)])
    try:
        readable = args.autograder.is_file() and os.access(args.autograder, os.R_OK)
    except OSError:
        readable = False
    if not readable:
        return error_lines.report(None, [
            f"{args.autograder}: no readable autograder zip; build it with `make assign` "
            "(LESSON= the lesson you grade)"])
    limits = Limits(notebook_seconds=args.timeout or Limits.notebook_seconds,
                    call_seconds=args.call_timeout or Limits.call_seconds,
                    memory_mb=args.memory_mb or Limits.memory_mb)
    try:
        grade_folder(args.submissions, args.out, autograder_zip=args.autograder,
                     jobs=args.jobs, limits=limits, unconfined_ok=args.unconfined_ok,
                     roster=args.roster, similarity_cutoff=similarity_cutoff,
                     picks=[p for value in args.pick for p in value.split("|") if p])
    except BatchError as exc:
        return error_lines.report(exc)
    print(f"\nwrote {args.out / 'final_grades.csv'}, results/, feedback/, records/, written/, "
          "report.html and ingest.csv", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
