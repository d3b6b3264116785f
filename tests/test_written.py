"""The written answers: read from the notebook's JSON without running it, scored in a CSV a
spreadsheet may also fill, and shown in the feedback as typed."""

import json

import pandas as pd
import pytest

import lms_fixtures as fx
from kit_autograder.report import feedback, markdown_html
from kit_autograder.submission import empty_written_answers
from kit_autograder.verdicts.record import Record
from kit_autograder.written import answers, feedback_section, merge, scores
from notebook_code import ANSWER_PLACEHOLDER, answer_regions
from kit_autograder.written.questions import lesson_questions

ALL_QUESTIONS = lesson_questions("attention")
# The questions answered in the notebook's own cells; the others read the challenge's texts.
# The score sheet's mechanics are tested on these five.
QUESTIONS = [q for q in ALL_QUESTIONS if q.text_field is None]
NAMES = NOTEBOOK_NAMES = [q.name for q in QUESTIONS]
ALL_NAMES = [q.name for q in ALL_QUESTIONS]


def raw(data: bytes):
    return json.loads(data.decode("utf-8"))


def test_the_rubric_gives_eight_written_questions_and_five_challenge_texts_with_their_levels():
    assert NOTEBOOK_NAMES == ["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"]
    assert {q.name: q.text_field for q in ALL_QUESTIONS if q.text_field} == {
        "reto_supuesto": "assumption", "reto_medicion": "measurement",
        "reto_conclusion": "conclusion", "reto_limitacion": "limitation", "reto_riesgo": "risk"}
    assert all(q.levels[0].points == q.points and q.levels[-1].points == 0 for q in ALL_QUESTIONS)


def test_the_built_notebook_marks_eight_questions_whose_answer_cell_is_the_placeholder():
    # The bundled demo's sin_hacer.ipynb is the built student notebook, untouched (a test of
    # test_examples.py keeps it so): the markers and the placeholder are the build's.
    notebook = raw(fx.demo("sin_hacer.ipynb"))
    regions = answer_regions(notebook["cells"])
    assert len(regions) == len(NOTEBOOK_NAMES)
    for cells in regions:
        assert [c["cell_type"] for c in cells] == ["markdown"]
        assert "".join(cells[0]["source"]).strip() == ANSWER_PLACEHOLDER
    found, problem = answers.extract(notebook, NOTEBOOK_NAMES)
    assert problem is None
    assert {a["state"] for a in found.values()} == {answers.EMPTY}


def test_each_answer_is_read_in_order_with_the_cells_a_student_added():
    notebook = raw(fx.with_answers(fx.demo("correcta.ipynb"), fx.ANSWERS["buena"]))
    cells = notebook["cells"]
    # The student adds a code cell and a second Markdown cell under question 3.
    answer_cells = [i for i, c in enumerate(cells)
                    if "otter_answer_cell" in c["metadata"].get("tags", [])
                    and c["cell_type"] == "markdown"]
    third = answer_cells[2]
    cells[third + 1:third + 1] = [
        {"cell_type": "code", "metadata": {}, "source": "print('```')", "outputs": [],
         "execution_count": None},
        {"cell_type": "markdown", "metadata": {}, "source": ["Y lo ", "comprobé."]}]
    found, problem = answers.extract(notebook, NOTEBOOK_NAMES)
    assert problem is None
    assert found["q1"]["text"] == fx.ANSWERS["buena"][0]
    assert found["q3"]["text"].startswith(fx.ANSWERS["buena"][2])
    assert "````python\nprint('```')\n````" in found["q3"]["text"]
    assert found["q3"]["text"].endswith("Y lo comprobé.")
    assert all(found[n]["state"] == answers.ANSWERED for n in NAMES)


def test_a_notebook_with_other_markers_gives_no_answer_and_says_why():
    notebook = raw(fx.demo("correcta.ipynb"))
    notebook["cells"] = [c for c in notebook["cells"]
                         if "BEGIN QUESTION" not in "".join(c["source"])][:10]
    found, problem = answers.extract(notebook, NAMES)
    assert "9 preguntas escritas" in problem
    assert {a["state"] for a in found.values()} == {answers.MISSING}


def test_an_unreadable_file_saves_its_reason(tmp_path):
    path = tmp_path / "rota.ipynb"
    path.write_bytes(fx.demo("rota.ipynb"))
    answers.save(tmp_path, "rota", "rota.ipynb", path, "attention", QUESTIONS)
    saved = answers.load_all(tmp_path)["rota.ipynb"]
    assert "no es un cuaderno válido" in saved["problem"]
    assert saved["answers"]["q1"]["state"] == answers.MISSING


def test_answers_are_read_from_an_export_zip_too(tmp_path):
    path = tmp_path / "exportada.zip"
    path.write_bytes(fx.export_with_answers(fx.ANSWERS["floja"]))
    found, problem = answers.of_file(path, NAMES)
    assert problem is None and found["q2"]["text"] == "Son cosas del Transformer."


def test_a_long_answer_is_cut_and_marked():
    notebook = raw(fx.with_answers(fx.demo("correcta.ipynb"), ["x" * 30_000] + ["y"] * (len(NAMES) - 1)))
    found, _ = answers.extract(notebook, NAMES)
    assert len(found["q1"]["text"]) == answers.MAX_ANSWER_CHARS and found["q1"]["truncated"]


# --- the scores file ----------------------------------------------------------------------------

ROSTER = [("a.ipynb", "Ana", "1"), ("b.ipynb", "Bea", "2")]


def test_scores_from_a_spanish_spreadsheet_semicolons_and_decimal_commas(tmp_path):
    path = tmp_path / scores.SCORES
    header = ";".join(scores.header(QUESTIONS))
    path.write_bytes(("\ufeff" + header + "\r\n"
                      + "a.ipynb;Ana;1;1,5;bien;2;;;;;;0;vacía\r\n"
                      + "b.ipynb;Bea;2;;;;;;;;;;\r\n").encode("utf-8"))
    sheet = scores.ScoreSheet.read(path, QUESTIONS)
    marks = sheet.marks_for("a.ipynb")
    assert [m.points for m in marks.marks] == [1.5, 2.0, None, None, 0.0, None, None, None, None]
    assert marks.marks[0].comment == "bien" and not marks.complete and marks.graded == 3
    assert sheet.marks_for("b.ipynb").graded == 0
    # The page writes it back in the spreadsheet's own dialect.
    sheet.ensure(ROSTER)
    sheet.set("b.ipynb", "q1", 0.5, "casi")
    sheet.write()
    text = path.read_bytes().decode("utf-8")
    assert text.startswith("\ufeff") and "\r\n" in text
    assert "b.ipynb;Bea;2;0,5;casi" in text and "a.ipynb;Ana;1;1,5;bien;2" in text


@pytest.mark.parametrize("value", ["3", "-1", "dos", "1.5.2"])
def test_a_score_outside_the_question_is_named_and_counts_as_not_graded(tmp_path, value):
    path = tmp_path / scores.SCORES
    path.write_text(",".join(scores.header(QUESTIONS)) + "\n"
                    + f"a.ipynb,Ana,1,{value},,,,,,,,,\nb.ipynb,Bea,2,1,,,,,,,,,\n", "utf-8")
    sheet = scores.ScoreSheet.read(path, QUESTIONS)
    assert [p for p in sheet.problems if f"line 2, column q1: «{value}»" in p]
    assert sheet.marks_for("a.ipynb").marks[0].points is None
    assert sheet.marks_for("b.ipynb").marks[0].points == 1, "the rest of the class goes on"


def test_keys_are_compared_as_written_so_saves_never_multiply_rows(tmp_path):
    """Issue 34.5: « ana.ipynb» (a leading space, or Moodle's no-break space) got a new row on
    every save, and after two saves every save of the class answered 400."""
    path = tmp_path / scores.SCORES
    roster = [(" ana.ipynb", "Ana", "1"), ("\u00a0bea.ipynb", "Bea", "2")]
    for points in (1, 2, 0.5):
        sheet = scores.ScoreSheet.read(path, QUESTIONS)
        sheet.ensure(roster)
        for file, _, _ in roster:
            sheet.set(file, "q1", points, "")
        sheet.write()
    sheet = scores.ScoreSheet.read(path, QUESTIONS)
    assert sheet.files() == [" ana.ipynb", "\u00a0bea.ipynb"] and not sheet.problems
    assert sheet.marks_for(" ana.ipynb").marks[0].points == 0.5
    # Positive control: stripping the key, as the reader did, makes two files of one.
    assert " ana.ipynb".strip() != " ana.ipynb"


def test_two_rows_for_one_file_are_merged_and_named_not_a_400(tmp_path):
    path = tmp_path / scores.SCORES
    path.write_text(",".join(scores.header(QUESTIONS)) + "\n"
                    + "a.ipynb,Ana,1,1,,,,,,,,,\na.ipynb,Ana,1,,,2,,,,,,,\n", "utf-8")
    sheet = scores.ScoreSheet.read(path, QUESTIONS)
    assert [p for p in sheet.problems if "line 3" in p and "merged" in p]
    marks = sheet.marks_for("a.ipynb").marks
    assert (marks[0].points, marks[1].points) == (1, 2)
    sheet.ensure(ROSTER)
    sheet.set("a.ipynb", "q1", 2, "")
    sheet.write()
    assert path.read_text("utf-8-sig").count("a.ipynb") == 1


def test_a_formula_name_is_stored_inert_and_read_back_as_typed(tmp_path):
    name = "=HYPERLINK(CONCATENATE(CHAR(104)),CHAR(88))"
    path = tmp_path / scores.SCORES
    sheet = scores.ScoreSheet.read(path, QUESTIONS)
    sheet.ensure([("=a.ipynb", name, "+1")])
    sheet.set("=a.ipynb", "q1", 1, "@comentario")
    sheet.write()
    text = path.read_text("utf-8-sig")
    assert "'=HYPERLINK" in text and "'=a.ipynb" in text and "'@comentario" in text
    # Positive control: without the prefix, the cell a spreadsheet reads starts with «=».
    assert not any(cell.startswith(("=", "+", "@")) for line in text.splitlines()
                   for cell in line.split(","))
    again = scores.ScoreSheet.read(path, QUESTIONS)
    assert again.files() == ["=a.ipynb"]
    assert again.marks_for("=a.ipynb").marks[0].comment == "@comentario"


def test_rows_the_class_no_longer_has_are_kept_and_the_roster_comes_first(tmp_path):
    path = tmp_path / scores.SCORES
    path.write_text(",".join(scores.header(QUESTIONS)) + "\nviejo.ipynb,,,2,,,,,,,,,\n", "utf-8")
    sheet = scores.ScoreSheet.read(path, QUESTIONS)
    sheet.ensure(ROSTER)
    sheet.write()
    keys = [row.split(",")[0] for row in path.read_text("utf-8-sig").splitlines()[1:]]
    assert keys == ["a.ipynb", "b.ipynb", "viejo.ipynb"]


# --- feedback and final_grades.csv ----------------------------------------------------------------


def marks_of(points, comments=None):
    comments = comments or {}
    return scores.StudentMarks("a.ipynb", [scores.Mark(q, p, comments.get(q.name, ""))
                                           for q, p in zip(QUESTIONS, points)])


def test_feedback_shows_each_level_and_the_comment_as_typed():
    comment = "- d_k < d_v, *no* `x`\n1. [enlace](javascript:alert(1)) <b>negrita</b>"
    record = Record(file="a.ipynb", stem="a", scores={"attention": [4.0, 5.0]})
    text = feedback.render(record, manual_points=10,
                           written=marks_of([2, 1, 0, 2, 2], {"q2": comment}))
    assert "**Respuestas escritas: 7 / 10**" in text and "**Nota total: 11 / 15**" in text
    assert "valen 10 puntos más" not in text
    assert QUESTIONS[1].level_of(1).description in text
    page = markdown_html.renderer().render(text)
    # The instructor's text comes out as typed: no list, no emphasis, no link, no tag.
    assert "- d_k &lt; d_v, *no* `x`" in page
    assert "1. [enlace](javascript:alert(1)) &lt;b&gt;negrita&lt;/b&gt;" in page
    assert "<b>" not in page and "href" not in page


def test_feedback_before_every_answer_is_graded_gives_no_total():
    record = Record(file="a.ipynb", stem="a", scores={"attention": [4.0, 5.0]})
    text = feedback.render(record, manual_points=10, written=marks_of([2, None, 1, None, None]))
    assert "corregidas 3 de 5" not in text and "corregidas 2 de 5 preguntas" in text
    assert "Nota total" not in text and "| Pregunta 2 | sin corregir |" in text
    assert "Nivel de la rúbrica" in text


def test_final_grades_keep_otters_columns_and_add_identity_written_and_final_points(tmp_path):
    frame = pd.DataFrame([
        {"file": "points-per-question", "attention": 5.0, "total_points_earned": 20.0,
         "percent_correct": 1.0, "grading_status": "--", "flags": ""},
        {"file": "a.ipynb", "attention": 5.0, "total_points_earned": 17.0,
         "percent_correct": 0.85, "grading_status": "Completed", "flags": ""},
        {"file": "b.ipynb", "attention": 0.0, "total_points_earned": 0.0,
         "percent_correct": 0.0, "grading_status": "Completed", "flags": ""}])
    otter = list(frame.columns)
    path = tmp_path / scores.SCORES
    # a: the nine questions (11 of 18) and the challenge's five texts (4,5 of 5); b: one answer.
    challenge = ",1,,1,,0.5,,1,,1,"
    path.write_text(",".join(scores.header(ALL_QUESTIONS)) + "\n"
                    "a.ipynb,,,2,,1,,2,,1,,0,,2,,1,,0,,2," + challenge + "\nb.ipynb,,,1,,,,,,,,,\n", "utf-8")
    written = merge.Written(tmp_path, "attention")
    out = merge.extend_final_grades(frame, {"a.ipynb": ("Ana", "1"), "b.ipynb": ("Bea", "2")},
                                    written)
    assert list(out.columns) == otter + ["student_name", "student_id"] + ALL_NAMES + ["final_points"]
    assert list(out["final_points"]) == [43.0, 32.5, ""]
    assert list(out["q1"]) == [2.0, 2.0, 1.0] and list(out["q2"]) == [2.0, 1.0, ""]
    assert list(out["student_name"]) == ["", "Ana", "Bea"]


def test_no_lms_names_and_no_scores_leave_otters_csv_as_it_was(tmp_path):
    frame = pd.DataFrame([{"file": "a.ipynb", "total_points_earned": 3.0}])
    out = merge.extend_final_grades(frame.copy(), {"a.ipynb": (None, None)},
                                    merge.Written(tmp_path, "attention"))
    assert list(out.columns) == list(frame.columns)


def test_a_bad_score_cell_is_named_and_the_rest_of_the_scores_are_kept(tmp_path):
    (tmp_path / scores.SCORES).write_text(",".join(scores.header(ALL_QUESTIONS)) + "\n"
                                          "a.ipynb,,,9,1,,,,,,,,\n", "utf-8")
    written = merge.Written(tmp_path, "attention")
    assert written.error is None
    assert [p for p in written.sheet.problems if "column q1: «9»" in p]
    marks = written.marks_for("a.ipynb").marks
    assert marks[0].points is None and not written.marks_for("a.ipynb").complete


def test_the_nth_marked_question_is_the_rubrics_nth_written_question():
    # The built notebook names no question: answers are matched by order, so the master's
    # manual questions must come in the rubric's order.
    from attention import lesson
    from lesson055 import MASTER, RUBRIC
    from kit_autograder.build.otter_master import QUESTION_HEADER, _raw_config, build_otter_master
    from kit_autograder.build.rubric import load_rubric

    nb = build_otter_master(MASTER, load_rubric(RUBRIC), lesson, "c2FsdA==", [])
    configs = [c for c in (_raw_config(cell, QUESTION_HEADER) for cell in nb.cells) if c]
    assert [c["name"] for c in configs if c.get("manual")] == NOTEBOOK_NAMES


def test_the_feedback_says_which_written_answers_were_left_empty():
    answered = fx.ANSWERS["buena"]
    two_empty = [answered[0], "", answered[2], "   ", *answered[4:]]
    empty = empty_written_answers
    assert empty(fx.with_answers(fx.demo("correcta.ipynb"), answered)) == []
    assert empty(fx.with_answers(fx.demo("correcta.ipynb"), two_empty)) == [2, 4]
    assert empty(fx.demo("sin_hacer.ipynb")) == [1, 2, 3, 4, 5, 6, 7, 8, 9]  # placeholders
    assert empty(b"not json") == []
    record = Record(file="a.ipynb", stem="a", scores={"attention": [4.0, 5.0]},
                    empty_answers=[2, 4])
    text = feedback.render(record, manual_points=10)
    assert "**Tus respuestas escritas 2 y 4 están vacías**" in text and "Escríbelas" in text
    one = feedback.render(Record(file="a.ipynb", stem="a", empty_answers=[3]), manual_points=10)
    assert "**Tu respuesta escrita 3 está vacía**" in one and "Escríbela " in one
    # Once a person has graded every answer, the score says it all.
    graded = feedback.render(record, manual_points=10, written=marks_of([2, 0, 1, 0, 2]))
    assert "están vacías" not in graded
    assert "vacía" not in feedback.render(Record(file="a.ipynb", stem="a"), manual_points=10)


def test_a_review_key_means_the_same_points_on_every_question():
    """Issue 47.2: on questions 1 to 9 the keys were the points, on the challenge's five texts
    (1 / 0,5 / 0) their positions: «2» gave 2 points on one and 0,5 on the other."""
    from kit_autograder.written.questions import Level, WrittenQuestion
    from kit_autograder.written.review import level_keys

    by_key = {}
    for question in ALL_QUESTIONS:
        for level, key in zip(question.levels, level_keys(question)):
            by_key.setdefault(key, set()).add(level.points)
            if key.isdigit():
                assert float(key) == level.points, (question.name, key)
    assert by_key == {"2": {2.0}, "1": {1.0}, "0": {0.0}, "m": {0.5}}
    # Positive control: numbered by position, the challenge's levels read «1, 2, 3», so that
    # «2» is 0,5 there and 2 on question 1.
    challenge = next(q for q in ALL_QUESTIONS if q.text_field is not None)
    positions = {str(i + 1): level.points for i, level in enumerate(challenge.levels)}
    assert positions["2"] == 0.5 != 2.0
    # A level worth more than 9, or two levels worth one digit, take letters too.
    odd = WrittenQuestion("x", "", 12.0, (Level(12.0, ""), Level(6.0, ""), Level(0.25, "")))
    assert level_keys(odd) == ["m", "6", "p"]


def test_the_feedback_heading_names_the_students_file_not_its_path_in_the_download():
    """Issue 47.9: the Moodle feedback page read «Informe de evaluación: `José
    Pérez_2000001_assignsubmission_file/entrega/exportada.zip`», the download's inner path."""
    file = "José Pérez_2000001_assignsubmission_file/entrega/exportada.zip"
    record = Record(file=file, stem="a", scores={"attention": [4.0, 5.0]})
    heading = feedback.render(record).splitlines()[0]
    assert heading == "# Informe de evaluación: `exportada.zip`"
    # Positive control: the record still knows the file by its path, the kit's key.
    assert record.file == file and "assignsubmission" in file
