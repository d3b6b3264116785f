"""What each student wrote, part by part, with what every student received taken out.

A part is one graded function's body, the student's other code (helpers, demos they changed),
one written answer, or one of the challenge's texts. What everybody shares comes from the
build, never from a list: ``shared_material`` reads the notebook students receive when the zip
is built (the plugin stores it in the zip's settings, ``SETTING``): a fingerprint of every
statement of its code cells at any depth, constants masked, and of every run of
``PASSAGE_WORDS`` words of its Markdown. A student's statement with a received fingerprint
(a stub's docstring, its ``raise``, a given helper, the challenge's dictionary of texts) is left
out, and so is every passage of an answer that the notebook already says (a question copied
into its answer).

``keep`` runs at grading time, on the submission's file read as data (never run): it writes
``OUT/similarity/<stem>.json``, so that ``make report`` compares a class without the files.
"""

import ast
import copy
import hashlib
import json
import re
from pathlib import Path

FOLDER = "similarity"
FORMAT = 1
SETTING = "similarity_shared"  # the plugin's setting in otter_config.json

# A passage of this many words that the notebook students receive already holds is theirs to
# quote; shorter runs are the lesson's vocabulary, which independent answers share anyway.
PASSAGE_WORDS = 5
# What a part keeps: a student's whole answer or function is far shorter than this.
MAX_PART_CHARS = 20_000
HELPERS = "helpers"
REMOVED = "[…]"

WORD = re.compile(r"\w+")


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=6).hexdigest()


class _Masked(ast.NodeTransformer):
    """Every constant as one placeholder: a stub's docstring, a seed, a text in quotes."""

    def visit_Constant(self, node):
        return ast.copy_location(ast.Constant(value="C"), node)


def statement_print(node: ast.AST) -> str:
    """A statement's identity among what students received: its tree, constants masked."""
    masked = _Masked().visit(copy.deepcopy(node))
    return _digest(ast.dump(masked, annotate_fields=False, include_attributes=False))


def _statements(tree):
    """Every statement of a tree, at any depth."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.stmt)]


def _parse(source: str):
    from ..policy import cell_python

    try:
        return ast.parse(cell_python(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _words(text: str):
    return [(match.start(), match.end(), match.group(0).casefold())
            for match in WORD.finditer(text)]


def _passage_prints(words):
    return [_digest(" ".join(w for _, _, w in words[i:i + PASSAGE_WORDS]))
            for i in range(len(words) - PASSAGE_WORDS + 1)]


def shared_material(cells) -> dict:
    """``{"statements": [...], "passages": [...]}`` of the notebook students receive, from its
    cells (``{"cell_type", "source"}``): the zip carries it, so a class is compared against its
    own lesson's notebook."""
    statements, passages = set(), set()
    for cell in cells:
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if cell.get("cell_type") == "code":
            tree = _parse(source)
            if tree is not None:
                statements.update(statement_print(node) for node in _statements(tree))
        elif cell.get("cell_type") == "markdown":
            passages.update(_passage_prints(_words(source)))
    return {"statements": sorted(statements), "passages": sorted(passages)}


class Shared:
    """The received material, as sets, from the zip's settings (empty for a zip built before
    the similarity pass: then nothing but docstrings is left out)."""

    def __init__(self, settings=None):
        material = (settings or {}).get(SETTING) or {}
        self.statements = frozenset(material.get("statements", ()))
        self.passages = frozenset(material.get("passages", ()))

    def own_text(self, text: str) -> str:
        """``text`` without the passages the notebook already holds (each becomes «[…]»)."""
        words = _words(text)
        if len(words) < PASSAGE_WORDS or not self.passages:
            return text.strip()
        covered = [False] * len(words)
        for i, digest in enumerate(_passage_prints(words)):
            if digest in self.passages:
                covered[i:i + PASSAGE_WORDS] = [True] * PASSAGE_WORDS
        pieces, position = [], 0
        for (start, end, _), shared in zip(words, covered):
            if shared:
                pieces.append(text[position:start])
                if not pieces or pieces[-1] != REMOVED:
                    pieces.append(REMOVED)
                position = end
        pieces.append(text[position:])
        joined = "".join(pieces)
        return re.sub(r"(\[…\]\s*)+", REMOVED + " ", joined).strip()

    def received(self, node) -> bool:
        return statement_print(node) in self.statements


def _is_docstring(node) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _segment(source, nodes):
    lines = source.splitlines()
    kept = []
    for node in nodes:
        kept.extend(lines[node.lineno - 1:node.end_lineno])
    import textwrap

    return textwrap.dedent("\n".join(kept)).strip()


def code_parts(cells, functions, shared: Shared) -> dict:
    """``{function: body, HELPERS: other code}`` of a notebook's code cells: each graded
    function's last definition without its signature, its docstring and the statements
    students received; the student's other statements, those received left out."""
    parts, helpers = {}, []
    for source in cells:
        tree = _parse(source)
        if tree is None:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in functions:
                body = [n for n in node.body
                        if not _is_docstring(n) and not shared.received(n)]
                parts[node.name] = _segment(source, body)
            elif not shared.received(node) and not _is_docstring(node):
                helpers.append(_segment(source, [node]))
    if helpers:
        parts[HELPERS] = "\n".join(helpers)
    return {name: text[:MAX_PART_CHARS] for name, text in parts.items() if text.strip()}


def text_parts(raw_cells, texts, shared: Shared) -> dict:
    """``{"written:N": answer, "challenge:FIELD": text}``: the notebook's marked answers
    (numbered from 1) and the challenge's texts as the grader parsed them."""
    from notebook_code import answer_regions, answer_text

    parts = {}
    for number, region in enumerate(answer_regions(raw_cells), start=1):
        parts[f"written:{number}"] = shared.own_text(answer_text(region))
    for field, text in (texts or {}).items():
        if isinstance(text, str):
            parts[f"challenge:{field}"] = shared.own_text(text)
    return {name: text[:MAX_PART_CHARS] for name, text in parts.items()
            if WORD.search(text.replace(REMOVED, ""))}


def keep(out, stem, file, path, functions, shared: Shared, texts=None):
    """``OUT/similarity/<stem>.json``: the parts of the submission ``path`` (graded as
    ``file``). A file that cannot be read keeps no parts, and so is compared with nobody."""
    from .. import submission

    parts = {}
    if path is not None:
        try:
            loaded = submission.load(path, None)
            raw = json.loads(loaded.notebook_bytes.decode("utf-8-sig"))
            cells = raw.get("cells") if isinstance(raw, dict) else None
            cells = cells if isinstance(cells, list) else []
            parts = {**code_parts(loaded.cells, functions, shared),
                     **text_parts(cells, texts, shared)}
        except (submission.Rejected, UnicodeDecodeError, ValueError, RecursionError):
            parts = {}
    folder = Path(out) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    data = {"format": FORMAT, "file": file, "stem": stem, "parts": parts}
    (folder / f"{stem}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1),
                                         "utf-8", errors="replace")


def load_all(out) -> list:
    """Every kept submission, ``[{"file", "stem", "parts"}]``, in file-name order of stems."""
    folder = Path(out) / FOLDER
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("parts"), dict):
            found.append(data)
    return found
