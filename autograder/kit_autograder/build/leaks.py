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


def check_student_folder(folder: Path, lesson, salt: str):
    """Raise ``LessonError`` naming every student file that carries the hidden reference."""
    folder = Path(folder)
    copies = {path.read_bytes(): path for path in reference_files(lesson)}
    lines = distinctive_lines(lesson)
    markers = [*MARKERS, salt] if salt else list(MARKERS)
    problems = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        shown = path.relative_to(folder.parent)
        data = path.read_bytes()
        if data in copies:
            problems.append(f"{shown} is a copy of the hidden reference "
                            f"{copies[data].name}: take it out of STUDENT_FILES")
            continue
        text = data.decode("utf-8", "replace")
        line = next(((line, name) for line, name in lines if line in text), None)
        if line is not None:
            problems.append(f"{shown} holds a line of the reference's {line[1]} "
                            f"(«{line[0][:60]}»): a student file must not carry the answers")
            continue
        marker = next((m for m in markers if m in text), None)
        if marker is not None:
            shown_marker = "the grading salt" if marker == salt else f"«{marker}»"
            problems.append(f"{shown} contains {shown_marker}, which only the autograder may hold")
    if problems:
        raise LessonError("the student folder would ship what is hidden, so nothing was built "
                          "for students:\n" + "\n".join(problems))
