"""`make assign LESSON=<lesson>`: a lesson's master -> dist/<lesson>/, for any lesson of the course.

    assignments/<lesson>/master.py --(otter_master)--> dist/<lesson>/otter/notebook_student.ipynb
                                   --(otter assign)-->
        dist/<lesson>/student/notebook_student.ipynb    the graded notebook students get
        dist/<lesson>/student/notebook.ipynb            the guided tour, no exercises (notebooks.py)
        dist/<lesson>/student/explorer.html             the lesson's interactive page, if it has one
        dist/<lesson>/student/requirements.txt          what students install, pinned as the kit is
        dist/<lesson>/student/tests/                    the public tests as files, for `otter check`
        dist/<lesson>/student/public_checks.npz         the grade's diagnosis on public cases, as
                                                        data, for grader.check (public_checks.py)
        dist/<lesson>/solution/notebook_solution.ipynb  the solution explained, after the deadline
        dist/<lesson>/autograder/<lesson>-autograder.zip  for Gradescope, `otter grade`, `otter run`
                                                        and `make grade`
        dist/<lesson>/autograder/kit_autograder-*.whl   the engine, for `otter run` in one's own Python
        dist/<lesson>/otter/                            the Otter-format master and what it names,
                                                        kept: `otter assign` on it gives the same zip

Where a lesson's parts are is kit_autograder/build/course.py; what a lesson must provide is
kit_autograder/lesson.py. The reference and the engine enter the zip through Otter's
``autograder_files`` and nowhere else.
"""

import argparse
import base64
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import nbformat

from kit_autograder import error_lines, lesson as lesson_module
from kit_autograder.build import checks_data, otter_master as master_module
from kit_autograder.build.course import DEFAULT_LESSON, DEMO_FOLDER, ROOT, LessonSources, zip_name
from kit_autograder.build.figures import attach_figures
from kit_autograder.build.leaks import Hidden, check_student_folder
from kit_autograder.build.master_error import MasterError
from kit_autograder.build.notebooks import explained_solution, executed_solution, guided_tour
from kit_autograder.build.pages import inline as inline_page
from kit_autograder.build.rubric import RubricError, check_matches, load_rubric, points_table
from kit_autograder.build.student_tests import student_tests
from kit_autograder.bundle import PLUGIN

# Seed 003 names the class's three notebooks; every lesson uses these names. Otter's init cell
# names the master's file, so the master is built under the name students get.
NOTEBOOK_NAME = "notebook_student.ipynb"
SOLUTION_NAME = "notebook_solution.ipynb"
TOUR_NAME = "notebook.ipynb"
EXPLORER_NAME = "explorer.html"
GUIDE_NAME = "assessment.md"
SUPPORT_FOLDER = "student"  # files/student/ in the zip: what the sandbox lays out beside a notebook

# The course's student-side modules, in autograder/: every notebook's grader, and, for a lesson
# with a lab, the shared lab runner and the challenge's validator with its schema.
SHARED_STUDENT_FILES = ("notebook_grader.py", "notebook_code.py", "public_checks.py")
LAB_STUDENT_FILES = ("lab_runner.py", "extension.py", "extension_schema.json")

# The engine as a distribution of its own (autograder/pyproject.toml), for `otter run`.
ENGINE_PROJECT = ROOT / "autograder"

# Requirements the grading environment needs beyond Otter itself, and what a student installs
# to run the notebook in JupyterLab, the lab and the validator, both taken from the pinned
# requirements.txt so that the versions live in one file.
GRADING_REQUIREMENTS = ("numpy", "matplotlib", "nbformat", "jsonschema")
STUDENT_REQUIREMENTS = ("otter-grader", "numpy", "matplotlib", "jsonschema", "ipykernel",
                        "jupyterlab")
STUDENT_REQUIREMENTS_HEADER = (
    "# Paquetes de la clase {title}. Necesitas Python 3.11 o más reciente; las versiones son las\n"
    "# mismas con las que se corrige. Instálalos en un entorno virtual, en una terminal abierta en\n"
    "# esta carpeta. Primero crea el entorno y actívalo:\n"
    "#     Linux y macOS:  python3 -m venv .venv\n"
    "#                     source .venv/bin/activate\n"
    "#     Windows:        py -m venv .venv\n"
    "#                     .venv\\Scripts\\activate\n"
    "# En Debian y Ubuntu el entorno no es opcional (su Python no deja instalar paquetes fuera de\n"
    "# uno); si python3 -m venv pide el paquete python3-venv, instálalo con el gestor del sistema.\n"
    "# Después, con el entorno activado, instala los paquetes y abre el cuaderno:\n"
    "#     python -m pip install -r requirements.txt\n"
    "#     jupyter lab notebook_student.ipynb\n"
)


def pinned_requirements(names):
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    keep = [line for line in lines if line.split("==")[0].strip().lower() in names]
    missing = set(names) - {line.split("==")[0].strip().lower() for line in keep}
    if missing:
        raise ValueError(f"requirements.txt pins none of {sorted(missing)}")
    return "\n".join(keep) + "\n"


def load_lesson(sources: LessonSources):
    """The lesson's ``lesson`` module, checked against the contract (structure and behaviour)."""
    sources.check()
    try:
        lesson = lesson_module.load(sources.import_paths(), sources.name)
        lesson_module.check_behaviour(lesson)
    except lesson_module.LessonError as exc:
        if not exc.problems:
            raise
        # One line per rule broken, each with the file a lesson's author starts from.
        where = error_lines.shown(sources.folder / "lesson.py", sources.root)
        raise lesson_module.LessonError("\n".join(
            f"{where}: {problem}; the contract is in docs/lesson-authors.md"
            for problem in exc.problems), exc.problems) from exc
    return lesson


def student_files(sources: LessonSources, lesson):
    """``[(source, name in the student folder)]``: what ships beside the notebook, the very
    list the grading sandbox lays out beside a submission (files/student/ in the zip)."""
    files = [(ROOT / "autograder" / name, name) for name in SHARED_STUDENT_FILES]
    if getattr(lesson, "LAB", None) is not None:
        files += [(ROOT / "autograder" / name, name) for name in LAB_STUDENT_FILES]
        files.append((Path(lesson.LAB.__file__), "lab.py"))
    files += [(sources.folder / name, Path(name).name)
              for name in getattr(lesson, "STUDENT_FILES", ())]
    return files


def lay_out_student_files(sources: LessonSources, lesson, rubric, folder: Path):
    """What lies beside a lesson's notebook: its support files, its guide, and the files the
    lesson makes at build time (``write_student_files``)."""
    for source, name in student_files(sources, lesson):
        shutil.copy(source, folder / name)
    (folder / GUIDE_NAME).write_text(guide_text(sources, lesson, rubric), encoding="utf-8")
    if hasattr(lesson, "write_student_files"):
        lesson.write_student_files(folder)
    # The grade's diagnosis on public cases, as data, for grader.check (public_checks.py).
    checks_data.write(lesson, folder)


def check_copied_files(sources: LessonSources, lesson):
    """The files the student folder copies as they are (``student_files``), checked for the
    reference before anything is built: a lesson that ships its reference is refused in a
    second rather than after Otter's whole build, naming the file and what ships it. The
    built folder is checked again at the end, with what the build wrote into it."""
    hidden = Hidden(lesson, "", sources.root)
    listed = {(sources.folder / name).resolve() for name in getattr(lesson, "STUDENT_FILES", ())}
    problems = []
    for source, name in student_files(sources, lesson):
        what = hidden.found_in(source.read_bytes())
        if what is None:
            continue
        fix = ("take it out of STUDENT_FILES in "
               + error_lines.shown(sources.folder / "lesson.py", sources.root)
               if source.resolve() in listed else "take the answers out of it")
        problems.append(f"{error_lines.shown(source, sources.root)}: {what}, and the lesson "
                        f"ships it to students as {name}; {fix}")
    if problems:
        raise lesson_module.LessonError("\n".join(problems))


def guide_text(sources: LessonSources, lesson, rubric) -> str:
    """assessment.md as students get it: the lesson's guide and the points table of its rubric."""
    guide = sources.guide(lesson)
    text = guide.read_text("utf-8") if guide else f"# {getattr(lesson, 'TITLE', lesson.NAME)}\n"
    return text.rstrip("\n") + "\n\n" + points_table(rubric)


def grading_salt(kept_master: Path, lesson_name: str):
    """The secret that seeds each submission's hidden inputs (kit_autograder.hidden_inputs).

    ``KIT_GRADING_SALT`` (base64) when set; otherwise the salt of this lesson's Otter master
    already in ``dist/<lesson>/otter``, so rebuilding keeps every submission's inputs; otherwise
    a new one. A kept master of another lesson is never reused.
    """
    if os.environ.get("KIT_GRADING_SALT"):
        return os.environ["KIT_GRADING_SALT"]
    try:
        config = master_module._raw_config(nbformat.read(kept_master, as_version=4).cells[0],
                                           master_module.CONFIG_HEADER) or {}
        for entry in config.get("plugins") or []:
            settings = entry.get(PLUGIN) if isinstance(entry, dict) else None
            if settings and settings.get("lesson") == lesson_name and settings.get("salt"):
                return str(settings["salt"])
    except (OSError, ValueError, KeyError, IndexError, AttributeError):
        pass
    return base64.b64encode(secrets.token_bytes(32)).decode()


def stage_build(sources: LessonSources, lesson, rubric, otter_dir: Path):
    """``dist/<lesson>/otter``: the Otter-format master and everything its config names, kept
    so that an instructor who knows Otter can run ``otter assign`` on it."""
    salt = grading_salt(otter_dir / NOTEBOOK_NAME, sources.name)
    shutil.rmtree(otter_dir, ignore_errors=True)
    otter_dir.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "explorer", "figures", "master.py",
                                    "synthetic.py", DEMO_FOLDER)
    # The lesson's package, its reference (reference/ is a namespace package: only this
    # lesson's part of it ships), and the engine.
    shutil.copytree(sources.folder, otter_dir / sources.name, ignore=ignore)
    if sources.reference is not None:
        shutil.copytree(sources.reference, otter_dir / "reference" / sources.name, ignore=ignore)
    shutil.copytree(ROOT / "autograder" / "kit_autograder", otter_dir / "kit_autograder",
                    ignore=ignore)
    support = otter_dir / SUPPORT_FOLDER
    support.mkdir()
    lay_out_student_files(sources, lesson, rubric, support)
    (otter_dir / "requirements.txt").write_text(pinned_requirements(GRADING_REQUIREMENTS))
    autograder_files = ["reference"] if sources.reference is not None else []
    autograder_files += [sources.name, SUPPORT_FOLDER, "kit_autograder"]
    nb = master_module.build_otter_master(sources.master, rubric, lesson, salt, autograder_files)
    nbformat.write(attach_figures(nb, sources.figures), otter_dir / NOTEBOOK_NAME)
    return otter_dir / NOTEBOOK_NAME


def otter_command():
    """This environment's `otter` command, as an instructor would type it."""
    script = Path(sys.executable).with_name("otter")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "otter"]


TCP_WARNING = "Kernel is running over TCP without encryption"


def run_otter_assign(master_nb: Path, result_dir: Path, run_tests: bool):
    """``cd dist/<lesson>/otter && otter assign notebook_student.ipynb RESULT``, the very command
    the instructors' guide gives, so that the kept master is known to rebuild the zip. Otter
    wipes its result folder, so it gets one of its own."""
    command = otter_command() + ["assign", master_nb.name, str(result_dir.resolve()),
                                 "--no-pdfs"]
    done = subprocess.run(command + ([] if run_tests else ["--no-run-tests"]),
                          cwd=master_nb.parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace")
    # Otter's kernels run on TCP and each says so in English; nothing else it prints is hidden.
    shown = [line for line in done.stdout.splitlines() if TCP_WARNING not in line]
    if shown:
        print("\n".join(shown), file=sys.stderr)
    done.check_returncode()


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


def demo_tour(sources: LessonSources, lesson, rubric, lesson_nb):
    """The guided tour, its demos run with the reference standing in, beside the files that
    lie beside the notebook, as students get them, in a folder of its own: a demo that is not
    clean stops the build before Otter's, and what a demo writes is not shipped."""
    with tempfile.TemporaryDirectory(prefix="kit-tour-") as work:
        folder = Path(work) / "student"
        folder.mkdir()
        lay_out_student_files(sources, lesson, rubric, folder)
        return guided_tour(lesson_nb, lesson, folder)


def kit_metadata(rubric) -> dict:
    """What the notebook's own grader reads of the rubric: which questions are practice."""
    return {"practice": sorted(rubric["practice"])}


def arrange_dist(sources: LessonSources, lesson, rubric, otter_out: Path, dist: Path, lesson_nb,
                 tour):
    student, autograder, solution = dist / "student", dist / "autograder", dist / "solution"
    for folder in (student, autograder, solution):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)

    student_nb = nbformat.read(otter_out / "student" / NOTEBOOK_NAME, as_version=4)
    # The student's grader tells practice from graded questions by the rubric (issue 48.7):
    # Otter's student copy says ``points = [0]`` for every question whose hidden tests it removed.
    student_nb.metadata["kit"] = kit_metadata(rubric)
    nbformat.write(master_module.number_cells(master_module.spanish_check_cells(student_nb)),
                   student / NOTEBOOK_NAME)
    (student / "tests").mkdir()
    for name, source in student_tests(student_nb).items():
        (student / "tests" / name).write_text(source, encoding="utf-8")
    lay_out_student_files(sources, lesson, rubric, student)
    title = getattr(lesson, "TITLE", lesson.NAME)
    (student / "requirements.txt").write_text(
        STUDENT_REQUIREMENTS_HEADER.format(title=title)
        + pinned_requirements(STUDENT_REQUIREMENTS), encoding="utf-8")
    nbformat.write(master_module.number_cells(tour), student / TOUR_NAME)
    if sources.explorer is not None:
        (student / EXPLORER_NAME).write_text(inline_page(sources.explorer), encoding="utf-8")

    zips = list((otter_out / "autograder").glob("*.zip"))
    if len(zips) != 1:
        raise RuntimeError(f"otter assign produced {len(zips)} zips, expected 1")
    shutil.copy(zips[0], autograder / zip_name(sources.name))
    build_engine_wheel(autograder)
    otter_solution = nbformat.read(otter_out / "autograder" / NOTEBOOK_NAME, as_version=4)
    explained = explained_solution(otter_solution, lesson_nb, lesson.FUNCTIONS)
    explained.metadata["kit"] = kit_metadata(rubric)
    # The solution runs from its own folder: the same files beside it as beside the notebook.
    lay_out_student_files(sources, lesson, rubric, solution)
    explained = executed_solution(explained, solution, SOLUTION_NAME)
    nbformat.write(master_module.number_cells(explained), solution / SOLUTION_NAME)


def find_autograder_zip(dist: Path):
    """The one autograder zip that `make assign` built in a lesson's ``dist``, or None."""
    zips = sorted((Path(dist) / "autograder").glob("*-autograder.zip"))
    return zips[0] if len(zips) == 1 else None



def build(lesson: str = DEFAULT_LESSON, dist=None, run_tests: bool = True, root: Path = ROOT,
          progress=lambda step: None):
    """Build ``lesson`` of the course at ``root`` into ``dist`` (``dist/<lesson>/``). What a
    lesson's author can get wrong is checked first, before Otter's build: its contract, its
    rubric against its questions, the files it ships, its demos. ``progress(step)`` is told
    each step as it starts."""
    sources = LessonSources(lesson, Path(root))
    dist = Path(dist) if dist is not None else Path(root) / "dist" / lesson
    progress("checking the lesson: its contract, rubric, master and the files it ships")
    module = load_lesson(sources)
    rubric = load_rubric(sources.rubric, shown=error_lines.shown(sources.rubric, sources.root))
    try:
        master = master_module.load_master(sources.master)
        automatic = lesson_module.questions(module)
        master_module.check_questions(master, module, rubric["practice"])
        check_matches(rubric, automatic, master_module.manual_questions(master), sources.name,
                      master_module.practice_questions(master, automatic))
        check_copied_files(sources, module)
        lesson_nb = attach_figures(master_module.lesson_notebook(sources.master, module),
                                   sources.figures)
        progress("running the guided tour's demos, the reference standing in")
        tour = demo_tour(sources, module, rubric, lesson_nb)
        progress("otter assign: the graded notebook and the autograder zip"
                 + (", and Otter's check of the solution" if run_tests else ""))
        master_nb = stage_build(sources, module, rubric, dist / "otter")
        otter_out = dist / "build"
        run_otter_assign(master_nb, otter_out, run_tests)
        progress("the student folder, the engine's wheel, the explained solution (run in a "
                 "kernel)")
        arrange_dist(sources, module, rubric, otter_out, dist, lesson_nb, tour)
    except MasterError as exc:
        exc.locate(sources.master, error_lines.shown(sources.master, sources.root))
        raise
    # Otter's output folder is an intermediate; dist/ keeps only what someone will use.
    shutil.rmtree(otter_out)
    progress("checking what reaches students for anything hidden")
    try:  # fail closed: a student folder that carries the answers is not left to be shipped
        for folder in (dist / "student", dist / "otter" / SUPPORT_FOLDER):
            check_student_folder(folder, module, grading_salt(master_nb, sources.name),
                                 sources.root)
    except lesson_module.LessonError:
        shutil.rmtree(dist / "student", ignore_errors=True)
        shutil.rmtree(dist / "autograder", ignore_errors=True)
        raise
    return dist


# What a lesson's author or the person building can get wrong: each says so in its message,
# one line per problem, and that is all they read (error_lines: VERBOSE=1 adds the traceback).
AUTHOR_ERRORS = (FileNotFoundError, lesson_module.LessonError, RubricError, MasterError,
                 ValueError, RuntimeError)


def main(argv=None, root: Path = ROOT):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", default=DEFAULT_LESSON,
                        help=f"the lesson's folder under assignments/ (default {DEFAULT_LESSON})")
    parser.add_argument("--dist", type=Path, default=None,
                        help="where to build (default dist/<lesson>)")
    parser.add_argument("--no-run-tests", action="store_true",
                        help="skip Otter's check that the solution passes every test")
    args = parser.parse_args(argv)
    started = time.monotonic()

    def progress(step):  # on stdout: stderr is for the errors, one line each
        print(f"make assign {args.lesson}: {step}", flush=True)

    try:
        dist = build(args.lesson, args.dist, run_tests=not args.no_run_tests, root=root,
                     progress=progress)
    except subprocess.CalledProcessError as exc:
        return error_lines.report(exc, [f"{' '.join(map(str, exc.cmd[:2]))} failed with exit "
                                        f"code {exc.returncode}; its own output is above"])
    except AUTHOR_ERRORS as exc:
        return error_lines.report(exc)
    except Exception as exc:
        # Raised by the lesson's own code (its lesson.py at import, a case, the judge): shown
        # where the author fixes it. Anything else is the kit's bug, with its traceback.
        sources = LessonSources(args.lesson, Path(root))
        where = error_lines.frame_in(exc, [sources.folder, sources.root / "reference"], root)
        if where is None:
            raise
        said = " ".join(str(exc.msg if isinstance(exc, SyntaxError) else exc).split())
        return error_lines.report(exc, [f"{where}: {type(exc).__name__}: {said}, while "
                                        f"`make assign` loaded lesson {args.lesson}; fix it "
                                        "there (VERBOSE=1 shows the traceback)"])
    print(f"built in {time.monotonic() - started:.0f} s")
    print(f"student notebook: {dist / 'student' / NOTEBOOK_NAME}")
    print(f"autograder zip:   {find_autograder_zip(dist)}")
    print(f"engine wheel:     {dist / 'autograder' / engine_wheel_name()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
