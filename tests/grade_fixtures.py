"""Fixtures for the tests of `make grade`: demo and bad submissions, graded once per session.

Test modules import the fixtures they use from here (``conftest.py`` belongs to the assignment
tests). Every batch runs through the real command line, ``python -m autograder.grade``, in a
temporary folder, against the session's fresh build.
"""

import csv
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PATH = ROOT / "autograder" / "gradescope_results.schema.json"

# Small limits keep the bad submissions quick; normal children peak near 150 MB here.
ZOO_TIMEOUT_S = 20
ZOO_MEMORY_MB = 600
# A `sleep` argument no other process uses, this session's own even when another test session
# runs beside it, to prove the kill reached the notebook's children.
ORPHAN_MARKER = f"4242.{os.getpid()}"


def grade_cli(submissions, out, autograder_zip, *args, timeout=600):
    """Run `python -m autograder.grade` and return the completed process."""
    command = [sys.executable, "-m", "autograder.grade", "--submissions", str(submissions),
               "--out", str(out), "--autograder", str(autograder_zip), *map(str, args)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def run_two_at_a_time(commands, timeout=600):
    """Run ``{key: (argv, cwd)}`` two at a time (the machines have two cores): ``{key: output}``."""
    outputs, pending = {}, list(commands.items())
    while pending:
        batch, pending = pending[:2], pending[2:]
        procs = [(key, subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True))
                 for key, (argv, cwd) in batch]
        for key, proc in procs:
            outputs[key] = proc.communicate(timeout=timeout)[0]
    return outputs


def read_grades(out):
    """``final_grades.csv`` as ``(header, {file: row})``."""
    with open(Path(out) / "final_grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
        header = list(rows[0].keys()) if rows else []
    return header, {row["file"]: row for row in rows}


def read_results(out, stem):
    return json.loads((Path(out) / "results" / f"{stem}.json").read_text("utf-8"))


def read_feedback(out, stem):
    return (Path(out) / "feedback" / f"{stem}.md").read_text("utf-8")


def with_extra_cell(notebook_bytes, source, at_end=True):
    """The notebook with one more code cell, placed after the graded functions."""
    nb = nbformat.reads(notebook_bytes.decode("utf-8"), as_version=4)
    cell = nbformat.v4.new_code_cell(source)
    cell.id = "extra-cell"
    nb.cells.insert(len(nb.cells) if at_end else 1, cell)
    return nbformat.writes(nb).encode("utf-8")


def inject(notebook, function, source):
    """A copy of ``notebook`` whose cell ``def function(`` holds ``source`` instead."""
    copy = nbformat.from_dict(notebook)
    cells = [cell for cell in copy.cells
             if cell.cell_type == "code" and cell.source.startswith(f"def {function}(")]
    assert len(cells) == 1, f"expected one cell defining {function}, found {len(cells)}"
    cells[0].source = source
    return copy


def with_metadata(notebook_bytes, change):
    nb = nbformat.reads(notebook_bytes.decode("utf-8"), as_version=4)
    change(nb.metadata)
    return nbformat.writes(nb).encode("utf-8")


def zip_bytes(members):
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


NBFORMAT3 = json.dumps({"metadata": {"name": "attention"}, "nbformat": 3, "nbformat_minor": 0,
                        "worksheets": [{"cells": [], "metadata": {}}]}).encode()

MEMORY_BOMB = """\
import numpy as np
bloques = []
while True:
    bloques.append(np.ones(10_000_000))  # 80 MB más cada vez
"""

MEMORY_BOMB_IN_SUBPROCESS = """\
import subprocess, sys, time
hijo = subprocess.Popen([sys.executable, "-c",
                         "import time; x = b'x' * (900 * 2**20); time.sleep(120)"])
time.sleep(120)
"""

INFINITE_LOOP = f"""\
import subprocess
dormilon = subprocess.Popen(["sleep", "{ORPHAN_MARKER}"])
while True:
    pass
"""

OUTPUT_FLOOD = """\
for _ in range(1_000_000):
    print("x" * 99)  # 100 MB en total
"""


def bad_submissions(demo):
    """Every bad input the grading issue lists, ``{file name: bytes}``; ``demo`` is the demo set."""
    right = demo["correcta.ipynb"]
    return {
        "vacio.ipynb": b"",
        "no_es_json.ipynb": b"<html><body>502 Bad Gateway</body></html>",
        "nbformat3.ipynb": NBFORMAT3,
        "otra_tarea.ipynb": with_metadata(
            right, lambda m: m["otter"].__setitem__("assignment_name", "054-otra-tarea")),
        "sin_cuaderno.zip": zip_bytes({"notas.txt": "mi entrega", "solucion.py": "x = 1\n"}),
        "dos_cuadernos.zip": zip_bytes({"notebook_student.ipynb": right, "attention-copia.ipynb": right}),
        "kernel_raro.ipynb": with_metadata(
            right, lambda m: m.__setitem__("kernelspec", {"name": "python3-otro",
                                                          "display_name": "Python (otro)",
                                                          "language": "python"})),
        "bucle_infinito.ipynb": with_extra_cell(right, INFINITE_LOOP),
        "bomba_memoria.ipynb": with_extra_cell(right, MEMORY_BOMB),
        "memoria_en_subproceso.ipynb": with_extra_cell(right, MEMORY_BOMB_IN_SUBPROCESS),
        "os_exit.ipynb": with_extra_cell(right, "import os\nos._exit(0)"),
        "salida_enorme.ipynb": with_extra_cell(right, OUTPUT_FLOOD),
    }


def real_export_zip(notebook_bytes, folder: Path):
    """The zip that the student notebook's own ``grader.export(pdf=False)`` writes."""
    (folder / "notebook_student.ipynb").write_bytes(notebook_bytes)
    script = ("import otter; otter.Notebook('notebook_student.ipynb').export("
              "pdf=False, display_link=False, export_path='exportada_con_otter.zip')")
    subprocess.run([sys.executable, "-c", script], cwd=folder, check=True, capture_output=True,
                   timeout=120)
    return (folder / "exportada_con_otter.zip").read_bytes()


@pytest.fixture(scope="session")
def demo_files(built_dist):
    from autograder.grade.synthetic import demo_submissions

    return demo_submissions(built_dist)


@pytest.fixture(scope="session")
def demo_folder(demo_files, tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo")
    for name, data in demo_files.items():
        (folder / name).write_bytes(data)
    return folder


@pytest.fixture(scope="session")
def demo_graded(demo_folder, autograder_zip, tmp_path_factory):
    """The demo graded by the command line with its defaults: ``(completed process, out)``."""
    out = tmp_path_factory.mktemp("demo-grades")
    completed = grade_cli(demo_folder, out, autograder_zip)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed, out


@pytest.fixture(scope="session")
def zoo_graded(demo_files, autograder_zip, tmp_path_factory):
    """Every bad input, plus a real export zip, graded in one batch: ``(process, out)``."""
    folder = tmp_path_factory.mktemp("zoo")
    files = bad_submissions(demo_files)
    files["exportada_con_otter.zip"] = real_export_zip(demo_files["correcta.ipynb"],
                                                       tmp_path_factory.mktemp("export"))
    for name, data in files.items():
        (folder / name).write_bytes(data)
    out = tmp_path_factory.mktemp("zoo-grades")
    completed = grade_cli(folder, out, autograder_zip, "--jobs", 2, "--timeout", ZOO_TIMEOUT_S,
                          "--memory-mb", ZOO_MEMORY_MB)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed, out


@pytest.fixture(scope="session")
def gradescope_schema():
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text("utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)
