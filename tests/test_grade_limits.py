"""JOBS, TIMEOUT and MEMORY_MB reach the engine, and JOBS really is how many notebooks run at
once. (Time and memory limits are exercised by test_grade_bad_inputs; no test here times
anything.)"""

import socket
import subprocess

import pytest

from grade_fixtures import (  # noqa: F401 - fixtures
    ROOT, demo_files, grade_cli, read_feedback, with_extra_cell,
)

# The two notebooks meet over a loopback TCP port (a confined child sees no shared folder):
# the first to bind waits for a connection, the other connects. They meet only if they run at
# the same time.
RENDEZVOUS = """\
import socket, time
limite = time.time() + {wait}
juntos = False
sala = socket.socket()
sala.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    sala.bind(("127.0.0.1", {port}))
    sala.listen(1)
    sala.settimeout({wait})
    try:
        sala.accept()[0].close()
        juntos = True
    except socket.timeout:
        pass
except OSError:  # the other notebook holds the port: it is running now
    while not juntos and time.time() < limite:
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=1).close()
            juntos = True
        except OSError:
            time.sleep(0.05)
finally:
    sala.close()
print("encuentro:", "juntos" if juntos else "solo")
"""


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rendezvous_batch(tmp_path, demo_files, autograder_zip, jobs, wait):
    folder, out = tmp_path / "entregas", tmp_path / "notas"
    folder.mkdir()
    port = free_port()
    for name in ("ana", "luis"):
        source = RENDEZVOUS.format(port=port, wait=wait)
        (folder / f"{name}.ipynb").write_bytes(with_extra_cell(demo_files["correcta.ipynb"],
                                                               source, at_end=False))
    completed = grade_cli(folder, out, autograder_zip, "--jobs", jobs, "--timeout", 120)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return [read_feedback(out, name) for name in ("ana", "luis")]


def test_jobs_2_grades_two_submissions_at_once(tmp_path, demo_files, autograder_zip):
    for feedback in rendezvous_batch(tmp_path, demo_files, autograder_zip, jobs=2, wait=60):
        assert "encuentro: juntos" in feedback


def test_jobs_1_grades_one_submission_at_a_time(tmp_path, demo_files, autograder_zip):
    for feedback in rendezvous_batch(tmp_path, demo_files, autograder_zip, jobs=1, wait=2):
        assert "encuentro: solo" in feedback  # neither had company while it waited


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
