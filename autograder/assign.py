"""`make assign`: master notebook -> dist/student, dist/solution and dist/autograder.

    assignments/attention/master.py  --(master.py)-->  dist/build/notebook_student.ipynb  --(otter assign)-->
        dist/student/notebook_student.ipynb      the graded notebook students get
        dist/student/notebook.ipynb              the guided tour, no exercises (notebooks.py)
        dist/student/explorer.html               the interactive page, one self-contained file
        dist/student/requirements.txt            what students install, pinned as the kit is
        dist/student/tests/                      the public tests as files, for `otter check`
        dist/solution/notebook_solution.ipynb    the solution explained, to release after the deadline
        dist/autograder/<name>-autograder.zip    the zip for Gradescope, `otter grade`, `otter run`
                                                 and `make grade`
        dist/autograder/kit_autograder-*.whl     the engine, for instructors who `otter run` with
                                                 their own Otter
        dist/otter/                              the Otter-format master and what it names, kept:
                                                 `otter assign` on it gives the same zip

The reference and the engine enter the zip through Otter's ``autograder_files`` and nowhere
else. After building, the student folder is checked by content for anything hidden.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import nbformat

from attention.explorer.build import inline as inline_explorer
from kit_autograder import lesson as lesson_module
from kit_autograder.build import otter_master as master_module
from kit_autograder.build.rubric import load_rubric, points_table

from kit_autograder.build.figures import attach_figures
from kit_autograder.build.notebooks import explained_solution, guided_tour
from kit_autograder.build.student_tests import student_tests

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "assignments" / "attention"
MASTER = LESSON / "master.py"
# Otter's init cell names the master's file, so the master is built under the name students get.
NOTEBOOK_NAME = "notebook_student.ipynb"
SOLUTION_NAME = "notebook_solution.ipynb"
TOUR_NAME = "notebook.ipynb"
EXPLORER_NAME = "explorer.html"
FIGURES = LESSON / "figures"
# Otter stamps its zip's name with the master's name and the time; every path uses this one.
ZIP_NAME = "attention-autograder.zip"

RUBRIC = ROOT / "rubrics" / "attention.yaml"

# Copied beside the Otter master so that its `autograder_files` ship them in the zip: the
# reference and the lesson, which the grader loads, the engine, which Otter imports as the
# plugin, and the student folder's support files, which the sandbox places beside each
# notebook it runs.
AUTOGRADER_FILES = ("reference", "assignments/attention", "autograder/kit_autograder")
SUPPORT_FOLDER = "student"

# The engine as a distribution of its own (autograder/pyproject.toml), for `otter run`.
ENGINE_PROJECT = ROOT / "autograder"

# Student-facing files that ship flat beside the notebook, as (source, name in dist/student):
# the notebook's grader helper, the lab, what both need to read a notebook, the extension
# validator and the assessment. The grading sandbox lays out exactly these beside a submission.
STUDENT_FILES = (
    ("autograder/notebook_grader.py", "notebook_grader.py"),
    ("assignments/attention/lab.py", "lab.py"),
    ("autograder/notebook_code.py", "notebook_code.py"),
    ("assignments/attention/extension.py", "extension.py"),
    ("assignments/attention/extension_schema.json", "extension_schema.json"),
    ("assessment.md", "assessment.md"),
)

# Requirements the grading environment needs beyond Otter itself, and what a student installs
# to run the notebook, the lab and the validator, both taken from the pinned requirements.txt
# so that the versions live in one file.
GRADING_REQUIREMENTS = ("numpy", "matplotlib", "nbformat", "jsonschema")
STUDENT_REQUIREMENTS = ("otter-grader", "numpy", "matplotlib", "jsonschema", "ipykernel",
                        "jupyterlab")
STUDENT_REQUIREMENTS_HEADER = (
    "# Paquetes de la clase 055. Instálalos en una terminal abierta en esta carpeta con:\n"
    "#     python -m pip install -r requirements.txt\n"
    "# Necesitas Python 3.11 o más reciente. Las versiones son las mismas con las que se corrige.\n"
    "# Después, en la misma terminal, abre el cuaderno con JupyterLab:\n"
    "#     jupyter lab notebook_student.ipynb\n"
)


def pinned_requirements(names):
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    keep = [line for line in lines if line.split("==")[0].strip().lower() in names]
    missing = set(names) - {line.split("==")[0].strip().lower() for line in keep}
    if missing:
        raise ValueError(f"requirements.txt pins none of {sorted(missing)}")
    return "\n".join(keep) + "\n"


def grading_requirements():
    return pinned_requirements(GRADING_REQUIREMENTS)


def grading_salt(kept_master: Path):
    """The secret that seeds each submission's hidden inputs (kit_autograder.hidden_inputs).

    ``KIT_GRADING_SALT`` (base64) when set; otherwise the salt of the Otter master already in
    ``dist/otter``, so rebuilding keeps every submission's inputs; otherwise a new one.
    """
    import base64
    import os
    import secrets

    if os.environ.get("KIT_GRADING_SALT"):
        return os.environ["KIT_GRADING_SALT"]
    try:
        config = nbformat.read(kept_master, as_version=4).cells[0].source
        for line in config.splitlines():
            if line.strip().startswith("salt:"):
                return line.split(":", 1)[1].strip().strip("'\"")
    except (OSError, ValueError, KeyError, IndexError, AttributeError):
        pass
    return base64.b64encode(secrets.token_bytes(32)).decode()


def stage_build(otter_dir: Path):
    """``dist/otter``: the Otter-format master and everything its config names, kept so that
    an instructor who knows Otter can run ``otter assign`` on it."""
    salt = grading_salt(otter_dir / NOTEBOOK_NAME)
    shutil.rmtree(otter_dir, ignore_errors=True)
    otter_dir.mkdir(parents=True)
    lesson = lesson_module.load([ROOT / "assignments", ROOT], LESSON.name)
    nb = master_module.build_otter_master(MASTER, load_rubric(RUBRIC), lesson, salt)
    nbformat.write(attach_figures(nb, FIGURES), otter_dir / NOTEBOOK_NAME)
    for source in map(Path, AUTOGRADER_FILES):
        shutil.copytree(ROOT / source, otter_dir / source.name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "explorer",
                                                      "master.py"))
    support = otter_dir / SUPPORT_FOLDER
    support.mkdir()
    for source, name in STUDENT_FILES:
        shutil.copy(ROOT / source, support / name)
    (otter_dir / "requirements.txt").write_text(grading_requirements())
    return otter_dir / NOTEBOOK_NAME


def otter_command():
    """This environment's `otter` command, as an instructor would type it."""
    script = Path(sys.executable).with_name("otter")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "otter"]


def run_otter_assign(master_nb: Path, result_dir: Path, run_tests: bool):
    """``cd dist/otter && otter assign notebook_student.ipynb RESULT``, the very command the
    README gives instructors, so that the kept master is known to rebuild the zip. Otter wipes
    its result folder, so it gets one of its own."""
    command = otter_command() + ["assign", master_nb.name, str(result_dir.resolve()),
                                 "--no-pdfs"]
    subprocess.run(command + ([] if run_tests else ["--no-run-tests"]), cwd=master_nb.parent,
                   check=True)


def engine_wheel_name():
    """The file name pip gives the engine's wheel, from its pyproject.toml."""
    project = tomllib.loads((ENGINE_PROJECT / "pyproject.toml").read_text("utf-8"))["project"]
    return f"{project['name'].replace('-', '_')}-{project['version']}-py3-none-any.whl"


def build_engine_wheel(out: Path):
    """The engine's wheel in ``out``, built from a copy of the project: setuptools writes its
    build/ and egg-info beside the sources it builds."""
    with tempfile.TemporaryDirectory(prefix="kit-wheel-") as work:
        project = Path(work) / "project"
        shutil.copytree(ENGINE_PROJECT / "kit_autograder", project / "kit_autograder",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        shutil.copy(ENGINE_PROJECT / "pyproject.toml", project)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "--no-build-isolation", "--no-index", "--wheel-dir", str(out),
                        str(project)], check=True)
    wheel = out / engine_wheel_name()
    if not wheel.is_file():
        raise RuntimeError(f"pip wheel did not write {wheel.name}")
    return wheel


def arrange_dist(otter_out: Path, dist: Path):
    student, autograder, solution = dist / "student", dist / "autograder", dist / "solution"
    for folder in (student, autograder, solution):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)

    student_nb = nbformat.read(otter_out / "student" / NOTEBOOK_NAME, as_version=4)
    nbformat.write(master_module.number_cells(student_nb), student / NOTEBOOK_NAME)
    (student / "tests").mkdir()
    for name, source in student_tests(student_nb).items():
        (student / "tests" / name).write_text(source, encoding="utf-8")
    for source, name in STUDENT_FILES:
        shutil.copy(ROOT / source, student / name)
    with open(student / "assessment.md", "a", encoding="utf-8") as assessment:
        assessment.write("\n" + points_table(load_rubric(RUBRIC)))
    (student / "requirements.txt").write_text(
        STUDENT_REQUIREMENTS_HEADER + pinned_requirements(STUDENT_REQUIREMENTS), encoding="utf-8")
    lesson = lesson_module.load([ROOT / "assignments", ROOT], LESSON.name)
    tour = attach_figures(guided_tour(master_module.lesson_notebook(MASTER, lesson),
                                      lesson.FUNCTIONS), FIGURES)
    nbformat.write(master_module.number_cells(tour), student / TOUR_NAME)
    explorer = (LESSON / "explorer" / "index.html").read_text(encoding="utf-8")
    (student / EXPLORER_NAME).write_text(inline_explorer(explorer), encoding="utf-8")

    zips = list((otter_out / "autograder").glob("*.zip"))
    if len(zips) != 1:
        raise RuntimeError(f"otter assign produced {len(zips)} zips, expected 1")
    shutil.copy(zips[0], autograder / ZIP_NAME)
    build_engine_wheel(autograder)
    otter_solution = nbformat.read(otter_out / "autograder" / NOTEBOOK_NAME, as_version=4)
    explained = explained_solution(otter_solution, master_module.load_master(MASTER))
    nbformat.write(master_module.number_cells(explained), solution / SOLUTION_NAME)


def find_autograder_zip(dist: Path = ROOT / "dist"):
    """The one autograder zip that `make assign` built, or None."""
    zips = sorted((dist / "autograder").glob("*-autograder.zip"))
    return zips[0] if len(zips) == 1 else None


def build(dist: Path = ROOT / "dist", run_tests: bool = True):
    master_nb = stage_build(dist / "otter")
    otter_out = dist / "build"
    run_otter_assign(master_nb, otter_out, run_tests)
    arrange_dist(otter_out, dist)
    # Otter's output folder is an intermediate; dist/ keeps only what someone will use.
    shutil.rmtree(otter_out)
    return dist


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--no-run-tests", action="store_true",
                        help="skip Otter's check that the solution passes every test")
    args = parser.parse_args(argv)
    dist = build(args.dist, run_tests=not args.no_run_tests)
    print(f"student notebook: {dist / 'student' / NOTEBOOK_NAME}")
    print(f"autograder zip:   {find_autograder_zip(dist)}")
    print(f"engine wheel:     {dist / 'autograder' / engine_wheel_name()}")


if __name__ == "__main__":
    sys.exit(main())
