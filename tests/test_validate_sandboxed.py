"""`make validate` runs no file of a student's outside the kit's sandbox (issue 51, item 4).

Given a student's result and notebook, the validator that ships to students ran the
``lab.py`` beside the notebook, and the lab ran the notebook's cells in a plain IPython shell:
as the instructor. Here the student's folder holds both traps: a ``lab.py`` that writes one
canary and then runs the kit's lab, and a notebook (correct, with its honest result) whose last
cell writes another. ``make validate``'s command (``kit_autograder.validate``) must check the
result (the kit's lab runs on the student's functions, and every criterion is said) and leave
both canaries unwritten, as root and as an ordinary user. The positive control: the student's validator on the same
folder writes both.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grading_harness import Notebooks, shared_folder

ROOT = Path(__file__).resolve().parent.parent
OTHER_ACCOUNT = 1000
CANARIES = ("canario_cuaderno.txt", "canario_lab.txt")
EXTENSION = {
    "assumption": "Mi attention reparte el peso según la afinidad.",
    "measurement": "La fila 1 del ejemplo trabajado pesa 0,6698 en su propia clave.",
    "conclusion": "El token 1 pone un 67 % de su atención en sí mismo.",
    "limitation": "Dos tokens con proyecciones a mano.",
    "risk": "No lo usaría para explicar un modelo entrenado.",
}


def lab_result(seed=55):
    """What the kit's lab prints for a correct notebook, with the student's extension."""
    import lab_runner
    from reference import attention as reference

    from attention import lab

    functions = {name: getattr(reference, name) for name in
                 ("attention", "multihead", "positional_encoding", "transformer_block")}
    return {**json.loads(lab_runner.to_json(lab.run_lab(functions, seed))),
            "student_extension": EXTENSION}


def student_folder(built_dist, folder):
    """A student's folder as an instructor receives it: the notebook, its result, and a
    lab.py of the student's own beside them. Each trap writes its canary in this folder."""
    folder.mkdir(parents=True, exist_ok=True)
    canary_cell = (f"open({str(folder / CANARIES[0])!r}, 'w').write('el cuaderno corrió aquí')")
    (folder / "entrega.ipynb").write_bytes(Notebooks(built_dist).correct([canary_cell]))
    (folder / "resultado.json").write_text(json.dumps(lab_result()), "utf-8")
    kit_lab = built_dist / "student" / "lab.py"
    (folder / "lab.py").write_text(textwrap.dedent(f"""\
        import runpy, sys
        open({str(folder / CANARIES[1])!r}, "w").write("el lab.py del estudiante corrió aquí")
        sys.path.insert(0, {str(kit_lab.parent)!r})
        sys.argv[0] = {str(kit_lab)!r}
        runpy.run_path({str(kit_lab)!r}, run_name="__main__")
    """), "utf-8")
    return folder


def environment():
    paths = [str(ROOT), str(ROOT / "autograder"), str(ROOT / "assignments")]
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": os.pathsep.join(paths)}


def validate_command(autograder_zip, folder):
    """What ``make validate FILE=… NOTEBOOK=…`` runs."""
    return [sys.executable, "-m", "kit_autograder.validate", "--autograder",
            str(autograder_zip), str(folder / "resultado.json"), "--notebook",
            str(folder / "entrega.ipynb")]


def checked(done):
    """The result was checked all the same: every criterion said, and the kit's lab ran on the
    student's functions (criterion 1: it ends with code 0)."""
    assert done.returncode in (0, 1), done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 6, done.stdout
    for number, line in enumerate(lines[:5], start=1):
        assert line.startswith((f"✓ Criterio {number}:", f"✗ Criterio {number}:")), line
    assert lines[0].startswith("✓ Criterio 1:"), done.stdout
    assert lines[-1].endswith("de 5 criterios se cumplen."), done.stdout


def written(folder):
    return [name for name in CANARIES if (folder / name).exists()]


@pytest.fixture(scope="module")
def students_validator(built_dist, tmp_path_factory):
    """The control: the validator students run, on the same kind of folder."""
    folder = student_folder(built_dist, tmp_path_factory.mktemp("control") / "alumno")
    done = subprocess.run([sys.executable, str(built_dist / "student" / "extension.py"),
                           str(folder / "resultado.json"), "--notebook",
                           str(folder / "entrega.ipynb")], capture_output=True, text=True,
                          timeout=600, cwd=folder)
    return folder, done


def test_control_the_students_validator_runs_the_students_files(students_validator):
    folder, done = students_validator
    assert written(folder) == list(CANARIES), done.stdout + done.stderr


def test_make_validate_runs_no_student_file_outside_the_sandbox_as_root(
        built_dist, autograder_zip, tmp_path):
    folder = student_folder(built_dist, tmp_path / "alumno")
    done = subprocess.run(validate_command(autograder_zip, folder), capture_output=True,
                          text=True, timeout=600, env=environment(), cwd="/tmp")
    assert written(folder) == [], done.stdout + done.stderr
    checked(done)
    assert "sandbox (" in done.stderr


def test_make_validate_runs_no_student_file_outside_the_sandbox_as_a_user(built_dist,
                                                                         autograder_zip):
    if os.geteuid() != 0:
        pytest.skip("grading as another user needs root")
    folder = student_folder(built_dist, shared_folder("validar-usuario-") / "alumno")
    zip_copy = Path(shutil.copy(autograder_zip, shared_folder("validar-zip-")))
    zip_copy.chmod(0o644)
    for path in [folder, *folder.iterdir()]:
        os.chown(path, OTHER_ACCOUNT, OTHER_ACCOUNT)
    command = ["setpriv", f"--reuid={OTHER_ACCOUNT}", f"--regid={OTHER_ACCOUNT}",
               "--clear-groups", "--"] + validate_command(zip_copy, folder)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                          env=environment(), cwd="/tmp")
    assert written(folder) == [], done.stdout + done.stderr
    checked(done)


def test_make_validate_without_a_notebook_says_what_to_give(built_dist, autograder_zip,
                                                            tmp_path):
    (tmp_path / "resultado.json").write_text(json.dumps(lab_result()), "utf-8")
    done = subprocess.run([sys.executable, "-m", "kit_autograder.validate", "--autograder",
                           str(autograder_zip), str(tmp_path / "resultado.json")],
                          capture_output=True, text=True, timeout=600, env=environment())
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "NOTEBOOK=" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
