"""What a job can and cannot do in each mode of the sandbox, measured rather than hoped.

One probe notebook asks the questions an attacker would (which processes can I see, can I
write the grader's venv, read the repository, reach the network, fill the disk, leave a
process behind) and prints the answers as JSON. It runs in each mode the kit meets: root and
an ordinary user with bubblewrap, root under Docker's default profile (a uid per job), and an
ordinary user under that profile (nothing but resource limits and seccomp). The table each
run produces is written to tests/artifacts/sandbox_modes.json; the README's "Seguridad y
limitaciones" section states these same facts.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import attacks
from grading_harness import DOCKER_LIKE, ROOT, UNPRIVILEGED_UID, _environment, shared_folder

ARTIFACTS = ROOT / "tests" / "artifacts"
MARKER = attacks.MARKER if hasattr(attacks, "MARKER") else "kitprobe"

PROBE = textwrap.dedent("""
    import json, os, socket, sys, time
    answers = {}
    answers["uid"] = os.getuid()
    answers["pid"] = os.getpid()
    answers["visible_processes"] = sum(name.isdigit() for name in os.listdir("/proc"))
    def can_write(folder):
        try:
            path = os.path.join(folder, "kit_probe_write")
            with open(path, "w") as f:
                f.write("x")
            os.unlink(path)
            return True
        except OSError:
            return False
    def can_read(path):
        try:
            with open(path, "rb") as f:
                f.read(1)
            return True
        except OSError:
            return False
    answers["write_venv"] = can_write(SITE)
    answers["write_host_tmp"] = can_write("/tmp") if os.path.realpath(os.getcwd()).startswith("/tmp/kit-sandbox") else None
    answers["read_repository"] = can_read(REPO_FILE)
    sent = []
    for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
        try:
            s = socket.socket(socket.AF_INET, kind)
            s.settimeout(1)
            if kind == socket.SOCK_DGRAM:
                s.sendto(b"probe", ("127.0.0.1", PORT))
            else:
                s.connect(("127.0.0.1", PORT))
            sent.append(True)
        except OSError:
            sent.append(False)
    answers["udp"], answers["tcp"] = sent
    written = 0
    try:
        with open("big.bin", "wb") as f:
            for _ in range(512):
                f.write(b"x" * (1 << 20))
                written += 1
    except OSError:
        pass
    answers["scratch_mb_written"] = written
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", MARK])
        os._exit(0)
    time.sleep(0.3)
    print("PROBE" + json.dumps(answers))
""")

# The bubblewrap modes need Debian's bubblewrap on this machine (.ci/run installs it).
HAS_BWRAP = shutil.which("bwrap") is not None
MODES = (["bubblewrap-root", "bubblewrap-user"] if HAS_BWRAP else []) + [
    "uid-docker-like", "none-docker-like"]
needs_bwrap = pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap is not installed here")


def run_probe(mode, tmp_folder):
    marker = f"kitprobe{os.getpid()}{mode}"
    listener = attacks.Listener()
    udp_port, tcp_port = listener.ports
    site = next(p for p in sys.path if p.endswith("site-packages"))
    cell = (f"SITE = {site!r}\nREPO_FILE = {str(ROOT / 'README.md')!r}\nPORT = {udp_port}\n"
            f"MARK = {marker!r}\n" + PROBE).replace("PORT)", "PORT)")
    cell = cell.replace('s.connect(("127.0.0.1", PORT))', f's.connect(("127.0.0.1", {tcp_port}))')
    script = textwrap.dedent(f"""
        import json, sys
        from kit_autograder.sandbox.client import Sandbox, Limits
        with Sandbox(Limits(notebook_seconds=30)) as sandbox:
            job = sandbox.open_job()
            ran = job.run_notebook("probe.ipynb", [{cell!r}], {{}})
            ending = job.close()
            print("MODE" + json.dumps(sandbox.description))
            print(ran.output)
    """)
    command = [sys.executable, "-c", script]
    if mode.endswith("docker-like"):
        command = [sys.executable, str(DOCKER_LIKE)] + command
    if mode in ("bubblewrap-user", "none-docker-like"):
        command = ["setpriv", f"--reuid={UNPRIVILEGED_UID}", f"--regid={UNPRIVILEGED_UID}",
                   "--clear-groups", "--"] + command
    try:
        done = subprocess.run(command, env=_environment(), capture_output=True, text=True,
                              timeout=300, cwd=str(tmp_folder))
        assert done.returncode == 0, done.stderr[-3000:]
        description = json.loads(done.stdout.split("MODE", 1)[1].splitlines()[0])
        answers = json.loads(done.stdout.split("PROBE", 1)[1].splitlines()[0])
        answers["survivor"] = bool(attacks.processes_with(marker))
        answers["packet_reached_host"] = listener.saw("probe") or bool(listener.received)
        attacks.kill_all(attacks.processes_with(marker))
        return description, answers
    finally:
        listener.close()


@pytest.fixture(scope="module")
def table():
    results = {mode: run_probe(mode, shared_folder("probe-")) for mode in MODES}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "sandbox_modes.json").write_text(
        json.dumps({m: {"sandbox": d, "job": a} for m, (d, a) in results.items()}, indent=1))
    return results


def test_each_mode_is_the_one_the_host_allows(table):
    if HAS_BWRAP:
        assert table["bubblewrap-root"][0]["mode"] == "bubblewrap"
        assert table["bubblewrap-user"][0]["mode"] == "bubblewrap"
    assert table["uid-docker-like"][0]["mode"] == "uid"
    assert table["none-docker-like"][0]["mode"] == "none"
    assert not table["uid-docker-like"][0]["namespaces"]
    assert not table["uid-docker-like"][0]["landlock_abi"]


@needs_bwrap
@pytest.mark.parametrize("mode", ["bubblewrap-root", "bubblewrap-user"])
def test_with_namespaces_a_job_is_alone_small_offline_and_leaves_nothing(table, mode):
    _, job = table[mode]
    assert job["pid"] == 1 and job["visible_processes"] <= 3
    assert job["uid"] != 0
    assert not job["write_venv"] and not job["read_repository"]
    assert not job["udp"] and not job["tcp"] and not job["packet_reached_host"]
    assert job["scratch_mb_written"] < 100  # the tmpfs cap, 64 MB
    assert not job["survivor"]


def test_as_root_without_namespaces_a_job_has_a_uid_of_its_own_and_no_network(table):
    _, job = table["uid-docker-like"]
    assert job["uid"] >= 61000
    assert not job["write_venv"]
    assert not job["udp"] and not job["tcp"] and not job["packet_reached_host"]
    assert not job["survivor"]
    # What degrades, measured: files every user may read are readable (the README says so).
    assert job["read_repository"]


def test_as_a_user_without_namespaces_or_landlock_only_limits_and_seccomp_remain(table):
    _, job = table["none-docker-like"]
    assert job["uid"] == UNPRIVILEGED_UID
    assert not job["udp"] and not job["tcp"] and not job["packet_reached_host"]
    assert not job["survivor"]  # the zygote is the subreaper of orphans, and kills them
    assert job["read_repository"]  # what degrades: the README says so


def test_make_grade_refuses_where_a_submission_could_write_its_files(autograder_zip,
                                                                     built_dist):
    """As a user under Docker's profile nothing keeps a job out of the grader's own files:
    make grade says so and stops, unless told it may go on."""
    import shutil

    from grading_harness import Notebooks, write_folder

    folder = write_folder(shared_folder("unconfined-"),
                          {"a.ipynb": Notebooks(built_dist).correct()})
    zip_copy = shutil.copy(autograder_zip, folder.parent / "unconfined.zip")
    os.chmod(zip_copy, 0o644)
    out = shared_folder("unconfined-out-")
    os.chown(out, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
    base = ["setpriv", f"--reuid={UNPRIVILEGED_UID}", f"--regid={UNPRIVILEGED_UID}",
            "--clear-groups", "--", sys.executable, str(DOCKER_LIKE), sys.executable, "-m",
            "kit_autograder.batch", "--submissions", str(folder), "--out", str(out),
            "--autograder", str(zip_copy), "--jobs", "1"]
    refused = subprocess.run(base, env=_environment(), capture_output=True, text=True,
                             timeout=300, cwd="/tmp")
    assert refused.returncode == 2 and "could write any file of yours" in refused.stderr
    allowed = subprocess.run(base + ["--unconfined-ok"], env=_environment(),
                             capture_output=True, text=True, timeout=300, cwd="/tmp")
    assert allowed.returncode == 0, allowed.stderr[-2000:]


@needs_bwrap
def test_a_venv_reached_through_a_symlink_under_tmp_still_grades(autograder_zip, built_dist,
                                                                 tmp_path):
    from grading_harness import Notebooks, _batch_command, read_csv, total

    linked = tmp_path / "curso" / ".venv"  # pytest's tmp_path is under /tmp
    linked.parent.mkdir()
    linked.symlink_to(os.path.realpath(sys.prefix))
    python = linked / "bin" / os.path.basename(sys.executable)
    # Control: behind the sandbox's own /tmp that interpreter's path does not exist.
    hidden = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--", "test",
                             "-e", str(python)])
    assert hidden.returncode != 0
    folder = tmp_path / "entregas"
    folder.mkdir()
    (folder / "correcta.ipynb").write_bytes(Notebooks(built_dist).correct())
    command = [str(python), *_batch_command(folder, tmp_path / "out", autograder_zip, 1)[1:]]
    run = subprocess.run(command, env=_environment(), capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert total(read_csv(tmp_path / "out")["correcta.ipynb"]) == 20
