"""Each submission's written answers, read from the notebook's JSON, never by running it.

Otter writes the built student notebook's manual questions as Markdown between two HTML
comments: the cell that opens with ``<!-- BEGIN QUESTION -->`` holds the question (and is not
editable), the cells after it, up to the cell holding ``<!-- END QUESTION -->``, are the
student's answer (the first one tagged ``otter_answer_cell``, holding the prompt's
placeholder). Students may add cells there, Markdown or code; all of it is the answer. The
questions carry no name in the built notebook, so the n-th marked question is the rubric's
n-th written question, and a notebook with another number of them has none that can be told
apart.

Saved at grading time as ``OUT/written/<stem>.json``, so that the review page needs only OUT
and the rubric.
"""

import json
import re
from pathlib import Path

from .. import submission as submission_module

BEGIN = "<!-- BEGIN QUESTION -->"
END = "<!-- END QUESTION -->"
# The prompt the master gives every answer cell (its «BEGIN PROMPT» block); a test checks the
# built notebook still carries exactly this.
PLACEHOLDER = "_Escribe aquí tu respuesta._"
MAX_ANSWER_CHARS = 20_000
FOLDER = "written"
FORMAT = 1

ANSWERED, EMPTY, MISSING = "answered", "empty", "missing"


def _source(cell):
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _fenced(text, language=""):
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _cell_text(cell):
    source = _source(cell)
    kind = cell.get("cell_type")
    if kind == "markdown":
        return "\n".join(line for line in source.splitlines() if line.strip() != PLACEHOLDER)
    if not source.strip():
        return ""
    return _fenced(source, "python" if kind == "code" else "")


def regions(cells):
    """The cells of each marked question's answer, in the notebook's order."""
    found, current = [], None
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = _source(cell)
        if current is not None and END in source:
            found.append(current)
            current = None
        if BEGIN in source:
            current = []
            if source.rfind(END) > source.rfind(BEGIN):  # a question with no answer cell
                found.append(current)
                current = None
            continue
        if current is not None:
            current.append(cell)
    if current is not None:  # a notebook that ends inside its last question
        found.append(current)
    return found


def extract(raw, names):
    """``({question: {"text", "state", "truncated"}}, problem)`` for a notebook's JSON."""
    cells = raw.get("cells") if isinstance(raw, dict) else None
    marked = regions(cells if isinstance(cells, list) else [])
    if len(marked) != len(names):
        problem = (f"el cuaderno no tiene las {len(names)} preguntas escritas marcadas como en "
                   f"el cuaderno que se entregó (tiene {len(marked)})")
        return {name: _answer("", MISSING) for name in names}, problem
    answers = {}
    for name, answer_cells in zip(names, marked):
        text = "\n\n".join(t for t in (_cell_text(c) for c in answer_cells) if t.strip())
        answers[name] = _answer(text, ANSWERED if text.strip() else EMPTY)
    return answers, None


def _answer(text, state):
    truncated = len(text) > MAX_ANSWER_CHARS
    return {"text": text[:MAX_ANSWER_CHARS], "state": state, "truncated": truncated}


def of_file(path, names):
    """A submission file's answers: the notebook, or the one notebook of an export zip, read
    with the same bounds as grading (submission.load). Unreadable: every answer missing."""
    try:
        loaded = submission_module.load(path, None)
        raw = json.loads(loaded.notebook_bytes.decode("utf-8-sig"))
    except submission_module.Rejected as rejected:
        return {name: _answer("", MISSING) for name in names}, rejected.reason
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {name: _answer("", MISSING) for name in names}, "el cuaderno no es JSON válido"
    return extract(raw, names)


def save(out, stem, file, path, lesson, questions, refusal=None, texts=None):
    """``OUT/written/<stem>.json`` for the submission ``file`` (graded from ``path``): the
    notebook's marked answers, and the questions that read the challenge's texts from
    ``texts`` (the record's, as the grader parsed them from the sandbox's data)."""
    names = [q.name for q in questions if q.text_field is None]
    if path is None:
        answers, problem = {name: _answer("", MISSING) for name in names}, refusal
    else:
        answers, problem = of_file(path, names)
    for question in questions:
        if question.text_field is not None:
            text = (texts or {}).get(question.text_field)
            answers[question.name] = (_answer("", MISSING) if text is None else
                                      _answer(text, ANSWERED if text.strip() else EMPTY))
    folder = Path(out) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    data = {"format": FORMAT, "lesson": lesson, "file": file, "stem": stem,
            "answers": answers, "problem": problem}
    (folder / f"{stem}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1),
                                         "utf-8", errors="replace")


def load_all(out):
    """Every saved submission's answers, ``{file: data}``, in file-name order of their stems."""
    folder = Path(out) / FOLDER
    found = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        data = json.loads(path.read_text("utf-8"))
        if isinstance(data, dict) and "answers" in data:
            found[data["file"]] = data
    return found
