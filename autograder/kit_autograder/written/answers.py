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
from pathlib import Path

from .. import submission as submission_module

MAX_ANSWER_CHARS = 20_000
FOLDER = "written"
FORMAT = 1

ANSWERED, EMPTY, MISSING = "answered", "empty", "missing"


def extract(raw, names):
    """``({question: {"text", "state", "truncated"}}, problem)`` for a notebook's JSON."""
    # Shared with the student's notebook, whose «Entrega» warns about an empty answer; it sits
    # in the student folder and beside the engine, not inside it.
    from notebook_code import answer_regions, answer_text

    cells = raw.get("cells") if isinstance(raw, dict) else None
    marked = answer_regions(cells if isinstance(cells, list) else [])
    if len(marked) != len(names):
        problem = (f"el cuaderno no tiene las {len(names)} preguntas escritas marcadas como en "
                   f"el cuaderno que se entregó (tiene {len(marked)})")
        return {name: _answer("", MISSING) for name in names}, problem
    answers = {}
    for name, answer_cells in zip(names, marked):
        text = answer_text(answer_cells)
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
