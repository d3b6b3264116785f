"""make export writes what the LMS imports: Moodle's worksheet and feedback zip, Canvas's
gradebook, each in the LMS's own dialect, changing only the cells it fills; and it says who
has no submission and which submission has no row."""

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest

import lms_fixtures as fx
from kit_autograder.lms import export as export_module
from kit_autograder.lms.entries import FORMAT, MANIFEST
from kit_autograder.lms.worksheet import Worksheet, WorksheetError
from kit_autograder.written import scores
from kit_autograder.written.questions import lesson_questions

QUESTIONS = lesson_questions("attention")
WRITTEN = sum(q.points for q in QUESTIONS)  # 23: nine questions and the challenge's five texts
GRADES_HEADER = ["file", "attention", "total_points_earned", "percent_correct",
                 "grading_status", "flags", "student_name", "student_id", "final_points"]


def marks_summing(total):
    """Each written question's points, highest first, adding up to ``total``."""
    marks = []
    for question in QUESTIONS:
        take = min(question.points, total)
        marks.append(take)
        total -= take
    assert total == 0
    return marks


def graded_out(tmp_path, people, absent=(), scores_file=True):
    """OUT as make grade and the written scores leave it, for ``people``:
    ``[(file, name, id, automatic, written, origin)]``; ``written`` is the written points when
    every answer is graded, ``("partial", n)`` when the first n are, ``""`` for none."""
    out = tmp_path / "notas"
    (out / "feedback").mkdir(parents=True)
    rows = [["points-per-question", 5, 20, 1, "--", "", "", "", 20 + WRITTEN]]
    entries = []
    sheet = scores.ScoreSheet.read(out / scores.SCORES, QUESTIONS)
    sheet.ensure([(person[0], person[1], person[2]) for person in people])
    for number, (file, name, student_id, automatic, written, origin) in enumerate(people):
        stem = f"s{number}"
        marks = ([None] * len(QUESTIONS) if written == "" else
                 [1] * written[1] + [None] * (len(QUESTIONS) - written[1])
                 if isinstance(written, tuple) else marks_summing(written))
        for question, points in zip(QUESTIONS, marks):
            sheet.set(file, question.name, points, "")
        final = automatic + written if isinstance(written, (int, float)) else ""
        rows.append([file, 5, automatic, automatic / 20, "Completed", "", name, student_id,
                     final if scores_file else ""])
        entries.append({"stem": stem, "file": file, "student_name": name,
                        "student_id": student_id, "late": False, "origin": origin,
                        "not_graded": [], "notes": []})
        (out / "feedback" / f"{stem}.md").write_text(
            f"# Informe de evaluación: `{file}`\n\nTu texto: <script>x</script>\n", "utf-8")
    if scores_file:
        sheet.write()
    header, rows = GRADES_HEADER, rows
    if not scores_file:  # make grade before make review: no written column, no final_points
        header, rows = header[:-1], [row[:-1] for row in rows]
    with open(out / "final_grades.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header] + rows)
    (out / MANIFEST).write_text(json.dumps({"format": FORMAT, "layout": "moodle", "source": "x",
                                            "entries": entries, "absent": list(absent)}),
                                "utf-8")
    return out


def export(out, lms, worksheet, **kwargs):
    return export_module.export(out, lms, worksheet, lesson="attention", log=io.StringIO(),
                                **kwargs)


MOODLE_PEOPLE = [
    ("María José García López_1234567_assignsubmission_file/notebook_student.ipynb",
     "María José García López", "1234567", 20.0, 16.0,
     "María José García López_1234567_assignsubmission_file"),
    ("José Pérez_2000001_assignsubmission_file/entrega/exportada.zip", "José Pérez", "2000001",
     8.0, 13.5, "José Pérez_2000001_assignsubmission_file"),
    ("Ana Martín_3000001_assignsubmission_file/notebook_student.ipynb", "Ana Martín", "3000001",
     8.0, ("partial", 3), "Ana Martín_3000001_assignsubmission_file"),
    ("Nadie Enlista_8000001_assignsubmission_file/notebook_student.ipynb", "Nadie Enlista",
     "8000001", 20.0, WRITTEN, "Nadie Enlista_8000001_assignsubmission_file"),
]
ABSENT = [{"student_name": "Lucía Fernández", "student_id": "4000001", "origin": "x",
           "reason": "solo entregó texto en línea o un enlace, que no se evalúan en esta tarea"}]


def rows_of(data: bytes, delimiter, encoding="utf-8"):
    return list(csv.reader(io.StringIO(data.decode(encoding), newline=""), delimiter=delimiter))


def test_moodle_spanish_worksheet_gets_grades_and_comments_in_its_own_dialect(tmp_path):
    out = graded_out(tmp_path, MOODLE_PEOPLE, ABSENT)
    worksheet = tmp_path / "Calificaciones-IA-055.csv"
    before = fx.moodle_worksheet_es()
    worksheet.write_bytes(before)
    report = export(out, "moodle", worksheet)
    after = (out / "export" / worksheet.name).read_bytes()
    assert worksheet.read_bytes() == before, "the input is never written"
    assert b"\r\n" in after and after.decode("utf-8").startswith('"Identificador";')
    old, new = rows_of(before, ";"), rows_of(after, ";")
    grade, comment = old[0].index("Calificación"), old[0].index("Comentarios de retroalimentación")
    by_id = {row[0]: row for row in new[1:]}
    # 36 of 43 on a worksheet whose maximum is 10,00: 8,37, with the site's decimal comma.
    assert by_id["Participante1234567"][grade] == "8,37"
    assert by_id["Participante2000001"][grade] == "5,00"
    assert by_id["Participante1234567"][comment].startswith("Nota: 36 / 43 (parte automática: "
                                                             "20; respuestas escritas: 16)")
    # Not every written answer graded: no grade, no comment.
    assert by_id["Participante3000001"][grade] == "" == by_id["Participante3000001"][comment]
    for old_row, new_row in zip(old, new):
        assert [c for i, c in enumerate(old_row) if i not in (grade, comment)] == \
               [c for i, c in enumerate(new_row) if i not in (grade, comment)]
    untouched = [line for line in before.split(b"\r\n") if b"7000001" in line]
    assert untouched[0] in after.split(b"\r\n"), "a row the kit does not fill keeps its bytes"
    assert "Participante 7000001 Pedro Sin Entrega" in report
    assert "Participante 4000001 Lucía Fernández: solo entregó texto en línea" in report
    assert "Nadie Enlista_8000001_assignsubmission_file/notebook_student.ipynb" in \
        report.split("submissions without a row in the worksheet (1):")[1]
    assert "  Participante 3000001 Ana Martín: 3 of 14 graded" in \
        report.split("withheld, with written answers not all graded (1):")[1]
    assert report.splitlines()[-1] == (
        "result: 2 of the worksheet's 8 students got a grade, 1 withheld (1 with written "
        "answers not all graded), 5 without a submission")
    assert (out / "export" / "export_report.txt").read_text("utf-8") == report


def test_moodle_feedback_zip_has_one_folder_per_participant_named_as_in_the_download(tmp_path):
    out = graded_out(tmp_path, MOODLE_PEOPLE, ABSENT)
    worksheet = tmp_path / "hoja.csv"
    worksheet.write_bytes(fx.moodle_worksheet_es())
    export(out, "moodle", worksheet)
    with zipfile.ZipFile(out / "export" / export_module.MOODLE_ZIP) as zf:
        names = zf.namelist()
        page = zf.read(names[0]).decode("utf-8")
    assert names == ["María José García López_1234567_assignsubmission_file/"
                     "informe_de_evaluacion.html",
                     "José Pérez_2000001_assignsubmission_file/informe_de_evaluacion.html"]
    for name in names:
        # Moodle's importer: the first part that splits on "_" into a name, a numeric
        # participant id and an existing plugin (assignfeedback_file's zip importer).
        info = name.split("/")[0].split("_", 4)
        assert info[1].isdigit() and info[2:4] == ["assignsubmission", "file"]
    assert '<html lang="es">' in page and "&lt;script&gt;" in page and "<script>" not in page


def test_moodle_english_worksheet_in_windows_1252_with_commas_keeps_its_encoding(tmp_path):
    out = graded_out(tmp_path, MOODLE_PEOPLE[:1])
    worksheet = tmp_path / "grades.csv"
    text = ("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
            "Last modified (submission),Last modified (grade),Feedback comments\r\n"
            "Participant 1234567,María José García López,mj@example.org,Submitted,,100.00,Yes,"
            "\"Thursday, 20 November 2026, 10:00 AM\",-,\r\n")
    worksheet.write_bytes(text.encode("cp1252"))
    export(out, "moodle", worksheet)
    after = (out / "export" / "grades.csv").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        after.decode("utf-8")  # still Windows-1252: «í» is one byte
    rows = rows_of(after, ",", "cp1252")
    assert rows[1][4] == "83.72" and rows[1][1] == "María José García López"
    assert rows[1][9].startswith("Nota: 36 / 43")


def test_a_worksheet_that_is_not_moodles_is_a_clear_error(tmp_path):
    out = graded_out(tmp_path, MOODLE_PEOPLE[:1])
    worksheet = tmp_path / "otra.csv"
    worksheet.write_text("Nombre,Nota\nAna,5\n", "utf-8")
    with pytest.raises(export_module.ExportError,
                       match="otra.csv is neither Moodle's grading worksheet nor Canvas's"):
        export(out, "moodle", worksheet)


def test_the_export_never_writes_over_its_input(tmp_path):
    out = graded_out(tmp_path, MOODLE_PEOPLE[:1])
    (out / "export").mkdir()
    worksheet = out / "export" / "hoja.csv"
    worksheet.write_bytes(fx.moodle_worksheet_es())
    with pytest.raises(export_module.ExportError, match="never writes over its input"):
        export(out, "moodle", worksheet)


CANVAS_PEOPLE = [
    ("garcíalópezmaríajosé_101_9001_notebook_student.ipynb", "garcíalópezmaríajosé", "101",
     20.0, 7.5, "101"),
    ("pérezjosé_LATE_102_9002_notebook_student.ipynb", "pérezjosé", "102", 8.0, 4.0, "102"),
    ("nadieenlista_999_9099_notebook_student.ipynb", "nadieenlista", "999", 20.0, 10.0, "999"),
]


def test_canvas_gradebook_fills_the_assignments_column_by_student_id(tmp_path):
    out = graded_out(tmp_path, CANVAS_PEOPLE)
    gradebook = tmp_path / "2026-11-30-IA_Grades.csv"
    before = fx.canvas_gradebook()
    gradebook.write_bytes(before)
    with pytest.raises(WorksheetError, match="2 assignment columns.*Tarea 055"):
        export(out, "canvas", gradebook)
    report = export(out, "canvas", gradebook, column="55123")
    old, new = rows_of(before, ","), rows_of((out / "export" / gradebook.name).read_bytes(), ",")
    column = old[0].index(fx.CANVAS_COLUMN)
    by_id = {row[1]: row for row in new[2:]}
    # 27,5 and 12 of 43, on the column's 30 points.
    assert by_id["101"][column] == "19.19" and by_id["102"][column] == "8.37"
    assert by_id["107"][column] == ""
    for old_row, new_row in zip(old, new):
        assert old_row[:column] + old_row[column + 1:] == new_row[:column] + new_row[column + 1:]
    assert "ID 107 Sin Entrega, Pedro" in report and "ID 999999 Student, Test" in report
    assert "nadieenlista_999_9099_notebook_student.ipynb" in report


def test_worksheet_numbers_read_with_either_decimal_separator():
    assert [Worksheet.number(t) for t in ("10,00", "10.00", "1.234,5", "1,234.5", "", "x")] == [
        10.0, 10.0, 1234.5, 1234.5, None, None]


def test_a_worksheet_in_another_language_is_read_by_its_structure(tmp_path):
    """Issue 29: only Spanish and English headers were read."""
    out = graded_out(tmp_path, MOODLE_PEOPLE[:2])
    worksheet = tmp_path / "notes.csv"
    worksheet.write_text(
        "Identifiant,Nom complet,Adresse de courriel,Statut,Note,Note maximale,Dernière modif\n"
        "Participant1234567,María José García López,m@x,Remis,,10,00,-\n"
        "Participant2000001,José Pérez,j@x,Remis,,10,00,-\n".replace(",10,00,", ",10.00,"),
        "utf-8")
    export(out, "moodle", worksheet)
    rows = rows_of((out / "export" / worksheet.name).read_bytes(), ",")
    assert [row[4] for row in rows[1:]] == ["8.37", "5.00"]


def test_a_team_row_goes_to_every_member_and_their_own_feedback_folder(tmp_path):
    team = ("Equipo Rojo_501_assignsubmission_file/notebook_student.ipynb", None, None, 20.0,
            WRITTEN, "Equipo Rojo_501_assignsubmission_file")
    out = graded_out(tmp_path, [team])
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))
    manifest["entries"][0].update(group="Equipo Rojo", group_id="501",
                                  members=[["María José García López", "1234567"],
                                           ["José Pérez", "2000001"]])
    (out / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    worksheet = tmp_path / "hoja.csv"
    worksheet.write_bytes(fx.moodle_worksheet_es())
    export(out, "moodle", worksheet)
    rows = {row[0]: row for row in rows_of((out / "export" / worksheet.name).read_bytes(), ";")}
    assert rows["Participante1234567"][4] == rows["Participante2000001"][4] == "10,00"
    # Positive control: the group's number is nobody's row.
    assert "Participante501" not in rows
    with zipfile.ZipFile(out / "export" / export_module.MOODLE_ZIP) as zf:
        folders = sorted(name.split("/")[0] for name in zf.namelist())
    assert folders == ["José Pérez_2000001_assignsubmission_file",
                       "María José García López_1234567_assignsubmission_file"]


def test_accented_names_decomposed_by_the_file_system_are_one_person(tmp_path):
    """Issue 47.4: a Canvas download unzipped on macOS has its names in NFD; the gradebook's
    are NFC. A person reads one name, and so does the export."""
    import unicodedata

    from kit_autograder import lms

    decomposed = unicodedata.normalize("NFD", "núñezjosé")
    assert decomposed != "núñezjosé"  # positive control: as strings, the two differ
    folder = tmp_path / "descarga"
    folder.mkdir()
    file = f"{decomposed}_1004_9001_notebook_student.ipynb"
    (folder / file).write_bytes(fx.demo("sin_hacer.ipynb"))
    with lms.ingest(folder) as ingested:
        (entry,) = ingested.entries
    assert entry.file == file, "the file keeps the name it has on disk"
    assert entry.student_name == "núñezjosé", "the name is shown composed, accents kept"
    # An OUT graded before names were composed still matches the gradebook.
    out = graded_out(tmp_path, [(file, decomposed, "1004", 20.0, WRITTEN, "1004")])
    gradebook = tmp_path / "notas.csv"
    gradebook.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Tarea 055 (55123)\n"
                         "    Points Possible,,,,,10.00\n"
                         "\"Núñez, José\",1004,S1004,jnunez,IA 2026,\n", "utf-8")
    report = export(out, "canvas", gradebook)
    rows = rows_of((out / "export" / gradebook.name).read_bytes(), ",")
    assert rows[2][5] == "10.00", report
    assert "not the worksheet's" not in report


# --- issue 47.1: one rule for what may leave the kit -----------------------------------------


def test_export_before_review_withholds_every_grade_and_says_why_last(tmp_path):
    """make grade, then make export with no make review: no written_scores.csv counts as
    every written answer pending, as when some are graded."""
    out = graded_out(tmp_path, MOODLE_PEOPLE, ABSENT, scores_file=False)
    grades = list(csv.DictReader(open(out / "final_grades.csv", encoding="utf-8")))
    # Positive control: the automatic part alone is 20 of 20, which the export used to give as
    # the whole grade (10,00 on this worksheet, and «Nota: 20 / 20»).
    assert (grades[1]["total_points_earned"], grades[0]["total_points_earned"]) == ("20.0", "20")
    assert "final_points" not in grades[0]
    worksheet = tmp_path / "hoja.csv"
    worksheet.write_bytes(fx.moodle_worksheet_es())
    report = export(out, "moodle", worksheet)
    rows = rows_of((out / "export" / worksheet.name).read_bytes(), ";")
    assert {row[4] for row in rows[1:]} == {""} and {row[9] for row in rows[1:]} == {""}
    section = report.split("withheld, with written answers not all graded (3):\n")[1]
    assert section.startswith("  Participante 1234567 María José García López: none of 14 "
                              "graded yet\n")
    assert "make review OUT=" in section and "AUTOMATIC_ONLY=1" in section
    assert report.splitlines()[-1] == (
        "result: 0 of the worksheet's 8 students got a grade, 3 withheld (3 with written "
        "answers not all graded), 5 without a submission")
    with zipfile.ZipFile(out / "export" / export_module.MOODLE_ZIP) as zf:
        assert zf.namelist() == [], "no feedback file goes with a withheld grade"


def test_exporting_the_automatic_part_alone_is_a_flag_and_the_comment_says_so(tmp_path):
    out = graded_out(tmp_path, MOODLE_PEOPLE, ABSENT, scores_file=False)
    worksheet = tmp_path / "hoja.csv"
    worksheet.write_bytes(fx.moodle_worksheet_es())
    report = export(out, "moodle", worksheet, automatic_only=True)
    rows = {row[0]: row for row in rows_of((out / "export" / worksheet.name).read_bytes(), ";")}
    # 20 of the automatic part's 20 points, and 8 of 20: out of the part's own points.
    assert rows["Participante1234567"][4] == "10,00" and rows["Participante2000001"][4] == "4,00"
    assert rows["Participante1234567"][9] == (
        "Nota de la parte automática: 20 / 20. No incluye tus respuestas escritas (23 puntos). "
        "El informe completo está en el archivo de retroalimentación.")
    assert report.splitlines()[-1].startswith(
        "result: 3 of the worksheet's 8 students got a grade (the automatic part alone)")
    # Positive control: with every answer graded, the same flag still exports the automatic
    # part alone, and without it the whole grade goes.
    out = graded_out(tmp_path / "revisado", MOODLE_PEOPLE, ABSENT)
    export(out, "moodle", worksheet, automatic_only=True)
    rows = {row[0]: row for row in rows_of((out / "export" / worksheet.name).read_bytes(), ";")}
    assert rows["Participante1234567"][4] == "10,00"
    (out / "export").rename(tmp_path / "otra")
    export(out, "moodle", worksheet)
    rows = {row[0]: row for row in rows_of((out / "export" / worksheet.name).read_bytes(), ";")}
    assert rows["Participante1234567"][4] == "8,37"


@pytest.mark.parametrize("scores_file", [False, True], ids=["none-graded", "some-graded"])
def test_report_html_lists_whom_the_export_withholds(tmp_path, scores_file):
    from types import SimpleNamespace

    from kit_autograder.report import class_report

    out = graded_out(tmp_path, MOODLE_PEOPLE, ABSENT, scores_file=scores_file)
    students = {person[0]: f"s{n}" for n, person in enumerate(MOODLE_PEOPLE)}
    section = class_report._written(out, SimpleNamespace(NAME="attention"), students)
    # Every submission of the class, the one the worksheet does not list too.
    pending = 4 if not scores_file else 1
    assert f'data-pending="{pending}"' in section
    has = "tiene" if pending == 1 else "tienen"
    assert f"{pending} de las 4 entregas {has} respuestas escritas sin corregir" in section
    assert ("Ana Martín_3000001" in section) and (("García López" in section) != scores_file)
    assert "make export</code> no les pone nota" in section


# --- issue 47.7: arguments checked before anything is written --------------------------------

ARGUMENT_CASES = [
    ("no_lms", {"--lms": ""}, "LMS= is missing: " + export_module.USAGE),
    ("argparse_never_speaks", {"--lms": None}, "LMS= is missing: " + export_module.USAGE),
    ("another_lms", {"--lms": "blackboard"},
     "LMS=blackboard: the kit exports to moodle or canvas: " + export_module.USAGE),
    ("no_worksheet", {"--worksheet": ""}, "WORKSHEET= is missing: " + export_module.USAGE),
    ("no_such_worksheet", {"--worksheet": "{tmp}/nada.csv"},
     "WORKSHEET={tmp}/nada.csv: no such file; give the file Moodle exports ("
     + export_module.USAGE + ")"),
    ("moodle_worksheet_as_canvas", {"--lms": "canvas"},
     "hoja.csv is Moodle's grading worksheet, not Canvas's gradebook: make export LMS=moodle "
     "WORKSHEET={tmp}/hoja.csv OUT={tmp}/notas"),
    ("canvas_gradebook_as_moodle", {"--worksheet": "{tmp}/gradebook.csv"},
     "gradebook.csv is Canvas's gradebook, not Moodle's grading worksheet: make export "
     "LMS=canvas WORKSHEET={tmp}/gradebook.csv OUT={tmp}/notas"),
    ("not_a_graded_folder", {"--out": "{tmp}/vacio"},
     "OUT={tmp}/vacio: no final_grades.csv; grade the submissions first (make grade "
     "OUT={tmp}/vacio)"),
]


@pytest.mark.parametrize("case,change,line", ARGUMENT_CASES, ids=[c[0] for c in ARGUMENT_CASES])
def test_make_export_checks_its_arguments_first_in_one_line(tmp_path, capsys, case, change,
                                                            line):
    out = graded_out(tmp_path, MOODLE_PEOPLE, ABSENT)
    (tmp_path / "hoja.csv").write_bytes(fx.moodle_worksheet_es())
    (tmp_path / "gradebook.csv").write_bytes(fx.canvas_gradebook())
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    args = {"--autograder": "{tmp}/no-abre.zip", "--lms": "moodle",
            "--worksheet": "{tmp}/hoja.csv", "--out": "{tmp}/notas", **change}
    argv = [part.format(tmp=tmp_path) for key, value in args.items() if value is not None
            for part in (key, value)]
    assert export_module.main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [f"error: {line.format(tmp=tmp_path)}"]
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before
    assert not (out / "export").exists()


def test_the_arguments_the_cases_change_are_accepted_as_given(tmp_path):
    # The control of every case above: the unchanged arguments pass the checks.
    out = graded_out(tmp_path, MOODLE_PEOPLE, ABSENT)
    (tmp_path / "hoja.csv").write_bytes(fx.moodle_worksheet_es())
    (tmp_path / "gradebook.csv").write_bytes(fx.canvas_gradebook())
    assert export_module.checked(out, "moodle", tmp_path / "hoja.csv").path.name == "hoja.csv"
    assert export_module.checked(out, "canvas", tmp_path / "gradebook.csv", "55123")
