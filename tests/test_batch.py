"""`make grade` on a folder: the demo's scores, Otter's CSV format, a row and a Spanish reason
for every bad input, bounded output, and the same inputs and scores on every regrade."""

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import nbformat
import pytest

from grading_harness import (Notebooks, grade_here, read_csv, read_records, total, write_folder,
                             zip_bytes)

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "gradescope_results.schema.json")
                    .read_text("utf-8"))
FUNCTIONS = ("attention", "multihead", "positional_encoding", "transformer_block")
TIMEOUT = 12  # the batch's TIMEOUT here, for the notebook that never ends

NBFORMAT3 = json.dumps({"metadata": {"name": "attention"}, "nbformat": 3, "nbformat_minor": 0,
                        "worksheets": [{"cells": [], "metadata": {}}]}).encode()
def memory_in_subprocesses(megabytes_each, count=3):
    """Processes each under its own address-space limit, together over the job's memory,
    which only the zygote's poll of the whole job can see. The cell waits until every child
    holds its memory: on a loaded machine the children could otherwise still be writing it
    when the cell's own time runs out and the grading calls end, and the poll see nothing."""
    return (
        "import subprocess, sys, time\n"
        "hijos = [subprocess.Popen([sys.executable, '-c',\n"
        f"         \"import time; x = b'x' * ({megabytes_each} * 2**20); print(1, flush=True); \"\n"
        "         \"time.sleep(120)\"], stdout=subprocess.PIPE)\n"
        f"         for _ in range({count})]\n"
        "for hijo in hijos:\n"
        "    hijo.stdout.readline()\n"
        "time.sleep(120)\n")
MEMORY_BOMB = """\
import numpy as np
bloques = []
while True:
    bloques.append(np.zeros(10_000_000))  # 80 MB más cada vez
"""
# np.zeros reserves without writing: the bomb meets the address-space limit in milliseconds, so
# on a loaded machine the cell's time budget cannot stop it first (np.ones wrote 2 GB first).
NEVER_ENDS = "while True:\n    pass\n"
OUTPUT_FLOOD = 'for _ in range(1_000_000):\n    print("x" * 99)  # 100 MB en total\n'


def with_metadata(data, change):
    nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    change(nb.metadata)
    return nbformat.writes(nb).encode("utf-8")


def real_export_zip(notebook, folder: Path):
    """The zip that the notebook's own ``grader.export(pdf=False)`` writes, with real Otter."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notebook_student.ipynb").write_bytes(notebook)
    script = ("import otter; otter.Notebook('notebook_student.ipynb').export("
              "pdf=False, display_link=False, export_path='exportada_con_otter.zip')")
    subprocess.run([sys.executable, "-c", script], cwd=folder, check=True, capture_output=True,
                   timeout=120)
    return (folder / "exportada_con_otter.zip").read_bytes()


@pytest.fixture(scope="session")
def zoo(built_dist, autograder_zip, tmp_path_factory):
    """The demo plus every bad input, graded once."""
    sys.path.insert(0, str(ROOT / "assignments"))
    from attention.synthetic import demo_submissions

    notebooks = Notebooks(built_dist)
    right = notebooks.correct()
    files = dict(demo_submissions(built_dist))
    files.update({
        "vacio.ipynb": b"",
        "no_es_json.ipynb": b"<html><body>502 Bad Gateway</body></html>",
        "nbformat3.ipynb": NBFORMAT3,
        "otra_tarea.ipynb": with_metadata(
            right, lambda m: m["otter"].__setitem__("assignment_name", "054-otra-tarea")),
        "sin_cuaderno.zip": zip_bytes({"notas.txt": "mi entrega", "solucion.py": "x = 1\n"}),
        "dos_cuadernos.zip": zip_bytes({"notebook_student.ipynb": right,
                                        "copia.ipynb": right}),
        "bomba_zip.zip": zip_bytes({"notebook_student.ipynb": b" " * (64 * 2**20)}),
        "kernel_raro.ipynb": with_metadata(
            right, lambda m: m.__setitem__("kernelspec", {"name": "python3-otro",
                                                          "display_name": "Python (otro)",
                                                          "language": "python"})),
        "kernelspec_texto.ipynb": with_metadata(right, lambda m: m.__setitem__("kernelspec",
                                                                              "python3")),
        "nunca_termina.ipynb": notebooks.correct([NEVER_ENDS]),
        "bomba_memoria.ipynb": notebooks.correct([MEMORY_BOMB]),
        "os_exit.ipynb": notebooks.correct(["import os\nos._exit(0)"]),
        "salida_enorme.ipynb": notebooks.correct([OUTPUT_FLOOD]),
        "exportada_con_otter.zip": real_export_zip(right, tmp_path_factory.mktemp("export")),
        "sintaxis.ipynb": notebooks.with_function(
            "correct", "attention", "def attention(Q, K, V, mask=None):\n    return (Q @ K.T\n"),
    })
    folder = write_folder(tmp_path_factory.mktemp("zoo"), files)
    out = tmp_path_factory.mktemp("zoo-out")
    grade_here(folder, out, autograder_zip, timeout=TIMEOUT)
    return out, read_csv(out), read_records(out), files


def feedback(out, name):
    return (out / "feedback" / f"{Path(name).stem}.md").read_text("utf-8")


def results(out, name):
    return json.loads((out / "results" / f"{Path(name).stem}.json").read_text("utf-8"))


def scores(row):
    return {f: float(row[f]) for f in FUNCTIONS + ("student_extension",)}


# --- the demo ----------------------------------------------------------------------------------


def test_the_demo_gets_the_scores_the_readme_promises(zoo):
    out, rows, records, _ = zoo
    assert scores(rows["correcta.ipynb"]) == {"attention": 5, "multihead": 3,
                                              "positional_encoding": 3, "transformer_block": 3,
                                              "student_extension": 6}
    assert scores(rows["exportada.zip"]) == scores(rows["correcta.ipynb"])
    assert scores(rows["exportada_con_otter.zip"]) == scores(rows["correcta.ipynb"])
    partial = scores(rows["parcial.ipynb"])
    assert partial["attention"] == 5 and partial["transformer_block"] == 0
    assert 0 < partial["multihead"] < 3 and 0 < partial["positional_encoding"] < 3
    assert sum(scores(rows["sin_hacer.ipynb"]).values()) == 0
    # The untouched notebook's written answers are still the placeholder: it says so.
    assert records["sin_hacer.ipynb"].empty_answers == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert "Tus respuestas escritas 1, 2, 3, 4, 5, 6, 7, 8 y 9 están vacías" in feedback(out, "sin_hacer.ipynb")


PRACTICE = {"cruzada": "atencion_cruzada", "relleno": "mascara_relleno",
            "cabezas": "multicabeza_fusionada", "cache_kv": "paso_con_cache",
            "coste": "productos_escalares"}


def test_the_practice_exercises_are_neither_graded_nor_reported_done_or_not(zoo):
    """Their checks are the student's alone: no column, no verdict, no line of the feedback and
    no error of a cell, whether they are done (the demo's correct notebook solves them) or still
    the stubs students get."""
    out, rows, records, files = zoo
    assert b"Escribe atencion_cruzada" not in files["correcta.ipynb"]  # done, with the solution
    assert b"Escribe atencion_cruzada" in files["sin_hacer.ipynb"]  # the stub
    for name in ("correcta.ipynb", "sin_hacer.ipynb"):
        record = records[name]
        assert not set(PRACTICE) & set(rows[name])
        assert not {verdict.question for verdict in record.verdicts} & set(PRACTICE)
        errors = json.dumps(record.cell_errors, ensure_ascii=False)
        assert not any(function in errors for function in PRACTICE.values()), errors
        graded_part = feedback(out, name).split("## Lo que imprimió")[0]
        assert not any(f"`{q}`" in graded_part or f"`{f}`" in graded_part
                       for q, f in PRACTICE.items()), name
    # The positive control: the untouched notebook does have cell errors, its graded stubs' (and
    # the names their failed cells left undefined).
    errors = records["sin_hacer.ipynb"].cell_errors
    assert {error["exception"] for error in errors} == {"NotImplementedError", "NameError"}
    assert all(error["message"].startswith("Implementa ") for error in errors
               if error["exception"] == "NotImplementedError")


def test_what_the_notebook_printed_names_the_file_the_student_uploaded(zoo):
    # The job runs every notebook under one fixed name (hidden_inputs.NOTEBOOK_NAME), which
    # the first cell prints («Listo: cuaderno «…»»); the student reads their own file's name.
    from kit_autograder.hidden_inputs import NOTEBOOK_NAME

    out, _, records, _ = zoo
    for name in ("correcta.ipynb", "parcial.ipynb"):
        for text in (feedback(out, name), results(out, name)["output"],
                     records[name].output):
            assert f"Listo: cuaderno «{name}»" in text
            assert NOTEBOOK_NAME not in text


def test_the_csv_is_otter_grades_format_with_a_flags_column(zoo):
    out, rows, _, files = zoo
    header = (out / "final_grades.csv").read_text("utf-8").splitlines()[0].split(",")
    # Otter's columns, with the questions in the lesson's order (Otter's own is alphabetical).
    assert header == ["file", "attention", "multihead", "positional_encoding",
                      "transformer_block", "student_extension", "total_points_earned",
                      "percent_correct", "grading_status", "flags"]
    assert rows["points-per-question"]["total_points_earned"] == "20.0"
    assert set(rows) - {"points-per-question"} == set(files)


def test_every_results_json_is_valid_gradescope_output_in_markdown(zoo):
    out, rows, _, files = zoo
    for name in files:
        data = results(out, name)
        jsonschema.validate(data, SCHEMA)
        if "output" in data:
            assert data["output_format"] == "md"


def test_no_english_and_no_otter_scaffolding_in_the_feedback_or_any_box_of_results_json(zoo):
    from markdown_it import MarkdownIt

    from english import ENGLISH, OTTER_SCAFFOLDING

    out, rows, records, files = zoo
    md = MarkdownIt("commonmark").enable("table")
    for name in files:
        data = results(out, name)
        boxes = [test["output"] for test in data["tests"] if "output" in test]
        for text in [feedback(out, name), data.get("output", ""), *boxes]:
            for english in ENGLISH + OTTER_SCAFFOLDING:
                assert english not in text, (name, english)
        for box in boxes:
            # Real Markdown: no line indented into an accidental code block, and no sentence
            # said twice (student_extension's box used to say one five times).
            assert "code_block" not in {token.type for token in md.parse(box)}, (name, box)
            lines = [line.strip() for line in box.splitlines() if line.strip()]
            assert len(lines) == len(set(lines)), (name, box)
    # Each question's box is that question's section of the feedback.
    text = feedback(out, "parcial.ipynb")
    for test in results(out, "parcial.ipynb")["tests"]:
        assert f"### `{test['name']}`: " in text and test["output"] in text, test["name"]


def test_a_kernelspec_that_is_a_string_is_graded_with_a_note(zoo):
    out, rows, records, _ = zoo
    assert rows["kernelspec_texto.ipynb"]["grading_status"] == "Completed"
    assert total(rows["kernelspec_texto.ipynb"]) == 20
    assert "no dice qué kernel usa" in feedback(out, "kernelspec_texto.ipynb")


def test_feedback_never_says_everything_passed_of_a_question_that_lost_points(zoo):
    out, rows, records, files = zoo
    for name, record in records.items():
        if not record.graded:
            continue
        text = feedback(out, name)
        for question, (earned, possible) in record.scores.items():
            section = text.split(f"### `{question}`:", 1)[1].split("###", 1)[0]
            if earned < possible:
                assert "han pasado" not in section, (name, question)


def test_feedback_says_what_a_person_grades_by_hand(zoo):
    out, *_ = zoo
    text = feedback(out, "correcta.ipynb")
    from kit_autograder.build.rubric import load_rubric, manual_points
    from kit_autograder.spanish_numbers import number
    from lesson055 import RUBRIC

    by_hand = manual_points(load_rubric(RUBRIC))
    assert by_hand > 0
    assert "20 / 20" in text and f"{number(by_hand)} puntos más" in text
    assert "corrige una persona" in text


# --- bad inputs: a row, 0 points and a Spanish reason each ----------------------------------------


@pytest.mark.parametrize("name, words", [
    ("vacio.ipynb", ["vacío"]),
    ("no_es_json.ipynb", ["no es JSON"]),
    ("nbformat3.ipynb", ["nbformat 3"]),
    ("otra_tarea.ipynb", ["otra tarea", "054-otra-tarea"]),
    ("sin_cuaderno.zip", ["no contiene ningún cuaderno"]),
    ("dos_cuadernos.zip", ["2 cuadernos", "copia.ipynb"]),
    ("bomba_zip.zip", ["MB"]),
    ("rota.ipynb", ["no es JSON"]),
])
def test_an_ungradable_file_scores_zero_with_its_reason(zoo, name, words):
    out, rows, records, _ = zoo
    row = rows[name]
    assert float(row["total_points_earned"]) == 0
    status = row["grading_status"]
    assert status != "Completed" and all(word in status for word in words), status
    assert "No se ha podido evaluar tu entrega" in feedback(out, name)
    assert results(out, name).get("score", 0) == 0


def test_another_assignment_gets_the_spanish_reason_in_place_of_otters_english_error(zoo):
    out, rows, *_ = zoo
    data = results(out, "otra_tarea.ipynb")
    assert data["score"] == 0 and data["tests"] == [] and data["output_format"] == "md"
    assert "No se ha podido evaluar tu entrega" in data["output"]
    assert "054-otra-tarea" in data["output"]
    assert "Otter encountered" not in json.dumps(data)
    # The instructor's CSV keeps Otter's own words about it.
    assert "054-otra-tarea" in rows["otra_tarea.ipynb"]["grading_status"]


def test_an_unknown_kernel_is_graded_with_python3_and_said_so(zoo):
    out, rows, *_ = zoo
    assert float(rows["kernel_raro.ipynb"]["total_points_earned"]) == 20
    assert "python3-otro" in feedback(out, "kernel_raro.ipynb")


def test_a_notebook_that_never_ends_is_stopped_and_its_functions_still_graded(zoo):
    # Its functions were defined before the endless cell: they answer, and a person is told.
    out, rows, records, _ = zoo
    record = records["nunca_termina.ipynb"]
    assert sum(scores(rows["nunca_termina.ipynb"]).values()) == 20
    assert any(error["kind"] == "time" for error in record.cell_errors)
    assert any(flag.kind == "límite" for flag in record.flags)
    # The endless cell is the last one: stopped (at a cell's budget, or when the notebook's time
    # ran out first, as the machine's load decides), with nothing after it to run.
    said = feedback(out, "nunca_termina.ipynb")
    assert "se detuvo" in said and "celdas siguientes" not in said


def test_memory_in_a_cell_is_a_memory_error_of_that_cell(zoo):
    # One process asking for too much meets its address-space limit: a MemoryError in that
    # cell, and the functions defined before it are still graded.
    from kit_autograder.sandbox.client import Limits

    out, rows, records, _ = zoo
    record = records["bomba_memoria.ipynb"]
    assert any(e["exception"] == "MemoryError" for e in record.cell_errors), (
        record.cell_errors, record.sandbox)  # under heavy load, say whether time ran out first
    assert record.sandbox["peak_mb"] <= Limits.memory_mb * 1.25
    assert sum(scores(rows["bomba_memoria.ipynb"]).values()) == 20


# A batch of its own, at half the default memory and with time to spare: its children must
# write more than the limit before the cell's budget runs out, and at the default 2 GiB that
# was 3 GB, which a loaded machine did not write within the zoo's 10 s cell budget (the cell
# was stopped, its children with it, and the notebook kept 20 of 20).
MEMORY_TEST_MB = 1024


@pytest.fixture(scope="module")
def memory_batch(built_dist, autograder_zip, tmp_path_factory):
    from kit_autograder.batch import grade_folder
    from kit_autograder.sandbox.client import Limits

    notebooks = Notebooks(built_dist)
    # 3 × 500 MB: over the job's limit with its slack (1.25 × 1024 MB), each child under it.
    files = {"memoria_en_subprocesos.ipynb": notebooks.correct([memory_in_subprocesses(500)])}
    folder = write_folder(tmp_path_factory.mktemp("memoria"), files)
    out = tmp_path_factory.mktemp("memoria-out")
    grade_folder(folder, out, autograder_zip=autograder_zip, jobs=1,
                 limits=Limits(notebook_seconds=120, memory_mb=MEMORY_TEST_MB))
    return out, read_csv(out), read_records(out), files


def test_memory_taken_by_processes_the_notebook_starts_fails_closed(memory_batch):
    out, rows, records, _ = memory_batch
    record = records["memoria_en_subprocesos.ipynb"]
    assert float(rows["memoria_en_subprocesos.ipynb"]["total_points_earned"]) == 0
    assert record.sandbox["ending"] == "memory"
    # However many cases were graded before the poll saw the processes' memory (more on a
    # loaded machine), none keeps its verdict: the score does not depend on the load.
    assert record.verdicts and {v.unverified for v in record.verdicts} == {"memory"}
    assert "límite de memoria" in feedback(out, "memoria_en_subprocesos.ipynb")


def test_os_exit_fails_closed_with_the_reason(zoo):
    out, rows, records, _ = zoo
    assert float(rows["os_exit.ipynb"]["total_points_earned"]) == 0
    assert "os._exit()" in feedback(out, "os_exit.ipynb")
    assert any(flag.kind == "ejecución" for flag in records["os_exit.ipynb"].flags)


def test_a_function_whose_cell_failed_is_explained_by_that_cell(zoo):
    out, rows, *_ = zoo
    assert float(rows["sintaxis.ipynb"]["attention"]) == 0
    text = feedback(out, "sintaxis.ipynb")
    assert "que define `attention` falló al ejecutarse (SyntaxError: la celda está incompleta" \
        in text
    assert "no encuentro la función" not in text and "ipython-input" not in text
    # The cells that then use `attention` are knock-on errors of that one, said once.
    assert "Por eso fallan también" in text


def test_100_mb_of_output_is_cut_in_the_feedback(zoo):
    out, rows, *_ = zoo
    assert float(rows["salida_enorme.ipynb"]["total_points_earned"]) == 20
    path = out / "feedback" / "salida_enorme.md"
    assert path.stat().st_size < 50_000
    assert "Recortado" in path.read_text("utf-8")


# --- each submission's own inputs, the same on every regrade ---------------------------------------


def test_regrading_the_same_file_gives_the_same_inputs_and_scores(zoo, autograder_zip,
                                                                  tmp_path):
    out, rows, records, files = zoo
    folder = write_folder(tmp_path / "again", {"parcial.ipynb": files["parcial.ipynb"]})
    grade_here(folder, tmp_path / "out", autograder_zip)
    first, second = records["parcial.ipynb"], read_records(tmp_path / "out")["parcial.ipynb"]
    assert first.scores == second.scores
    assert [v.messages for v in first.verdicts] == [v.messages for v in second.verdicts]


def test_two_different_submissions_get_different_inputs(zoo):
    from conftest import TEST_SALT
    from kit_autograder.hidden_inputs import generator, identity, world

    from attention.cases import cases_for

    *_, files = zoo
    salt = base64.b64decode(TEST_SALT)

    def inputs(name):
        code = identity(world(files[name]))
        return [case.inputs(generator(salt, code, "attention", case.name))["Q"]
                for case in cases_for("attention")]

    assert all((a == b).all() for a, b in zip(inputs("correcta.ipynb"), inputs("correcta.ipynb")))
    assert not any((a == b).all() for a, b in zip(inputs("correcta.ipynb"),
                                                  inputs("parcial.ipynb")))
