"""What a built student folder must not hold, checked by content at every ``make assign``.

A lesson author decides what ships beside the notebook (``STUDENT_FILES``, the files
``write_student_files`` makes); any of them can carry the hidden reference by mistake, as a
copy of its file or as its code pasted into a helper. The build fails, naming the file, rather
than shipping the answers: students get the folder the moment it is built.

Looked for in every file of the folder, by its bytes and its text:

* a copy of any file of the lesson's reference (``lesson.REFERENCE`` and its package);
* a distinctive line of a graded function's reference (longer than ``MIN_LINE_CHARS``, not a
  comment): the given helpers (``softmax`` and the like) are meant to ship, so only graded
  functions count;
* the build's own markers: Otter's solution and hidden-test markers, the grading salt, an
  import of the reference.
"""

import inspect
from pathlib import Path

from ..error_lines import shown
from ..lesson import LessonError

MIN_LINE_CHARS = 25
MARKERS = ("BEGIN SOLUTION", "hidden: true", "hidden=True", "from reference",
           "import reference", "kit_autograder.otter_plugin")


def reference_files(lesson) -> list:
    """The reference's source files: its module, and every module of its package."""
    path = Path(inspect.getfile(lesson.REFERENCE))
    files = {path}
    if path.name == "__init__.py":
        files |= set(path.parent.rglob("*.py"))
    return sorted(f for f in files if f.is_file() and f.stat().st_size)


def distinctive_lines(lesson) -> list:
    """``[(line, function)]``: the reference's own lines of each graded function."""
    found = []
    for name in lesson.FUNCTIONS:
        function = getattr(lesson.REFERENCE, name, None)
        if function is None:
            continue
        try:
            source = inspect.getsource(function)
        except (OSError, TypeError):
            continue
        docstring = inspect.getdoc(function) or ""
        for line in source.splitlines()[1:]:
            line = line.strip()
            if len(line) > MIN_LINE_CHARS and not line.startswith("#") and line not in docstring:
                found.append((line, name))
    return found


class Hidden:
    """What of ``lesson`` must never reach a student, looked for in a file's bytes."""

    def __init__(self, lesson, salt: str, root: Path):
        self.copies = {path.read_bytes(): path for path in reference_files(lesson)}
        self.lines = distinctive_lines(lesson)
        self.markers = [*MARKERS, salt] if salt else list(MARKERS)
        self.salt, self.root = salt, root

    def found_in(self, data: bytes):
        """What of it ``data`` carries, said of the file («is a copy of …»), or None."""
        if data in self.copies:
            return f"is a copy of the hidden reference {shown(self.copies[data], self.root)}"
        text = data.decode("utf-8", "replace")
        line = next(((line, name) for line, name in self.lines if line in text), None)
        if line is not None:
            return f"holds a line of the reference's {line[1]} («{line[0][:60]}»)"
        marker = next((m for m in self.markers if m in text), None)
        if marker is not None:
            said = "the grading salt" if marker == self.salt else f"«{marker}»"
            return f"contains {said}, which only the autograder may hold"
        return None


def check_student_folder(folder: Path, lesson, salt: str, root: Path):
    """Raise ``LessonError`` naming every file of a built student ``folder`` that carries the
    hidden reference, one line each (the build then removes what it built for students)."""
    hidden = Hidden(lesson, salt, root)
    problems = []
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        what = hidden.found_in(path.read_bytes())
        if what:
            problems.append(f"{shown(path, root)}: {what}, so nothing was left for students; "
                            "take it out of what the lesson ships (STUDENT_FILES, "
                            "write_student_files, a demo's output)")
    if problems:
        raise LessonError("\n".join(problems))
