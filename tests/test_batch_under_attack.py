"""Held-out attacks on `make grade`, found after the attack suite: one batch, one run.

Each attack comes with its positive control, as in tests/attacks.py: the same trick shown
working where the defence is absent, so that a test passing here cannot mean that the
attack was simply broken.

* text that no UTF-8 file can hold (a lone surrogate in a print, an exception, the notebook's
  JSON, or a file name that is not UTF-8) used to abort the whole batch: no CSV at all;
* ``h.ipynb``, ``h.zip`` and ``h_zip.ipynb`` used to share one set of output files;
* «1e400» in the challenge's text used to zero a correct submission (an internal error);
* a function kept the hidden inputs it was given and handed them back to a public test run
  after them, whose failure message printed them; or spelled them into an empty array's shape;
* a table of answers in a Markdown cell, with the code cells unchanged, got the same inputs;
* a function made the grader run the reference's attention on 6000 rows: a 6000² matrix
  in the grader's memory, outside every limit of the job.
"""

import base64
import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

from grading_harness import (Notebooks, _batch_command, _environment, read_csv, read_records,
                             total)

SURROGATE_MARK = "MARCA_SURROGADA"
BIG_ROWS = 6000  # the reference's scores on it: 6000² float64, 288 MB each

PRINTS_SURROGATE = 'print("hola \\ud800 adios")'
RAISES_SURROGATE = 'raise ValueError("x\\udcff")'
CITES_1E400 = ('resultado["student_extension"]["conclusion"] += '
               '" (un factor de 1e400 frente al caso sin escalar)"')

# Keeps every argument the graded functions get; after transformer_block has been called (the
# hidden cases are over), the worked example's attention answers with them as its weights.
KEEPS_AND_REPLAYS = '''
import numpy as np
_seen, _calls = [], {}
def _keep(name, values):
    _calls[name] = _calls.get(name, 0) + 1
    for value in values:
        if isinstance(value, np.ndarray):
            _seen.append(np.asarray(value, float).ravel())
def attention(Q, K, V, mask=None):
    if Q.shape == (2, 2) and np.array_equal(V, [[1., 2.], [3., 4.]]) and mask is None \\
            and _calls.get("transformer_block"):
        kept = np.concatenate(_seen) if _seen else np.zeros(4)
        kept = np.concatenate([kept, np.zeros((-kept.size) % 4)])
        return np.zeros((2, 2)), kept.reshape(-1, 2, 2)
    _keep("attention", (Q, K, V))
    raise ValueError("x")
def multihead(*args, **kwargs):
    _keep("multihead", (*args, *kwargs.values()))
    raise ValueError("x")
def positional_encoding(*args, **kwargs):
    raise ValueError("x")
def transformer_block(*args, **kwargs):
    _keep("transformer_block", (*args, *kwargs.values()))
    raise ValueError("x")
'''

# Spells the first two numbers of Q into the sizes of an empty array: 1.310350 -> 501310350.
SPELLS_INTO_SHAPE = '''
import numpy as np
def _spell(x):
    return int(round(float(x) * 1e6)) + 500_000_000
def attention(Q, K, V, mask=None):
    empty = np.zeros((0, _spell(Q[0, 0]), _spell(Q[0, 1])))
    return empty, empty
'''

ASKS_THE_REFERENCE_FOR_A_HUGE_ATTENTION = f'''
import numpy as np
def multihead(X, heads, W_O, mask=None):
    rows = np.ones(({BIG_ROWS}, 1))
    for _ in range(3):
        try:
            attention(rows, rows, rows)
        except Exception:
            pass
    raise ValueError("nada")
'''


def with_surrogate_in_json(notebook: bytes) -> bytes:
    """The notebook with a cell whose source holds a lone surrogate, as a JSON escape (which
    json accepts and Jupyter could have written)."""
    nb = json.loads(notebook)
    nb["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {},
                        "outputs": [], "source": f"x = 1  # {SURROGATE_MARK}\n1/0"})
    return json.dumps(nb).replace(SURROGATE_MARK, "\\ud800").encode("ascii")


def with_markdown_table(notebook: bytes, table: str) -> bytes:
    nb = json.loads(notebook)
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": table})
    return json.dumps(nb, ensure_ascii=False).encode("utf-8")


def zipped(name, data):
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(name, data)
    return buffer.getvalue()


NOT_UTF8 = b"alumno_\xff.ipynb"


@pytest.fixture(scope="module")
def notebooks(built_dist):
    return Notebooks(built_dist)


@pytest.fixture(scope="module")
def files(notebooks):
    right = notebooks.correct()
    return {
        "00_companera.ipynb": right,
        "01_imprime_surrogado.ipynb": notebooks.stub([PRINTS_SURROGATE]),
        "02_lanza_surrogado.ipynb": notebooks.stub([RAISES_SURROGATE]),
        "03_surrogado_en_json.ipynb": with_surrogate_in_json(notebooks.stub()),
        "04_cita_1e400.ipynb": notebooks.correct([CITES_1E400]),
        "05_devuelve_las_entradas.ipynb": notebooks.stub([KEEPS_AND_REPLAYS]),
        "06_forma_que_deletrea.ipynb": notebooks.with_function("stub", "attention",
                                                               SPELLS_INTO_SHAPE),
        "07_referencia_enorme.ipynb": notebooks.with_function(
            "stub", "multihead", ASKS_THE_REFERENCE_FOR_A_HUGE_ATTENTION),
        "08_tabla_en_markdown.ipynb": with_markdown_table(
            notebooks.with_function("stub", "attention", SPELLS_INTO_SHAPE), "| tabla |"),
        "h.ipynb": right,
        "h.zip": zipped("notebook_student.ipynb", right),
        "h_zip.ipynb": notebooks.stub(),
    }


@pytest.fixture(scope="module")
def batch(files, autograder_zip, tmp_path_factory):
    folder = tmp_path_factory.mktemp("attacked")
    for name, data in files.items():
        (folder / name).write_bytes(data)
    with open(os.path.join(os.fsencode(folder), NOT_UTF8), "wb") as f:
        f.write(files["01_imprime_surrogado.ipynb"])
    out = tmp_path_factory.mktemp("attacked-out")
    run = subprocess.run(_batch_command(folder, out, autograder_zip, 2), env=_environment(),
                         capture_output=True, text=True, errors="replace", timeout=600)
    return out, run


def hidden_attention_inputs(notebook: bytes):
    """attention's hidden inputs for this notebook (the test knows the tests' salt)."""
    from conftest import TEST_SALT
    from kit_autograder.hidden_inputs import generator, identity, world

    from attention.cases import cases_for

    salt = base64.b64decode(TEST_SALT)
    return [case.inputs(generator(salt, identity(world(notebook)), "attention", case.name))
            for case in cases_for("attention")]


def everything_the_student_reads(out, stem):
    return ((out / "feedback" / f"{stem}.md").read_text("utf-8")
            + (out / "results" / f"{stem}.json").read_text("utf-8"))


# --- the batch finishes, every file with its row and its own files -----------------------------


def test_text_no_file_can_hold_aborts_nothing(batch, files):
    out, run = batch
    assert run.returncode == 0, run.stderr[-3000:]
    rows = read_csv(out)
    shown = NOT_UTF8.decode("utf-8", "replace")
    assert set(rows) == set(files) | {shown, "points-per-question"}
    assert total(rows["00_companera.ipynb"]) == 20
    for name in ("01_imprime_surrogado.ipynb", "02_lanza_surrogado.ipynb",
                 "03_surrogado_en_json.ipynb", shown):
        assert rows[name]["grading_status"] == "Completed" and total(rows[name]) == 0, name
    assert (out / "report.html").is_file()


def test_those_texts_reach_the_grader_as_text_every_file_can_hold():
    from kit_autograder.sandbox.inside import wire

    frame = wire.encode({"output": "hola \ud800 adios", "file": os.fsdecode(NOT_UTF8)})
    plain = json.loads(frame[8:8 + int.from_bytes(frame[4:8], "big")])
    for text in (plain["output"], plain["file"], json.loads(with_surrogate_in_json(
            b'{"cells": [], "nbformat": 4}'))["cells"][0]["source"]):
        with pytest.raises(UnicodeEncodeError):
            text.encode("utf-8")
    decoded = wire.decode(frame[4:])
    assert decoded["output"] == "hola \ufffd adios" and decoded["file"].encode("utf-8")


def test_every_file_keeps_its_own_results_feedback_and_record(batch, files):
    out, _ = batch
    rows = read_csv(out)
    records = read_records(out)
    assert set(records) == set(rows) - {"points-per-question"}
    assert len(list((out / "feedback").iterdir())) == len(records)
    for name, record in records.items():
        assert record.earned == total(rows[name]), name
        feedback = (out / "feedback" / f"{record.stem}.md").read_text("utf-8")
        assert f"{record.earned:g} / 20" in feedback, name
    assert (total(rows["h.ipynb"]), total(rows["h.zip"]), total(rows["h_zip.ipynb"])) == (20, 20, 0)


def test_control_the_names_collide_under_a_stem_or_suffix_rule():
    names = ["h.ipynb", "h.zip", "h_zip.ipynb"]
    stems = [Path(n).stem for n in names]
    naive = [Path(n).stem if stems.count(Path(n).stem) == 1 else n.replace(".", "_")
             for n in names]
    assert len(set(naive)) < len(names)


# --- trusted code meeting strange text ---------------------------------------------------------


def test_a_number_beyond_any_float_in_the_challenge_costs_no_function_points(batch):
    out, _ = batch
    row = read_csv(out)["04_cita_1e400.ipynb"]
    assert row["grading_status"] == "Completed"
    assert [float(row[f]) for f in ("attention", "multihead", "positional_encoding",
                                    "transformer_block")] == [5, 3, 3, 3]
    assert float(row["student_extension"]) == 6


def test_control_1e400_overflows_a_float():
    with pytest.raises(OverflowError):
        10.0 ** 400


def _failing_grader(monkeypatch, failures):
    """Grader.grade raises on its first ``failures`` calls for "una.ipynb", as a bug of ours
    would, after the file's job has opened."""
    from kit_autograder.grading import Grader

    original, calls = Grader.grade, []

    def grade(self, sandbox, loaded, stem):
        if loaded.file == "una.ipynb" and len(calls) < failures:
            calls.append(stem)
            job = sandbox.open_job(stem)  # what a real failure mid-grading leaves open
            try:
                raise RuntimeError("a bug of the kit's, not the student's")
            except BaseException:
                job.close(kill=True)
                raise
        return original(self, sandbox, loaded, stem)

    monkeypatch.setattr(Grader, "grade", grade)
    return calls


@pytest.mark.parametrize("failures, attempts, graded", [(1, None, True), (2, None, False),
                                                       (1, 1, False)])
def test_a_grader_bug_on_one_file_is_tried_again_and_its_traceback_kept(
        notebooks, autograder_zip, tmp_path, monkeypatch, failures, attempts, graded):
    """A failure of ours that does not repeat costs the student nothing; one that repeats is
    the file's row (0, and why) and, for a person, the traceback in internal-errors.log. The
    other files are graded either way. Control: with one attempt, as before, the failure
    that does not repeat is a 0."""
    from grading_harness import grade_here
    from kit_autograder import batch

    if attempts is not None:
        monkeypatch.setattr(batch, "ATTEMPTS", attempts)

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "una.ipynb").write_bytes(notebooks.correct())
    (folder / "otra.ipynb").write_bytes(notebooks.correct())
    calls = _failing_grader(monkeypatch, failures)
    rows = grade_here(folder, tmp_path / "out", autograder_zip)
    assert len(calls) == failures
    assert total(rows["otra.ipynb"]) == 20
    row = rows["una.ipynb"]
    log = (tmp_path / "out" / "internal-errors.log").read_text("utf-8")
    assert log.count("RuntimeError: a bug of the kit's, not the student's") == failures
    assert log.count("--- una.ipynb: attempt") == failures and "otra.ipynb" not in log
    if graded:
        assert row["grading_status"] == "Completed" and total(row) == 20
        assert "error interno" not in row["flags"]
    else:
        assert total(row) == 0 and "error interno" in row["grading_status"]


def test_a_bug_in_one_questions_trusted_code_fails_that_question_alone(notebooks,
                                                                      autograder_zip, tmp_path,
                                                                      monkeypatch, capfd):
    """...and its traceback goes to OUT/internal-errors.log with the file it met, not amid
    the batch's progress on the instructor's terminal (issue 51.7)."""
    import dataclasses

    from grading_harness import grade_here
    from kit_autograder import lesson as lesson_module

    def broken(values, functions):
        raise RuntimeError("a bug of the kit's, not the student's")

    original = lesson_module.load

    def with_a_broken_data_question(*args, **kwargs):
        lesson = original(*args, **kwargs)
        monkeypatch.setattr(lesson, "DATA_QUESTIONS", {
            name: dataclasses.replace(question, grade=broken)
            for name, question in lesson.DATA_QUESTIONS.items()})
        return lesson

    # In process, so that the grader loads this lesson from the zip.
    monkeypatch.setattr(lesson_module, "load", with_a_broken_data_question)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "correcta.ipynb").write_bytes(notebooks.correct())
    row = grade_here(folder, tmp_path / "out", autograder_zip)["correcta.ipynb"]
    assert row["grading_status"] == "Completed"
    assert float(row["student_extension"]) == 0 and total(row) == 14
    assert "error interno" in row["flags"]
    terminal = capfd.readouterr()
    assert "Traceback" not in terminal.err + terminal.out
    log = (tmp_path / "out" / "internal-errors.log").read_text("utf-8")
    assert "--- correcta.ipynb: contained" in log and "a bug of the kit's, not the student's" in log


# --- hidden inputs: never shown, and never reused ----------------------------------------------


def test_kept_hidden_inputs_never_reach_a_public_tests_message(batch, files):
    out, _ = batch
    text = everything_the_student_reads(out, "05_devuelve_las_entradas")
    hidden = hidden_attention_inputs(files["05_devuelve_las_entradas.ipynb"])
    numbers = {f"{x:.4f}" for inputs in hidden for x in inputs["Q"].ravel() if abs(x) > 0.01}
    assert not [n for n in numbers if n in text]


def test_control_the_function_hands_back_the_inputs_it_kept(files):
    hidden = hidden_attention_inputs(files["05_devuelve_las_entradas.ipynb"])
    space = {}
    exec(KEEPS_AND_REPLAYS, space)
    for inputs in hidden:
        with pytest.raises(ValueError):
            space["attention"](**inputs)
    with pytest.raises(ValueError):
        space["transformer_block"](np.ones((2, 2)), [], np.ones((2, 2)), 0, 0, 0, 0)
    _, weights = space["attention"](np.eye(2), np.eye(2), np.array([[1., 2.], [3., 4.]]))
    assert np.allclose(weights.ravel()[:hidden[0]["Q"].size], hidden[0]["Q"].ravel())


def test_no_size_of_a_returned_array_spells_a_hidden_input(batch, files):
    out, _ = batch
    text = everything_the_student_reads(out, "06_forma_que_deletrea")
    spelled = {str(int(round(inputs["Q"][0, 0] * 1e6)) + 500_000_000)
               for inputs in hidden_attention_inputs(files["06_forma_que_deletrea.ipynb"])}
    assert not [s for s in spelled if s in text]
    assert "forma (0, otro tamaño, otro tamaño) en lugar de" in text


def test_control_the_shape_spells_the_input(files):
    space = {}
    exec(SPELLS_INTO_SHAPE, space)
    inputs = hidden_attention_inputs(files["06_forma_que_deletrea.ipynb"])[0]
    output, _ = space["attention"](**inputs)
    assert (output.shape[1] - 500_000_000) / 1e6 == pytest.approx(inputs["Q"][0, 0], abs=1e-6)


def test_a_table_in_a_markdown_cell_changes_the_inputs_it_would_answer(files):
    from kit_autograder.submission import code_cells

    same_code, with_table = files["06_forma_que_deletrea.ipynb"], files["08_tabla_en_markdown.ipynb"]
    # Control: the table left every code cell as it was, the key the inputs used to have.
    assert code_cells(json.loads(same_code), "a") == code_cells(json.loads(with_table), "b")
    first, second = hidden_attention_inputs(same_code), hidden_attention_inputs(with_table)
    assert not any(np.array_equal(a["Q"], b["Q"]) for a, b in zip(first, second))


# --- the grader's own resources ----------------------------------------------------------------


def test_the_reference_never_runs_on_sizes_the_student_chose_beyond_the_bound(batch):
    out, run = batch
    grader_mib = float(re.search(r"peak memory: grader (\d+) MiB", run.stdout).group(1))
    assert grader_mib < 400, run.stdout[-2000:]
    feedback = (out / "feedback" / "07_referencia_enorme.md").read_text("utf-8")
    assert "0 / 20" in feedback


def test_control_that_attention_takes_gigabytes_in_the_grader():
    import tracemalloc

    from reference import attention as reference

    rows = np.ones((BIG_ROWS, 1))
    tracemalloc.start()
    try:
        reference.attention(rows, rows, rows)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak > 2 * BIG_ROWS ** 2 * 8


def test_the_graders_reported_peak_is_its_own_not_its_parents(files, autograder_zip, tmp_path):
    # The bound above needs this: Linux carries a parent's high-water mark into a child it
    # vforks and execs, so a grader started by this (large) test process reported ~400 MiB.
    import resource

    ballast = bytearray(600 * 2**20)
    ballast[::4096] = b"\1" * len(ballast[::4096])  # resident, not just reserved
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "h.ipynb").write_bytes(files["h.ipynb"])
    run = subprocess.run(_batch_command(folder, tmp_path / "out", autograder_zip, 1),
                         env=_environment(), capture_output=True, text=True, timeout=300)
    reported = float(re.search(r"peak memory: grader (\d+) MiB", run.stdout).group(1))
    # Control: the kernel's own account of that child includes this process's 600 MB.
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 > 600
    assert reported < 400
    del ballast
