"""Every bad input of the grading issue gets its own row, 0 points and a plain Spanish reason;
the batch never stops for one of them."""

import os
from pathlib import Path

import pytest

from grade_fixtures import (  # noqa: F401 - fixtures
    ORPHAN_MARKER, ZOO_MEMORY_MB, ZOO_TIMEOUT_S, demo_files, read_feedback,
    read_grades, read_results, zoo_graded,
)


@pytest.fixture(scope="module")
def zoo(zoo_graded):
    completed, out = zoo_graded
    header, rows = read_grades(out)
    return out, rows


def assert_zero_with_reason(zoo, name, *words):
    out, rows = zoo
    row = rows[name]
    assert float(row["total_points_earned"]) == 0
    assert float(row["percent_correct"]) == 0
    status = row["grading_status"]
    assert status != "Completed"
    for word in words:
        assert word in status, f"{name}: {word!r} not in {status!r}"
    stem = Path(name).stem
    feedback = read_feedback(out, stem)
    assert "No se ha podido evaluar tu entrega" in feedback and status[1:] in feedback
    assert read_results(out, stem)["score"] == 0
    return status


def assert_full_marks(zoo, name):
    out, rows = zoo
    row = rows[name]
    assert row["grading_status"] == "Completed"
    possible = rows["points-per-question"]
    for column in ("attention", "multihead", "positional_encoding", "transformer_block"):
        assert float(row[column]) == float(possible[column]), column


def test_empty_file_scores_zero_with_reason(zoo):
    assert_zero_with_reason(zoo, "vacio.ipynb", "vacío")


def test_non_json_notebook_scores_zero_with_reason(zoo):
    assert_zero_with_reason(zoo, "no_es_json.ipynb", "no es JSON")


def test_nbformat3_notebook_scores_zero_with_reason(zoo):
    assert_zero_with_reason(zoo, "nbformat3.ipynb", "nbformat 3")


def test_notebook_from_another_assignment_scores_zero_with_reason(zoo):
    assert_zero_with_reason(zoo, "otra_tarea.ipynb", "otra tarea", "054-otra-tarea")


def test_another_assignment_gets_otters_own_gradescope_error(zoo):
    out, _ = zoo
    results = read_results(out, "otra_tarea")
    assert results["tests"][0]["name"] == "Autograder Error"
    assert "Received submission for assignment '054-otra-tarea'" in results["tests"][0]["output"]


def test_zip_without_notebook_scores_zero_with_reason(zoo):
    # Otter would grade the zip's solucion.py instead; the kit refuses.
    assert_zero_with_reason(zoo, "sin_cuaderno.zip", "no contiene ningún cuaderno")


def test_zip_with_two_notebooks_scores_zero_with_reason(zoo):
    assert_zero_with_reason(zoo, "dos_cuadernos.zip", "2 cuadernos", "attention-copia.ipynb")


def test_unknown_kernel_is_graded_with_python3(zoo):
    assert_full_marks(zoo, "kernel_raro.ipynb")
    feedback = read_feedback(zoo[0], "kernel_raro")
    assert "python3-otro" in feedback and "python3" in feedback


def test_infinite_loop_scores_zero_with_reason(zoo):
    status = assert_zero_with_reason(zoo, "bucle_infinito.ipynb", "se agotó el tiempo",
                                     f"{ZOO_TIMEOUT_S:g} s")
    assert "celda" in status  # it names the cell that was running


def test_timeout_kills_the_whole_process_group(zoo):
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        assert ORPHAN_MARKER.encode() not in cmdline, f"process {pid} outlived its notebook"


def test_memory_bomb_scores_zero_with_reason(zoo):
    assert_zero_with_reason(zoo, "bomba_memoria.ipynb", "memoria", f"{ZOO_MEMORY_MB} MB")


def test_memory_cap_counts_processes_the_notebook_starts(zoo):
    # The notebook itself stays small; the process it starts takes 900 MB, then sleeps.
    assert_zero_with_reason(zoo, "memoria_en_subproceso.ipynb", "memoria")


def test_os_exit_scores_zero_with_reason(zoo):
    assert_zero_with_reason(zoo, "os_exit.ipynb", "os._exit()", "terminó")


def test_100_mb_of_output_is_truncated_in_the_feedback(zoo):
    out, rows = zoo
    assert_full_marks(zoo, "salida_enorme.ipynb")
    feedback_path = out / "feedback" / "salida_enorme.md"
    assert feedback_path.stat().st_size < 50_000
    feedback = feedback_path.read_text("utf-8")
    assert "Recortado" in feedback and "100.00" in feedback  # "de 100.00x.xxx" characters


def test_grader_export_zip_is_graded_like_its_notebook(zoo):
    assert_full_marks(zoo, "exportada_con_otter.zip")


def test_bad_inputs_never_stop_the_batch(zoo_graded):
    completed, out = zoo_graded
    _, rows = read_grades(out)
    graded_files = set(rows) - {"points-per-question"}
    submitted = {path.name for path in (out / "results").iterdir()}
    assert len(graded_files) == 13 and len(submitted) == 13
    assert completed.returncode == 0
