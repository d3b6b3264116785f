"""Grading submissions in tests, through each door and in each mode the kit supports.

* ``grade_here``: ``make grade``'s engine in this process (root, bubblewrap when present);
* ``grade_as_user``: the same command as an unprivileged user (``setpriv``);
* ``grade_docker_like``: as root, but the way Docker's default profile leaves a container:
  no CAP_SYS_ADMIN, and a seccomp filter that denies namespaces and Landlock;
* ``grade_gradescope``: Gradescope's entry point, the zip's ``run_autograder``, on a folder
  mounted as ``/autograder``, one submission at a time.

Submissions are built from the session's build: the student notebook (the untouched stub),
the solution (correct), and either with cells appended or a function's cell replaced.
"""

import ast
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from otter_paths import BLAS_THREADS

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
UNPRIVILEGED_UID = 1000
DOCKER_LIKE = ROOT / "tests" / "docker_like.py"
ENVIRONMENT = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp",
               "PYTHONDONTWRITEBYTECODE": "1", **BLAS_THREADS}


# --- submissions ----------------------------------------------------------------------------


# Step 4's gradient experiment: eleven million normal draws and a figure, 0.3 s of CPU in
# every job that runs it (bench's floor: 0.66 s per correct notebook with it, 0.37 without),
# on the given softmax alone. Submissions built for tests about grading leave that one cell out,
# as a student may: test_harness_notebooks checks that it reads no graded function and defines
# no name a later cell reads, test_lesson_claims checks its numbers, and the demo's notebooks,
# the bench's and test_solution_notebook's run it whole.
EXPERIMENT = "def gradiente_en_q("


def without_experiment(notebook):
    """A copy of ``notebook`` (a NotebookNode or dict) without step 4's gradient experiment."""
    copy = nbformat.from_dict(notebook)
    kept = [cell for cell in copy.cells
            if not (cell.cell_type == "code" and EXPERIMENT in cell.source)]
    assert len(kept) == len(copy.cells) - 1, f"expected one cell with {EXPERIMENT!r}"
    copy.cells = kept
    return copy


class Notebooks:
    """Submissions made from a build: ``stub``, ``correct`` and variations of them, without
    step 4's experiment (``without_experiment``)."""

    def __init__(self, dist):
        sys.path.insert(0, str(ROOT / "assignments"))
        lesson = ROOT / "assignments" / "attention"
        package = sys.modules.get("attention")
        if package is not None and str(lesson) not in list(getattr(package, "__path__", [])):
            # A grade run in this process imported the zip's copy of the lesson, which ships
            # no synthetic.py (a test's helper): let the package find it in the checkout too.
            package.__path__.append(str(lesson))
        from attention.synthetic import correct, read_build

        student, self.solutions = read_build(dist)
        self.student = without_experiment(student)
        self._correct = without_experiment(correct(student, self.solutions))

    @staticmethod
    def to_bytes(nb):
        return nbformat.writes(nb).encode("utf-8") + b"\n"

    def _base(self, base):
        """A fresh copy of ``base``: "stub", "bare" or "correct"."""
        if base == "bare":
            nb = nbformat.from_dict(self.student)
            nb.cells = [cell for cell in nb.cells
                        if cell.cell_type != "code" or _starts_with_definition(cell.source)]
            return nb
        return nbformat.from_dict(self.student if base == "stub" else self._correct)

    def _with_cells(self, nb, extra_cells):
        nb.cells += [nbformat.v4.new_code_cell(source) for source in extra_cells]
        return self.to_bytes(nb)

    def stub(self, extra_cells=()):
        return self._with_cells(self._base("stub"), extra_cells)

    def bare(self, extra_cells=()):
        """The stub without the lesson's demonstrations: of its code cells, only those that
        start with an import or a definition (the graded functions' stubs, their helpers).

        For a test about what an added cell does to the grader, not about the lesson: the
        other demonstrations (the worked examples, the figures, the trained model's run) would
        run in every job and change nothing of what such a test shows. Markdown cells stay,
        written answers included."""
        return self._with_cells(self._base("bare"), extra_cells)

    def correct(self, extra_cells=()):
        return self._with_cells(self._base("correct"), extra_cells)

    def with_function(self, base, name, source, extra_cells=()):
        """``base`` ("stub", "bare" or "correct") with the cell that defines ``name``
        replaced."""
        nb = self._base(base)
        for cell in nb.cells:
            if cell.cell_type == "code" and cell.source.lstrip().startswith(f"def {name}("):
                cell.source = source
                break
        else:
            raise ValueError(f"no cell defines {name}")
        return self._with_cells(nb, extra_cells)


def _starts_with_definition(source):
    """Whether a cell's first statement imports or defines something (a cell Python cannot
    parse, an IPython magic say, does not)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    return bool(body) and isinstance(body[0], (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                               ast.ClassDef))


def inject(notebook, function, source):
    """A copy of ``notebook`` (a NotebookNode) whose cell ``def function(`` holds ``source``."""
    copy = nbformat.from_dict(notebook)
    cells = [cell for cell in copy.cells
             if cell.cell_type == "code" and cell.source.startswith(f"def {function}(")]
    assert len(cells) == 1, f"expected one cell defining {function}, found {len(cells)}"
    cells[0].source = source
    return copy


def with_extra_cell(notebook_bytes, source):
    """The notebook with one more code cell at the end."""
    nb = nbformat.reads(notebook_bytes.decode("utf-8"), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(source))
    return nbformat.writes(nb).encode("utf-8")


def zip_bytes(members):
    """A zip holding ``{name: bytes}``, as an upload (``grader.export()`` writes one)."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def write_folder(folder, files):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


# --- results ----------------------------------------------------------------------------------


def read_csv(out):
    with open(Path(out) / "final_grades.csv", newline="", encoding="utf-8") as f:
        return {row["file"]: row for row in csv.DictReader(f)}


def read_records(out):
    from kit_autograder.verdicts.record import Record

    return {r.file: r for r in (Record.from_json(p.read_text("utf-8"))
                                for p in sorted((Path(out) / "records").glob("*.json")))}


def total(row):
    return float(row["total_points_earned"])


# --- the doors ------------------------------------------------------------------------------


# Tests give a notebook less time than an instructor would: every notebook here finishes in
# about a second, and the ones that never finish should not hold the suite for minutes.
TEST_TIMEOUT = 15


def grade_here(submissions, out, autograder_zip, jobs=2, timeout=TEST_TIMEOUT,
               call_timeout=None):
    from kit_autograder.batch import grade_folder
    from kit_autograder.sandbox.client import Limits

    grade_folder(submissions, out, autograder_zip=autograder_zip, jobs=jobs,
                 limits=Limits(notebook_seconds=timeout,
                               call_seconds=call_timeout or Limits.call_seconds))
    return read_csv(out)


def _batch_command(submissions, out, autograder_zip, jobs, call_timeout=None):
    return [PYTHON, "-m", "kit_autograder.batch", "--submissions", str(submissions), "--out",
            str(out), "--autograder", str(autograder_zip), "--jobs", str(jobs),
            "--timeout", str(TEST_TIMEOUT)] + (
        ["--call-timeout", str(call_timeout)] if call_timeout else [])


def with_call_timeout(autograder_zip, seconds, folder):
    """A copy of the zip whose plugin settings give each hidden call ``seconds``
    (``call_timeout``, as an instructor would set it), for Otter's doors."""
    import zipfile

    copy = Path(folder) / Path(autograder_zip).name
    with zipfile.ZipFile(autograder_zip) as source, zipfile.ZipFile(copy, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "otter_config.json":
                config = json.loads(data)
                for entry in config["plugins"]:
                    if isinstance(entry, dict):
                        for settings in entry.values():
                            settings["call_timeout"] = seconds
                data = json.dumps(config).encode("utf-8")
            target.writestr(item, data)
    return copy


def _environment():
    # The kit's modules, wherever this checkout is: the venv's .pth says so for `make`.
    paths = [str(ROOT), str(ROOT / "autograder"), str(ROOT / "assignments")]
    label = {"KIT_SANDBOX_LABEL": os.environ["KIT_SANDBOX_LABEL"]} \
        if "KIT_SANDBOX_LABEL" in os.environ else {}
    return {**ENVIRONMENT, "PYTHONPATH": os.pathsep.join(paths), **label}


def shared_folder(prefix):
    """A folder another user can read (pytest's own are private to root)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    return folder


def grade_as_user(submissions, out, autograder_zip, jobs=2, uid=UNPRIVILEGED_UID,
                  call_timeout=None):
    """``make grade``'s command as an ordinary user, who owns ``out`` and reads a copy of
    the zip (the session's build is private to root)."""
    Path(out).mkdir(parents=True, exist_ok=True)
    os.chown(out, uid, uid)
    autograder_zip = shutil.copy(autograder_zip, shared_folder("user-zip-"))
    os.chmod(autograder_zip, 0o644)
    command = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    done = subprocess.run(command + _batch_command(submissions, out, autograder_zip, jobs,
                                                   call_timeout),
                          env=_environment(), capture_output=True, text=True, timeout=600,
                          cwd="/tmp")
    assert done.returncode == 0, done.stderr[-3000:]
    return read_csv(out)


def grade_docker_like(submissions, out, autograder_zip, jobs=2, call_timeout=None):
    """As root, in the conditions of Docker's default profile (see docker_like.py)."""
    command = [PYTHON, str(DOCKER_LIKE), PYTHON] + _batch_command(
        submissions, out, autograder_zip, jobs, call_timeout)[1:]
    done = subprocess.run(command, env=_environment(), capture_output=True, text=True,
                          timeout=600, cwd="/tmp")
    assert done.returncode == 0, done.stderr[-3000:]
    return read_csv(out)


def grade_gradescope(autograder_zip, submission_name, data, venv, docker_like=False):
    """results.json from Gradescope's own entry point: the zip unpacked as ``/autograder``
    (in a mount namespace of the run's own), its ``run_autograder`` started from there, which
    runs ``python /autograder/source/run_otter.py`` in ``venv`` (the image's Python), as root;
    ``docker_like`` puts it under Docker's default profile, as Gradescope's container is."""
    from otter_paths import gradescope_root, run_autograder

    root = gradescope_root(autograder_zip, submission_name, data)
    try:
        prefix = [PYTHON, str(DOCKER_LIKE)] if docker_like else []
        done = run_autograder(root, venv, workdir="/autograder", prefix=prefix)
        results = root / "results" / "results.json"
        assert results.exists(), done.stdout[-2000:] + done.stderr[-3000:]
        return json.loads(results.read_text("utf-8"))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def gradescope_scores(results):
    return {test["name"]: float(test.get("score", 0)) for test in results.get("tests", [])
            if "score" in test}
