"""Shared fixtures, once per test session: one build of the assignment, in a temporary folder,
and the fresh venvs the Otter paths run in (the Otter-path tests and the attack suite's
Gradescope door share them)."""

import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT_TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT_TESTS))
from otter_paths import BLAS_THREADS  # noqa: E402  (before anything imports numpy)

for _name, _value in BLAS_THREADS.items():
    os.environ.setdefault(_name, _value)

ROOT = Path(__file__).resolve().parent.parent
# The kit, its engine, and the lessons' packages.
for folder in (ROOT, ROOT / "autograder", ROOT / "assignments"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


# One salt for the whole session, so that tests can compute a submission's hidden inputs.
TEST_SALT = "dGhlIGtpdCdzIHRlc3Qgc2FsdCwgbm90IGEgc2VjcmV0IQ=="


@pytest.fixture(scope="session")
def built_dist():
    """A fresh `make assign` output, built once per run with the tests' salt, by whichever
    xdist worker asks first (built_once): the build is the same bytes on every worker
    (test_assign checks that builds repeat), and each took a quarter of a minute.

    Otter's own solution self-check is skipped here because the Otter-path tests grade the
    solution explicitly; the build is otherwise the one `make assign` runs.
    """
    from autograder.assign import build

    def with_test_salt(target):
        previous = os.environ.get("KIT_GRADING_SALT")
        os.environ["KIT_GRADING_SALT"] = TEST_SALT
        try:
            built = build("attention", target, run_tests=False)
        finally:
            if previous is None:
                del os.environ["KIT_GRADING_SALT"]
            else:
                os.environ["KIT_GRADING_SALT"] = previous
        assert Path(built) == target, built

    return built_once("dist", with_test_salt, private=True)


@pytest.fixture(scope="session")
def autograder_zip(built_dist):
    from autograder.assign import find_autograder_zip

    path = find_autograder_zip(built_dist)
    assert path is not None, "make assign must produce exactly one autograder zip"
    return path


# --- environments, once per session -----------------------------------------------------------


@dataclass
class Venvs:
    image: Path  # what the zip's environment.yml installs: Otter and the pins, not the kit
    instructor: Path  # the instructors' guide's install line: the pins and the engine's wheel


# The venvs take minutes of pip each, and a session-scoped fixture runs once per xdist worker:
# the run's controller names one folder for the whole run, the first worker to need a venv
# builds it there under a lock, the others wait and reuse it, and the controller removes the
# folder at the end.
SHARED = "KIT_TEST_SHARED"


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controller, or a run without workers
        # /var/tmp: on disk, where /tmp may be a small tmpfs.
        os.environ[SHARED] = tempfile.mkdtemp(prefix="kit-test-run-", dir="/var/tmp")


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput") and os.environ.get(SHARED):
        # rm(1), not shutil.rmtree: the venvs hold tens of thousands of files, and Python's
        # walk over them took most of a minute after the last test on a loaded machine.
        folder = os.environ.pop(SHARED)
        subprocess.run(["rm", "-rf", "--one-file-system", folder], check=False)
        shutil.rmtree(folder, ignore_errors=True)  # whatever rm(1) could not remove


def built_once(name, build, private=False):
    """``SHARED/name``, made by ``build(path)`` by whichever worker asks first. ``private``
    puts it in a folder only its owner can enter: the sandbox lets its job users traverse the
    folders above a venv's interpreter (host.make_traversable), and the shared venvs live in
    SHARED, so anything secret beside them (a build, with its reference) must be a level down."""
    import fcntl

    root = Path(os.environ[SHARED])
    if private:
        root = root / "private"
        root.mkdir(mode=0o700, exist_ok=True)
        root.chmod(0o700)
    target, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(target, ignore_errors=True)
            build(target)
            done.touch()
    return target


@pytest.fixture(scope="session")
def otter_venvs(built_dist, autograder_zip):
    from otter_paths import build_venv, image_requirements, readme_install_line

    pip = [sys.executable, "-m", "pip"]
    # The guide's paths are any lesson's build, dist/$LESSON/...: here, the default lesson's,
    # built_dist (every worker's build is the same bytes: test_assign checks that builds repeat).
    install = [str(built_dist / arg[len("dist/$LESSON/"):]) if arg.startswith("dist/$LESSON/")
               else arg for arg in readme_install_line(ROOT / "docs" / "instructors.md")]
    assert install != readme_install_line(ROOT / "docs" / "instructors.md"), "the guide's paths"

    def both(home):
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            image = pool.submit(build_venv, home / "image", image_requirements(autograder_zip), pip)
            instructor = pool.submit(build_venv, home / "instructor", install, pip)
            image.result(), instructor.result()

    home = built_once("otter_venvs", both)
    return Venvs(home / "image", home / "instructor")


@pytest.fixture(scope="session")
def fresh_python(built_dist):
    """A venv holding only what dist/student/requirements.txt names (installed by this
    session's recent pip into it, as its own pip would, only faster): the student's Python,
    Jupyter front end included."""
    from otter_paths import build_venv

    home = built_once("venv_estudiante", lambda home: build_venv(
        home, ["-r", str(built_dist / "student" / "requirements.txt")],
        [sys.executable, "-m", "pip"]))
    return home / "bin" / "python"


# --- the fast tier: `make test-fast` is `pytest -m "not slow"` ----------------------------------

# A test that needs any of these waits for a build, a venv, a browser, or a whole batch in the
# sandbox.
SLOW_FIXTURES = {"built_dist", "autograder_zip", "otter_venvs", "fresh_python", "browser"}
# Modules whose tests start sandboxes, servers or browsers, or reach those fixtures only through
# request.getfixturevalue, which the fixture closure does not show.
SLOW_MODULES = {"test_attacks", "test_attacks_gradescope", "test_batch", "test_batch_under_attack",
                "test_class_report", "test_explorer", "test_front_ends", "test_otter_paths",
                "test_sandbox", "test_sandbox_modes", "test_second_lesson", "test_student_install",
                "test_student_journey", "test_real_code_styles", "test_solution_notebook",
                "test_examples", "test_review_page", "test_review_token", "test_lms_end_to_end",
                "test_trained_model",
                # Draws of every hidden case over many seeds, and lab.py run as a command: each
                # test is quick, their number is not. make test runs them.
                "test_misconceptions", "test_diagnosis", "test_real_world_variants",
                "test_correct_variants", "test_tolerances", "test_lab", "test_extension",
                "test_probe", "test_positional_calls", "test_shown_numbers", "test_loader_fuzz",
                "test_notebooks_in_the_wild"}


# The modules that take longest run first: `make test` hands whole modules to its workers in
# this order (the Makefile turns off xdist's own reordering, which puts the modules with the
# most *tests* first), so the last modules are the short ones and both workers finish together.
# The comments are each module's seconds of wall and of CPU (every process it started, measured
# with a cgroup) in one `make test` on 2 cores shared with other work, before issue 52. The
# second module needs no build: one worker runs it while the other builds dist/ and the venvs.
LONGEST_FIRST = (
    "test_otter_paths",  # 447 wall, 116 CPU
    "test_misconceptions",  # 208, 29 (no build)
    "test_attacks",  # 387, 127
    "test_probe",  # 363, 142
    "test_attacks_gradescope",  # 266, 147
    "test_lab",  # 199, 30
    "test_front_ends",  # 186, 76
    "test_batch_under_attack",  # 181, 41
    "test_extension",  # 172, 33
    "test_lms_end_to_end",  # 154, 49
    "test_student_journey",  # 154, 24
    "test_public_checks",  # issue 49: a kernel runs every mistake's check, ~40 s on 2 busy cores
    "test_sandbox_modes",  # 141, 29
    "test_otter_doors_upload",  # 140, 27
    "test_locate",  # 136, 27
    "test_misnames",  # issue 49.4: one make grade batch and in-process grading, ~30 s
    "test_explorer",  # 123, 38
    "test_second_lesson",  # 119, 41
    "test_ablation",  # 114, 20
    "test_class_report",  # 110, 32
    "test_similarity",  # issue 50: two planted classes and a make grade batch, ~40 s
    "test_diagnosis",  # 101, 24
    "test_student_install",  # 98, 17
    "test_batch",  # 91, 23
    "test_names_carry_no_hidden_value",  # 68, 15
    "test_real_world_variants",  # 50, 11
    "test_assign",  # 50, 14
    "test_tolerances",  # 46, 11
    "test_error_lines",  # 41, 14
    "test_notebooks_in_the_wild",  # 36, 6
    "test_lms_accounting",  # 29, 8
    "test_trained_model",  # 29, 6
    "test_validate_sandboxed",  # 28, 12
    "test_review_page",  # 28, 11
    "test_otter_entry",  # new in issue 52: the zip's tests read as Otter reads them
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if (SLOW_FIXTURES & set(getattr(item, "fixturenames", ()))
                or item.module.__name__ in SLOW_MODULES):
            item.add_marker(pytest.mark.slow)
    rank = {name: number for number, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.module.__name__, len(rank)))  # stable
