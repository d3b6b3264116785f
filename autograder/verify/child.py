"""The verification child: run one graded function of a submission on the hidden inputs.

It runs as ``python -I -B -c <jail.py source + this source>`` (see ``sandbox.program``), so it
imports nothing from the kit and needs nothing on disk but Python and numpy. Its protocol:

* ``argv[1]``: the jail spec (JSON), applied before anything else is read;
* stdin: an 8-byte big-endian length, a JSON request, then an ``.npz`` holding the input arrays;
* stdout: an 8-byte length, a JSON reply, then an ``.npz`` holding the output arrays.

Everything it sends back is plain data: float64 arrays and short strings. The student's code
can write anything to that channel, but nothing in it is more than what the function could
have returned, because the grader reads only the function it asked for.
"""

import builtins
import io
import json
import os
import struct
import sys

if __name__ != "__main__":  # pragma: no cover - as a program, jail.py's source precedes this
    from .jail import enter

MAX_MESSAGE_CHARS = 500
MAX_OUTPUT_ELEMENTS = 1_000_000


def _read_request(stream):
    size = struct.unpack(">Q", stream.read(8))[0]
    header = json.loads(stream.read(size).decode("utf-8"))
    return header, stream.read()


def _decode(value, arrays):
    """Inputs arrive as a tree of tagged values; each call gets fresh, writable arrays."""
    if "a" in value:
        return arrays[value["a"]].copy()
    if "l" in value:
        return [_decode(item, arrays) for item in value["l"]]
    if "t" in value:
        return tuple(_decode(item, arrays) for item in value["t"])
    return value["v"]


def _exception_record(exc):
    return {"raised": type(exc).__name__[:80], "message": str(exc)[:MAX_MESSAGE_CHARS],
            "not_implemented": isinstance(exc, NotImplementedError)}


class _Reply:
    """Accumulates what each case produced: records in JSON, arrays in an npz."""

    def __init__(self, np):
        self.np = np
        self.arrays = {}
        self.records = {}

    def array(self, value):
        """``value`` as a plain float64 array, or the error that conversion raised."""
        np = self.np
        try:
            array = np.array(value, dtype=np.float64, copy=True, subok=False)
        except Exception as exc:  # mirrors checks._split_parts, which reports these to students
            return {"unconvertible": type(exc).__name__[:80],
                    "message": str(exc)[:MAX_MESSAGE_CHARS]}
        if array.size > MAX_OUTPUT_ELEMENTS:
            return {"too_large": int(array.size)}
        key = f"r{len(self.arrays)}"
        self.arrays[key] = array
        return {"a": key}

    def returned(self, case, result, parts):
        if parts > 1 or isinstance(result, tuple):
            if isinstance(result, (tuple, list)):
                items = list(result)
                record = {"container": "tuple" if isinstance(result, tuple) else "list",
                          "length": len(items)}
                if len(items) == parts:
                    record["items"] = [self.array(item) for item in items]
                self.records[case] = record
                return
        self.records[case] = {"container": None, "items": [self.array(result)]}

    def write(self, fd, extra):
        np = self.np
        buffer = io.BytesIO()
        np.savez(buffer, **self.arrays)
        header = json.dumps({"cases": self.records, **extra}).encode("utf-8")
        payload = struct.pack(">Q", len(header)) + header + buffer.getvalue()
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view):]


def _run_statements(chunks, namespace):
    """Each extracted statement runs on its own, as its cell would; failures are recorded."""
    failures = {}
    for chunk in chunks:
        try:
            code = compile(chunk["source"], f"<celda {chunk['cell']}>", "exec")
            exec(code, namespace)
        except BaseException as exc:  # a broken helper must not stop the others
            for name in chunk["names"]:
                failures[name] = _exception_record(exc)
    return failures


def main():
    spec = json.loads(sys.argv[1])
    devnull = os.open(os.devnull, os.O_RDWR)
    reply_fd = os.dup(1)
    stdin = os.fdopen(os.dup(0), "rb")
    applied = enter(spec)
    header, npz = _read_request(stdin)
    stdin.close()
    # Whatever the student prints or writes to fd 1/2 goes nowhere; only reply_fd carries data.
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = sys.stderr = io.StringIO()

    import numpy as np

    with np.load(io.BytesIO(npz), allow_pickle=False) as loaded:
        arrays = {key: loaded[key] for key in loaded.files}
    cases = [(case["name"], case["inputs"]) for case in header.pop("cases")]
    function, parts = header["function"], header["parts"]
    reply = _Reply(np)

    # Only what the notebook itself binds: no `np` for a notebook that never imports numpy.
    namespace = {"__name__": "cuaderno_del_estudiante", "__builtins__": builtins}
    failures = _run_statements(header.pop("student"), namespace)
    dependencies = header.pop("dependencies")
    if dependencies["names"]:
        # The reference's versions of the graded functions this one calls, each with the
        # reference's own helpers, so a student's broken helper cannot change them.
        reference = {"__name__": "referencia", "__builtins__": builtins}
        exec(compile(dependencies.pop("source"), "<referencia>", "exec"), reference)
        for name in dependencies["names"]:
            namespace[name] = reference[name]
        del reference
    student_fn = namespace.get(function)
    definition_error = failures.get(function)

    for case, inputs in cases:
        if student_fn is None:
            reply.records[case] = definition_error or {"missing": True}
            continue
        kwargs = {name: _decode(value, arrays) for name, value in inputs.items()}
        try:
            with np.errstate(all="ignore"):
                result = student_fn(**kwargs)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt included: report, go on
            reply.records[case] = _exception_record(exc)
            continue
        reply.returned(case, result, parts)
    reply.write(reply_fd, {"function": function, "jail": applied})
    os._exit(0)  # skip interpreter shutdown, where student objects' __del__ could still run


if __name__ == "__main__":
    main()
