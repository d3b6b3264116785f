"""``make export``: a graded folder's grades and feedback, in the files its LMS imports.

    python -m kit_autograder.lms.export --autograder ZIP --lms moodle|canvas \\
        --worksheet <the LMS's own file> --out OUT [--column "<Canvas column>"]
        [--roster <the LMS's groups>] [--automatic-only]

Every argument is checked first, and the worksheet read, before anything is written. Then
``final_grades.csv`` and the feedback are rebuilt from the records and the written scores (as
``make report`` does), so the export is never older than the last score typed. Then, into
``OUT/export/`` and never over the input:

* Moodle: the grading worksheet with «Calificación» and «Comentarios de retroalimentación»
  filled, and ``moodle_feedback.zip``, one folder per participant holding the feedback as HTML;
* Canvas: the gradebook with the assignment's column filled.

One rule decides what leaves the kit: a grade goes to the LMS's file only when every part of
it is graded. The grade is the total (automatic plus written points), rescaled to the LMS's
maximum; a student whose written answers are not all graded (no ``written_scores.csv``: none
is) gets no grade and is listed. ``--automatic-only`` (``AUTOMATIC_ONLY=1``) exports the
automatic part alone, out of its own points, and the comment the student reads says so. A
team's grade goes to every member the LMS's membership names (owners.py); a student that two
rows claim gets neither. ``export_report.txt`` lists, as the terminal does, everything that
did not become a grade, and ends, last, with how many students got one, how many were
withheld and why.
"""

import argparse
import csv
import html
import sys
from pathlib import Path

from ..csv_cells import original
from ..report import markdown_html
from ..spanish_numbers import number
from . import canvas, moodle, owners as owners_module
from .entries import read_manifest
from .roster import KINDS, RosterError, kind_of, of_sheet, read as read_roster
from .worksheet import Worksheet, WorksheetError

EXPORT = "export"
REPORT = "export_report.txt"
MOODLE_ZIP = "moodle_feedback.zip"
FINAL_POINTS = "final_points"  # written/merge.py's column: automatic plus written points

# Why a student of the worksheet gets no grade, as the report counts them.
PENDING = "with written answers not all graded"
NAME = "whose name in the download is not the worksheet's for that number"
TWICE = "claimed by two submissions"


class ExportError(Exception):
    """Nothing can be exported (a missing argument, no graded folder, the wrong LMS's file, the
    input would be overwritten); the message says what to give instead."""


USAGE = ("make export LMS=moodle WORKSHEET=<Moodle's grading worksheet> OUT=<the graded "
         "folder>, or LMS=canvas WORKSHEET=<Canvas's gradebook export>")


def checked(out, lms, worksheet_path, column=None, roster=None) -> Worksheet:
    """The worksheet, read, once every argument is one the export can use: the graded folder,
    the LMS, the LMS's own file for it, Canvas's column. Nothing is written before this."""
    if not lms:
        raise ExportError(f"LMS= is missing: {USAGE}")
    if lms not in ("moodle", "canvas"):
        raise ExportError(f"LMS={lms}: the kit exports to moodle or canvas: {USAGE}")
    if not str(worksheet_path or "").strip():
        raise ExportError(f"WORKSHEET= is missing: {USAGE}")
    out, worksheet_path = Path(out), Path(worksheet_path)
    if not worksheet_path.is_file():
        raise ExportError(f"WORKSHEET={worksheet_path}: no such file; give the file "
                          f"{'Moodle' if lms == 'moodle' else 'Canvas'} exports ({USAGE})")
    if not (out / "final_grades.csv").is_file():
        raise ExportError(f"OUT={out}: no final_grades.csv; grade the submissions first "
                          f"(make grade OUT={out})")
    if read_manifest(out) is None:
        raise ExportError(f"OUT={out}: no submissions.json; grade the submissions again with "
                          "this kit (make grade)")
    target = out / EXPORT / worksheet_path.name
    if target.resolve() == worksheet_path.resolve():
        raise ExportError(f"WORKSHEET={worksheet_path} is in {out / EXPORT}: copy the LMS's "
                          "file elsewhere, the export never writes over its input")
    sheet = Worksheet(worksheet_path)
    kind, _ = kind_of(sheet)
    wanted = "moodle" if lms == "moodle" else "canvas"
    if kind != wanted:
        shown = ", ".join(f"«{title}»" for title in sheet.header[:12])
        if kind in ("moodle", "canvas"):
            raise ExportError(f"{worksheet_path.name} is {KINDS[kind]}, not {KINDS[wanted]}: "
                              f"make export LMS={kind} WORKSHEET={worksheet_path} OUT={out}")
        raise ExportError(f"{worksheet_path.name} is neither Moodle's grading worksheet nor "
                          f"Canvas's gradebook; its columns are: {shown}; give WORKSHEET= the "
                          "file the LMS exports")
    if lms == "moodle":
        moodle.worksheet_columns(sheet)
    else:
        canvas.assignment_column(sheet, column)
    if roster:
        _groups(roster)
    return sheet


def _groups(path):
    try:
        return read_roster(path)
    except RosterError as exc:
        raise ExportError(f"ROSTER={path}: {exc}; give ROSTER= the LMS's groups (Moodle's "
                          "grading worksheet with «Grupo», Canvas's group set CSV)") from None


def read_grades(out: Path):
    """``({file: row}, the points-per-question row)`` of final_grades.csv."""
    with open(out / "final_grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    points = next((row for row in rows if row["file"] == "points-per-question"), None)
    return {original(row["file"]): row for row in rows
            if row["file"] != "points-per-question"}, points


def comment_text(row, points, automatic_only, written_points=0):
    """The worksheet's comment, the grade in words (Moodle stores it as HTML). It says which
    part the grade is, so that a student never reads an automatic score as the whole."""
    automatic = float(row["total_points_earned"])
    if automatic_only:
        text = f"Nota de la parte automática: {number(automatic)} / " \
               f"{number(float(points['total_points_earned']))}"
        if written_points:
            text += f". No incluye tus respuestas escritas ({number(written_points)} puntos)"
    elif FINAL_POINTS in row:
        total = float(row[FINAL_POINTS])
        text = (f"Nota: {number(total)} / {number(float(points[FINAL_POINTS]))} (parte "
                f"automática: {number(automatic)}; respuestas escritas: "
                f"{number(total - automatic)})")
    else:
        text = f"Nota: {number(automatic)} / {number(float(points['total_points_earned']))}"
    return html.escape(text + ". El informe completo está en el archivo de retroalimentación.")


def export(out, lms, worksheet_path, *, lesson, column=None, roster=None, automatic_only=False,
           log=sys.stdout):
    from ..written.merge import graded_counts
    from ..written.questions import lesson_questions

    out, worksheet_path = Path(out), Path(worksheet_path)
    sheet = checked(out, lms, worksheet_path, column, roster)
    manifest = read_manifest(out)
    rows, points = read_grades(out)
    counts = None if automatic_only else graded_counts(out, lesson)
    written_points = sum(q.points for q in lesson_questions(lesson))
    total = "total_points_earned" if automatic_only or counts is None else FINAL_POINTS
    possible = float(points[total]) if points and points.get(total) not in (None, "") else None
    if lms == "moodle":
        identifier = moodle.worksheet_columns(sheet)[0]
        name = sheet.column(moodle.FULL_NAME)
        names = _worksheet_names(sheet, identifier, identifier + 1 if name is None else name,
                                 moodle.participant_number)
    else:
        names = _worksheet_names(sheet, sheet.column(("ID",)), sheet.column(("Student",)),
                                 str.strip)
    membership = _groups(roster) if roster else of_sheet(sheet)
    membership = membership if membership is not None and membership.has_groups else None
    graded = [e for e in manifest["entries"] if e["file"] in rows]
    decided = owners_module.decide(lms, graded, names, membership)

    claims = {}
    for owner in decided.owners:
        claims.setdefault(owner.student_id, []).append(owner)
    withheld = {}  # student id -> (reason, detail)
    grades, comments, pages, folders = {}, {}, {}, {}
    for student_id, claimed in claims.items():
        owner = claimed[0]
        entry, row = owner.entry, rows[owner.entry["file"]]
        if len({id(o.entry) for o in claimed}) > 1:
            withheld[student_id] = (TWICE, ", ".join(o.entry["file"] for o in claimed))
            continue
        done, questions = counts.get(entry["file"], (0, 1)) if counts is not None else (1, 1)
        value = row.get(total, "")
        if done < questions or value in ("", None) or possible is None:
            withheld[student_id] = (PENDING, f"{done} of {questions} graded" if done else
                                    f"none of {questions} graded yet")
            continue
        grades[student_id] = (float(value), possible)
        comments[student_id] = comment_text(row, points, automatic_only, written_points)
        feedback = out / "feedback" / f"{entry['stem']}.md"
        if feedback.is_file():
            pages[student_id] = markdown_html.page(feedback.read_text("utf-8"),
                                                   "Informe de evaluación")
        own = entry.get("student_id") == student_id and not owner.group
        folders[student_id] = (entry.get("origin") if own else None, owner.name)
    for entry, student_id, _ in decided.mismatched:
        withheld.setdefault(student_id, (NAME, entry["file"]))

    target_folder = out / EXPORT
    target_folder.mkdir(parents=True, exist_ok=True)
    target = target_folder / worksheet_path.name
    lines = []
    if lms == "moodle":
        filled, without, notes = moodle.fill_worksheet(sheet, grades, comments)
        zip_pages = {moodle.feedback_folder(*folders[i], i): pages[i]
                     for i in filled if i in pages}
        moodle.write_feedback_zip(target_folder / MOODLE_ZIP, zip_pages)
        written = [target, target_folder / MOODLE_ZIP]
        label = "Participante "
    else:
        title, filled, without, notes = canvas.fill_gradebook(sheet, grades, column)
        written = [target]
        label = "ID "
        lines.append(f"Canvas column: «{title}»")
    sheet.write(target)

    listed = set(names)
    who = lambda i: f"{label}{i} {names.get(i, '')}".rstrip()
    teams = [o for o in decided.owners if o.group and o.student_id in grades]
    if teams:
        lines.append(f"team grades, given to every member the LMS lists ({len(teams)}):")
        lines += [f"  {who(o.student_id)}: group «{o.group}» ({o.entry['file']})"
                  for o in teams]
    if decided.without_members:
        lines.append(f"team submissions with no member known ({len(decided.without_members)}): "
                     "give make export the grading worksheet with its «Grupo» column, or "
                     "ROSTER=<the LMS's groups>:")
        lines += [f"  {e['group']} ({e['file']})" for e in decided.without_members]
    if decided.clashes:
        lines.append(f"team submissions whose group the download cannot tell apart "
                     f"({len(decided.clashes)}): rename one of the groups in the LMS and "
                     "download again:")
        lines += [f"  {e['group']} ({e['file']}): " + ", ".join(f"«{g}»" for g in clash)
                  for e, clash in decided.clashes]
    absent = {a.get("student_id"): a for a in manifest.get("absent", []) if a.get("student_id")}
    missing = [i for i in without if i not in claims and i not in withheld]
    lines.append(f"students of the worksheet without a submission ({len(missing)}):")
    lines += [f"  {who(i)}" + (f": {absent[i]['reason']}" if i in absent else "")
              for i in missing]
    reported = {id(e) for e in decided.without_members} | {id(e) for e, _ in decided.clashes} \
        | {id(e) for e, _, _ in decided.mismatched}
    claimed_ids = {id(o.entry) for o in decided.owners if o.student_id in listed}
    unlisted = [e for e in manifest["entries"]
                if id(e) not in claimed_ids and id(e) not in reported]
    lines.append(f"submissions without a row in the worksheet ({len(unlisted)}):")
    lines += [f"  {e['file']}" + (f" ({e['student_name']})" if e.get("student_name") else "")
              for e in unlisted]
    late = [e for e in manifest["entries"] if e.get("late")]
    if late:
        lines.append(f"handed in late, as the LMS marked them ({len(late)}):")
        lines += [f"  {e['file']}" for e in late]
    lines += [f"note: {note}" for note in notes]
    if automatic_only:
        lines.append("note: AUTOMATIC_ONLY=1: each grade is the automatic part alone, out of "
                     "its own points" + (", and its comment says so" if lms == "moodle" else
                                         "; Canvas's gradebook carries no comment, so tell "
                                         "the students"))
    for reason in (PENDING, NAME, TWICE):
        which = [i for i in sorted(withheld) if i in listed and withheld[i][0] == reason]
        if not which:
            continue
        lines.append(f"withheld, {reason} ({len(which)}):")
        for i in which:
            detail = withheld[i][1]
            if reason == NAME:
                entry = next(e for e, s, _ in decided.mismatched if s == i)
                detail = (f"worksheet «{names[i]}», download «{entry.get('student_name')}» "
                          f"({entry['file']})")
            lines.append(f"  {who(i)}: {detail}")
    if any(withheld[i][0] == PENDING for i in withheld if i in listed):
        lines.append(f"  grade the written answers with make review OUT={out}, or export the "
                     "automatic part alone with AUTOMATIC_ONLY=1")
    if decided.group_hint and any(withheld[i][0] == NAME for i in withheld):
        lines.append("  in a group assignment Canvas names each group's file after the group, "
                     "with one member's ID: give make export ROSTER=<the group set's CSV> and "
                     "every member gets the group's grade")
    lines += [f"wrote {path}" for path in written]
    if lms == "moodle":
        lines.append("uploading grades a second time: tick «Permitir actualizar registros "
                     "modificados más recientemente en Moodle que en la hoja de cálculo», or "
                     "Moodle skips every row already graded (it cannot read the Spanish date of "
                     "«Última modificación (calificación)» and counts the row as stale)")
    lines.append(_result_line(len(listed), filled, withheld, listed, automatic_only))
    report = "\n".join(lines) + "\n"
    (target_folder / REPORT).write_text(report, "utf-8")
    print(report, end="", file=log)
    return report


def _result_line(students, filled, withheld, listed, automatic_only):
    """The export's last line: how many of the worksheet's students got a grade, how many
    were withheld and why, how many have nothing to grade."""
    reasons = {}
    for student_id, (reason, _) in withheld.items():
        if student_id in listed:
            reasons[reason] = reasons.get(reason, 0) + 1
    kept = sum(reasons.values())
    why = "; ".join(f"{count} {reason}" for reason, count in reasons.items())
    return (f"result: {len(filled)} of the worksheet's {students} students got a grade"
            + (" (the automatic part alone)" if automatic_only else "")
            + f", {kept} withheld" + (f" ({why})" if why else "")
            + f", {students - len(filled) - kept} without a submission")


def _worksheet_names(sheet, identifier, name, to_id):
    """``{student id: name}`` of every student row of the worksheet (columns by index)."""
    found = {}
    for row in sheet.rows:
        student = to_id(sheet.cell(row, identifier))
        if student and student.isdigit():
            found[student] = sheet.cell(row, name).strip() if name is not None else ""
    return found


class _Parser(argparse.ArgumentParser):
    """make always passes every argument; one that cannot be read is one error line."""

    def error(self, message):
        raise ExportError(f"make export: {message}")


def main(argv=None):
    from .. import error_lines

    parser = _Parser(description="Write a graded folder's grades and feedback in the files "
                                 "Moodle or Canvas import.")
    parser.add_argument("--autograder", type=Path, required=True, help="the autograder zip")
    parser.add_argument("--lms", default="", help="moodle or canvas")
    parser.add_argument("--worksheet", default="",
                        help="Moodle's grading worksheet, or Canvas's exported gradebook")
    parser.add_argument("--out", type=Path, required=True, help="a folder `make grade` wrote")
    parser.add_argument("--column", help="Canvas: the assignment's column (title or id)")
    parser.add_argument("--roster", default="",
                        help="the LMS's groups, when the worksheet has no group column")
    parser.add_argument("--automatic-only", action="store_true",
                        help="export the automatic part alone, labelled so, before the written "
                             "answers are graded")
    from ..bundle import BundleError, OpenedZip
    from ..report.outputs import rebuild
    from ..written.scores import ScoresError

    try:
        args = parser.parse_args(argv)
        lms = args.lms.strip().casefold()
        checked(args.out, lms, args.worksheet, args.column, args.roster.strip() or None)
        with OpenedZip(args.autograder) as bundle:
            rebuild(args.out, bundle)
            lesson = bundle.lesson.NAME
        export(args.out, lms, args.worksheet, lesson=lesson, column=args.column,
               roster=args.roster.strip() or None, automatic_only=args.automatic_only)
    except (BundleError, ExportError, ScoresError, WorksheetError) as exc:
        return error_lines.report(exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
