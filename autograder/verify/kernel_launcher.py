"""The kernel launcher: what the ``python3`` kernelspec runs instead of ``ipykernel_launcher``.

Like ``child.py`` it runs as a standalone program with ``jail.py``'s source before it (see
``kernel.py``), as ``python -I -B launcher.py <connection file> <launch config>``. It stays
in the grader's identity as a small supervisor and forks the real kernel, which:

* when the grader is root, runs as the kernel user, sees the file system only through
  Landlock, and lives in a new PID namespace where the kernel allows one (so killing it kills
  everything it started; otherwise the launcher adopts and kills its orphans);
* always gets resource limits and a private working folder (its home, its temp folder).

The supervisor forwards interrupts, kills the kernel at its wall-clock deadline, and writes
how the kernel ended to a status file that only the grader can read.
"""

import ctypes
import json
import os
import shutil
import signal
import sys
import time

if __name__ != "__main__":  # pragma: no cover - as a program, jail.py's source precedes this
    from .jail import enter

_CLONE_NEWPID = 0x20000000
_PR_SET_CHILD_SUBREAPER = 36


def _copy_connection_file(source, workdir, uid, gid):
    """The kernel's user must read its connection file, which jupyter_client made ours only."""
    target = os.path.join(workdir, ".connection.json")
    shutil.copyfile(source, target)
    os.chmod(target, 0o600)
    os.chown(target, uid, gid)
    return target


def _descendants(root_pid):
    """Pids whose parent chain reaches ``root_pid`` (orphans reparent to us: subreaper)."""
    parents = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                parents[int(entry.name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = set(), {root_pid}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _kill_leftovers():
    for _ in range(20):
        pids = _descendants(os.getpid())
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        time.sleep(0.02)


def _start_kernel(config, connection, report_fd):
    """In the forked child: confine, then become the kernel. Never returns."""
    try:
        spec = dict(config["jail"])
        applied = enter(spec)
        os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if config["quiet"]:
            # A confined kernel's own stdout and stderr (ipykernel's banner, C-level writes)
            # are nobody's business; its cell outputs travel over ZMQ as usual.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
        os.write(report_fd, json.dumps(applied).encode("utf-8"))
        os.close(report_fd)
        os.environ.clear()
        os.environ.update(config["env"])
        argv = [config["python"], *config["python_flags"], "-m", "ipykernel_launcher",
                "-f", connection]
        os.execv(config["python"], argv)
    except BaseException as exc:  # the grader reads why in the status file
        try:
            os.write(report_fd, json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
        finally:
            os._exit(71)


def main():
    connection_file, config_path = sys.argv[1], sys.argv[2]
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    jail = config["jail"]
    connection = connection_file
    if jail.get("uid") is not None:
        connection = _copy_connection_file(connection_file, jail["workdir"], jail["uid"],
                                           jail["gid"])
    # A new PID namespace dies whole with the kernel; without CAP_SYS_ADMIN (Docker's default)
    # the launcher adopts the kernel's orphans instead and kills them at the end.
    in_namespace = config["pid_namespace"] and ctypes.CDLL(None).unshare(_CLONE_NEWPID) == 0
    if in_namespace:
        jail["parent_pid"] = None  # our pid is not visible from inside the new namespace
    else:
        ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        jail["parent_pid"] = os.getpid()
    read_end, write_end = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _start_kernel(config, connection, write_end)
    os.close(write_end)

    def forward(signum, _frame):
        try:
            os.killpg(pid, signum)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, lambda *_: (forward(signal.SIGKILL, None), os._exit(143)))

    report = b""
    while chunk := os.read(read_end, 65536):
        report += chunk
    os.close(read_end)
    deadline = started + config["deadline_seconds"]
    status = {"confinement": json.loads(report or b"{}"), "deadline": False,
              "pid_namespace": in_namespace}
    while True:
        done, code = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            status["deadline"] = True
            forward(signal.SIGKILL, None)
            _, code = os.waitpid(pid, 0)
            break
        time.sleep(0.05)
    _kill_leftovers()
    status["seconds"] = round(time.monotonic() - started, 3)
    if os.WIFSIGNALED(code):
        status["signal"] = signal.Signals(os.WTERMSIG(code)).name
    else:
        status["exit"] = os.WEXITSTATUS(code)
    with open(config["status_path"], "w", encoding="utf-8") as f:
        json.dump(status, f)
    os._exit(status.get("exit", 1))


if __name__ == "__main__":
    main()
