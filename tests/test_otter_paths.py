"""The zip works wherever Otter runs it (issue 10): `otter grade`, a plain `otter run`,
Gradescope, and `otter assign`/`otter check` for instructors who know only Otter.

Each path is rebuilt as the real tool builds it (otter_paths.py): fresh venvs with only what
the zip and the README declare, `otter grade`'s image tree read off Otter's own Dockerfile and
driven by Otter's own `otter grade` (otter_grade_without_docker.py), Gradescope's tree. The
bundled demo goes through all of them and through `make grade`.
"""

import concurrent.futures
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

from grading_harness import grade_here
from kit_autograder.bundle import PLUGIN
from otter_paths import ImageBuilder, clean_environment, gradescope_root, otter_run, run_autograder

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "assignments" / "attention" / "examples"
SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "gradescope_results.schema.json")
                    .read_text("utf-8"))
WITHOUT_DOCKER = ROOT / "tests" / "otter_grade_without_docker.py"
UNREADABLE = "rota.ipynb"  # the demo's notebook cut off mid-file: not JSON
PATHS = ("make grade", "otter grade", "otter run", "Gradescope")
# Each grading runs a sandbox and a kernel: more at once than cores only races the time limits.
AT_ONCE = max(2, os.cpu_count() or 2)
# An upload's own "engine": were it imported, every test would pass and the log would say so.
FORGED_PLUGIN = """
from otter.plugins import AbstractOtterPlugin

print("FORGED ENGINE IMPORTED")


class VerificationPlugin(AbstractOtterPlugin):
    def after_grading(self, results):
        for test_file in results.results.values():
            for result in test_file.test_case_results:
                result.passed = True
"""


def python_of(venv, code):
    return subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True,
                          text=True, cwd="/", env=clean_environment("/tmp", [venv / "bin"]))


# --- the paths --------------------------------------------------------------------------------


def require_mount_namespace():
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("mounting a tree at /autograder needs root and unshare(1)")


def otter_grade(venv, autograder_zip, submissions, out, ext):
    """`otter grade ... --ext EXT` run by the image venv's Otter, Docker replaced; returns the
    folder of the stand-in Docker's images and container logs."""
    require_mount_namespace()
    out.mkdir(parents=True, exist_ok=True)
    work = out.with_name(f"{out.name}-docker")
    work.mkdir()
    command = [str(venv / "bin" / "python"), str(WITHOUT_DOCKER), "--venv", str(venv),
               "--work", str(work), "--", "-n", "055-atencion-transformer", "-a",
               str(autograder_zip), "-o", str(out), "--ext", ext, "--containers", "2",
               str(submissions)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=work,
                          env=clean_environment(work, [venv / "bin"]))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return work


def gradescope(venv, autograder_zip, name, data):
    """results.json, and the log, of Gradescope running the zip on one upload."""
    require_mount_namespace()
    root = gradescope_root(autograder_zip, name, data)
    try:
        done = run_autograder(root, venv, workdir="/autograder")
        results = root / "results" / "results.json"
        return (json.loads(results.read_text("utf-8")) if results.is_file() else None,
                done.stdout + done.stderr)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def csv_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {row["file"]: row for row in csv.DictReader(f)}


def question_names(autograder_zip):
    """The zip's graded questions: its test files but the practice exercises', which no path
    grades (test_no_path_reports_a_practice_exercise)."""
    return sorted(set(zip_test_names(autograder_zip)) - set(practice_names(autograder_zip)))


def zip_test_names(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as zf:
        return sorted(Path(n).stem for n in zf.namelist() if n.startswith("tests/"))


def practice_names(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as zf:
        config = json.loads(zf.read("otter_config.json"))
    (settings,) = [entry[PLUGIN] for entry in config["plugins"]
                   if isinstance(entry, dict) and PLUGIN in entry]
    return settings["practice"]


@dataclass
class Graded:
    scores: dict  # path -> file -> {question: score}; a file a path gives no scores is absent
    rows: dict  # "make grade" / "otter grade" -> file -> CSV row
    results: dict  # "otter run" / "Gradescope" -> file -> results.json
    runs: dict  # "otter run" -> file -> CompletedProcess; "Gradescope" -> file -> log
    make_grade_out: Path = None  # make grade's OUT folder

    def log(self, path, name):
        """What the path printed for ``name`` (the plugin's report is there), for a failure."""
        run = self.runs.get(path, {}).get(name)
        text = run.stdout + run.stderr if hasattr(run, "stdout") else run or ""
        return text[-3000:]


@pytest.fixture(scope="module")
def graded(otter_venvs, autograder_zip, tmp_path_factory):
    """The demo through every path, at once."""
    require_mount_namespace()
    questions = question_names(autograder_zip)
    work = tmp_path_factory.mktemp("otter_paths")
    demo = sorted(DEMO.iterdir())
    by_ext = {}
    for path in demo:
        by_ext.setdefault(path.suffix[1:], []).append(path)

    def make_grade():
        return grade_here(DEMO, work / "make-grade", autograder_zip)

    def grade_ext(ext, files):
        folder = work / f"uploads-{ext}"
        folder.mkdir()
        for path in files:
            shutil.copy(path, folder)
        otter_grade(otter_venvs.image, autograder_zip, folder, work / f"otter-grade-{ext}", ext)
        return csv_rows(work / f"otter-grade-{ext}" / "final_grades.csv")

    def run_one(path):
        out = work / "otter-run" / path.stem
        done = otter_run(otter_venvs.instructor, autograder_zip, path, out)
        results = out / "results.json"
        return done, json.loads(results.read_text("utf-8")) if results.is_file() else None

    with concurrent.futures.ThreadPoolExecutor(AT_ONCE) as pool:
        make = pool.submit(make_grade)
        grades = [pool.submit(grade_ext, ext, files) for ext, files in by_ext.items()]
        runs = {p.name: pool.submit(run_one, p) for p in demo}
        scopes = {p.name: pool.submit(gradescope, otter_venvs.image, autograder_zip, p.name,
                                      p.read_bytes()) for p in demo}
        rows = {"make grade": make.result(),
                "otter grade": {k: v for g in grades for k, v in g.result().items()}}
        ran = {name: future.result() for name, future in runs.items()}
        scoped = {name: future.result() for name, future in scopes.items()}

    results = {"otter run": {n: r for n, (_, r) in ran.items() if r is not None},
               "Gradescope": {n: r for n, (r, _) in scoped.items() if r is not None}}
    scores = {path: {name: {q: float(row[q]) for q in questions}
                     for name, row in rows[path].items() if name in ran}
              for path in rows}
    for path in results:
        scores[path] = {name: {t["name"]: float(t["score"]) for t in data["tests"] if "score" in t}
                        for name, data in results[path].items()}
        scores[path] = {name: s for name, s in scores[path].items() if s}
    return Graded(scores, rows, results, {"otter run": {n: d for n, (d, _) in ran.items()},
                                          "Gradescope": {n: log for n, (_, log) in scoped.items()}},
                  work / "make-grade")


# --- done when: every path, the same scores ---------------------------------------------------


def test_every_path_gives_each_demo_submission_the_same_scores(graded, autograder_zip):
    gradable = sorted(p.name for p in DEMO.iterdir() if p.name != UNREADABLE)
    questions = question_names(autograder_zip)
    table = [f"{'':30}" + "".join(f"{q[:11]:>12}" for q in questions)]
    for name in gradable:
        for path in PATHS:
            scores = graded.scores[path].get(name, {})
            table.append(f"{name + ' · ' + path:30}"
                         + "".join(f"{scores.get(q, float('nan')):>12g}" for q in questions))
    print("\n" + "\n".join(table))
    for name in gradable:
        reference = graded.scores["make grade"][name]
        for path in PATHS[1:]:
            assert graded.scores[path].get(name) == reference, (path, name, graded.log(path, name))


def test_gradescope_writes_the_results_json_otter_run_writes(graded):
    # Issue 52: the zip's run_otter.py grades without starting Otter's kernel, which otter run
    # still starts; what the student reads must not change.
    assert set(graded.results["Gradescope"]) == set(graded.results["otter run"]) | {UNREADABLE}
    for name, data in graded.results["otter run"].items():
        assert graded.results["Gradescope"][name] == data, name


def test_no_path_reports_a_practice_exercise(graded, autograder_zip):
    """The practice exercises ship in the zip's tests/ (Otter Assign writes every question's
    tests there), worth 0, and no path gives them a column, a box or a score."""
    practice = practice_names(autograder_zip)
    assert practice and set(practice) <= set(zip_test_names(autograder_zip))
    for path in ("make grade", "otter grade"):
        for row in graded.rows[path].values():
            assert not set(practice) & set(row), (path, sorted(row))
    for path in ("otter run", "Gradescope"):
        for name, data in graded.results[path].items():
            assert not set(practice) & {test["name"] for test in data["tests"]}, (path, name)


def test_the_solution_earns_everything_and_the_stub_nothing_on_every_path(graded, autograder_zip):
    from otter.test_files import create_test_file
    from otter.nbmeta_config import NBMetadataConfig

    with tempfile.TemporaryDirectory() as folder, zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(folder, [n for n in zf.namelist() if n.startswith("tests/")])
        possible = {q: float(create_test_file(str(Path(folder) / "tests" / f"{q}.py"),
                                              NBMetadataConfig()).possible)
                    for q in question_names(autograder_zip)}
    for path in PATHS:
        assert graded.scores[path]["correcta.ipynb"] == possible, path
        assert graded.scores[path]["exportada.zip"] == possible, path
        assert set(graded.scores[path]["sin_hacer.ipynb"].values()) == {0.0}, path
        partial = sum(graded.scores[path]["parcial.ipynb"].values())
        assert 0 < partial < sum(possible.values()), path


# --- an upload Otter cannot read --------------------------------------------------------------


def test_an_unreadable_upload_scores_zero_with_the_kits_spanish_reason(graded):
    reason = graded.rows["make grade"][UNREADABLE]["grading_status"]
    assert "no es JSON" in reason
    row = graded.rows["otter grade"][UNREADABLE]
    assert float(row["total_points_earned"]) == 0 and row["grading_status"] == reason
    data = graded.results["Gradescope"][UNREADABLE]
    assert data["score"] == 0 and data["output_format"] == "md"
    assert "No se ha podido evaluar tu entrega" in data["output"] and reason in data["output"]
    assert data.get("visibility", "visible") == "visible"
    jsonschema.validate(data, SCHEMA)


def test_otter_run_stops_on_an_unreadable_upload_with_otters_own_error(graded):
    # The README says so: `otter run` runs no code of the zip before Otter reads the notebook.
    done = graded.runs["otter run"][UNREADABLE]
    assert done.returncode != 0 and UNREADABLE not in graded.results["otter run"]
    assert "NotJSONError" in done.stderr


# --- Gradescope -------------------------------------------------------------------------------


def test_gradescope_output_is_markdown_and_the_plugin_report_stays_in_the_log(graded):
    for name, data in graded.results["Gradescope"].items():
        jsonschema.validate(data, SCHEMA)
        assert data.get("stdout_visibility", "hidden") == "hidden", name
        for part in [data, *data["tests"]]:
            if "output" in part:
                assert part["output_format"] == "md", (name, part.get("name"))
        text = json.dumps(data, ensure_ascii=False)
        assert "PLUGIN REPORT" not in text and "sandbox:" not in text, name
    # The report exists: it went to the instructor's log.
    assert "sandbox:" in graded.runs["Gradescope"]["correcta.ipynb"]


def test_every_door_fills_each_box_with_that_questions_section_of_the_feedback(graded):
    # Issue 25: Otter's own summary (English, indented into a code block) never reaches a box;
    # Gradescope, otter run and make grade write the same boxes, the feedback's sections.
    from english import OTTER_SCAFFOLDING

    for name in sorted(graded.results["Gradescope"]):
        if name == UNREADABLE:
            continue
        made = json.loads((graded.make_grade_out / "results" / f"{Path(name).stem}.json")
                          .read_text("utf-8"))
        feedback = (graded.make_grade_out / "feedback" / f"{Path(name).stem}.md").read_text("utf-8")
        boxes = {t["name"]: t["output"] for t in made["tests"]}
        for test in boxes:
            assert f"### `{test}`: " in feedback and boxes[test] in feedback, (name, test)
        for path in ("Gradescope", "otter run"):
            data = graded.results[path].get(name)
            if data is None:
                continue
            assert {t["name"]: t["output"] for t in data["tests"]} == boxes, (path, name)
            assert all(t["output_format"] == "md" for t in data["tests"]), (path, name)
            for text in [data.get("output", ""), *boxes.values()]:
                assert not [e for e in OTTER_SCAFFOLDING if e in text], (path, name)


def test_another_assignments_notebook_gets_spanish_on_gradescope_as_make_grade_predicts(
        otter_venvs, autograder_zip, tmp_path):
    # Otter refuses it itself (OtterRuntimeError) and writes an English "Autograder Error":
    # the zip's run_otter.py puts the kit's Spanish reason in its place, the very results.json
    # make grade writes for it.
    notebook = json.loads((DEMO / "correcta.ipynb").read_text("utf-8"))
    notebook["metadata"]["otter"]["assignment_name"] = "054-otra-tarea"
    data = json.dumps(notebook).encode()
    scoped, log = gradescope(otter_venvs.image, autograder_zip, "otra_tarea.ipynb", data)
    assert "Received submission for assignment '054-otra-tarea'" in log  # Otter's, in the log
    jsonschema.validate(scoped, SCHEMA)
    assert scoped["score"] == 0 and "Otter encountered" not in json.dumps(scoped)
    assert "No se ha podido evaluar tu entrega" in scoped["output"]
    assert "054-otra-tarea" in scoped["output"]
    folder = tmp_path / "uploads"
    folder.mkdir()
    (folder / "otra_tarea.ipynb").write_bytes(data)
    grade_here(folder, tmp_path / "out", autograder_zip)
    predicted = json.loads((tmp_path / "out" / "results" / "otra_tarea.json").read_text("utf-8"))
    assert predicted == scoped


def test_without_the_engine_the_log_names_what_is_missing_and_the_student_still_gets_zero(
        otter_venvs, autograder_zip, tmp_path):
    stripped = tmp_path / "sin-motor.zip"
    with zipfile.ZipFile(autograder_zip) as source, zipfile.ZipFile(stripped, "w") as target:
        for item in source.infolist():
            if not item.filename.startswith("files/kit_autograder/"):
                target.writestr(item, source.read(item))
    data, log = gradescope(otter_venvs.image, stripped, "correcta.ipynb",
                           (DEMO / "correcta.ipynb").read_bytes())
    assert "kit: the Otter plugin cannot be imported" in log
    assert "requirements.txt" in log
    assert data["score"] == 0 and "No se ha podido evaluar tu entrega" in data["output"]
    jsonschema.validate(data, SCHEMA)


def test_an_upload_carrying_its_own_engine_is_graded_by_the_zips(otter_venvs, autograder_zip):
    # Gradescope unpacks the upload into submission/, where Otter works; only the zip's files/
    # is on sys.path, so a kit_autograder/ there is never imported.
    upload = io.BytesIO()
    with zipfile.ZipFile(upload, "w") as zf:
        zf.write(DEMO / "sin_hacer.ipynb", "sin_hacer.ipynb")
        zf.writestr("kit_autograder/__init__.py", "")
        zf.writestr("kit_autograder/otter_plugin.py", FORGED_PLUGIN)
    data, log = gradescope(otter_venvs.image, autograder_zip, "entrega.zip", upload.getvalue())
    assert "FORGED ENGINE IMPORTED" not in log and "sandbox:" in log
    assert {test["score"] for test in data["tests"]} == {0}

    # Control: with the submission folder on sys.path (`python -c` puts the working folder
    # there, and Otter works in submission/), the same upload's engine is the one imported.
    root = gradescope_root(autograder_zip, "entrega.zip", upload.getvalue())
    try:
        done = subprocess.run([str(otter_venvs.image / "bin" / "python"), "-c",
                               f"from otter.run.run_autograder import main; main({str(root)!r})"],
                              cwd=root, capture_output=True, text=True, timeout=600,
                              env=clean_environment(root, [otter_venvs.image / "bin"]))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert "FORGED ENGINE IMPORTED" in done.stdout


# --- otter grade ------------------------------------------------------------------------------


def test_the_image_holds_only_what_the_dockerfile_adds_and_no_engine_outside_files(
        otter_venvs, autograder_zip, tmp_path):
    import otter.grade

    # The image venv cannot import the engine: only the zip's files/ can provide it.
    done = python_of(otter_venvs.image, "import kit_autograder")
    assert "No module named 'kit_autograder'" in done.stderr

    context = tmp_path / "context"
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(context)
    tree = ImageBuilder(Path(otter.grade.__file__).with_name("Dockerfile")).build(
        context, tmp_path / "image")
    source = sorted(p.name for p in (tree / "source").iterdir())
    assert source == ["environment.yml", "files", "otter_config.json", "run_otter.py",
                      "setup.sh", "tests"]
    assert (tree / "source" / "files" / "kit_autograder" / "otter_plugin.py").is_file()
    assert (tree / "submission_metadata.json").stat().st_size == 0  # Otter #811's empty file


def test_control_otters_own_run_otter_py_gives_every_submission_zero_in_the_image(
        otter_venvs, autograder_zip, tmp_path):
    # The tree is faithful: the failure comes back with Otter's own entry point.
    from otter.generate import JINJA_ENV

    otters = JINJA_ENV.get_template("common/run_otter.py").render(autograder_dir="/autograder")
    stock = tmp_path / "stock.zip"
    with zipfile.ZipFile(autograder_zip) as source, zipfile.ZipFile(stock, "w") as target:
        for item in source.infolist():
            data = otters if item.filename == "run_otter.py" else source.read(item)
            target.writestr(item, data)
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    shutil.copy(DEMO / "correcta.ipynb", uploads)
    work = otter_grade(otter_venvs.image, stock, uploads, tmp_path / "out", "ipynb")
    row = csv_rows(tmp_path / "out" / "final_grades.csv")["correcta.ipynb"]
    assert float(row["total_points_earned"]) == 0 and "Exit code: 1" in row["grading_status"]
    log = (work / "logs" / "correcta.ipynb.log").read_text("utf-8")
    assert "JSONDecodeError" in log


# --- otter run --------------------------------------------------------------------------------


def test_the_instructors_otter_imports_the_engine_from_the_wheel(otter_venvs):
    done = python_of(otter_venvs.instructor, "import kit_autograder; print(kit_autograder.__file__)")
    assert done.stdout.startswith(str(otter_venvs.instructor)), done.stdout + done.stderr


def test_otter_run_without_the_engine_names_the_missing_module(otter_venvs, autograder_zip,
                                                               tmp_path):
    # What the README tells instructors to expect: Otter imports the plugin in their own
    # process, where nothing of the zip can step in first.
    done = otter_run(otter_venvs.image, autograder_zip, DEMO / "correcta.ipynb", tmp_path)
    assert done.returncode != 0
    assert "No module named 'kit_autograder'" in done.stderr


# --- otter assign and otter check -------------------------------------------------------------


def zip_contents(path):
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def test_otter_assign_on_the_kept_master_gives_the_same_zip(otter_venvs, built_dist,
                                                            autograder_zip, tmp_path):
    # As the README says: cd dist/otter && otter assign notebook_student.ipynb OUT, with the
    # engine installed from its wheel (the instructor's venv).
    kept = tmp_path / "otter"
    shutil.copytree(built_dist / "otter", kept)
    done = subprocess.run([str(otter_venvs.instructor / "bin" / "otter"), "assign",
                           "notebook_student.ipynb", str(tmp_path / "out"), "--no-pdfs",
                           "--no-run-tests"], cwd=kept, capture_output=True, text=True,
                          env=clean_environment(tmp_path, [otter_venvs.instructor / "bin"]))
    assert done.returncode == 0, done.stderr[-3000:]
    (rebuilt,) = (tmp_path / "out" / "autograder").glob("*.zip")
    ours, theirs = zip_contents(autograder_zip), zip_contents(rebuilt)
    assert sorted(theirs) == sorted(ours)
    assert [name for name in ours if ours[name] != theirs[name]] == []


@pytest.fixture(scope="module")
def otter_checked(built_dist, tmp_path_factory):
    """`otter check notebook_student.ipynb` in copies of the student folder, as students run
    it: with the untouched notebook and with the solution saved in its place."""
    from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME

    def check(notebook):
        folder = tmp_path_factory.mktemp(f"alumno_{notebook}") / "carpeta"
        shutil.copytree(built_dist / "student", folder)
        if notebook == "solution":
            shutil.copy(built_dist / "solution" / SOLUTION_NAME, folder / NOTEBOOK_NAME)
        return subprocess.run([str(Path(sys.executable).with_name("otter")), "check",
                               NOTEBOOK_NAME], cwd=folder, capture_output=True, text=True,
                              timeout=600)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return dict(zip(("solution", "stub"), pool.map(check, ("solution", "stub"))))


def test_otter_check_passes_the_solution_from_the_student_folder(otter_checked):
    done = otter_checked["solution"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("All tests passed!"), done.stdout[-3000:]


def test_otter_check_lists_the_untouched_notebooks_failures_challenge_included(otter_checked):
    done = otter_checked["stub"]
    assert done.returncode == 0, done.stderr[-3000:]
    for question in ("attention", "multihead", "positional_encoding", "transformer_block",
                     "student_extension"):
        assert f"{question} results:" in done.stdout, (question, done.stdout[-3000:])
    assert "All tests passed!" not in done.stdout
