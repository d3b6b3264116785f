"""Run the verification child: one fresh, confined Python process per graded function.

The grader side of ``child.py``'s protocol. The child gets:

* ``python -I -B``: no ``PYTHONPATH``, no user site, no script folder on ``sys.path``, no
  bytecode written;
* a new session (so its whole process group can be killed), a private empty working folder,
  a clean environment;
* the limits of ``Limits`` and, through ``jail.enter``, an unprivileged identity when the
  grader is root, and Landlock where the kernel offers it.

Its reply is read with a size cap and a wall-clock deadline, and only as JSON and an ``.npz``
loaded with ``allow_pickle=False``.
"""

import io
import json
import os
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from . import views

_HERE = Path(__file__).resolve().parent


def program_source(name):
    """A standalone program: jail.py's source, then ``name``'s."""
    return "\n\n".join([(_HERE / "jail.py").read_text("utf-8"), (_HERE / name).read_text("utf-8")])


# Read once, at import: a program must not come from files a kernel could have rewritten.
FUNCTION_PROGRAM = program_source("child.py")
DATA_PROGRAM = program_source("data_child.py")

MAX_STDERR_BYTES = 64 * 2**10


@dataclass(frozen=True)
class Limits:
    """What one verification child may use."""

    cpu_seconds: int = 10
    wall_seconds: float = 20.0
    memory_mb: int = 1024
    reply_mb: int = 16


@dataclass
class ChildResult:
    """What came back from one child, already reduced to plain data."""

    records: dict = field(default_factory=dict)  # case name -> record (see child.py)
    arrays: dict = field(default_factory=dict)  # key -> float64 ndarray
    problem: Optional[str] = None  # set when the child did not finish normally: a limit or a crash
    limit: Optional[str] = None  # "time", "memory", "output" when a limit ended it
    stderr: str = ""  # the child's last words, for instructors only (may echo student code)
    seconds: float = 0.0
    confinement: dict = field(default_factory=dict)


def _encode(value, arrays):
    if isinstance(value, np.ndarray):
        key = f"i{len(arrays)}"
        arrays[key] = value
        return {"a": key}
    if isinstance(value, list):
        return {"l": [_encode(item, arrays) for item in value]}
    if isinstance(value, tuple):
        return {"t": [_encode(item, arrays) for item in value]}
    if isinstance(value, (np.integer, np.floating)):
        return {"v": value.item()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"v": value}
    raise TypeError(f"cannot send a {type(value).__name__} to the verification child")


def build_request(function, parts, student_chunks, dependencies, cases):
    """The bytes written to the child's stdin. ``cases``: (name, inputs dict) pairs."""
    arrays = {}
    encoded = [{"name": name, "inputs": {k: _encode(v, arrays) for k, v in inputs.items()}}
               for name, inputs in cases]
    header = json.dumps({"function": function, "parts": parts, "student": student_chunks,
                         "dependencies": dependencies, "cases": encoded}).encode("utf-8")
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return struct.pack(">Q", len(header)) + header + buffer.getvalue()


def python_paths():
    """The interpreter's folders: the venv, the base installation, numpy's site-packages."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable)),
             os.path.dirname(os.path.dirname(np.__file__))}
    return sorted({os.path.realpath(path) for path in paths})


def read_paths():
    """What the child may read: the interpreter, its libraries, and nothing of the grader's."""
    return python_paths() + ["/usr/lib", "/usr/lib64", "/lib", "/lib64", "/etc/ld.so.cache",
                             "/proc/self", "/sys/devices/system/cpu", "/dev/null", "/dev/urandom"]


def _environment():
    # One BLAS thread: the child may not create threads (RLIMIT_NPROC), and it needs none.
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _jail_spec(workdir, identity, limits: Limits, processes, writable):
    spec = {
        "workdir": str(workdir),
        "limits": {"cpu_seconds": limits.cpu_seconds,
                   "memory_bytes": limits.memory_mb * 2**20,
                   "file_bytes": 2**20 if writable else 0,
                   "open_files": 64,
                   "processes": processes},
        "read_paths": read_paths() + [str(workdir)],
        "write_paths": [str(workdir)] if writable else [],
        "landlock": True,
        "deny_network": True,
        "isolate_signals": True,
        "parent_pid": os.getpid(),
    }
    if identity is not None:
        spec["uid"], spec["gid"] = identity.uid, identity.gid
    return spec


def _communicate(proc, data, deadline, reply_cap):
    """Write ``data``, read stdout and stderr with caps; stop at the deadline or a cap."""
    out, err = bytearray(), bytearray()
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, out)
    selector.register(proc.stderr, selectors.EVENT_READ, err)
    view = memoryview(data)
    if view:
        selector.register(proc.stdin, selectors.EVENT_WRITE, None)
    else:
        proc.stdin.close()
    limit = None
    while selector.get_map():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            limit = "time"
            break
        for key, _ in selector.select(min(remaining, 0.5)):
            if key.fileobj is proc.stdin:
                try:
                    written = os.write(proc.stdin.fileno(), view[:65536])
                except (BrokenPipeError, OSError):
                    written = len(view)
                view = view[written:]
                if not view:
                    selector.unregister(proc.stdin)
                    proc.stdin.close()
                continue
            chunk = os.read(key.fileobj.fileno(), 65536)
            if not chunk:
                selector.unregister(key.fileobj)
                continue
            buffer = key.data
            cap = reply_cap if buffer is out else MAX_STDERR_BYTES
            if len(buffer) < cap:
                buffer += chunk[:cap - len(buffer)]
            elif buffer is out:
                limit = "output"
        if limit:
            break
    selector.close()
    return bytes(out), bytes(err), limit


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _problem(returncode, limit, stderr, limits: Limits):
    if limit == "time":
        return "time", f"no terminó en {limits.wall_seconds:g} s"
    if limit == "output":
        return "output", f"devolvió más de {limits.reply_mb} MB"
    if returncode == -signal.SIGXCPU or returncode == -signal.SIGKILL:
        return "time", f"superó el límite de {limits.cpu_seconds} s de CPU"
    if b"MemoryError" in stderr:
        return "memory", f"superó el límite de {limits.memory_mb} MB de memoria"
    if returncode < 0:
        return None, f"terminó por la señal {signal.Signals(-returncode).name}"
    return None, f"terminó con el código {returncode} sin devolver resultados"


def _split_reply(raw):
    size = struct.unpack(">Q", raw[:8])[0]
    return json.loads(raw[8:8 + size].decode("utf-8")), raw[8 + size:]


def parse_function_reply(raw, result: ChildResult):
    header, npz = _split_reply(raw)
    with np.load(io.BytesIO(npz), allow_pickle=False) as loaded:
        for key in loaded.files:
            array = loaded[key]
            if type(array) is not np.ndarray or array.dtype != np.float64:
                raise ValueError(f"array {key} is not plain float64")
            result.arrays[key] = array
    if not isinstance(header.get("cases"), dict):
        raise ValueError("reply without cases")
    result.records = header["cases"]
    result.confinement = header.get("jail") or {}


def parse_data_reply(raw, result: ChildResult):
    header, _ = _split_reply(raw)
    if not isinstance(header.get("verdicts"), dict):
        raise ValueError("reply without verdicts")
    result.records = header["verdicts"]
    result.confinement = header.get("jail") or {}


def run_program(program, request: bytes, identity, limits: Limits, parse, *, workdir=None,
                processes=1, writable=False) -> ChildResult:
    """Run ``program`` confined, as ``identity`` (None: as this process's own user).

    ``workdir``: the child's working folder, already filled (a new empty one by default),
    removed afterwards; ``processes`` caps how many processes its user may have (1: no fork,
    no threads; None: no cap, for a grader that is not root, whose own processes would
    count); ``parse(raw, result)`` reads the reply.
    """
    workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="kit-verify-child-"))
    if identity is not None:
        views.give_to(workdir, identity.uid, identity.gid)
    started = time.monotonic()
    spec = _jail_spec(workdir, identity, limits, processes, writable)
    proc = subprocess.Popen(
        [sys.executable, "-I", "-B", "-c", program, json.dumps(spec)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=workdir, env=_environment(), start_new_session=True, close_fds=True)
    result = ChildResult()
    try:
        out, err, limit = _communicate(proc, request, started + limits.wall_seconds,
                                       limits.reply_mb * 2**20)
    finally:
        _kill(proc)
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream and not stream.closed:
                stream.close()
        shutil.rmtree(workdir, ignore_errors=True)
    result.seconds = time.monotonic() - started
    result.stderr = err.decode("utf-8", "replace")[-2000:]
    if limit is None and proc.returncode == 0 and out:
        try:
            parse(out, result)
            return result
        except Exception as exc:  # anything malformed: the student's code owns that channel
            result.problem = f"devolvió una respuesta ilegible ({type(exc).__name__})"
            return result
    result.limit, result.problem = _problem(proc.returncode, limit, err, limits)
    return result


def run_function_child(request: bytes, identity, limits: Limits = Limits()) -> ChildResult:
    """One graded function on its hidden cases (child.py). It may not fork or write."""
    return run_program(FUNCTION_PROGRAM, request, identity, limits, parse_function_reply)


def data_request(tests: dict, data: dict) -> bytes:
    """``tests``: {question: path of its test file inside the child's folder}."""
    payload = json.dumps({"tests": tests, "data": data}).encode("utf-8")
    return struct.pack(">Q", len(payload)) + payload


def run_data_child(request: bytes, identity, limits: Limits, workdir) -> ChildResult:
    """A data question's tests (data_child.py), in ``workdir`` (views.data_folder). They run
    lab.py, so it may start a few processes, but only a user of the kit's own can be capped."""
    processes = 64 if identity is not None and identity.dedicated else None
    return run_program(DATA_PROGRAM, request, identity, limits, parse_data_reply,
                       workdir=workdir, processes=processes, writable=True)
