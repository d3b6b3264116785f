"""What `make grade` writes for the bundled demo: the CSV in `otter grade`'s exact format,
Gradescope results that follow the spec, Spanish feedback that reveals nothing hidden, and a
command line that fails only when the batch cannot run."""

import pandas as pd
import pytest

from autograder.checks import GRADED_FUNCTIONS
from grade_fixtures import (  # noqa: F401 - fixtures
    demo_files, demo_folder, demo_graded, grade_cli, gradescope_schema, read_feedback, read_grades,
    read_results,
)

OTTER_COLUMNS_AFTER_QUESTIONS = ["total_points_earned", "percent_correct", "grading_status"]
# The zip declares the verification plugin, so make grade appends its flags after Otter's columns.
FLAGS_AFTER_OTTER = ["flags"]


@pytest.fixture(scope="module")
def grades(demo_graded):
    _, out = demo_graded
    return read_grades(out)


def test_final_grades_csv_has_otter_grades_exact_columns(grades):
    header, rows = grades
    questions = header[1:-4]
    assert header[0] == "file"
    assert header[-4:] == OTTER_COLUMNS_AFTER_QUESTIONS + FLAGS_AFTER_OTTER
    assert questions == sorted(questions) and set(GRADED_FUNCTIONS) <= set(questions)


def test_final_grades_csv_starts_with_the_points_per_question(demo_graded):
    _, out = demo_graded
    df = pd.read_csv(out / "final_grades.csv")
    first = df.iloc[0]
    assert first["file"] == "points-per-question" and first["grading_status"] == "--"
    assert first["percent_correct"] == 1
    questions = df.columns[1:-4]
    assert first["total_points_earned"] == pytest.approx(sum(first[q] for q in questions))
    assert list(df["file"][1:]) == sorted(df["file"][1:])


def test_demo_scores(grades):
    _, rows = grades
    possible = rows["points-per-question"]
    for name in ("correcta.ipynb", "exportada.zip"):
        assert rows[name]["grading_status"] == "Completed"
        for question in GRADED_FUNCTIONS:
            assert float(rows[name][question]) == float(possible[question])
    partial = {question: float(rows["parcial.ipynb"][question]) for question in GRADED_FUNCTIONS}
    assert partial == {"attention": 5, "multihead": 1, "positional_encoding": 2,
                       "transformer_block": 0}
    assert float(rows["sin_hacer.ipynb"]["total_points_earned"]) == 0
    assert rows["sin_hacer.ipynb"]["grading_status"] == "Completed"
    assert float(rows["rota.ipynb"]["total_points_earned"]) == 0
    assert "no es JSON" in rows["rota.ipynb"]["grading_status"]


def test_every_results_json_follows_the_gradescope_spec(demo_graded, demo_files,
                                                        gradescope_schema):
    _, out = demo_graded
    for name in demo_files:
        results = read_results(out, name.rsplit(".", 1)[0])
        assert not [e.message for e in gradescope_schema.iter_errors(results)], name


def test_feedback_gives_the_score_of_every_question(demo_graded):
    _, out = demo_graded
    feedback = read_feedback(out, "parcial")
    assert "**Puntuación: " in feedback
    for line in ("| `attention` | 5 / 5 |", "| `multihead` | 1 / 3 |",
                 "| `positional_encoding` | 2 / 3 |", "| `transformer_block` | 0 / 3 |"):
        assert line in feedback


def test_feedback_explains_what_failed_and_why(demo_graded):
    _, out = demo_graded
    feedback = read_feedback(out, "parcial")
    assert "falla en el caso oculto «3 cabezas con máscara causal»" in feedback
    assert "¿pasas la máscara a cada cabeza?" in feedback  # the public test's own message
    assert "todavía no has implementado `transformer_block`" in feedback


def test_feedback_never_says_all_passed_while_hidden_tests_fail(demo_graded):
    _, out = demo_graded
    feedback = read_feedback(out, "parcial")
    section = feedback.split("### `positional_encoding`")[1].split("###")[0]
    assert "Las pruebas públicas pasan, pero las ocultas no" in section
    assert "han pasado" not in section
    assert "All test cases passed" not in feedback
    attention = feedback.split("### `attention`")[1].split("###")[0]
    assert "Todas sus pruebas, públicas y ocultas, han pasado" in attention


def test_feedback_shows_no_test_source_and_no_hidden_values(demo_graded, demo_files):
    _, out = demo_graded
    from attention.cases import CASES

    for name in demo_files:
        feedback = read_feedback(out, name.rsplit(".", 1)[0])
        for leak in ("Error at line", "check('", "from autograder", "def test_", "@test_case",
                     "reference", "case.inputs"):
            assert leak not in feedback, (name, leak)
        for case in CASES:
            for value in case.inputs().values():
                if hasattr(value, "ravel") and value.dtype.kind == "f":
                    assert f"{value.ravel()[0]:.4f}" not in feedback, (name, case.name)


def test_progress_goes_to_stderr_and_the_summary_table_to_stdout(demo_graded, demo_files):
    completed, _ = demo_graded
    for index in range(1, len(demo_files) + 1):
        assert f"[{index}/{len(demo_files)}]" in completed.stderr
    assert "file" in completed.stdout and "points" in completed.stdout
    for name in demo_files:
        assert name in completed.stdout


def test_batch_exits_2_only_when_it_cannot_run(tmp_path, autograder_zip, demo_folder):
    empty = tmp_path / "vacia"
    empty.mkdir()
    assert grade_cli(tmp_path / "no-existe", tmp_path / "o1", autograder_zip).returncode == 2
    assert grade_cli(empty, tmp_path / "o2", autograder_zip).returncode == 2
    assert grade_cli(demo_folder, tmp_path / "o3", tmp_path / "no.zip").returncode == 2
