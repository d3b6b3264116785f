"""Messages between the grader and a sandboxed job: plain data only, read with strict limits.

Both sides use this module: the grader imports it from the kit, the sandbox from its own
read-only copy. A message is one frame on a stream socket:

    u32 length | u32 header length | JSON header | blob 0 | blob 1 | ...

The header is a JSON object. Inside it, a value is plain JSON (null, bool, int, float, str,
list, object with str keys) or one of three tagged forms:

    {"$a": i}   array i, described in header["$blobs"][i] = {"dtype": "f8"|"b1"|"i8", "shape": [...]}
    {"$b": i}   raw bytes i (a file), described as {"dtype": "bytes", "size": n}
    {"$t": [...]}  a tuple

Nothing is ever unpickled or evaluated: arrays are rebuilt with ``numpy.frombuffer`` from
declared dtypes and shapes, and every size is checked against the reader's ``Limits`` before
any allocation. Whatever a job sends that breaks these rules is a ``WireError``, which the
grader treats as "no answer" (fail closed).
"""

import json
import math
import socket
import struct
import time
from dataclasses import dataclass

# numpy is imported where arrays are read or written, not here: the grader imports this
# module before it starts the sandbox, and numpy's import would delay that start.
_DTYPES = {"f8": "float64", "b1": "bool", "i8": "int64"}
_U32 = struct.Struct(">I")
# Exactly these types, not their subclasses (numpy's float64 is a float): JSON says them as is.
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


class WireError(Exception):
    """A frame that is malformed, too large, too deep or too slow."""


@dataclass(frozen=True)
class Limits:
    """What a reader accepts in one frame."""

    frame_bytes: int = 64 * 2**20
    header_bytes: int = 4 * 2**20
    blobs: int = 4096
    depth: int = 8
    items: int = 100_000  # JSON values and array elements across the header
    dims: int = 4


GRADER_READS = Limits()


# --- encoding ---------------------------------------------------------------------------------


def encode(header: dict) -> bytes:
    """One frame for ``header``, whose values may hold ndarrays, bytes and tuples."""
    import numpy as np

    blobs, meta = [], []
    kinds = {np.dtype(np.float64): "f8", np.dtype(np.bool_): "b1", np.dtype(np.int64): "i8"}

    def plain(value):
        if type(value) in _JSON_SCALARS:  # most values: said as they are, checked first
            return value
        if isinstance(value, np.ndarray):
            kind = kinds.get(value.dtype)
            if kind is None:
                raise TypeError(f"cannot send an array of dtype {value.dtype}")
            blobs.append(np.ascontiguousarray(value).tobytes())
            meta.append({"dtype": kind, "shape": list(value.shape)})
            return {"$a": len(blobs) - 1}
        if isinstance(value, (bytes, bytearray, memoryview)):
            blobs.append(bytes(value))
            meta.append({"dtype": "bytes", "size": len(blobs[-1])})
            return {"$b": len(blobs) - 1}
        if isinstance(value, tuple):
            return {"$t": [plain(item) for item in value]}
        if isinstance(value, list):
            return [plain(item) for item in value]
        if isinstance(value, dict):
            return {str(key): plain(item) for key, item in value.items()}
        if isinstance(value, (np.bool_, np.integer, np.floating)):
            return value.item()
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        raise TypeError(f"cannot send a {type(value).__name__}")

    body = plain(dict(header))
    body["$blobs"] = meta
    text = json.dumps(body, allow_nan=True, separators=(",", ":")).encode("utf-8")
    payload = b"".join([_U32.pack(len(text)), text, *blobs])
    return _U32.pack(len(payload)) + payload


# --- decoding ---------------------------------------------------------------------------------


def decode(payload: bytes, limits: Limits = GRADER_READS) -> dict:
    """The header of one frame's payload (without its length prefix), arrays rebuilt."""
    if len(payload) < 4:
        raise WireError("frame too short")
    size = _U32.unpack_from(payload)[0]
    if size > limits.header_bytes or 4 + size > len(payload):
        raise WireError("header too large or truncated")
    try:
        body = json.loads(payload[4:4 + size].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WireError(f"header is not JSON ({type(exc).__name__})") from None
    if not isinstance(body, dict):
        raise WireError("header is not an object")
    meta = body.pop("$blobs", [])
    if not isinstance(meta, list) or len(meta) > limits.blobs:
        raise WireError("bad blob table")
    blobs, offset, budget = [], 4 + size, [limits.items]
    for entry in meta:
        blob, offset = _blob(entry, payload, offset, limits, budget)
        blobs.append(blob)
    if offset != len(payload):
        raise WireError("trailing bytes after the last blob")
    return _rebuild(body, blobs, limits, 0, budget)


def _blob(entry, payload, offset, limits, budget):
    import numpy as np

    if not isinstance(entry, dict):
        raise WireError("bad blob entry")
    kind = entry.get("dtype")
    if kind == "bytes":
        size = entry.get("size")
        if not _is_count(size):
            raise WireError("bad bytes size")
        end = offset + size
        if end > len(payload):
            raise WireError("truncated bytes")
        return bytes(payload[offset:end]), end
    if kind not in _DTYPES:
        raise WireError("unknown dtype")
    shape = entry.get("shape")
    if (not isinstance(shape, list) or len(shape) > limits.dims
            or not all(_is_count(n) for n in shape)):
        raise WireError("bad shape")
    count = math.prod(shape)  # exact: no int64 product to wrap around
    budget[0] -= count
    if budget[0] < 0:
        raise WireError("too many values")
    dtype = np.dtype(_DTYPES[kind])
    end = offset + count * dtype.itemsize
    if end > len(payload):
        raise WireError("truncated array")
    array = np.frombuffer(payload, dtype=dtype, count=count, offset=offset).reshape(shape)
    return array.copy(), end  # a private, writable array that owns its memory


def _is_count(value):
    return type(value) is int and 0 <= value < 2**31


def _rebuild(value, blobs, limits, depth, budget):
    if depth > limits.depth:
        raise WireError("too deep")
    budget[0] -= 1
    if budget[0] < 0:
        raise WireError("too many values")
    if isinstance(value, list):
        return [_rebuild(item, blobs, limits, depth + 1, budget) for item in value]
    if isinstance(value, dict):
        if len(value) == 1:
            (tag, inner), = value.items()
            if tag in ("$a", "$b"):
                if not _is_count(inner) or inner >= len(blobs):
                    raise WireError("bad blob reference")
                blob = blobs[inner]
                if (tag == "$a") == isinstance(blob, bytes):  # an array, or bytes
                    raise WireError("blob of the wrong kind")
                return blob
            if tag == "$t":
                if not isinstance(inner, list):
                    raise WireError("bad tuple")
                return tuple(_rebuild(item, blobs, limits, depth + 1, budget) for item in inner)
        return {valid_text(key): _rebuild(item, blobs, limits, depth + 1, budget)
                for key, item in value.items()}
    if isinstance(value, str):
        return valid_text(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    raise WireError("unexpected value")


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate as U+FFFD. JSON's \\ud800 escapes and a file name's
    undecodable bytes both make such strings; no UTF-8 file, CSV or terminal can hold one,
    so one in a student's output would make every later write fail."""
    if text.isascii():  # nearly every key and text: no surrogate possible, nothing to copy
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


# --- sockets ----------------------------------------------------------------------------------


def send(sock: socket.socket, header: dict) -> None:
    sock.sendall(encode(header))


def receive(sock: socket.socket, limits: Limits = GRADER_READS, deadline=None) -> dict:
    """The next frame's header. ``deadline`` (time.monotonic()) bounds the whole read."""
    size = _U32.unpack(_read_exactly(sock, 4, deadline))[0]
    if size > limits.frame_bytes:
        raise WireError(f"frame of {size} bytes is over the limit")
    return decode(_read_exactly(sock, size, deadline), limits)


def _read_exactly(sock, size, deadline):
    chunks, missing = [], size
    while missing:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no complete answer in time")
            sock.settimeout(remaining)
        try:
            chunk = sock.recv(min(missing, 1 << 20))
        except socket.timeout:
            raise TimeoutError("no complete answer in time") from None
        if not chunk:
            raise EOFError("the other side closed the connection")
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)
