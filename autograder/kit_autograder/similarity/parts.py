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

A graded function's body loses only what the notebook's functions hold (a stub's docstring
and ``raise``, a given helper's lines): a line of a demo cell that a student also writes in
their function is theirs there. Beside the parts, ``keep`` records the names the student's other
code binds (a helper, a constant, a class) that each function uses, for ``compare`` to read as
the student's own, as a copier renames them with the rest; the notebook's own names (the
material's ``names``) and the function's parameters stay names.

``keep`` runs at grading time, on the submission's file read as data (never run): it writes
``OUT/similarity/<stem>.json``, so that ``make report`` compares a class without the files.
Most cells of a class's notebooks are the ones everybody received: each cell is read once per
batch, by its text (``Shared.own_code``).
"""

import ast
import hashlib
import json
import re
from pathlib import Path
from ..parsing import parse

FOLDER = "similarity"
FORMAT = 2
SETTING = "similarity_shared"  # the plugin's setting in otter_config.json

# A passage of this many words that the notebook students receive already holds is theirs to
# quote; shorter runs are the lesson's vocabulary, which independent answers share anyway.
PASSAGE_WORDS = 5
# What a part keeps: a student's whole answer or function is far shorter than this.
MAX_PART_CHARS = 20_000
HELPERS = "helpers"
CACHED_CELLS = 20_000
REMOVED = "[…]"

WORD = re.compile(r"\w+")


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=6).hexdigest()


def statement_prints(tree) -> dict:
    """``{statement: print}`` for every statement of ``tree`` at any depth: its identity among
    what students received, its syntax with every constant masked (a stub's docstring, a seed,
    a text in quotes). Each node is written once, its statements' texts built from their
    children's, so a cell costs its size, not its size times its depth."""
    prints = {}

    def text(node):
        if isinstance(node, ast.Constant):
            return "C"
        if isinstance(node, ast.AST):
            written = f"{type(node).__name__}({','.join(text(v) for _, v in ast.iter_fields(node))})"
            if isinstance(node, ast.stmt):
                prints[node] = _digest(written)
            return written
        if isinstance(node, list):
            return f"[{','.join(text(item) for item in node)}]"
        return repr(node)

    text(tree)
    return prints


def _parse(source: str):
    """A cell's tree; IPython's reading (magics, ``!`` lines) only for a cell Python cannot
    read as it is, as most cells can: IPython's costs ten times the parse."""
    from ..policy import cell_python

    for text in (source, None):
        try:
            return parse(cell_python(source) if text is None else text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None


def _words(text: str):
    return [(match.start(), match.end(), match.group(0).casefold())
            for match in WORD.finditer(text)]


def _passage_prints(words):
    return [_digest(" ".join(w for _, _, w in words[i:i + PASSAGE_WORDS]))
            for i in range(len(words) - PASSAGE_WORDS + 1)]


def shared_material(cells) -> dict:
    """``{"statements", "in_functions", "names", "passages"}`` of the notebook students receive,
    from its
    cells (``{"cell_type", "source"}``): the zip carries it, so a class is compared against its
    own lesson's notebook. ``in_functions``: the statements inside its functions (a stub's
    docstring and ``raise``, a given helper's body), the only ones taken out of a graded
    function's body: a demo cell's ``weights = softmax(scores)`` is the notebook's, and the
    same line in a student's ``attention`` is theirs."""
    statements, in_functions, passages, names = set(), set(), set(), set()
    for cell in cells:
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if cell.get("cell_type") == "code":
            tree = _parse(source)
            if tree is not None:
                prints = statement_prints(tree)
                statements.update(prints.values())
                in_functions.update(prints[node] for function in ast.walk(tree)
                                    if isinstance(function, ast.FunctionDef)
                                    for node in ast.walk(function)
                                    if node is not function and node in prints)
                names.update(_identifiers(tree))
        elif cell.get("cell_type") == "markdown":
            passages.update(_passage_prints(_words(source)))
    return {"statements": sorted(statements), "in_functions": sorted(in_functions),
            "names": sorted(names), "passages": sorted(passages)}


def _identifiers(tree) -> set:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).split(".")[0])
    return found


class Shared:
    """The received material, as sets, from the zip's settings (empty for a zip built before
    the similarity pass: then nothing but docstrings is left out)."""

    def __init__(self, settings=None):
        material = (settings or {}).get(SETTING) or {}
        self.statements = frozenset(material.get("statements", ()))
        self.in_functions = frozenset(material.get("in_functions", self.statements))
        self.names = frozenset(material.get("names", ()))
        self.passages = frozenset(material.get("passages", ()))
        # A cell's own code, by its text: most cells of a class are the ones everybody
        # received, each read once per batch rather than once per student.
        self.cells = {}

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

    def own_code(self, source, functions) -> tuple:
        """``((function or HELPERS, text), ...)``: a cell's own code, what students received
        left out (cached by the cell's text)."""
        found = self.cells.get(source)
        if found is None:
            found = _own_code(source, functions, self.statements, self.in_functions)
            if len(self.cells) > CACHED_CELLS:  # a class of own cells: keep memory flat
                self.cells.clear()
            self.cells[source] = found
        return found


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


def _module_names(node) -> frozenset:
    """The names a top-level statement binds in the notebook's namespace (an import's are a
    library's, which a copier keeps)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return frozenset({node.name})
    targets = {ast.Assign: lambda n: n.targets, ast.AnnAssign: lambda n: [n.target],
               ast.AugAssign: lambda n: [n.target], ast.For: lambda n: [n.target]}
    found = set()
    for target in targets.get(type(node), lambda n: [])(node):
        found.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return frozenset(found)


def _own_code(source, functions, received, in_functions) -> tuple:
    """``((part, text, names), ...)``: for a graded function its body and parameters, for any
    other statement of the student's its text and the names it binds."""
    tree = _parse(source)
    if tree is None:
        return ()
    prints = statement_prints(tree)
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in functions:
            body = [n for n in node.body
                    if not _is_docstring(n) and prints[n] not in in_functions]
            arguments = node.args
            parameters = frozenset(a.arg for a in arguments.posonlyargs + arguments.args
                                   + arguments.kwonlyargs + [arguments.vararg, arguments.kwarg]
                                   if a is not None)
            found.append((node.name, _segment(source, body), parameters))
        elif prints[node] not in received and not _is_docstring(node):
            found.append((HELPERS, _segment(source, [node]), _module_names(node)))
    return tuple(found)


def code_parts(cells, functions, shared: Shared, names=None) -> dict:
    """``{function: body, HELPERS: other code}`` of a notebook's code cells: each graded
    function's last definition without its signature, its docstring and the statements
    students received; the student's other statements, those received left out.

    ``names``, if given, receives ``{function: [names]}``: the names the student's other code
    binds (a helper, a constant, a class) and each function uses as its own, which a copier
    renames with the rest; the notebook's names and the function's parameters stay names."""
    parts, helpers, bound, parameters = {}, [], set(), {}
    functions = tuple(functions)
    for source in cells:
        for name, text, found in shared.own_code(source, functions):
            if name == HELPERS:
                helpers.append(text)
                bound |= found
            else:
                parts[name], parameters[name] = text, found
    if helpers:
        parts[HELPERS] = "\n".join(helpers)
    if names is not None:
        own = bound - shared.names
        for function, found in parameters.items():
            if own - found:
                names[function] = sorted(own - found)
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

    parts, names = {}, {}
    if path is not None:
        try:
            loaded = submission.load(path, None)
            raw = json.loads(loaded.notebook_bytes.decode("utf-8-sig"))
            cells = raw.get("cells") if isinstance(raw, dict) else None
            cells = cells if isinstance(cells, list) else []
            parts = {**code_parts(loaded.cells, functions, shared, names),
                     **text_parts(cells, texts, shared)}
        except (submission.Rejected, UnicodeDecodeError, ValueError, RecursionError):
            parts, names = {}, {}
    folder = Path(out) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    data = {"format": FORMAT, "file": file, "stem": stem, "parts": parts,
            "names": {part: found for part, found in names.items() if part in parts}}
    (folder / f"{stem}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1),
                                         "utf-8", errors="replace")


def load_all(out) -> list:
    """Every kept submission, ``[{"file", "stem", "parts", "names"}]``, in file-name order of
    stems."""
    folder = Path(out) / FOLDER
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("parts"), dict):
            names = data.get("names")
            data["names"] = ({part: [str(n) for n in found] for part, found in names.items()
                              if isinstance(found, list)} if isinstance(names, dict) else {})
            found.append(data)
    return found
