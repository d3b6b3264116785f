"""``make export``: a graded folder's grades and feedback, in the files its LMS imports.

    python -m kit_autograder.lms.export --autograder ZIP --lms moodle|canvas \\
        --worksheet <the LMS's own file> --out OUT [--column "<Canvas column>"]

First ``final_grades.csv`` and the feedback are rebuilt from the records and the written scores
(as ``make report`` does), so the export is never older than the last score typed. Then, into
``OUT/export/`` and never over the input:

* Moodle: the grading worksheet with «Calificación» and «Comentarios de retroalimentación»
  filled, and ``moodle_feedback.zip``, one folder per participant holding the feedback as HTML;
* Canvas: the gradebook with the assignment's column filled.

The grade is the total (automatic plus written points), rescaled to the LMS's maximum for the
assignment. A student whose written answers are not all graded gets no grade, and is listed.
``export_report.txt`` lists, as the terminal does, every student of the worksheet without a
submission and every submission without a row in the worksheet.
"""

import argparse
import csv
import html
import sys
from pathlib import Path

from ..report import markdown_html
from ..spanish_numbers import number
from . import canvas, moodle
from ..csv_cells import original
from .entries import read_manifest
from .roster import download_name, same_canvas_name
from .worksheet import Worksheet, WorksheetError

EXPORT = "export"
REPORT = "export_report.txt"
MOODLE_ZIP = "moodle_feedback.zip"


class ExportError(Exception):
    """Nothing can be exported (no graded folder, no manifest, the input would be overwritten)."""


def read_grades(out: Path):
    """``({file: row}, points possible)`` from final_grades.csv: the total column is
    ``final_points`` once written scores exist, else ``total_points_earned``."""
    path = out / "final_grades.csv"
    if not path.is_file():
        raise ExportError(f"no {path}: grade the submissions first (make grade OUT={out})")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    total = "final_points" if rows and "final_points" in rows[0] else "total_points_earned"
    points_row = next((row for row in rows if row["file"] == "points-per-question"), None)
    possible = float(points_row[total]) if points_row else None
    return {original(row["file"]): row for row in rows
            if row["file"] != "points-per-question"}, total, possible


def comment_text(row, total, possible):
    """The worksheet's comment: the grade in words (Moodle stores it as HTML)."""
    written = total == "final_points"
    automatic = float(row["total_points_earned"])
    text = f"Nota: {number(float(row[total]))} / {number(possible)}"
    if written:
        text += f" (parte automática: {number(automatic)}; respuestas escritas: " \
                f"{number(float(row[total]) - automatic)})"
    return html.escape(text + ". El informe completo está en el archivo de retroalimentación.")


def export(out, lms, worksheet_path, column=None, log=sys.stdout):
    out, worksheet_path = Path(out), Path(worksheet_path)
    manifest = read_manifest(out)
    if manifest is None:
        raise ExportError(f"no {out / 'submissions.json'}: grade the submissions again with "
                          "this kit (make grade)")
    target_folder = out / EXPORT
    target = target_folder / worksheet_path.name
    if target.resolve() == worksheet_path.resolve():
        raise ExportError(f"the worksheet is already in {target_folder}: copy the LMS's file "
                          "elsewhere, the export never writes over its input")
    rows, total, possible = read_grades(out)
    sheet = Worksheet(worksheet_path)
    lines, grades, comments, pages, pending = [], {}, {}, {}, []
    by_id, folders = {}, {}
    for entry in manifest["entries"]:
        row = rows.get(entry["file"])
        if row is None:
            continue
        # A team's row goes to every member the roster named; a student's to the student.
        owners = ([(entry.get("student_name"), entry["student_id"])] if entry.get("student_id")
                  else [(name, number) for name, number in entry.get("members") or [] if number])
        for name, number_id in owners:
            by_id[number_id] = dict(entry, student_name=name, student_id=number_id)
            folders[number_id] = (entry.get("origin") if entry.get("student_id") else None, name)
            value = row.get(total, "")
            if value in ("", None) or possible is None:
                pending.append(by_id[number_id])
                grades[number_id] = None
                continue
            grades[number_id] = (float(value), possible)
            comments[number_id] = comment_text(row, total, possible)
            feedback = out / "feedback" / f"{entry['stem']}.md"
            if feedback.is_file():
                pages[number_id] = markdown_html.page(feedback.read_text("utf-8"),
                                                      "Informe de evaluación")
    if lms == "moodle":
        identifier = moodle.worksheet_columns(sheet)[0]
        name = sheet.column(moodle.FULL_NAME)
        names = _worksheet_names(sheet, identifier, identifier + 1 if name is None else name,
                                 moodle.participant_number)
        same = lambda listed, written: download_name(listed) == download_name(written)
    else:
        names = _worksheet_names(sheet, sheet.column(("ID",), required=True),
                                 sheet.column(("Student", "LastName")), str.strip)
        same = same_canvas_name
    # The download's name against the worksheet's, for the same number: where they differ the
    # number is not this student's (a group id read as a participant's, an edited name), and
    # the grade is withheld rather than given to whoever the number belongs to.
    mismatched = [i for i, e in by_id.items() if i in names and names[i] and e.get("student_name")
                  and not same(names[i], e["student_name"])]
    for number_id in mismatched:
        grades.pop(number_id, None)
    target_folder.mkdir(parents=True, exist_ok=True)
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
    absent = {a.get("student_id"): a for a in manifest.get("absent", []) if a.get("student_id")}
    lines.append(f"filled {len(filled)} of the worksheet's {len(listed)} students")
    if mismatched:
        lines.append(f"not exported, the download's name is not the worksheet's for that "
                     f"number ({len(mismatched)}):")
        lines += [f"  {label}{i}: worksheet «{names[i]}», download «{by_id[i]['student_name']}» "
                  f"({by_id[i]['file']})" for i in mismatched]
    teams = [e for e in manifest["entries"] if e.get("group") and not e.get("student_id")
             and not e.get("members")]
    if teams:
        lines.append(f"team submissions with no member known ({len(teams)}): grade again with "
                     "ROSTER=<the grading worksheet, with its group column>:")
        lines += [f"  {e['group']} ({e['file']})" for e in teams]
    missing = [i for i in without if i not in by_id]
    lines.append(f"students of the worksheet without a submission ({len(missing)}):")
    lines += [f"  {label}{i} {names.get(i, '')}".rstrip()
              + (f": {absent[i]['reason']}" if i in absent else "") for i in missing]
    unlisted = [e for e in manifest["entries"] if e.get("student_id") not in listed
                and not (e.get("members") and any(m[1] in listed for m in e["members"]))]
    lines.append(f"submissions without a row in the worksheet ({len(unlisted)}):")
    lines += [f"  {e['file']}" + (f" ({e['student_name']})" if e.get("student_name") else "")
              for e in unlisted]
    waiting = [e for e in pending if e["student_id"] in listed]
    lines.append(f"not exported, written answers not all graded ({len(waiting)}):")
    lines += [f"  {label}{e['student_id']} {e.get('student_name') or ''}".rstrip()
              for e in waiting]
    late = [e for e in manifest["entries"] if e.get("late")]
    if late:
        lines.append(f"handed in late, as the LMS marked them ({len(late)}):")
        lines += [f"  {e['file']}" for e in late]
    lines += [f"note: {note}" for note in notes]
    lines += [f"wrote {path}" for path in written]
    if lms == "moodle":
        lines.append("uploading grades a second time: tick «Permitir actualizar registros "
                     "modificados más recientemente en Moodle que en la hoja de cálculo», or "
                     "Moodle skips every row already graded (it cannot read the Spanish date of "
                     "«Última modificación (calificación)» and counts the row as stale)")
    report = "\n".join(lines) + "\n"
    (target_folder / REPORT).write_text(report, "utf-8")
    print(report, end="", file=log)
    return report


def _worksheet_names(sheet, identifier, name, to_id):
    """``{student id: name}`` of every student row of the worksheet (columns by index)."""
    found = {}
    for row in sheet.rows:
        student = to_id(sheet.cell(row, identifier))
        if student and student.isdigit():
            found[student] = sheet.cell(row, name).strip() if name is not None else ""
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write a graded folder's grades and feedback "
                                                 "in the files Moodle or Canvas import.")
    parser.add_argument("--autograder", type=Path, required=True, help="the autograder zip")
    parser.add_argument("--lms", choices=("moodle", "canvas"), required=True)
    parser.add_argument("--worksheet", type=Path, required=True,
                        help="Moodle's grading worksheet, or Canvas's exported gradebook")
    parser.add_argument("--out", type=Path, required=True, help="a folder `make grade` wrote")
    parser.add_argument("--column", help="Canvas: the assignment's column (title or id)")
    args = parser.parse_args(argv)
    from ..bundle import BundleError, OpenedZip
    from ..report.outputs import rebuild
    from ..written.scores import ScoresError

    try:
        with OpenedZip(args.autograder) as bundle:
            rebuild(args.out, bundle)
        export(args.out, args.lms, args.worksheet, args.column)
    except (BundleError, ExportError, ScoresError, WorksheetError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
