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

GRADES_HEADER = ["file", "attention", "total_points_earned", "percent_correct",
                 "grading_status", "flags", "student_name", "student_id", "q1", "final_points"]


def graded_out(tmp_path, people, absent=()):
    """OUT as make grade (and the written scores) leave it, for ``people``:
    ``[(file, name, id, automatic, final or "", origin)]``."""
    out = tmp_path / "notas"
    (out / "feedback").mkdir(parents=True)
    rows = [["points-per-question", 5, 20, 1, "--", "", "", "", 10, 30]]
    entries = []
    for number, (file, name, student_id, automatic, final, origin) in enumerate(people):
        stem = f"s{number}"
        rows.append([file, 5, automatic, automatic / 20, "Completed", "", name, student_id,
                     "" if final == "" else final - automatic, final])
        entries.append({"stem": stem, "file": file, "student_name": name,
                        "student_id": student_id, "late": False, "origin": origin,
                        "not_graded": [], "notes": []})
        (out / "feedback" / f"{stem}.md").write_text(
            f"# Informe de evaluación: `{file}`\n\nTu texto: <script>x</script>\n", "utf-8")
    with open(out / "final_grades.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([GRADES_HEADER] + rows)
    (out / MANIFEST).write_text(json.dumps({"format": FORMAT, "layout": "moodle", "source": "x",
                                            "entries": entries, "absent": list(absent)}),
                                "utf-8")
    return out


MOODLE_PEOPLE = [
    ("María José García López_1234567_assignsubmission_file/notebook_student.ipynb",
     "María José García López", "1234567", 20.0, 27.0,
     "María José García López_1234567_assignsubmission_file"),
    ("José Pérez_2000001_assignsubmission_file/entrega/exportada.zip", "José Pérez", "2000001",
     8.0, 12.5, "José Pérez_2000001_assignsubmission_file"),
    ("Ana Martín_3000001_assignsubmission_file/notebook_student.ipynb", "Ana Martín", "3000001",
     8.0, "", "Ana Martín_3000001_assignsubmission_file"),
    ("Nadie Enlista_8000001_assignsubmission_file/notebook_student.ipynb", "Nadie Enlista",
     "8000001", 20.0, 30.0, "Nadie Enlista_8000001_assignsubmission_file"),
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
    report = export_module.export(out, "moodle", worksheet, log=io.StringIO())
    after = (out / "export" / worksheet.name).read_bytes()
    assert worksheet.read_bytes() == before, "the input is never written"
    assert b"\r\n" in after and after.decode("utf-8").startswith('"Identificador";')
    old, new = rows_of(before, ";"), rows_of(after, ";")
    grade, comment = old[0].index("Calificación"), old[0].index("Comentarios de retroalimentación")
    by_id = {row[0]: row for row in new[1:]}
    # 27 of 30 on a worksheet whose maximum is 10,00: 9,00, with the site's decimal comma.
    assert by_id["Participante1234567"][grade] == "9,00"
    assert by_id["Participante2000001"][grade] == "4,17"
    assert by_id["Participante1234567"][comment].startswith("Nota: 27 / 30 (parte automática: "
                                                             "20; respuestas escritas: 7)")
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
    assert "Participante 3000001 Ana Martín" in \
        report.split("not exported, written answers not all graded (1):")[1]
    assert (out / "export" / "export_report.txt").read_text("utf-8") == report


def test_moodle_feedback_zip_has_one_folder_per_participant_named_as_in_the_download(tmp_path):
    out = graded_out(tmp_path, MOODLE_PEOPLE, ABSENT)
    worksheet = tmp_path / "hoja.csv"
    worksheet.write_bytes(fx.moodle_worksheet_es())
    export_module.export(out, "moodle", worksheet, log=io.StringIO())
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
    export_module.export(out, "moodle", worksheet, log=io.StringIO())
    after = (out / "export" / "grades.csv").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        after.decode("utf-8")  # still Windows-1252: «í» is one byte
    rows = rows_of(after, ",", "cp1252")
    assert rows[1][4] == "90.00" and rows[1][1] == "María José García López"
    assert rows[1][9].startswith("Nota: 27 / 30")


def test_a_worksheet_that_is_not_moodles_is_a_clear_error(tmp_path):
    out = graded_out(tmp_path, MOODLE_PEOPLE[:1])
    worksheet = tmp_path / "otra.csv"
    worksheet.write_text("Nombre,Nota\nAna,5\n", "utf-8")
    with pytest.raises(WorksheetError, match="is not Moodle's grading worksheet"):
        export_module.export(out, "moodle", worksheet, log=io.StringIO())


def test_the_export_never_writes_over_its_input(tmp_path):
    out = graded_out(tmp_path, MOODLE_PEOPLE[:1])
    (out / "export").mkdir()
    worksheet = out / "export" / "hoja.csv"
    worksheet.write_bytes(fx.moodle_worksheet_es())
    with pytest.raises(export_module.ExportError, match="never writes over its input"):
        export_module.export(out, "moodle", worksheet, log=io.StringIO())


CANVAS_PEOPLE = [
    ("garcíalópezmaríajosé_101_9001_notebook_student.ipynb", "garcíalópezmaríajosé", "101",
     20.0, 27.5, "101"),
    ("pérezjosé_LATE_102_9002_notebook_student.ipynb", "pérezjosé", "102", 8.0, 12.0, "102"),
    ("nadieenlista_999_9099_notebook_student.ipynb", "nadieenlista", "999", 20.0, 30.0, "999"),
]


def test_canvas_gradebook_fills_the_assignments_column_by_student_id(tmp_path):
    out = graded_out(tmp_path, CANVAS_PEOPLE)
    gradebook = tmp_path / "2026-11-30-IA_Grades.csv"
    before = fx.canvas_gradebook()
    gradebook.write_bytes(before)
    with pytest.raises(WorksheetError, match="2 assignment columns.*Tarea 055"):
        export_module.export(out, "canvas", gradebook, log=io.StringIO())
    report = export_module.export(out, "canvas", gradebook, column="55123", log=io.StringIO())
    old, new = rows_of(before, ","), rows_of((out / "export" / gradebook.name).read_bytes(), ",")
    column = old[0].index(fx.CANVAS_COLUMN)
    by_id = {row[1]: row for row in new[2:]}
    assert by_id["101"][column] == "27.50" and by_id["102"][column] == "12.00"
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
    export_module.export(out, "moodle", worksheet, log=io.StringIO())
    rows = rows_of((out / "export" / worksheet.name).read_bytes(), ",")
    assert [row[4] for row in rows[1:]] == ["9.00", "4.17"]


def test_a_team_row_goes_to_every_member_and_their_own_feedback_folder(tmp_path):
    team = ("Equipo Rojo_501_assignsubmission_file/notebook_student.ipynb", None, None, 20.0,
            30.0, "Equipo Rojo_501_assignsubmission_file")
    out = graded_out(tmp_path, [team])
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))
    manifest["entries"][0].update(group="Equipo Rojo", group_id="501",
                                  members=[["María José García López", "1234567"],
                                           ["José Pérez", "2000001"]])
    (out / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    worksheet = tmp_path / "hoja.csv"
    worksheet.write_bytes(fx.moodle_worksheet_es())
    export_module.export(out, "moodle", worksheet, log=io.StringIO())
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
    out = graded_out(tmp_path, [(file, decomposed, "1004", 20.0, 30.0, "1004")])
    gradebook = tmp_path / "notas.csv"
    gradebook.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Tarea 055 (55123)\n"
                         "    Points Possible,,,,,10.00\n"
                         "\"Núñez, José\",1004,S1004,jnunez,IA 2026,\n", "utf-8")
    report = export_module.export(out, "canvas", gradebook, log=io.StringIO())
    rows = rows_of((out / "export" / gradebook.name).read_bytes(), ",")
    assert rows[2][5] == "10.00", report
    assert "not the worksheet's" not in report
