"""The grader's side of the sandbox: start the zygote, open jobs, talk to them.

    with Sandbox(Limits(...), jobs=2) as sandbox:
        job = sandbox.open_job("alice")
        ran = job.run_notebook(name, notebook_bytes, cells, files, export)   # the cells' errors,
        reply = job.call("attention", args, parts=2, stand_ins=(), callback=...)  # output, data
        ended = job.close()                                                  # how it ended

Every answer is read as plain data (wire.py) with a deadline, and checked here for shape and
type: a job that sends anything else, goes silent or dies has given no answer, and
``JobFailed`` says why (time, memory, disk, crash) in the zygote's words, never the job's.
"""

import builtins
import json
import os
import subprocess
import shutil
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from . import host as host_module
from .inside import wire

INSIDE = Path(__file__).resolve().parent / "inside"
STARTUP_SECONDS = 120
ENDING_SECONDS = 10
MAX_CALLBACKS = 512
WARM_MODULES = ("json", "jsonschema", "nbformat", "IPython.display")


@dataclass(frozen=True)
class Limits:
    """What one job may use. ``notebook_seconds`` is the instructor's TIMEOUT for the cells;
    the calls on hidden inputs get ``call_seconds`` each on top."""

    notebook_seconds: float = 120.0
    call_seconds: float = 10.0
    calls_total_seconds: float = 60.0
    memory_mb: int = 2048
    scratch_mb: int = 64
    scratch_inodes: int = 4096
    processes: int = 64
    open_files: int = 256
    file_mb: int = 64

    @property
    def wall_seconds(self):
        return self.notebook_seconds + self.calls_total_seconds + 5


class SandboxError(RuntimeError):
    """The sandbox itself could not start or stopped working: a problem of the grader."""


class JobFailed(Exception):
    """A job gave no (valid) answer. ``reason``: time, memory, disk, died, protocol."""

    # lab_runner.call lets it through: no answer is no fact of the student's (fail closed).
    stops_the_lab = True

    def __init__(self, reason, detail=""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


@dataclass
class Ending:
    """How a job ended, in the zygote's words."""

    reason: Optional[str] = None  # time, memory, disk, killed, internal; None: it exited
    exit: Optional[int] = None
    peak_mb: float = 0.0
    cpu_seconds: float = 0.0
    seconds: float = 0.0


@dataclass
class Ran:
    """What running the notebook's cells produced, checked."""

    errors: list = field(default_factory=list)
    output: str = ""
    output_chars: int = 0
    exported: dict = field(default_factory=dict)
    confinement: dict = field(default_factory=dict)
    shell_escapes: list = field(default_factory=list)  # [{"cell": n, "command": text}], refused


class Sandbox:
    """One zygote for a batch (or for one Otter run)."""

    def __init__(self, limits: Limits = Limits(), jobs: int = 1, allow_bwrap: bool = True,
                 wait: bool = True):
        """``wait=False`` returns once the zygote is started, not warm: the caller does other
        work meanwhile, and the first job waits for it (a start that fails raises there)."""
        self.limits, self.max_jobs = limits, max(1, int(jobs))
        self.host = host_module.probe(allow_bwrap)
        self.description = {}
        self._jobs, self._lock, self._counter = {}, threading.Lock(), 0
        self._ready = threading.Event()
        self._workdir = Path(tempfile.mkdtemp(prefix="kit-sandbox-"))
        self._proc, self._closed, self.restarts, self._generation = None, False, 0, 0
        self.cpu = {"cpu_self": 0.0, "cpu_jobs": 0.0}  # the zygote's, reported when it stops
        self._stopped = threading.Event()
        self._restart_lock = threading.Lock()
        self._uids = UidClaims()
        self._unwaited = not wait
        try:
            self._prepare()
            self._launch(wait)
        except BaseException:
            self.close()
            raise

    # --- start-up ---------------------------------------------------------------------

    def _prepare(self):
        """What every launch of the zygote shares: its code, its font cache, its folders."""
        host = self.host
        traversable = host_module.make_traversable(host_module.library_paths()) if host.root else []
        code = self._workdir / "code"
        shutil.copytree(INSIDE, code / "inside", ignore=shutil.ignore_patterns("__pycache__"))
        seed = self._workdir / "mpl-seed"
        _copy_font_cache(seed)
        scratch = self._workdir / "jobs"
        scratch.mkdir()
        os.chmod(self._workdir, 0o755)
        os.chmod(scratch, 0o711 if host.root and not host.bwrap else 0o700)
        for path in [code, seed, *code.rglob("*")]:
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        read_paths = host_module.library_paths() + list(host_module.SYSTEM_FOLDERS) + list(
            host_module.DEVICES)
        inner_code = "/kit/code" if host.bwrap else str(code)
        self._config = {
            # A name in the command line of every process of this sandbox, so that an
            # operator (or a test) can find them: KIT_SANDBOX_LABEL.
            "label": os.environ.get("KIT_SANDBOX_LABEL", ""),
            "debug": bool(os.environ.get("KIT_SANDBOX_DEBUG")),
            "scratch_root": "/tmp/jobs" if host.bwrap else str(scratch),
            "job_uids": [] if host.bwrap or not host.root else self._uids.claim(self.max_jobs),
            "mpl_seed": "/kit/mpl-seed" if host.bwrap else str(seed),
            "warm_modules": list(WARM_MODULES),
            "plan": {"scratch_mb": self.limits.scratch_mb,
                     "scratch_inodes": self.limits.scratch_inodes,
                     "read_paths": read_paths + [inner_code],
                     # Beyond what the warm interpreter already maps (confine.py adds that).
                     "limits": {"address_space": self.limits.memory_mb * 2**20,
                                "cpu_seconds": int(self.limits.wall_seconds) + 5,
                                "processes": self.limits.processes,
                                "file_bytes": self.limits.file_mb * 2**20,
                                "open_files": self.limits.open_files}},
        }
        self._bootstrap = (f"import sys; sys.path[:0] = "
                           f"{[inner_code] + host_module.site_paths()!r}; "
                           "from inside.zygote import main; main()")
        self._environment = {
            "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "agg",
            "MPLCONFIGDIR": "/tmp/matplotlib" if host.bwrap else str(self._workdir / "zygote-mpl"),
            "PYTHONHASHSEED": "0",
            "HOME": "/tmp" if host.bwrap else str(self._workdir / "zygote-home"),
            "IPYTHONDIR": "/tmp/ipython" if host.bwrap
            else str(self._workdir / "zygote-home" / "ipython")}
        self._binds = [(p, p) for p in host_module.library_paths()
                       + list(host_module.SYSTEM_FOLDERS)]
        self._binds += [(str(code), "/kit/code"), (str(seed), "/kit/mpl-seed")]
        if not host.bwrap:
            (self._workdir / "zygote-mpl").mkdir(mode=0o700)
            (self._workdir / "zygote-home").mkdir(mode=0o700)
        self.description.update({"mode": host.mode, "root": host.root,
                                 "made_traversable": traversable})

    def _launch(self, wait=True):
        """Start a zygote and, with ``wait``, wait until it is warm."""
        host = self.host
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._control = ours
        self._ready.clear()
        config = {**self._config, "control_fd": theirs.fileno()}
        command = [host_module.venv_interpreter(), "-I", "-S", "-B", "-c", self._bootstrap,
                   json.dumps(config)]
        if host.bwrap:
            command = (host_module.bwrap_prefix(host) + host_module.bwrap_arguments(self._binds)
                       + ["--chdir", "/tmp", "--clearenv"]
                       + [arg for key, value in self._environment.items()
                          for arg in ("--setenv", key, value)] + ["--"] + command)
        # The zygote's own errors (never a job's output) go to a log the grader reads on failure.
        self._log = open(self._workdir / "zygote.log", "ab")
        self._proc = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=self._log,
                                      pass_fds=[theirs.fileno()], env=self._environment,
                                      cwd=str(self._workdir), start_new_session=True)
        theirs.close()
        self._generation += 1
        threading.Thread(target=self._read_control, args=(ours, self._generation),
                         daemon=True).start()
        if wait:
            self._wait_warm()

    def _wait_warm(self):
        if not self._ready.wait(STARTUP_SECONDS) or self._proc.poll() is not None:
            raise SandboxError(f"the sandbox did not start: {self.log_tail() or 'no answer'}")

    def _alive(self):
        """The zygote, restarted if something killed it: later submissions still get graded."""
        with self._restart_lock:
            if self._unwaited:  # started with wait=False: its first job waits here
                self._unwaited = False
                self._wait_warm()
            if self._proc is not None and self._proc.poll() is not None and not self._closed:
                self.restarts += 1
                self._control.close()
                self._log.close()
                self._launch()

    def _read_control(self, control, generation):
        while True:
            try:
                data = control.recv(1 << 16)
            except OSError:
                data = b""
            if not data:  # this zygote is gone, and with it every job it was running
                with self._lock:
                    jobs = [j for j in self._jobs.values() if j.generation == generation]
                for job in jobs:
                    job._ended(Ending(reason="internal"))
                self._ready.set()
                return
            try:
                message = json.loads(data.decode("utf-8"))
            except ValueError:
                continue
            op = message.get("op")
            if op == "stopped":
                for key in ("cpu_self", "cpu_jobs"):
                    self.cpu[key] += float(message.get(key) or 0)
                self._stopped.set()
                continue
            if op == "ready":
                self.description.update({
                    "namespaces": message.get("namespaces"),
                    "landlock_abi": message.get("landlock"),
                    "job_uids": message.get("job_uids"),
                    "zygote_uid": message.get("uid")})
                self._ready.set()
                continue
            with self._lock:
                job = self._jobs.get(message.get("id"))
            if job is None:
                continue
            if op == "started":
                job._started.set()
            elif op == "ended":
                job._ended(Ending(reason=message.get("reason"), exit=message.get("exit"),
                                  peak_mb=float(message.get("peak_mb") or 0),
                                  cpu_seconds=float(message.get("cpu_seconds") or 0),
                                  seconds=float(message.get("seconds") or 0)))

    # --- jobs -------------------------------------------------------------------------

    def open_job(self, label=""):
        self._alive()
        with self._lock:
            self._counter += 1
            job_id = f"{self._counter}"
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        job = Job(self, job_id, ours, label)
        job.generation = self._generation
        with self._lock:
            self._jobs[job_id] = job
        message = {"op": "job", "id": job_id,
                   "limits": {"wall_seconds": self.limits.wall_seconds,
                              "memory_mb": self.limits.memory_mb}}
        try:
            socket.send_fds(self._control, [json.dumps(message).encode()], [theirs.fileno()])
        except OSError as exc:
            raise SandboxError(f"the sandbox stopped: {exc}") from None
        finally:
            theirs.close()
        return job

    def log_tail(self, size=4000):
        """The end of the zygote's own error log, for the instructor."""
        try:
            data = (self._workdir / "zygote.log").read_bytes()
        except OSError:
            return ""
        return data[-size:].decode("utf-8", "replace")

    def _forget(self, job_id):
        with self._lock:
            self._jobs.pop(job_id, None)

    def close(self):
        self._closed = True
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._control.send(json.dumps({"op": "stop"}).encode())
            except OSError:
                pass
            try:
                self._proc.wait(ENDING_SECONDS)
            except Exception:
                pass
            self._stopped.wait(2)
            if self._proc.poll() is None:
                try:
                    os.killpg(self._proc.pid, 9)
                except OSError:
                    pass
                self._proc.wait()
        if getattr(self, "_control", None) is not None:
            self._control.close()
        if getattr(self, "_log", None) is not None:
            self._log.close()
        _remove_tree(self._workdir)
        if getattr(self, "_uids", None) is not None:  # after the zygote is gone: no job of
            self._uids.release()  # ours runs as them now

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Job:
    """One submission's conversation with its confined process."""

    def __init__(self, sandbox, job_id, sock, label):
        self.sandbox, self.id, self.sock, self.label = sandbox, job_id, sock, label
        self._started = threading.Event()
        self._done = threading.Event()
        self.ending: Optional[Ending] = None
        self._calls_deadline = None

    def _ended(self, ending):
        self.ending = ending
        self._done.set()

    def _failure(self, fallback):
        """Why the job gave no answer: the zygote's account if it has one."""
        self._done.wait(2.0)
        if self.ending is not None and self.ending.reason:
            return JobFailed(self.ending.reason)
        return JobFailed(fallback)

    def _receive(self, deadline):
        try:
            return wire.receive(self.sock, wire.GRADER_READS, deadline)
        except TimeoutError:
            raise self._failure("time") from None
        except (EOFError, OSError):
            raise self._failure("died") from None
        except wire.WireError as exc:
            raise JobFailed("protocol", str(exc)) from None

    def run_notebook(self, notebook_name, cells, files, export=(), export_bytes=1 << 20) -> Ran:
        limits = self.sandbox.limits
        try:
            wire.send(self.sock, {"notebook_name": notebook_name, "cells": list(cells),
                                  "files": dict(files), "export": list(export),
                                  "export_bytes": export_bytes,
                                  "seconds": limits.notebook_seconds})
        except OSError:
            raise self._failure("died") from None
        reply = self._receive(time.monotonic() + limits.notebook_seconds + 10)
        self._calls_deadline = time.monotonic() + limits.calls_total_seconds
        return _checked_ran(reply)

    def call(self, function, args=(), kwargs=None, *, parts=1, stand_ins=(), callback=None,
             names=(), guarded=()):
        """Call the student's ``function``; its parts as float64 arrays, or its error.

        ``names``: the parameter names the positional ``args`` stand for (the reference's),
        so that a function taking the last of them only by name still gets them.
        ``guarded``: graded functions that get copies of their arguments while it runs.

        Returns ``{"parts": [...]}`` or ``{"error": {...}}`` (checked). ``callback(name, args,
        kwargs)`` answers a stand-in: it returns the reference's result, or raises
        ``ValueError`` with a Spanish sentence for the student's code to receive."""
        limits = self.sandbox.limits
        deadline = min(time.monotonic() + limits.call_seconds + 2,
                       self._calls_deadline or float("inf"))
        if time.monotonic() >= deadline:
            raise JobFailed("time")
        try:
            wire.send(self.sock, {"op": "call", "function": function, "args": list(args),
                                  "kwargs": dict(kwargs or {}), "names": list(names),
                                  "parts": parts,
                                  "stand_ins": list(stand_ins), "guarded": list(guarded),
                                  "seconds": max(0.1, min(limits.call_seconds,
                                                          deadline - time.monotonic() - 1))})
        except OSError:
            raise self._failure("died") from None
        for _ in range(MAX_CALLBACKS + 1):
            reply = self._receive(deadline)
            op = reply.get("op")
            if op == "result":
                return _checked_result(reply, parts, len(args) + len(kwargs or {}))
            if op != "callback" or reply.get("name") not in stand_ins or callback is None:
                raise JobFailed("protocol", "unexpected message")
            answer = _answer_callback(callback, reply)
            try:
                wire.send(self.sock, answer)
            except OSError:
                raise self._failure("died") from None
        raise JobFailed("protocol", "too many stand-in calls")

    def close(self, kill=False) -> Ending:
        """End the job; ``kill`` when it has stopped answering (no point waiting for it)."""
        if kill:
            self._kill()
        try:
            wire.send(self.sock, {"op": "bye"})
        except OSError:
            pass
        self.sock.close()
        if not self._done.wait(ENDING_SECONDS):
            self._kill()
            self._done.wait(ENDING_SECONDS)
        self.sandbox._forget(self.id)
        return self.ending or Ending(reason="internal")

    def _kill(self):
        try:
            self.sandbox._control.send(json.dumps({"op": "kill", "id": self.id}).encode())
        except OSError:
            pass


# --- checking what a job sent ------------------------------------------------------------------

ERROR_KINDS = {"missing", "not_callable", "arguments", "not_a_tuple", "wrong_count", "tuple_instead",
               "unconvertible", "too_large", "not_implemented", "memory", "recursion", "time",
               "exit", "stand_in", "name", "attribute", "zero_division", "other", "broadcast",
               "broadcast_assign", "matmul", "not_aligned", "reshape", "index",
               "too_many_indices", "axis", "concatenate", "concatenate_ndim", "einsum",
               "ambiguous_truth", "integer_expected", "split_unequal", "invert_not_boolean",
               "inhomogeneous", "concatenate_empty", "stack_not_sequence", "float_index",
               "function_operand", "scalar_function", "unpack", "float_slice",
               "boolean_index"}
EXCEPTION_NAMES = {name for name, value in vars(builtins).items()
                   if isinstance(value, type) and issubclass(value, BaseException)}
EXCEPTION_NAMES |= {"AxisError", "LinAlgError"}


# The numbers of an error report (shapes, sizes, indices) are the job's to choose, so nothing
# here trusts them to be shown: verdicts/sizes.py shows one only when it is a size of the case.
# Here they are only checked to be what they claim, a few integers that fit an int64.
INT64 = 2**63


def _integers(values, limit):
    """``values`` if they are at most ``limit`` integers; a protocol error otherwise. One that
    no array could have (beyond an int64) is kept as None."""
    if not isinstance(values, list) or len(values) > limit:
        raise JobFailed("protocol", "bad integers")
    for value in values:
        if type(value) is not int:
            raise JobFailed("protocol", "bad integers")
    return [value if -INT64 <= value < INT64 else None for value in values]


def checked_error(error):
    """An error report reduced to what the grader trusts: known words and integers."""
    if not isinstance(error, dict) or error.get("kind") not in ERROR_KINDS:
        raise JobFailed("protocol", "bad error report")
    clean = {"kind": error["kind"]}
    exception = error.get("exception")
    if exception is not None:
        if exception not in EXCEPTION_NAMES:
            raise JobFailed("protocol", "bad exception name")
        clean["exception"] = exception
    if "numbers" in error:
        clean["numbers"] = _integers(error["numbers"], 6)
    if "shapes" in error:
        if not isinstance(error["shapes"], list) or len(error["shapes"]) > 4:
            raise JobFailed("protocol", "bad shapes")
        clean["shapes"] = [_integers(shape, 6) for shape in error["shapes"]]
    name = error.get("name")
    if isinstance(name, str) and name.isidentifier() and len(name) <= 40:
        clean["name"] = name
    owner = error.get("owner")  # an AttributeError's module or type: dotted identifiers
    if (isinstance(owner, str) and len(owner) <= 60
            and all(part.isidentifier() for part in owner.split("."))):
        clean["owner"] = owner
        clean["module"] = error.get("module") is True
    at = _place(error.get("at"))
    if at:
        clean["at"] = at
    return clean


def _place(at):
    """A line of the student's code an error came out of: [cell position, line], or None."""
    if (isinstance(at, list) and len(at) == 2 and all(type(n) is int for n in at)
            and 0 <= at[0] < 100_000 and 0 < at[1] < 1_000_000):
        return list(at)
    return None


def _checked_result(reply, parts, arguments=0):
    """A call's reply: its parts, or its error (``checked_error``); ``arguments``: how many
    the call passed, the only positions its side-effect report may name."""
    if "error" in reply:
        return {"error": checked_error(reply["error"])}
    values = reply.get("parts")
    if not isinstance(values, list) or len(values) != parts:
        raise JobFailed("protocol", "wrong number of parts")
    for value in values:
        if type(value) is not np.ndarray or value.dtype != np.float64 or value.ndim > 4:
            raise JobFailed("protocol", "a part is not a float64 array")
    checked = {"parts": values}
    # Side effects (inside/calls.py): positions of the call's own arguments, and a flag.
    mutated = reply.get("mutated", [])
    if not isinstance(mutated, list) or not all(
            type(position) is int and 0 <= position < arguments for position in mutated) \
            or len(set(mutated)) != len(mutated):
        raise JobFailed("protocol", "bad side effects")
    if mutated:
        checked["mutated"] = mutated
    if reply.get("aliased") is True:
        checked["aliased"] = True
    return checked


def _checked_ran(reply):
    if reply.get("op") != "ran":
        raise JobFailed("protocol", "expected the notebook's report")
    errors = reply.get("errors")
    if not isinstance(errors, list) or len(errors) > 10_000:
        raise JobFailed("protocol", "bad cell errors")
    clean_errors = []
    for error in errors:
        if not isinstance(error, dict):
            raise JobFailed("protocol", "bad cell error")
        clean_errors.append({
            "cell": error.get("cell") if type(error.get("cell")) is int else None,
            "kind": "time" if error.get("kind") == "time" else "error",
            "exception": _text(error.get("exception"), 60),
            "message": _text(error.get("message"), 300),
            "line": error.get("line") if type(error.get("line")) is int else None,
            "at": _place(error.get("at")),
            "position": error.get("position") if type(error.get("position")) is int else None,
            "first_line": _text(error.get("first_line"), 80),
            "defines": [name for name in (error.get("defines") or [])[:50]
                        if isinstance(name, str) and name.isidentifier() and len(name) <= 80]
            if isinstance(error.get("defines"), list) else [],
            "knock_on_of": error.get("knock_on_of") if type(error.get("knock_on_of")) is int
            else None,
            "skipped": error.get("skipped") is True,
            "slow": error.get("slow") is True,
            "more": error.get("more") is True,
            "budget": error.get("budget") if type(error.get("budget")) is int else None})
    exported = reply.get("exported")
    clean_exported = {}
    if isinstance(exported, dict):
        for name, value in exported.items():
            if isinstance(value, dict) and isinstance(value.get("json"), str):
                clean_exported[name] = {"json": value["json"][:4 << 20]}
            elif isinstance(value, dict) and value.get("error") in ("missing", "not_json",
                                                                    "too_large"):
                clean_exported[name] = {"error": value["error"]}
    confinement = reply.get("confinement")
    return Ran(errors=clean_errors, output=_text(reply.get("output"), 20_000),
               output_chars=reply.get("output_chars") if type(reply.get("output_chars")) is int
               else 0,
               exported=clean_exported,
               confinement={k: v for k, v in (confinement or {}).items()
                            if isinstance(k, str) and isinstance(v, (int, str, type(None)))}
               if isinstance(confinement, dict) else {},
               shell_escapes=_checked_shell_escapes(reply.get("shell_escapes")))


def _checked_shell_escapes(escapes):
    """The refused commands, as the cells wrote them: a cell number and at most 80 characters
    of the notebook's own text, at most 50 of them."""
    if not isinstance(escapes, list):
        return []
    return [{"cell": escape.get("cell") if type(escape.get("cell")) is int else None,
             "command": _text(escape.get("command"), 80)}
            for escape in escapes[:50] if isinstance(escape, dict)]


def _text(value, limit):
    return value[:limit] if isinstance(value, str) else ""


def _answer_callback(callback, reply):
    args, kwargs = reply.get("args"), reply.get("kwargs")
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        return {"error": "argumentos ilegibles"}
    try:
        return {"result": callback(reply["name"], args, kwargs)}
    except ValueError as exc:
        return {"error": str(exc)}
    except Exception:  # the reference rejects what the student's code passed it
        return {"error": f"la versión de referencia de `{reply['name']}` no acepta los "
                         "argumentos que le pasó tu función: revisa sus formas"}


# --- host helpers -------------------------------------------------------------------------------


class UidClaims:
    """The user ids one sandbox's jobs run as, claimed for as long as it lives.

    Before a job starts, the zygote kills every process of its user, because nothing of an
    earlier job may still run as it. Two graders on one host (two batches, two lessons, two
    Gradescope runs side by side) would both take the first free id, 61000, and each would
    kill the other's job. So an id is claimed with a lock on a file of its own, exclusive
    across processes and dropped by the kernel however its holder dies: an id another grader
    holds is skipped."""

    # Where root may lock files, the first that works.
    FOLDERS = ("/run/lock", tempfile.gettempdir())

    def __init__(self):
        self._held = []

    def claim(self, count):
        import fcntl
        import pwd

        folder = self._folder()
        uids, candidate = [], host_module.JOB_UID_BASE
        while len(uids) < count:
            try:
                pwd.getpwuid(candidate)  # a named user is someone's, never a job's
            except KeyError:
                handle = open(folder / f"{candidate}.lock", "a")
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.close()  # another grader's job runs as it
                else:
                    self._held.append(handle)
                    uids.append(candidate)
            candidate += 1
        return uids

    def release(self):
        for handle in self._held:
            handle.close()
        self._held = []

    @classmethod
    def _folder(cls):
        for base in cls.FOLDERS:
            folder = Path(base) / "kit-job-uids"
            try:
                folder.mkdir(mode=0o700, exist_ok=True)
                return folder
            except OSError:
                continue
        raise SandboxError("no folder where the grader can claim its jobs' user ids")


def _copy_font_cache(target: Path):
    target.mkdir()
    try:
        import matplotlib

        source = Path(matplotlib.get_cachedir())
    except Exception:
        return
    for path in source.glob("fontlist-*.json"):
        shutil.copy(path, target / path.name)


def _remove_tree(folder: Path):
    """Remove the sandbox's folder whatever a job left in it."""
    if folder.exists():
        subprocess.run(["rm", "-rf", "--one-file-system", str(folder)], check=False,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
