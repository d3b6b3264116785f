"""The student folder's requirements.txt is enough: a fresh venv runs the lab, the validator
and the notebook itself (issue 13). The venv (``fresh_python``, conftest.py) is built once per
session."""

import json
import shutil
import subprocess
import sys

import pytest

from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME
from test_extension import GOOD_EXTENSION


@pytest.fixture
def finished_folder(built_dist, tmp_path):
    """The student folder with a finished notebook, renamed as a browser would."""
    folder = tmp_path / "carpeta"
    shutil.copytree(built_dist / "student", folder)
    (folder / NOTEBOOK_NAME).unlink()
    shutil.copy(built_dist / "solution" / SOLUTION_NAME, folder / "notebook_student (1).ipynb")
    return folder


def test_lab_and_validator_run_in_a_venv_made_from_the_student_requirements(fresh_python, finished_folder):
    lab = subprocess.run([str(fresh_python), "lab.py", "--seed", "55"], cwd=finished_folder,
                         capture_output=True, text=True, timeout=300)
    assert lab.returncode == 0, lab.stderr
    data = {**json.loads(lab.stdout), "student_extension": GOOD_EXTENSION}
    (finished_folder / "resultado.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    check = subprocess.run([str(fresh_python), "extension.py", "resultado.json"], cwd=finished_folder,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "5 de 5 criterios se cumplen." in check.stdout


def test_the_renamed_notebook_runs_end_to_end_in_that_venv(fresh_python, finished_folder):
    # The venv's own kernel (ipykernel from requirements.txt) runs every cell, export included.
    script = (
        "import sys, nbformat\n"
        "from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, timeout=300, kernel_name='python3', resources={'metadata': {'path': '.'}}).execute()\n"
        "print('\\n'.join(o.get('text', '') for c in nb.cells if c.cell_type == 'code' for o in c.outputs))\n"
    )
    done = subprocess.run([str(fresh_python), "-c", script, "notebook_student (1).ipynb"], cwd=finished_folder,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "5 de 5 criterios se cumplen." in done.stdout and "Listo:" in done.stdout
    assert len(list(finished_folder.glob("notebook_student (1)_*.zip"))) == 1


@pytest.mark.parametrize("script, blocked, message", [
    ("lab.py", "numpy", "lab.py: falta el paquete numpy"),
    ("extension.py", "jsonschema", "extension.py: falta el paquete jsonschema"),
])
def test_without_a_package_the_student_reads_which_one_in_spanish(fresh_python, finished_folder, script, blocked, message):
    # Uninstalling from the shared venv would break the other tests: block the import instead.
    code = (f"import sys, runpy; sys.modules[{blocked!r}] = None; sys.argv = [{script!r}, 'resultado.json']; "
            f"runpy.run_path({script!r}, run_name='__main__')")
    done = subprocess.run([str(fresh_python), "-c", code], cwd=finished_folder, capture_output=True, text=True)
    assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr
    assert "pip install -r requirements.txt" in done.stderr


def test_every_way_in_starts_with_a_virtual_environment_made_with_python3_or_py():
    """Issue 48.8: what a student can read before Jupyter opens (the README's «Para estudiantes»,
    the folder's requirements.txt, assessment.md) and the notebooks' own instructions create a
    virtual environment before any pip install, with `python3` on Linux and macOS (Debian and
    Ubuntu have no `python`) and `py` on Windows."""
    import re
    from pathlib import Path

    from autograder.assign import STUDENT_REQUIREMENTS_HEADER
    from kit_autograder.build.otter_master import load_master
    from lesson055 import MASTER

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text("utf-8")
    readme = readme[readme.index("## Para estudiantes"):]
    readme = readme.split("\n## ")[0]  # to the next section, if any
    assessment = (root / "assessment.md").read_text("utf-8")
    assessment = assessment[assessment.index("## Antes de empezar"):assessment.index("## Preguntas")]
    cells = [c.source for c in load_master(MASTER).cells if c.cell_type == "markdown"]
    before = next(c for c in cells if c.startswith("## Antes de empezar"))
    tour = next(c for c in cells if c.startswith("**Recorrido guiado.**"))
    for name, text in (("README", readme), ("requirements.txt", STUDENT_REQUIREMENTS_HEADER),
                       ("assessment.md", assessment), ("Antes de empezar", before), ("tour", tour)):
        first_venv = text.find("python3 -m venv .venv")
        assert 0 <= first_venv < text.find("pip install -r requirements.txt"), name
        assert "py -m venv .venv" in text and "source .venv/bin/activate" in text, name
        assert not re.search(r"(?<![\w.])python -m venv", text), name  # `python` is not on Debian
