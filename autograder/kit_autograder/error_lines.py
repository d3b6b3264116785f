"""How the kit's commands tell a person what to fix: one ``error:`` line per problem, naming the
file, what is wrong and what to do, as ruff and cargo do. The traceback is for whoever debugs
the kit, and only under ``VERBOSE=1`` (``make assign VERBOSE=1``; ``KIT_TRACEBACK=1``, its
older name, works too).

``make assign`` and ``make grade`` print their errors here; docs/lesson-authors.md and
docs/instructors.md list every line, and tests/test_error_lines.py holds each to its words.
"""

import os
import sys
import traceback
from pathlib import Path

EXIT_STATUS = 2  # what the commands return for a mistake a person can fix
VERBOSE_NAMES = ("VERBOSE", "KIT_TRACEBACK")


def verbose() -> bool:
    """True when the person asked for tracebacks (``VERBOSE=1``): any value but empty or 0."""
    return any(os.environ.get(name, "") not in ("", "0") for name in VERBOSE_NAMES)


def report(exc, lines=None, stream=None) -> int:
    """Print ``exc`` (an exception, or None when nothing was raised) as ``error:`` lines
    (``lines``, else one per line of its message), after its traceback under VERBOSE=1;
    returns the commands' exit status for it."""
    stream = stream or sys.stderr
    if verbose() and exc is not None:
        traceback.print_exception(exc, file=stream)
    said = lines if lines is not None else str(exc).splitlines() or [type(exc).__name__]
    for line in said:
        print(f"error: {line}", file=stream)
    return EXIT_STATUS


def frame_in(exc: BaseException, folders, root: Path):
    """``path:line`` (``path`` relative to ``root``) of the deepest place in ``folders`` where
    ``exc`` was raised or its syntax broke, or None when it did not come from there: an error
    of a person's own code is shown where they can fix it."""
    folders = [Path(folder).resolve() for folder in folders]

    def inside(filename):
        try:
            path = Path(filename).resolve()
        except (OSError, ValueError):
            return None
        return path if any(path.is_relative_to(folder) for folder in folders) else None

    if isinstance(exc, SyntaxError) and exc.filename and inside(exc.filename):
        return f"{shown(inside(exc.filename), root)}:{exc.lineno}"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = inside(frame.filename)
        if path is not None:
            return f"{shown(path, root)}:{frame.lineno}"
    return None


def shown(path, root: Path) -> str:
    """``path`` as a person at ``root`` (the course checkout) types it."""
    path, root = Path(path), Path(root)
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
