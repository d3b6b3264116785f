"""JOBS, TIMEOUT and MEMORY_MB reach the engine, and JOBS really is how many notebooks run at
once. (Time and memory limits are exercised by test_grade_bad_inputs; no test here times
anything.)"""

import subprocess

import pytest

from grade_fixtures import (  # noqa: F401 - fixtures
    ROOT, demo_files, grade_cli, read_feedback, with_extra_cell,
)

# Each notebook leaves its name in a shared folder, then waits until it sees the other's or
# gives up. Both meet only if they run at the same time.
RENDEZVOUS = """\
import pathlib, time
sala = pathlib.Path({folder!r})
(sala / {name!r}).touch()
limite = time.time() + {wait}
while len(list(sala.iterdir())) < 2 and time.time() < limite:
    time.sleep(0.05)
print("encuentro:", "juntos" if len(list(sala.iterdir())) >= 2 else "solo")
"""


def rendezvous_batch(tmp_path, demo_files, autograder_zip, jobs, wait):
    room, folder, out = tmp_path / "sala", tmp_path / "entregas", tmp_path / "notas"
    room.mkdir()
    folder.mkdir()
    for name in ("ana", "luis"):
        source = RENDEZVOUS.format(folder=str(room), name=name, wait=wait)
        (folder / f"{name}.ipynb").write_bytes(with_extra_cell(demo_files["correcta.ipynb"],
                                                               source, at_end=False))
    completed = grade_cli(folder, out, autograder_zip, "--jobs", jobs, "--timeout", 120)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return [read_feedback(out, name) for name in ("ana", "luis")]


def test_jobs_2_grades_two_submissions_at_once(tmp_path, demo_files, autograder_zip):
    for feedback in rendezvous_batch(tmp_path, demo_files, autograder_zip, jobs=2, wait=60):
        assert "encuentro: juntos" in feedback


def test_jobs_1_grades_one_submission_at_a_time(tmp_path, demo_files, autograder_zip):
    first, second = rendezvous_batch(tmp_path, demo_files, autograder_zip, jobs=1, wait=2)
    assert "encuentro: solo" in first  # the second had not started while the first waited
    assert "encuentro: juntos" in second


@pytest.mark.parametrize("variables, expected", [
    ([], ["--submissions \"examples/submissions\"", "--out \"dist/grades\"",
          "--timeout \"120\"", "--memory-mb \"2048\""]),
    (["SUBMISSIONS=entregas", "OUT=notas", "JOBS=3", "TIMEOUT=7", "MEMORY_MB=512"],
     ["--submissions \"entregas\"", "--out \"notas\"", "--jobs \"3\"", "--timeout \"7\"",
      "--memory-mb \"512\""]),
])
def test_make_grade_passes_its_variables_to_the_engine(variables, expected):
    shown = subprocess.run(["make", "-n", "grade", *variables], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout
    assert "python -m autograder.grade" in shown
    for argument in expected:
        assert argument in shown
    assert "|| make" in shown and "assign" in shown  # builds the zip when it is missing


def test_make_bench_passes_n():
    shown = subprocess.run(["make", "-n", "bench", "N=12"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout
    assert "python -m autograder.bench --n \"12\"" in shown


def test_empty_make_variables_mean_the_defaults():
    from autograder.grade.__main__ import _optional

    assert _optional(int)("") is None and _optional(float)(" ") is None
    assert _optional(int)("3") == 3
