"""Build adversarial submissions and grade them through Otter's Gradescope entry point.

Shared by the security tests. A submission is a trimmed student notebook (init cell, imports,
given helpers, the four stubs) plus the cells of a file in ``tests/adversarial/``. Grading runs
``otter.run.run_autograder.main(root)`` in a fresh process, on Gradescope's layout, either as
root (privilege separation on) or as ``nobody`` through ``setpriv`` (a grader without root).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
ADVERSARIAL = Path(__file__).resolve().parent / "adversarial"
PLUGIN = "autograder.verify.plugin.VerificationPlugin"
UNPRIVILEGED = "nobody"
# Short limits, so that the loops and the bombs end quickly; honest code needs a fraction.
TEST_SETTINGS = {"kernel_seconds": 15, "child_cpu_seconds": 3, "child_wall_seconds": 10}

_KEPT = ("# Initialize Otter", "import numpy", "def ")
_CELL = re.compile(r"^# %%.*$", re.MULTILINE)

# The grading processes: a warm parent imports Otter and the zip's plugin once, then forks one
# child per submission, which lays out Gradescope's folders, drops to `nobody` when the job is
# not root's, and calls Otter's entry point. Jobs marked `alone` run last, one at a time (an
# attack that kills every process of its user must not take its neighbours with it).
RUNNER = r'''
import json, os, pwd, grp, shutil, sys, time, zipfile
jobs_path, workers = sys.argv[1], int(sys.argv[2])
jobs = json.load(open(jobs_path))
source = os.path.join(os.path.dirname(jobs_path), "warm-source")
zipfile.ZipFile(jobs[0]["zip"]).extractall(source)
sys.path.insert(0, source)  # run_otter.py's folder, as on Gradescope
import dill
from otter.run.run_autograder import main
import autograder.verify.plugin
from autograder.verify import privileges
privileges.identity(privileges.KERNEL_USER), privileges.identity(privileges.VERIFY_USER)

def grade(job):
    root = job["root"]
    for name in ("source", "submission", "results"):
        os.makedirs(os.path.join(root, name))
    zipfile.ZipFile(job["zip"]).extractall(os.path.join(root, "source"))
    shutil.copytree(job["submission"], os.path.join(root, "submission"), dirs_exist_ok=True)
    with open(os.path.join(root, "submission_metadata.json"), "w") as f:
        json.dump({}, f)
    if not job["as_root"]:
        user = pwd.getpwnam("%(user)s")
        for path in (job["workdir"],):
            for top, dirs, files in os.walk(path):
                for name in [top] + [os.path.join(top, n) for n in dirs + files]:
                    os.lchown(name, user.pw_uid, user.pw_gid)
        os.setgroups([])
        os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
        os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
        os.environ["HOME"] = job["workdir"]
    summary = {"error": None}
    out = os.open(os.path.join(job["workdir"], "output.txt"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    try:
        main(root)
    except BaseException as exc:
        summary["error"] = f"{type(exc).__name__}: {exc}"
    time.sleep(job["linger"])  # whatever a submission left running gets time to show itself
    try:
        with open(os.path.join(root, "results", "results.json")) as f:
            summary["results"] = json.load(f)
        with open(os.path.join(root, "results", "results.pkl"), "rb") as f:
            summary["plugin"] = dill.load(f).get_plugin_data("%(plugin)s")
    except Exception as exc:
        summary["read_error"] = f"{type(exc).__name__}: {exc}"
    with open(job["summary"], "w") as f:
        json.dump(summary, f, default=str)

def run(batch, workers):
    running = set()
    for job in batch:
        while len(running) >= workers:
            running.discard(os.wait()[0])
        pid = os.fork()
        if pid == 0:
            try:
                grade(job)
            finally:
                os._exit(0)
        running.add(pid)
    while running:
        running.discard(os.wait()[0])

run([job for job in jobs if not job["alone"]], workers)
run([job for job in jobs if job["alone"]], 1)
''' % {"user": UNPRIVILEGED, "plugin": PLUGIN}


def cells_of(path: Path):
    """The code cells of an adversarial source: its ``# %%`` blocks, docstring skipped."""
    blocks = _CELL.split(path.read_text("utf-8"))[1:]
    return [block.strip("\n") for block in blocks if block.strip()]


def describe(path: Path):
    text = path.read_text("utf-8")
    return text.split('"""')[1].strip().splitlines()[0]


def trimmed_stub(student_notebook: Path):
    """The student notebook with only its init, imports, helpers and stubs (no demos, no
    grader.check cells, which would run the tests before an attack's cells)."""
    nb = nbformat.read(str(student_notebook), as_version=4)
    nb.cells = [cell for cell in nb.cells if cell.cell_type == "code"
                and cell.source.lstrip().startswith(_KEPT)]
    for cell in nb.cells:  # matplotlib costs a second per kernel and no test needs it here
        cell.source = "\n".join(line for line in cell.source.splitlines()
                                if "matplotlib" not in line)
    return nb


def submission_notebook(student_notebook: Path, name: str):
    """``stub``, or a file of tests/adversarial/ (``legit_*`` without the useless stand-ins)."""
    nb = trimmed_stub(student_notebook)
    if name == "stub":
        return nb
    sources = [] if name.startswith("legit_") or name == "useless" else ["useless"]
    for source in sources + [name]:
        cells = cells_of(ADVERSARIAL / f"{source}.py")
        nb.cells += [nbformat.v4.new_code_cell(cell) for cell in cells]
    return nb


def strategies():
    return sorted(path.stem for path in ADVERSARIAL.glob("*.py")
                  if path.stem != "useless" and not path.stem.startswith("legit_"))


def legit():
    return sorted(path.stem for path in ADVERSARIAL.glob("legit_*.py"))


def write_submission(folder: Path, student_notebook: Path, name: str, notebook=None):
    """A submission folder: the notebook (as the student named it) and any extra files."""
    folder.mkdir(parents=True)
    nbformat.write(notebook or submission_notebook(student_notebook, name),
                   str(folder / "notebook_student.ipynb"))
    extra = ADVERSARIAL / f"{name}.files"
    if extra.is_dir():
        shutil.copytree(extra, folder, dirs_exist_ok=True)
    return folder


def shortened_zip(autograder_zip: Path, target: Path):
    """The zip with the plugin's limits shortened for tests (everything else unchanged)."""
    with zipfile.ZipFile(autograder_zip) as source, zipfile.ZipFile(target, "w") as out:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "otter_config.json":
                config = json.loads(data)
                for entry in config["plugins"]:
                    if isinstance(entry, dict) and PLUGIN in entry:
                        entry[PLUGIN].update(TEST_SETTINGS)
                data = json.dumps(config, indent=2).encode()
            out.writestr(item, data)
    return target


def grade_all(jobs, workdir: Path, workers=3, timeout=600):
    """``jobs``: {key: Job} -> {key: summary}; all in one warm runner (see RUNNER)."""
    workdir.mkdir(parents=True, exist_ok=True)
    listed = []
    for key, job in jobs.items():
        folder = workdir / "-".join(map(str, key))
        folder.mkdir()
        listed.append({"zip": str(job.zip_path), "submission": str(job.submission),
                       "root": str(folder / "autograder"), "workdir": str(folder),
                       "summary": str(folder / "summary.json"), "as_root": job.as_root,
                       "linger": job.linger, "alone": job.alone, "key": key})
        if not job.as_root:
            _make_reachable(folder)
    (workdir / "jobs.json").write_text(json.dumps(listed))
    subprocess.run([sys.executable, "-c", RUNNER, str(workdir / "jobs.json"), str(workers)],
                   timeout=timeout, check=True, cwd=workdir)
    summaries = {}
    for key, job in zip(jobs, listed):
        path = Path(job["summary"])
        summaries[key] = json.loads(path.read_text()) if path.exists() else {"error": "no summary"}
        output = Path(job["workdir"]) / "output.txt"
        summaries[key]["output"] = output.read_text("utf-8", "replace")[-4000:] \
            if output.exists() else ""
    return summaries


@dataclass(frozen=True)
class Job:
    zip_path: Path
    submission: Path
    as_root: bool
    linger: float = 0.0
    alone: bool = False


def _make_reachable(path: Path):
    """Let the unprivileged grader traverse down to ``path`` (it owns what is inside)."""
    for parent in path.resolve().parents:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            parent.chmod(mode | 0o001)


def scores(summary):
    """{question: score} from results.json; {} when there is none."""
    results = summary.get("results") or {}
    return {test["name"]: test.get("score", 0) for test in results.get("tests", [])
            if "max_score" in test}


def total(summary):
    return sum(scores(summary).values())


def flags(summary):
    plugin = summary.get("plugin") or {}
    return [flag["kind"] + ": " + flag["message"] for flag in plugin.get("flags", [])]
