"""Variables that data questions are graded on, exported by the kernel as plain JSON.

A question such as ``student_extension`` is graded on a notebook variable (``resultado``).
Its tests run outside the kernel (data_child.py), so a last cell, appended before Otter's
own, writes those variables as JSON to a file the grader reads back. Only data crosses: a
value JSON cannot hold (a function, an open file) arrives as None, and the file is read as
untrusted input.
"""

import json
import os

import nbformat

MAX_EXPORT_BYTES = 2 * 2**20

EXPORT_CELL = '''\
def _kit_export(names, path):
    import json

    def plain(value, depth=0):
        if depth > 20:
            return None
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if hasattr(value, "tolist") and hasattr(value, "dtype"):  # numpy arrays and scalars
            return plain(value.tolist(), depth + 1)
        if isinstance(value, (list, tuple, set, frozenset)):
            items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
            return [plain(item, depth + 1) for item in items]
        if isinstance(value, dict):
            return {str(key): plain(item, depth + 1) for key, item in value.items()}
        return None

    namespace = globals()
    data = {name: plain(namespace[name]) for name in names if name in namespace}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False)

try:
    _kit_export(__NAMES__, __PATH__)
finally:
    del _kit_export
'''


def export_cell(names, path) -> nbformat.NotebookNode:
    """The cell that writes ``names`` to ``path``."""
    source = EXPORT_CELL.replace("__NAMES__", repr(list(names)))
    source = source.replace("__PATH__", repr(str(path)))
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["kit-verify-export"]
    return cell


def read_export(path):
    """The exported variables, or None when the file is missing, too large or not a JSON object."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        raw = f.read(MAX_EXPORT_BYTES + 1)
    if len(raw) > MAX_EXPORT_BYTES:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None
