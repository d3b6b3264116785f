"""What the verification child receives: source text, never objects.

* ``student_chunks``: a graded function's definition and everything it needs from the
  submission (helpers, imports, literal constants), one chunk per statement, each tagged with
  its cell, as ``notebook_code.extract_definitions`` selects them.
* ``reference_dependencies``: for a function graded in isolation, the reference's versions of
  the graded functions it calls, with only the reference helpers those need. Never the tests,
  never another reference function.
"""

import ast
import re
from pathlib import Path
from typing import Optional

import nbformat

import reference

from ..checks import GRADED_DEPENDENCIES
from ..notebook_code import NotebookCodeError, bound_names, extract_definitions

_CELL_MARKER = re.compile(r"^# celda (\d+)$")

# Read at import, before any submission runs: a kernel of the grader's own user could rewrite
# the file on disk later, but not this string.
REFERENCE_SOURCE = Path(reference.transformer.__file__).read_text("utf-8")


def chunks_of(extracted: str) -> list:
    """Split ``extract_definitions``' text into statements: {cell, source, names}.

    A statement's cell is the nearest ``# celda N`` marker above it that lies outside every
    statement, so a marker-like line inside a student's string cannot mislabel anything.
    """
    tree = ast.parse(extracted)
    lines = extracted.splitlines()
    inside = set()
    spans = []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        spans.append((first, node.end_lineno, node))
        inside.update(range(first, node.end_lineno + 1))
    chunks = []
    for first, last, node in spans:
        cell = 0
        for number in range(first - 1, 0, -1):
            match = _CELL_MARKER.match(lines[number - 1])
            if match and number not in inside:
                cell = int(match.group(1))
                break
        chunks.append({"cell": cell, "source": "\n".join(lines[first - 1:last]),
                       "names": list(bound_names(node))})
    return chunks


def student_chunks(notebook, function) -> Optional[list]:
    """The statements ``function`` needs from the submission, or None if it is not defined."""
    try:
        return chunks_of(extract_definitions(notebook, [function]))
    except NotebookCodeError:
        return None


def _reference_notebook():
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(REFERENCE_SOURCE)])


def reference_dependencies(function) -> dict:
    """{"names": the graded functions replaced by the reference's, "source": their code}."""
    names = list(GRADED_DEPENDENCIES[function])
    if not names:
        return {"names": [], "source": ""}
    return {"names": names, "source": extract_definitions(_reference_notebook(), names)}
