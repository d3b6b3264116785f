"""The zygote: a warm process that forks one confined job per submission, and never runs
student code itself.

    python -I -S -B zygote.py CONFIG_JSON     (started by client.Sandbox, fd 3 = control)

It pays once what every job needs (numpy, matplotlib, IPython: most of a notebook's start-up)
and then, for each job the grader asks for, forks a child that confines itself
(confine.enter), runs the notebook (notebook.run_cells) and answers the grader's calls
(calls.serve) over a socket the grader handed over with the request. The zygote itself only:

* enforces each job's wall-clock and memory limits, polling the job's whole process tree;
* kills what a job leaves behind: the job's PID namespace dies with its first process; without
  namespaces, every process of the job's own uid, or, for orphans, whatever the kernel hands
  back to this subreaper;
* tells the grader how each job ended.

The control channel is a SOCK_SEQPACKET socket: one JSON message per packet, and a job's
socket travels with its request as SCM_RIGHTS.
"""

import gc
import json
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import time

from . import confine, wire
from .calls import CHILD_READS, serve
from .notebook import (BoundedOutput, export, install_otter_stub, refused_shell_escapes,
                       run_cells, warm)

POLL_SECONDS = 0.05
MEMORY_POLL_SECONDS = 0.2
MEMORY_SLACK = 1.25  # the warm interpreter's own pages, shared with the zygote, count in RSS
PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE = 36, 4


class Zygote:
    def __init__(self, config):
        self.config = config
        self.control = socket.socket(fileno=int(config["control_fd"]))
        self.jobs = {}  # leader pid -> job dict
        self.free_uids = list(config.get("job_uids") or [])
        self.debug_fd = os.dup(2) if config.get("debug") else -1

    # --- start-up ---------------------------------------------------------------------

    def start(self):
        confine._libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans come back here
        confine._libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # same-uid jobs cannot ptrace us
        confine.die_with_parent()
        self.namespaces = confine.probe() if self.config.get("namespaces", True) else None
        for module in self.config.get("refused_modules", []):
            sys.modules.setdefault(module, None)  # as the grader's own Python refuses it
        _seed_matplotlib_cache(self.config.get("mpl_seed"))
        self.shell = warm()
        for module in self.config.get("warm_modules", []):
            try:
                __import__(module)
            except ImportError:
                pass
        gc.freeze()  # objects alive now are never collected: no copy-on-write of their pages
        self._send({"op": "ready", "namespaces": self.namespaces,
                    "landlock": confine.landlock.abi(), "uid": os.getuid(),
                    "job_uids": bool(self.free_uids)})

    def _send(self, message):
        self.control.send(json.dumps(message).encode("utf-8"))

    # --- the loop ---------------------------------------------------------------------

    def run(self):
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        last_memory_poll = 0.0
        while True:
            ready, _, _ = select.select([self.control, wake_r], [], [], POLL_SECONDS)
            if wake_r in ready:
                _drain(wake_r)
            if self.control in ready and not self._control_message():
                break
            self._reap()
            now = time.monotonic()
            poll_memory = now - last_memory_poll >= MEMORY_POLL_SECONDS
            if poll_memory:
                last_memory_poll = now
            for job in list(self.jobs.values()):
                self._enforce(job, now, poll_memory)
        for job in list(self.jobs.values()):
            self._kill(job)
        self._reap(block=True)
        # Its own CPU and its jobs' (it reaped them all), for the bench's accounting: behind
        # bubblewrap's processes this would not reach the grader's own rusage.
        own, jobs = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                          resource.RUSAGE_CHILDREN))
        try:
            self._send({"op": "stopped", "cpu_self": own.ru_utime + own.ru_stime,
                        "cpu_jobs": jobs.ru_utime + jobs.ru_stime})
        except OSError:
            pass

    def _control_message(self):
        try:
            data, fds, _, _ = socket.recv_fds(self.control, 1 << 16, 1)
        except OSError:
            return False
        if not data:
            return False  # the grader went away: stop everything
        message = json.loads(data.decode("utf-8"))
        op = message.get("op")
        if op == "job":
            self._start_job(message, fds[0] if fds else None)
        elif op == "kill":
            for job in self.jobs.values():
                if job["id"] == message.get("id"):
                    job["reason"] = job["reason"] or "killed"
                    self._kill(job)
        elif op == "stop":
            return False
        return True

    # --- jobs -------------------------------------------------------------------------

    def _start_job(self, message, fd):
        job_id = message["id"]
        if fd is None:
            self._send({"op": "ended", "id": job_id, "reason": "internal",
                        "detail": "no socket came with the job"})
            return
        uid = self.free_uids.pop(0) if self.free_uids else None
        scratch = self._scratch(job_id, uid)
        plan = {**self.config["plan"], "namespaces": self.namespaces, "uid": uid, "gid": uid,
                "scratch": scratch["work"], "tmp": scratch["tmp"]}
        if uid is not None:
            _kill_uid(uid)  # nothing of an earlier job may still run as this user
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the job's side
            code = 70
            try:
                code = self._job(fd, plan)
            except BaseException:
                if self.config.get("debug"):  # the job's own traceback, for the kit's developers
                    import traceback
                    os.write(self.debug_fd, traceback.format_exc().encode())
            finally:
                os._exit(code)
        os.close(fd)
        self.jobs[pid] = {"id": job_id, "pid": pid, "uid": uid, "scratch": scratch,
                          "started": time.monotonic(), "reason": None, "peak_mb": 0.0,
                          "wall": float(message["limits"]["wall_seconds"]),
                          "memory_mb": float(message["limits"]["memory_mb"]),
                          "scratch_mb": float(self.config["plan"]["scratch_mb"])}
        self._send({"op": "started", "id": job_id, "pid": pid})

    def _scratch(self, job_id, uid):
        """The job's folders. With namespaces they are tmpfs mount points, empty here; without,
        real folders under the batch's private root, owned by the job's user."""
        root = os.path.join(self.config["scratch_root"], _safe(job_id))
        folders = {"root": root, "work": os.path.join(root, "work"), "tmp": os.path.join(root, "tmp")}
        for folder in ("root", "work", "tmp"):
            os.makedirs(folders[folder], mode=0o700, exist_ok=True)
            if uid is not None:
                os.chown(folders[folder], uid, uid)
        return folders

    def _job(self, fd, plan):  # pragma: no cover - runs in the forked job
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        self.control.close()
        _only_fds([fd, self.debug_fd])
        sock = socket.socket(fileno=fd)
        devnull = os.open(os.devnull, os.O_RDWR)
        for std in (0, 1, 2):
            os.dup2(devnull, std)  # the student's writes to fd 1 and 2 go nowhere
        os.close(devnull)
        applied = confine.enter(plan)
        os.environ.update({"HOME": plan["scratch"], "TMPDIR": plan["tmp"],
                           "MPLCONFIGDIR": os.path.join(plan["tmp"], ".matplotlib")})
        setup = wire.receive(sock, CHILD_READS)
        for name, data in setup["files"].items():
            if os.path.basename(name) != name or name in ("", ".", ".."):
                continue
            with open(name, "wb") as f:
                f.write(data)
        install_otter_stub()
        # A Jupyter kernel imports from its working folder: lab.py and the other files the
        # student received sit there.
        sys.path.insert(0, "")
        output = BoundedOutput()
        sys.stdout = sys.stderr = output
        job_pid = os.getpid()
        errors = run_cells(self.shell, setup["cells"], float(setup["seconds"]), output)
        if os.getpid() != job_pid:
            os._exit(0)  # a child the student forked fell out of its cell: it speaks for no one
        exported = export(self.shell.user_ns, setup.get("export", []),
                          int(setup.get("export_bytes", 1 << 20)))
        wire.send(sock, {"op": "ran", "errors": errors, "output": output.text(),
                         "output_chars": output.total, "exported": exported,
                         "shell_escapes": refused_shell_escapes(),
                         "confinement": applied})
        serve(sock, self.shell.user_ns, job_pid)
        return 0

    # --- limits and endings -----------------------------------------------------------

    def _enforce(self, job, now, poll_memory):
        if job["reason"]:
            return
        if now - job["started"] > job["wall"]:
            job["reason"] = "time"
            self._kill(job)
            return
        if poll_memory:
            rss = _tree_rss_mb(job["pid"])
            job["peak_mb"] = max(job["peak_mb"], rss)
            # The whole job: processes it started count too. A single process meets its own
            # address-space limit (confine.py) first; this catches several together.
            if rss > job["memory_mb"] * MEMORY_SLACK:
                job["reason"] = "memory"
                self._kill(job)
            elif not self.namespaces and _disk_mb(job["scratch"]["root"]) > job["scratch_mb"]:
                job["reason"] = "disk"
                self._kill(job)

    def _kill(self, job):
        for pid in _tree(job["pid"]):
            _signal(pid, signal.SIGKILL)
        if job["uid"] is not None:
            _kill_uid(job["uid"])
        if not self.namespaces:
            try:
                os.killpg(job["pid"], signal.SIGKILL)
            except OSError:
                pass

    def _reap(self, block=False):
        while True:
            try:
                pid, status, usage = os.wait4(-1, 0 if block else os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            job = self.jobs.pop(pid, None)
            if job is None:
                continue  # an orphan of some job, handed to this subreaper: already dead
            self._kill(job)  # whatever the job left behind
            self._finish(job, status, usage)
        if not block:
            self._kill_orphans()

    def _finish(self, job, status, usage):
        job["peak_mb"] = max(job["peak_mb"], usage.ru_maxrss / 1024)
        if job["uid"] is not None:
            _kill_uid(job["uid"])
            # Without a mount namespace, the host's world-writable folders were the job's to
            # write: what its user left there goes before the user is handed to the next job.
            for folder in SHARED_WRITABLE:
                _remove_owned_by(job["uid"], folder)
            self.free_uids.append(job["uid"])
        _remove(job["scratch"]["root"])
        self._send({"op": "ended", "id": job["id"], "reason": job["reason"],
                    "exit": os.waitstatus_to_exitcode(status), "peak_mb": round(job["peak_mb"], 1),
                    "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
                    "seconds": round(time.monotonic() - job["started"], 3)})

    def _kill_orphans(self):
        """A child of this zygote that is no job's first process is an orphan that some job
        abandoned (its parent died and the kernel handed it to this subreaper)."""
        for pid in _children(os.getpid()):
            if pid not in self.jobs:
                for member in _tree(pid):
                    _signal(member, signal.SIGKILL)


# --- processes ----------------------------------------------------------------------------


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return []


def _tree(pid):
    """``pid`` and every descendant (orphans of a namespaced job stay under its PID 1)."""
    found, pending = [], [pid]
    while pending and len(found) < 100_000:
        current = pending.pop()
        found.append(current)
        pending.extend(_children(current))
    return found


def _tree_rss_mb(pid):
    total_kb = 0
    for member in _tree(pid):
        try:
            with open(f"/proc/{member}/status", "rb") as f:
                for line in f:
                    if line.startswith(b"VmRSS:"):
                        total_kb += int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            continue
    return total_kb / 1024


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _live_pids_of(uid):
    """Processes of ``uid`` that are still running (zombies wait for their parent only)."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as f:
                status = f.read(4096)
        except OSError:
            continue
        fields = dict(line.split(b":", 1) for line in status.splitlines() if b":" in line)
        owner = fields.get(b"Uid", b"").split()
        if owner and int(owner[0]) == uid and not fields.get(b"State", b"").strip().startswith(b"Z"):
            pids.append(int(name))
    return pids


def _kill_uid(uid):
    """Kill every process of ``uid``: a helper becomes that user and signals all it may
    (kill(-1) spares only itself), until none is left. Only the zygote, as root, can."""
    if os.geteuid() != 0:
        return
    for _ in range(100):
        if not _live_pids_of(uid):
            return
        pid = os.fork()
        if pid == 0:  # pragma: no cover
            try:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.002)


SHARED_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")


def _remove_owned_by(uid, folder):
    """Remove every entry directly in ``folder`` that belongs to ``uid`` (with its contents)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        if entry.is_dir(follow_symlinks=False):
            _remove(entry.path)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def _disk_mb(folder, limit_entries=20_000):
    """The scratch's size, for hosts where it cannot be a capped tmpfs. A tree too large to
    walk counts as over any limit."""
    total, entries, pending = 0, 0, [folder]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as it:
                for entry in it:
                    entries += 1
                    if entries > limit_entries:
                        return float("inf")
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue
        except OSError:
            continue
    return total / 2**20


def _remove(folder):
    """Remove a job's folder whatever it holds: `rm` walks any depth without recursion."""
    if os.path.isdir(folder):
        subprocess.run(["rm", "-rf", "--one-file-system", folder], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        shutil.rmtree(folder, ignore_errors=True)


def _only_fds(keep):
    keep = set(keep) | {0, 1, 2}
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        names = [str(fd) for fd in range(256)]
    for name in names:
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _seed_matplotlib_cache(seed):
    """Copy the grader's font cache in, so that matplotlib does not rebuild it (a second)."""
    target = os.environ.get("MPLCONFIGDIR")
    if seed and target and os.path.isdir(seed):
        os.makedirs(target, exist_ok=True)
        for name in os.listdir(seed):
            if name.endswith(".json"):
                shutil.copy(os.path.join(seed, name), os.path.join(target, name))


def _drain(fd):
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def _safe(name):
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(name))[:64] or "job"


def main():
    config = json.loads(sys.argv[1])
    zygote = Zygote(config)
    zygote.start()
    zygote.run()


if __name__ == "__main__":
    main()
