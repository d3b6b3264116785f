"""make review's page in Chromium: a person grades the written answers with the keyboard and
the mouse, every change lands in written_scores.csv, student text never becomes markup, and
axe-core finds no WCAG 2.0/2.1 A or AA violation.

The folder is what make grade leaves (written/<stem>.json and submissions.json), written here
from the built demo notebooks without grading them: the page reads nothing else.
"""

import csv
import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

import lms_fixtures as fx
from explorer_helpers import CHROMIUM, chromium
from kit_autograder.lms.entries import FORMAT, MANIFEST
from kit_autograder.written import answers, scores
from kit_autograder.written.questions import lesson_questions
from kit_autograder.written.review import serve

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts" / "review"
QUESTIONS = lesson_questions("attention")
WCAG = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}

needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(),
                                    reason="Debian's /usr/bin/chromium is not installed")

CLASS = [  # file, name, id, notebook bytes
    ("María José García López_1_assignsubmission_file/notebook_student.ipynb",
     "María José García López", "1", "buena"),
    ("Ana Martín_2_assignsubmission_file/notebook_student.ipynb", "Ana Martín", "2", "floja"),
    ("Ana Martín_3_assignsubmission_file/notebook_student.ipynb", "Ana Martín", "3", None),
]


def graded_folder(out: Path):
    """OUT as make grade leaves it for the page: the manifest and the saved answers."""
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for number, (file, name, student_id, answers_kind) in enumerate(CLASS):
        stem = f"alumno_{number}"
        notebook = out / "src" / f"{stem}.ipynb"
        notebook.parent.mkdir(exist_ok=True)
        data = fx.demo("sin_hacer.ipynb")
        notebook.write_bytes(fx.with_answers(data, fx.ANSWERS[answers_kind])
                             if answers_kind else data)
        answers.save(out, stem, file, notebook, "attention", QUESTIONS)
        entries.append({"stem": stem, "file": file, "student_name": name,
                        "student_id": student_id, "late": number == 1, "origin": "",
                        "not_graded": [], "notes": []})
    (out / MANIFEST).write_text(json.dumps({"format": FORMAT, "layout": "moodle", "source": "x",
                                            "entries": entries, "absent": []}), "utf-8")
    return out


@pytest.fixture
def review_server(tmp_path):
    out = graded_folder(tmp_path / "notas")
    server = serve(out, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield out, server.url
    server.shutdown()
    server.server_close()


def scores_rows(out):
    with open(out / scores.SCORES, newline="", encoding="utf-8-sig") as f:
        return {row["file"]: row for row in csv.DictReader(f)}


def axe_violations(page):
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options=WCAG)
    return results.violations_count, results.generate_snapshot()


@needs_chromium
def test_a_person_grades_the_class_with_the_keyboard_and_every_change_is_saved(review_server):
    out, url = review_server
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1100, "height": 1000})
        problems = []
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.goto(url)
        page.wait_for_selector("#answer-body strong")  # the first answer, rendered
        assert page.inner_text("#overall") == f"Corregidas: 0 de {len(CLASS) * len(QUESTIONS)} respuestas"
        assert "María José García López (1)" in page.inner_text("#student-title")
        assert page.inner_text("#question-prompt") == QUESTIONS[0].prompt  # the rubric's words
        # The rubric's levels, with their keys.
        levels = page.locator("#levels label")
        assert levels.count() == len(QUESTIONS[0].levels) + 1
        assert "media ponderada de valores" in levels.nth(0).inner_text()

        page.keyboard.press("2")
        expect(page.locator("#status")).to_contain_text("pregunta 1, 2 puntos")
        assert scores_rows(out)[CLASS[0][0]]["q1"] == "2"
        page.keyboard.press("c")
        page.keyboard.type("Muy bien; cita la fórmula.")
        page.keyboard.press("Escape")
        expect(page.locator("#status")).to_contain_text("Guardado")
        page.keyboard.press("Enter")  # next answer
        expect(page.locator("#student-title")).to_contain_text("Ana Martín (2)")
        assert "entregada tarde" in page.inner_text("#student-title")
        assert "Respuesta 2 de 3" in page.inner_text("#position")
        page.keyboard.press("0")
        page.keyboard.press("s")
        expect(page.locator("#student-title")).to_contain_text("Ana Martín (3)")
        assert "Sin respuesta" in page.inner_text("#answer-body")
        # With the mouse: the middle level.
        page.locator("#levels label").nth(1).click()
        expect(page.locator("#overall")).to_have_text(f"Corregidas: 3 de {len(CLASS) * len(QUESTIONS)} respuestas")
        assert "Pregunta 1 · 3 de 3" in page.inner_text("#questions")
        page.keyboard.press("Enter")  # past the last student: the next question
        expect(page.locator("#question-title")).to_contain_text("Pregunta 2")
        assert "María José García López (1)" in page.inner_text("#student-title")
        page.keyboard.press("1")
        expect(page.locator("#overall")).to_have_text(f"Corregidas: 4 de {len(CLASS) * len(QUESTIONS)} respuestas")
        # The third handed in no answer: one click gives it 0, seen first in this question.
        page.click("text=Dar 0 a la respuesta vacía sin corregir")
        expect(page.locator("#overall")).to_have_text(f"Corregidas: 5 de {len(CLASS) * len(QUESTIONS)} respuestas")
        expect(page.locator("#zero-blank")).to_be_hidden()

        page.screenshot(path=str(ARTIFACTS / "review.png"), full_page=True)
        count, snapshot = axe_violations(page)
        assert count == 0, snapshot
        # Anonymous grading hides names.
        page.check("#hide-names")
        assert page.inner_text("#student-title").startswith("Entrega 1")
        assert not problems, problems

    rows = scores_rows(out)
    first, second, third = (rows[file] for file, *_ in CLASS)
    assert (first["q1"], first["q1_comment"], first["q2"]) == ("2", "Muy bien; cita la fórmula.",
                                                               "1")
    assert (second["q1"], second["student_name"], second["student_id"]) == ("0", "Ana Martín", "2")
    assert third["q1"] == "1" and third["q2"] == "0" and third["q3"] == ""


@needs_chromium
def test_a_key_is_the_same_number_of_points_on_every_question(review_server):
    """Issue 47.2: the challenge's keys were positions («2» gave 0,5) and its header said
    «(1 puntos)»."""
    out, url = review_server
    first = CLASS[0][0]
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1100, "height": 1000})
        page.goto(url)
        page.wait_for_selector("#answer-body strong")
        # Positive control: on question 1, «2» is 2 points.
        page.keyboard.press("2")
        expect(page.locator("#status")).to_contain_text("pregunta 1, 2 puntos")
        assert scores_rows(out)[first]["q1"] == "2"
        page.click("text=Pregunta 10 · 0 de 3")
        expect(page.locator("#question-title")).to_have_text("Pregunta 10 (1 punto)")
        assert page.locator("#levels kbd:visible").all_inner_texts() == ["1", "m", "0"]
        assert page.locator("#levels label").nth(1).inner_text().startswith("0,5 puntos")
        page.keyboard.press("2")  # no level is worth 2 points here: nothing is chosen
        expect(page.locator('#levels input[value=""]')).to_be_checked()
        for key, said, cell in (("m", "0,5 puntos", "0.5"), ("1", "1 punto", "1"),
                                ("0", "0 puntos", "0")):
            page.keyboard.press(key)
            expect(page.locator("#status")).to_have_text(f"Guardado: pregunta 10, {said}.")
            assert scores_rows(out)[first]["reto_supuesto"] == cell


@needs_chromium
def test_student_markup_stays_text_and_runs_nothing(review_server):
    out, url = review_server
    with chromium() as browser:
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("#answer-body strong")
        page.click("text=Pregunta 5 · 0 de 3")
        page.keyboard.press("s")  # Ana Martín (2): the answer with <img onerror> and <script>
        expect(page.locator("#answer-body")).to_contain_text("onerror")
        body = page.locator("#answer-body")
        assert body.locator("img, script").count() == 0
        assert "<script>document.title='pwned'</script>" in body.inner_text()
        assert body.locator("code").inner_text() == "n = 1"
        assert page.title() == "Corrección de las respuestas escritas"
        count, snapshot = axe_violations(page)
        assert count == 0, snapshot
        # A positive control: the same check sees a control that lost its label.
        page.evaluate("document.getElementById('comment').removeAttribute('id')")
        count, snapshot = axe_violations(page)
        assert count >= 1 and "label" in snapshot, snapshot


def test_the_server_answers_only_its_own_page(review_server):
    out, url = review_server
    page = urllib.request.urlopen(url).read().decode()
    token = page.split('name="review-token" content="')[1].split('"')[0]
    url = url.split("?")[0]

    def post(headers, body):
        request = urllib.request.Request(url + "api/score", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json", **headers})
        try:
            with urllib.request.urlopen(request) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    body = {"file": CLASS[0][0], "question": "q1", "points": "1,5", "comment": "ok"}
    assert post({}, body)[0] == 403  # another site's form cannot send the token
    assert post({"X-Review-Token": token, "Host": "atacante.example:80"}, body)[0] == 403
    assert post({"X-Review-Token": token}, {**body, "points": "3"})[0] == 400
    assert post({"X-Review-Token": token}, {**body, "file": "../../etc/passwd"})[0] == 400
    assert not (out / scores.SCORES).exists()
    status, data = post({"X-Review-Token": token}, body)
    assert status == 200 and data["marks"]["q1"] == {"points": 1.5, "comment": "ok"}
    assert scores_rows(out)[CLASS[0][0]]["q1"] == "1.5"
    headers = urllib.request.urlopen(f"{url}?token={token}").headers
    assert "script-src 'self'" in headers["Content-Security-Policy"]


def test_the_page_and_its_token_go_only_to_whoever_has_the_terminals_url(review_server):
    out, url = review_server
    # Positive control: the terminal's URL gets the page, and the page holds the token.
    assert "review-token" in urllib.request.urlopen(url).read().decode()
    bare = url.split("?")[0]
    for wrong in (bare, bare + "?token=", bare + "?token=adivinado"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(wrong)
        assert refused.value.code == 403
        assert "review-token" not in refused.value.read().decode()


def test_a_second_review_server_on_the_same_folder_is_refused(review_server, tmp_path):
    from kit_autograder.written.review import Busy

    out, _ = review_server
    with pytest.raises(Busy, match="already serving"):
        serve(out, port=0)
    # Positive control: another graded folder gets its own server.
    other = serve(graded_folder(tmp_path / "otra"), port=0)
    other.server_close()
