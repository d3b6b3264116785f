"""The instructor's whole loop, as issue 22 asks it: from Moodle's download zip and grading
worksheet (and from Canvas's download and gradebook), make grade grades the class, a person
grades every written answer on the review page in Chromium, make report joins the scores, and
make export writes the worksheet with each student's total and comment, and the feedback zip.

Each step runs the module its make target runs, with the session's autograder zip. The
worksheets before and after, and the page, are kept in tests/artifacts/lms/ and review/.
"""

import csv
import io
import threading
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

import lms_fixtures as fx
from explorer_helpers import CHROMIUM, chromium
from grading_harness import TEST_TIMEOUT
from kit_autograder import batch
from kit_autograder.lms import export as export_module
from kit_autograder.report import class_report
from kit_autograder.written import scores
from kit_autograder.written.review import serve

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(),
                                reason="Debian's /usr/bin/chromium is not installed")

# Words of each answer that survive its rendering (the page shows Markdown as HTML).
GOOD = ["media ponderada", "misma secuencia", "mismas entradas", "peso futuro es 0",
        "ninguna clave permitida", "No cambian: a cada fila", "normas iguales",
        "se permutan con X", "el orden de las puntuaciones no cambia"]
WEAK = ["usa GPT", "cosas del Transformer", "Los resultados", "No sé", "Probar con", "Cambian.",
        "Es obvio", "la escala no sirve"]


def grade(download: Path, out: Path, autograder_zip, *more):
    status = batch.main(["--submissions", str(download), "--out", str(out), "--autograder",
                         str(autograder_zip), "--jobs", "2", "--timeout", str(TEST_TIMEOUT),
                         *more])
    assert status == 0
    with open(out / "final_grades.csv", newline="", encoding="utf-8") as f:
        return {row["file"]: row for row in csv.DictReader(f)}


def level_for(answer_text):
    """What the person on the page decides: 2 for a good answer, 1 for a weak one, 0 for none."""
    if any(fragment in answer_text for fragment in GOOD):
        return "2"
    if any(fragment in answer_text for fragment in WEAK):
        return "1"
    return "0"


def grade_every_answer_on_the_page(out: Path, screenshot: Path):
    server = serve(out, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 1100, "height": 1000})
            page.goto(server.url)
            expect(page.locator("#overall")).to_contain_text("Corregidas: 0 de ")
            total = int(page.inner_text("#overall").split(" de ")[1].split()[0])
            for done in range(1, total + 1):
                expect(page.locator("#answer-body")).not_to_contain_text("Cargando")
                if done == 2:
                    page.screenshot(path=str(screenshot), full_page=True)
                answer = page.inner_text("#answer-body")
                if page.inner_text("#question-prompt").startswith("Reto:"):
                    # The challenge's texts: full marks (1 point) for a text, 0 for none; a
                    # key is a number of points here as on every question.
                    unanswered = "Sin respuesta" in answer or "No se ha podido leer" in answer
                    page.keyboard.press("0" if unanswered else "1")
                else:
                    page.keyboard.press(level_for(answer))
                if done == 1:
                    page.keyboard.press("c")
                    page.keyboard.type("Define las dos; cita la fórmula de la softmax.")
                    page.keyboard.press("Escape")
                expect(page.locator("#overall")).to_have_text(
                    f"Corregidas: {done} de {total} respuestas")
                page.keyboard.press("Enter")
    finally:
        server.shutdown()
        server.server_close()


def rebuild(out: Path, autograder_zip):
    """make report: report.html, final_grades.csv and feedback/ from the records and scores."""
    assert class_report.main(["--out", str(out), "--autograder", str(autograder_zip)]) == 0
    with open(out / "final_grades.csv", newline="", encoding="utf-8") as f:
        return {row["file"]: row for row in csv.DictReader(f)}


def keep(name, data: bytes):
    folder = ARTIFACTS / "lms"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def test_moodle_download_to_worksheet_and_feedback_zip(tmp_path, autograder_zip):
    download = tmp_path / "IA-055-Atencion-1234.zip"
    download.write_bytes(fx.moodle_download())
    out = tmp_path / "notas"
    rows = grade(download, out, autograder_zip)
    garcia = "María José García López_1234567_assignsubmission_file/notebook_student.ipynb"
    assert rows[garcia]["student_name"] == "María José García López"
    assert rows[garcia]["student_id"] == "1234567"
    assert float(rows[garcia]["total_points_earned"]) == 20
    jose = "José Pérez_2000001_assignsubmission_file/entrega/exportada.zip"
    assert float(rows[jose]["total_points_earned"]) == 20, "the newer upload, the export, graded"
    assert "final_points" not in rows[garcia], "no written score yet: no total"

    # make export before make review (issue 47.1): every grade is withheld, and said so.
    worksheet = tmp_path / "Calificaciones-IA-055-Atencion-1234.csv"
    worksheet.write_bytes(fx.moodle_worksheet_es())
    status = export_module.main(["--autograder", str(autograder_zip), "--lms", "moodle",
                                 "--worksheet", str(worksheet), "--out", str(out)])
    assert status == 0
    early = (out / "export" / export_module.REPORT).read_text("utf-8")
    keep("moodle_export_before_review.txt", early.encode("utf-8"))
    sheet = list(csv.reader(io.StringIO((out / "export" / worksheet.name).read_text("utf-8"),
                                        newline=""), delimiter=";"))
    assert {row[4] for row in sheet[1:]} == {""}, early
    assert "withheld, with written answers not all graded (6):" in early
    assert early.splitlines()[-1] == (
        "result: 0 of the worksheet's 8 students got a grade, 6 withheld (6 with written "
        "answers not all graded), 2 without a submission")
    assert 'data-pending="7"' in (out / "report.html").read_text("utf-8")

    grade_every_answer_on_the_page(out, ARTIFACTS / "review" / "review_moodle.png")
    rows = rebuild(out, autograder_zip)
    # Out of 43: 20 automatic, 18 for the questions, 5 for the challenge's texts. A stub or a
    # partial notebook has the template's texts (None): the person gives them 0.
    # A weak answer gets 1 of 2: Ana Martín (3000001) is 6,5 automatic (the partial demo
    # notebook) + 9 of 18 written.
    expected_final = {"1234567": 43, "2000001": 43, "3000001": 15.5, "3000002": 43, "5000001": 9,
                      "6000001": 0, "8000001": 43}
    assert {row["student_id"]: float(row["final_points"]) for row in rows.values()
            if row["student_id"]} == expected_final
    feedback = (out / "feedback" / f"{rows_stem(out, garcia)}.md").read_text("utf-8")
    assert "**Respuestas escritas: 23 / 23**" in feedback and "**Nota total: 43 / 43**" in feedback
    assert "cita la fórmula de la softmax." in feedback
    report = (out / "report.html").read_text("utf-8")
    assert 'id="escritas"' in report and 'id="escrita-q5"' in report

    before = fx.moodle_worksheet_es()
    keep("moodle_worksheet_before.csv", before)
    status = export_module.main(["--autograder", str(autograder_zip), "--lms", "moodle",
                                 "--worksheet", str(worksheet), "--out", str(out)])
    assert status == 0
    after = (out / "export" / worksheet.name).read_bytes()
    keep("moodle_worksheet_after.csv", after)
    sheet = list(csv.reader(io.StringIO(after.decode("utf-8"), newline=""), delimiter=";"))
    grades = {row[0]: row[4] for row in sheet[1:]}
    # Rescaled to the worksheet's maximum, 10: 15,5 / 43 -> 3,60; 9 / 43 -> 2,09.
    assert grades == {"Participante1234567": "10,00", "Participante2000001": "10,00",
                      "Participante3000001": "3,60", "Participante3000002": "10,00",
                      "Participante4000001": "", "Participante5000001": "2,09",
                      "Participante6000001": "0,00", "Participante7000001": ""}
    comments = {row[0]: row[9] for row in sheet[1:]}
    assert comments["Participante3000001"].startswith("Nota: 15,5 / 43 (parte automática: 6,5;")
    with zipfile.ZipFile(out / "export" / export_module.MOODLE_ZIP) as zf:
        folders = sorted(name.split("/")[0] for name in zf.namelist())
        page = zf.read(f"Ana Martín_3000001_assignsubmission_file/"
                       f"informe_de_evaluacion.html").decode("utf-8")
    # Named as in the download, where Moodle dropped the apostrophe of «Zoë D'Angelo».
    assert folders == sorted(f"{who.replace(chr(39), '')}_{number}_assignsubmission_file"
                             for number, who, _ in fx.MOODLE_STUDENTS
                             if number not in ("4000001", "7000001"))
    assert "Respuestas escritas: 9 / 23" in page
    report = (out / "export" / export_module.REPORT).read_text("utf-8")
    keep("moodle_export_report.txt", report.encode("utf-8"))
    assert "Participante 7000001 Pedro Sin Entrega" in report
    assert "Nadie Enlista_8000001" in report.split("without a row in the worksheet")[1]


def rows_stem(out, file):
    from kit_autograder.lms import read_manifest

    return next(e["stem"] for e in read_manifest(out)["entries"] if e["file"] == file)


def test_canvas_download_to_gradebook(tmp_path, autograder_zip):
    download = tmp_path / "submissions.zip"
    download.write_bytes(fx.canvas_download())
    out = tmp_path / "notas"
    rows = grade(download, out, autograder_zip)
    assert {row["student_id"] for row in rows.values()} == {"", "101", "102", "103", "104", "106",
                                                            "999"}
    grade_every_answer_on_the_page(out, ARTIFACTS / "review" / "review_canvas.png")
    # The spreadsheet route on top of the page: one answer regraded in a Spanish spreadsheet,
    # which saves semicolons and a decimal comma.
    path = out / scores.SCORES
    with open(path, newline="", encoding="utf-8-sig") as f:
        table = list(csv.reader(f))
    next(row for row in table if row[2] == "101")[table[0].index("q1")] = "1,5"
    with open(path, "w", newline="", encoding="utf-8-sig") as f:
        csv.writer(f, delimiter=";").writerows(table)
    rows = rebuild(out, autograder_zip)
    finals = {row["student_id"]: row["final_points"] for row in rows.values() if row["student_id"]}
    # Out of 43 (20 + 18 + 5); 101's q1 regraded to 1,5.
    assert finals == {"101": "42.5", "102": "24.5", "103": "43.0", "104": "15.5",
                      "106": "34.0", "999": "43.0"}

    gradebook = tmp_path / "2026-11-30T1200_Notas-IA.csv"
    before = fx.canvas_gradebook()
    gradebook.write_bytes(before)
    keep("canvas_gradebook_before.csv", before)
    status = export_module.main(["--autograder", str(autograder_zip), "--lms", "canvas",
                                 "--worksheet", str(gradebook), "--out", str(out),
                                 "--column", fx.CANVAS_COLUMN])
    assert status == 0
    after = (out / "export" / gradebook.name).read_bytes()
    keep("canvas_gradebook_after.csv", after)
    sheet = list(csv.reader(io.StringIO(after.decode("utf-8"), newline="")))
    column = sheet[0].index(fx.CANVAS_COLUMN)
    # Rescaled to the column's «Points Possible», 30: 42,5 / 43 -> 29,65; 24,5 -> 17,09; ...
    assert {row[1]: row[column] for row in sheet[2:]} == {
        "101": "29.65", "102": "17.09", "103": "30.00", "104": "10.81", "105": "",
        "106": "23.72", "107": "", "999999": ""}
    report = (out / "export" / export_module.REPORT).read_text("utf-8")
    keep("canvas_export_report.txt", report.encode("utf-8"))
    assert "ID 105 Fernández, Lucía: solo entregó texto en línea" in report
    assert "pérezjosé_LATE_102_9002_notebook_student.ipynb" in report.split("late")[1]


# --- teams, through make grade and make export (issues 47.8, 51.5) ------------------------------

GOOD_NOTEBOOK = fx.with_answers(fx.demo("correcta.ipynb"), fx.ANSWERS["buena"])


def every_written_answer_zero(out: Path):
    """The spreadsheet route of make review: the template, every answer given 0, saved as
    OUT/written_scores.csv."""
    from kit_autograder.written.questions import lesson_questions

    questions = lesson_questions("attention")
    sheet = scores.ScoreSheet.read(out / "written" / scores.TEMPLATE, questions)
    for file in sheet.files():
        for question in questions:
            sheet.set(file, question.name, 0, "")
    sheet.path = out / scores.SCORES
    sheet.write()


def exported_cells(out: Path, autograder_zip, lms_name, worksheet: Path, *more):
    status = export_module.main(["--autograder", str(autograder_zip), "--lms", lms_name,
                                 "--worksheet", str(worksheet), "--out", str(out), *more])
    assert status == 0
    text = (out / "export" / worksheet.name).read_text("utf-8")
    table = list(csv.reader(io.StringIO(text, newline=""), delimiter=";" if lms_name == "moodle"
                            else ","))
    report = (out / "export" / export_module.REPORT).read_text("utf-8")
    if lms_name == "moodle":
        column = table[0].index("Calificación")
        return {row[0].removeprefix("Participante"): row[column] for row in table[1:]}, report
    column = table[0].index(fx.CANVAS_COLUMN)
    return {row[1]: row[column] for row in table[2:]}, report


def test_moodle_team_download_graded_without_roster_reaches_every_member(tmp_path,
                                                                        autograder_zip):
    download = tmp_path / "equipos.zip"
    download.write_bytes(fx.moodle_team_download(
        [("Equipo Rojo", "501", GOOD_NOTEBOOK), ("Equipo Azul", "502", fx.demo("sin_hacer.ipynb"))],
        without_group=fx.demo("parcial.ipynb")))
    out = tmp_path / "notas"
    rows = grade(download, out, autograder_zip)
    assert {row["group"] for row in rows.values()} == {"", "Equipo Rojo", "Equipo Azul",
                                                       "Grupo predeterminado"}
    every_written_answer_zero(out)
    worksheet = tmp_path / "hoja-equipos.csv"
    worksheet.write_bytes(fx.moodle_worksheet([
        ("11", "Ana Roja", "Equipo Rojo"), ("12", "Beto Rojo", "Equipo Rojo"),
        ("13", "Carla Azul", "Equipo Azul"), ("14", "Dani Azul", "Equipo Azul"),
        ("15", "Sola Sin Grupo", "")]))
    grades, report = exported_cells(out, autograder_zip, "moodle", worksheet)
    keep("moodle_team_export_report.txt", report.encode("utf-8"))
    # 20 and 6,5 automatic points of 43, the written ones all 0: 4,65 and 1,51 of 10.
    assert grades == {"11": "4,65", "12": "4,65", "13": "0,00", "14": "0,00", "15": "1,51"}
    assert report.splitlines()[-1].startswith("result: 5 of the worksheet's 5 students got")


def test_canvas_group_assignment_reaches_every_member_of_each_group(tmp_path, autograder_zip):
    download = tmp_path / "submissions.zip"
    download.write_bytes(fx.canvas_group_download([("Equipo 1", "1001", 9001, GOOD_NOTEBOOK),
                                                   ("Equipo 2", "1004", 9002,
                                                    fx.demo("sin_hacer.ipynb"))]))
    groups = tmp_path / "grupos.csv"
    groups.write_bytes(fx.canvas_groups_csv([("Ana Roja", "1001", "Equipo 1"),
                                             ("Beto Rojo", "1002", "Equipo 1"),
                                             ("Carla Azul", "1003", "Equipo 2"),
                                             ("Dani Azul", "1004", "Equipo 2")]))
    out = tmp_path / "notas"
    grade(download, out, autograder_zip, "--roster", str(groups))
    every_written_answer_zero(out)
    gradebook = tmp_path / "notas.csv"
    gradebook.write_bytes(fx.canvas_gradebook_of([("Roja, Ana", "1001"), ("Rojo, Beto", "1002"),
                                                  ("Azul, Carla", "1003"),
                                                  ("Azul, Dani", "1004")]))
    grades, report = exported_cells(out, autograder_zip, "canvas", gradebook)
    keep("canvas_group_export_report.txt", report.encode("utf-8"))
    assert grades == {"1001": "4.65", "1002": "4.65", "1003": "0.00", "1004": "0.00"}, report
