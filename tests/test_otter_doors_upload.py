"""No file of an upload runs outside the sandbox on Otter's doors (issue 51, item 1).

Otter works in the folder the upload is unpacked into: it unpickles ``.OTTER_LOG`` from there
with dill, and starts its kernel there as ``python -m ipykernel_launcher``, which puts that
folder first on the kernel's ``sys.path``. The attack upload is the untouched stub plus one
file for every module Otter's kernel imports when Otter grades a notebook (measured here, by
running Otter's own ``grade_notebook`` with ``PYTHONPROFILEIMPORTTIME``), and a ``.OTTER_LOG``
whose unpickling runs code. Each such file writes a canary of its own name when it runs.

Through ``otter run`` (as root and as an ordinary user), Gradescope's tree and ``otter grade``'s
image tree, no canary may appear, the stub keeps its 0 and a correct notebook its full marks. Positive controls: Otter's own
``grade_notebook`` in the unpacked upload runs the upload's ``ipykernel_launcher.py``, and
Otter's own log reader runs the ``.OTTER_LOG``.
"""

import csv
import io
import json
import os
import pickle
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from grading_harness import UNPRIVILEGED_UID, shared_folder
from otter_paths import clean_environment, otter_run
from test_otter_paths import gradescope, otter_grade, require_mount_namespace

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "assignments" / "attention" / "examples"
STUB, CORRECT = "sin_hacer.ipynb", "correcta.ipynb"
OTTER_LOG = ".OTTER_LOG"

# Otter's kernel start, as Otter's run does it, on an empty notebook: every module the kernel
# imports goes to its stderr (the kernel inherits the variable and the stream).
KERNEL_IMPORTS = """
import os, sys, tempfile
import nbformat
os.environ["PYTHONPROFILEIMPORTTIME"] = "1"
from otter.execute import grade_notebook
folder = tempfile.mkdtemp()
os.chdir(folder)
os.mkdir("tests")
nbformat.write(nbformat.v4.new_notebook(), "empty.ipynb")
grade_notebook("empty.ipynb", tests_glob=[], cwd=folder, test_dir="./tests")
# The module the kernel is started as (`-m`), which runpy finds without logging an import.
from jupyter_client.kernelspec import KernelSpecManager
argv = KernelSpecManager().get_kernel_spec("python3").argv
print("started as:", argv[argv.index("-m") + 1])
"""


class _Canary:
    """Unpickled, it writes the canary: what any pickle of an upload can do to its reader."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (exec, (f"open({self.path!r}, 'w').close()",))


@pytest.fixture(scope="module")
def kernel_modules(otter_venvs):
    done = subprocess.run([str(otter_venvs.image / "bin" / "python"), "-c", KERNEL_IMPORTS],
                          capture_output=True, text=True, timeout=300, cwd="/",
                          env=clean_environment("/tmp", [otter_venvs.image / "bin"]))
    names = {line.rsplit("|", 1)[1].strip().split(".")[0]
             for line in done.stderr.splitlines() if line.startswith("import time:")}
    names.discard("imported package")  # the header line's last column
    names |= {line.split(":", 1)[1].strip() for line in done.stdout.splitlines()
              if line.startswith("started as:")}
    assert {"ipykernel_launcher", "otter", "ipykernel", "IPython", "numpy"} <= names, \
        done.stderr[-3000:]
    return sorted(name for name in names if name.isidentifier())


@pytest.fixture
def canaries(tmp_path):
    folder = shared_folder("canaries-")
    folder.chmod(0o1777)  # the ordinary user's run writes here too
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def attack_upload(notebook, modules, canaries):
    """The export zip a student uploads: ``notebook`` plus a module of each name, and an
    ``.OTTER_LOG`` that runs code when unpickled; each writes ``canaries/<its name>``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.write(DEMO / notebook, notebook)
        for name in modules:
            zf.writestr(f"{name}.py", f"open({str(canaries / name)!r}, 'w').close()\n")
        zf.writestr(OTTER_LOG, pickle.dumps(_Canary(str(canaries / OTTER_LOG))))
    return buffer.getvalue()


def fired(canaries):
    return sorted(path.name for path in canaries.iterdir())


def total(results):
    return sum(test.get("score", 0) for test in results["tests"])


def otters_own_reading(upload, folder, venv, canaries):
    """What Otter's own code does in the unpacked ``upload``, without the kit: read the log,
    then start its kernel there; returns the canaries that fired."""
    with zipfile.ZipFile(io.BytesIO(upload)) as zf:
        zf.extractall(folder)
    script = ("from otter.check.logs import Log\n"
              "from otter.execute import grade_notebook\n"
              "try:\n"
              f"    Log.from_file({OTTER_LOG!r})\n"
              "except Exception as exc:\n"
              "    print('not a log:', type(exc).__name__)\n"
              "try:\n"
              f"    grade_notebook({STUB!r}, tests_glob=[], cwd='.', test_dir='./tests')\n"
              "except Exception as exc:\n"
              "    print('kernel failed:', type(exc).__name__)\n")
    # -P: this reader's own imports are Otter's, as in Otter's run; the kernel it starts is not
    # given the flag, as Otter's is not.
    subprocess.run([str(venv / "bin" / "python"), "-P", "-c", script], cwd=folder,
                   capture_output=True, text=True, timeout=300,
                   env=clean_environment(folder, [venv / "bin"]))
    return fired(canaries)


def test_control_otters_own_log_reader_and_kernel_start_run_the_uploads_files(
        otter_venvs, kernel_modules, canaries, tmp_path):
    # The file alone: the kernel Otter starts runs it.
    alone = attack_upload(STUB, ["ipykernel_launcher"], canaries)
    assert otters_own_reading(alone, tmp_path / "alone", otter_venvs.image, canaries) == [
        OTTER_LOG, "ipykernel_launcher"]
    for path in canaries.iterdir():
        path.unlink()
    # Every name at once: the first the kernel meets runs (which one depends on the start).
    every = attack_upload(STUB, kernel_modules, canaries)
    ran = otters_own_reading(every, tmp_path / "every", otter_venvs.image, canaries)
    assert OTTER_LOG in ran and set(ran) & set(kernel_modules), ran


def test_otter_run_as_root_runs_no_file_of_the_upload_and_keeps_a_correct_grade(
        otter_venvs, autograder_zip, kernel_modules, canaries, tmp_path):
    # A correct notebook this time: emptying Otter's folder loses nothing the grade needs,
    # since the kit graded the notebook before.
    upload = tmp_path / "entrega.zip"
    upload.write_bytes(attack_upload(CORRECT, kernel_modules, canaries))
    done = otter_run(otter_venvs.instructor, autograder_zip, upload, tmp_path / "out")
    assert fired(canaries) == []
    results = json.loads((tmp_path / "out" / "results.json").read_text("utf-8"))
    full = sum(test.get("max_score", 0) for test in results["tests"])
    assert full > 0 and total(results) == full, done.stdout[-3000:]
    assert "sandbox:" in done.stdout + done.stderr  # the kit graded it


def test_otter_run_as_an_ordinary_user_runs_no_file_of_the_upload(
        otter_venvs, autograder_zip, kernel_modules, canaries):
    work = shared_folder("otter-run-user-")
    try:
        upload, out, home = work / "entrega.zip", work / "out", work / "home"
        upload.write_bytes(attack_upload(STUB, kernel_modules, canaries))
        zip_copy = Path(shutil.copy(autograder_zip, work / "autograder.zip"))
        for path in (upload, zip_copy):
            path.chmod(0o644)
        for folder in (out, home):
            folder.mkdir()
            os.chown(folder, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
        done = subprocess.run(
            ["setpriv", f"--reuid={UNPRIVILEGED_UID}", f"--regid={UNPRIVILEGED_UID}",
             "--clear-groups", "--", str(otter_venvs.instructor / "bin" / "otter"), "run",
             "-a", str(zip_copy), "-o", str(out), str(upload)],
            cwd=home, capture_output=True, text=True, timeout=600,
            env=clean_environment(home, [otter_venvs.instructor / "bin"]))
        assert fired(canaries) == []
        assert (out / "results.json").is_file(), done.stdout[-2000:] + done.stderr[-3000:]
        assert total(json.loads((out / "results.json").read_text("utf-8"))) == 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_gradescope_runs_no_file_of_the_upload(otter_venvs, autograder_zip, kernel_modules,
                                               canaries):
    results, log = gradescope(otter_venvs.image, autograder_zip, "entrega.zip",
                              attack_upload(STUB, kernel_modules, canaries))
    assert fired(canaries) == []
    assert results is not None and total(results) == 0, log[-3000:]
    assert "sandbox:" in log


def test_otter_grades_image_runs_no_file_of_the_upload_and_keeps_a_correct_grade(
        otter_venvs, autograder_zip, kernel_modules, canaries, tmp_path):
    # otter grade copies the upload back out of its container once grading ends: what the kit
    # leaves in Otter's folder must let that copy succeed, or the row is a failure.
    require_mount_namespace()
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    (uploads / "entrega.zip").write_bytes(attack_upload(CORRECT, kernel_modules, canaries))
    otter_grade(otter_venvs.image, autograder_zip, uploads, tmp_path / "out", "zip")
    assert fired(canaries) == []
    with open(tmp_path / "out" / "final_grades.csv", newline="", encoding="utf-8") as f:
        rows = {row["file"]: row for row in csv.DictReader(f)}
    row, possible = rows["entrega.zip"], rows["points-per-question"]
    assert row["grading_status"] == "Completed", row
    assert float(row["total_points_earned"]) == float(possible["total_points_earned"]) > 0
