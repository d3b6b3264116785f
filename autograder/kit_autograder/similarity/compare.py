"""Every pair's similarity, part by part, through an index of features weighted by the class.

What two submissions share counts by how rare it is in this class. A part is read as features:

* code: first as Python writes it back, with one rewrite students use as a disguise undone, a
  loop that appends to a list read as the list comprehension it is (``canonical``); then as
  tokens, comments and layout dropped, every string as «S» and every name the student chose
  numbered by where it first appears in its statement (``V0``, ``V1``…: renaming changes
  nothing, while which variable goes where still counts; numpy's, the lesson's and the
  parameters' names stay as they are); then every run of ``CODE_K`` tokens, every statement,
  and every two consecutive statements (order and combination, which two independent students
  rarely share even when each line is common);
* written text: every run of ``TEXT_K`` words, case and accents dropped.

Each feature weighs ``log10(N / holders)`` among the N submissions that have the part (the
inverse document frequency): a line half the class writes weighs little, one only two students
wrote weighs the most. A pair's score is the weight it shares, times the share of the smaller
side's own weight that this is: long unusual passages shared whole score high, a common
function shared whole or a few common lines score low.

Pairs grow as n²: the pass counts them through an inverted index, feature -> holders (see
``score_part``), in numpy, one part at a time.

Hashes are the same in every process (Python's own ``hash()`` of a text is seeded per process,
so a token is hashed once with blake2b, and runs of tokens as tuples of those integers):
``make report`` finds the very pairs ``make grade`` found.

copydetect, Dolos and compare50 were measured on the planted classes of
``tests/similarity_class.py`` as the part's score under the same flags (docs/instructors.md):
their similarities left more of the disguised copies among independent pairs, so the pass
needs numpy alone.
"""

import ast
import hashlib
import re
import unicodedata
from dataclasses import dataclass

import numpy as np
from ..parsing import parse

CODE_K = 5  # tokens in a run of code
TEXT_K = 3  # words in a run of written text
MIN_STATEMENT = 3  # a statement shorter than this (``return V``) is no evidence
# A feature held by at most this many submissions is counted pair by pair; one held by more,
# with the others like it, as one product of matrices.
FEW = 32

_MASK = (1 << 60) - 1
_TOKEN_IDS = {}
_KIND = {"run": 1, "statement": 2, "pair": 3}


def is_code(part: str) -> bool:
    return not part.startswith(("written:", "challenge:"))


def _token_id(token: str) -> int:
    found = _TOKEN_IDS.get(token)
    if found is None:
        if len(_TOKEN_IDS) > 200_000:  # a class of odd tokens: keep memory flat
            _TOKEN_IDS.clear()
        found = int.from_bytes(hashlib.blake2b(token.encode("utf-8", "replace"),
                                               digest_size=7).digest(), "little")
        _TOKEN_IDS[token] = found
    return found


def _stable(kind: str, ids) -> int:
    """A tuple of integers hashes the same in every process."""
    return (hash(tuple(ids)) & _MASK) * 4 + _KIND[kind]


# --- code ------------------------------------------------------------------------------------


def bound_names(code) -> set:
    """The names a piece of code (its text or its tree) binds itself: assigned, loop and
    comprehension targets, functions, classes and their parameters (not imports: a
    library's names stay)."""
    try:
        tree = parse(code) if isinstance(code, str) else code
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


class _Inline(ast.NodeTransformer):
    def __init__(self, values):
        self.values = values

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return self.values[node.id]
        return node


def _appended(loop, name):
    """The element a ``for`` loop appends to ``name``, its simple assignments written inline,
    or None when the loop does anything else."""
    *steps, last = loop.body
    call = getattr(last, "value", None)
    if not (isinstance(last, ast.Expr) and isinstance(call, ast.Call) and len(call.args) == 1
            and not call.keywords and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append" and isinstance(call.func.value, ast.Name)
            and call.func.value.id == name):
        return None
    values = {}
    for step in steps:
        if not (isinstance(step, ast.Assign) and len(step.targets) == 1):
            return None
        target, value = step.targets[0], step.value
        if isinstance(target, ast.Name):
            values[target.id] = _Inline(values).visit(value)
        elif (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
              and len(target.elts) == len(value.elts)
              and all(isinstance(t, ast.Name) for t in target.elts)):
            for t, v in zip(target.elts, value.elts):
                values[t.id] = _Inline(values).visit(v)
        else:
            return None
    return _Inline(values).visit(call.args[0])


def _comprehensions(body):
    """``out = []`` followed by a loop that only appends to ``out``, as ``out = [... for ...]``."""
    out, i = [], 0
    while i < len(body):
        first, loop = body[i], body[i + 1] if i + 1 < len(body) else None
        if (isinstance(first, ast.Assign) and len(first.targets) == 1
                and isinstance(first.targets[0], ast.Name)
                and isinstance(first.value, ast.List) and not first.value.elts
                and isinstance(loop, ast.For) and not loop.orelse and loop.body):
            element = _appended(loop, first.targets[0].id)
            if element is not None:
                comprehension = ast.ListComp(element, [ast.comprehension(
                    loop.target, loop.iter, [], 0)])
                out.append(ast.Assign([first.targets[0]], comprehension, lineno=first.lineno))
                i += 2
                continue
        out.append(first)
        i += 1
    return out


def canonical(text: str) -> tuple:
    """``(code, names it binds)``: the code as Python writes it back (parentheses, quotes and
    layout its own, one statement a line), with loops that build a list as comprehensions;
    the text itself when it does not parse."""
    try:
        tree = parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text, set()
    names = bound_names(tree)
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                setattr(node, field, _comprehensions(body))
    try:
        return ast.unparse(tree), names
    except (ValueError, RecursionError):
        return text, names


# Tokens of Python code, with where each starts and ends: strings, names, line ends,
# comments (dropped) and the rest. On the canonical text, a line is a statement.
_TOKEN = re.compile(r"""(?P<string>(?:[rRbBuUfF]{1,2})?(?:\'\'\'.*?\'\'\'|\"\"\".*?\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"))"""
                    r"|(?P<comment>#[^\n]*)|(?P<name>[^\W\d]\w*)|(?P<end>\n)"
                    r"|(?P<other>\d(?:[\w.]|(?<=[eE])[-+])*|\*\*|//|->|[-+*/%&|^@<>=!:]=|\S)",
                    re.S)


def code_tokens(text: str, own) -> list:
    """``[(token, start, end)]``: the code's tokens and their places in ``text``, ``;`` at
    each line's end, every string as «S», each name of ``own`` numbered by where it first
    appears in its line."""
    found, previous, numbered = [], None, {}
    for match in _TOKEN.finditer(text):
        kind, token = match.lastgroup, match.group(0)
        if kind == "comment":
            continue
        if kind == "end":
            if found and found[-1][0] != ";":
                found.append((";", match.start(), match.start()))
            numbered = {}
            continue
        shown = token
        if kind == "string":
            shown = "S"
        elif kind == "name" and token in own and previous != ".":
            shown = numbered.setdefault(token, f"V{len(numbered)}")
        found.append((shown, match.start(), match.end()))
        previous = token
    if found and found[-1][0] != ";":
        found.append((";", len(text), len(text)))
    return found


def _statements(tokens):
    statement, found = [], []
    for token in tokens:
        if token == ";":
            if statement:
                found.append(tuple(statement))
            statement = []
        else:
            statement.append(token)
    if statement:
        found.append(tuple(statement))
    return found


# --- written text ----------------------------------------------------------------------------

WORD = re.compile(r"\w+")


def _plain(word: str) -> str:
    """A word casefolded and without accents: «atención» and «atencion» are one word (a student
    who types without tildes writes every answer so, and a copier may drop them)."""
    return "".join(c for c in unicodedata.normalize("NFKD", word.casefold())
                   if not unicodedata.combining(c))


def text_tokens(text: str) -> list:
    return [(_plain(m.group(0)), m.start(), m.end()) for m in WORD.finditer(text)]


# --- features --------------------------------------------------------------------------------


def _runs(ids, k):
    """A stable hash of every run of ``k`` token ids (a rolling product, mod a prime)."""
    if len(ids) < k:
        return np.zeros(0, dtype=np.int64)
    values = np.array(ids, dtype=np.uint64) % np.uint64(_PRIME)
    hashes = np.zeros(len(ids) - k + 1, dtype=np.uint64)
    for offset in range(k):
        hashes = (hashes * np.uint64(_BASE) + values[offset:offset + len(hashes)]) \
            % np.uint64(_PRIME)
    return hashes.astype(np.int64) * 4 + _KIND["run"]


_PRIME = (1 << 31) - 1  # products stay below 2**64
_BASE = 1_000_003


def features(part: str, text: str, own=frozenset()) -> np.ndarray:
    """The part's features, unique, as stable 64-bit integers; ``own``: names the student
    bound outside this part (their helpers), read as theirs too. Cached by text: many
    students hand in the very same part."""
    key = (part if is_code(part) else "", text, own)
    found = _FEATURES.get(key)
    if found is None:
        found = _features(part, text, own)
        if len(_FEATURES) > CACHED:
            _FEATURES.clear()
        _FEATURES[key] = found
    return found


def _features(part, text, own):
    if is_code(part):
        written, names = canonical(text)
        tokens = [token for token, _, _ in code_tokens(written, own | names)]
        ids = [_token_id(t) for t in tokens]
        statements = [tuple(_token_id(t) for t in s) for s in _statements(tokens)]
        extra = [_stable("statement", s) for s in statements if len(s) >= MIN_STATEMENT]
        extra += [_stable("pair", a + (0,) + b) for a, b in zip(statements, statements[1:])]
        return np.unique(np.concatenate([_runs(ids, CODE_K), np.array(extra, dtype=np.int64)]))
    ids = [_token_id(t) for t, _, _ in text_tokens(text)]
    return np.unique(_runs(ids, TEXT_K))


_FEATURES = {}
CACHED = 50_000


@dataclass
class PartScores:
    """One part across the class: the score of every pair that shares a feature."""

    part: str
    members: list  # indexes of the submissions that have this part
    keys: np.ndarray  # i * 2**32 + j, i < j, for each pair that shares a feature
    scores: np.ndarray  # its score, > 0

    @property
    def compared(self):
        """How many pairs of the class have this part on both sides."""
        return len(self.members) * (len(self.members) - 1) // 2

    @property
    def pairs(self) -> dict:
        """``{(i, j): score}``."""
        return {(int(k >> 32), int(k & 0xFFFFFFFF)): float(v)
                for k, v in zip(self.keys.tolist(), self.scores.tolist())}


def score_part(part: str, printed: dict) -> PartScores:
    """``printed``: {submission index: features}. Through an inverted index, feature ->
    holders: a feature few students hold adds its weight to each pair of them (pairs of
    holders enumerated by groups of the same size, so that numpy does the work); the few that
    many hold, to every pair at once, as one product of matrices. A class of n costs n² floats
    per part, one part at a time."""
    members = sorted(printed)
    none = np.zeros(0, dtype=np.int64)
    n = len(members)
    if n < 2:
        return PartScores(part, members, none, none.astype(float))
    owners = np.concatenate([np.full(len(printed[m]), p, dtype=np.int64)
                             for p, m in enumerate(members)])
    values = np.concatenate([printed[m] for m in members])
    order = np.lexsort((owners, values))
    values, owners = values[order], owners[order]
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    counts = np.diff(np.r_[starts, len(values)])
    weight = np.log10(n / counts)
    own = np.bincount(owners, weights=np.repeat(weight, counts), minlength=n)
    shared = np.zeros(n * n)
    few = (counts >= 2) & (counts <= FEW)
    for size in np.unique(counts[few]).tolist():
        groups = starts[counts == size]
        holders = owners[groups[:, None] + np.arange(size)]  # one row per feature
        left, right = np.triu_indices(size, 1)
        shared += np.bincount((holders[:, left] * n + holders[:, right]).ravel(),
                              weights=np.repeat(weight[counts == size], len(left)),
                              minlength=n * n)
    many = np.flatnonzero((counts > FEW) & (counts < n))
    if len(many):
        held = np.zeros((n, len(many)), dtype=np.float32)
        rows = np.repeat(np.arange(len(many)), counts[many])
        at = np.concatenate([np.arange(s, s + c) for s, c in zip(starts[many], counts[many])])
        held[owners[at], rows] = 1
        shared += ((held * weight[many].astype(np.float32)) @ held.T).ravel()
    left, right = np.triu_indices(n, 1)
    total = shared.reshape(n, n)[left, right]
    keep = total > 0
    left, right, total = left[keep], right[keep], total[keep]
    score = total * total / np.maximum(np.minimum(own[left], own[right]), 1e-9)
    index = np.array(members, dtype=np.int64)
    return PartScores(part, members, index[left] * (1 << 32) + index[right], score)


# --- what the page marks ---------------------------------------------------------------------


def shared_passages(part: str, a: str, b: str, own_a=frozenset(), own_b=frozenset()):
    """``(spans in a, spans in b)``: the passages the two texts share, as ``[(start, end)]``,
    merged: every run of ``CODE_K`` tokens (``TEXT_K`` words) found in both. Read from the
    texts as written, so a loop rewritten as a comprehension is compared here as it stands."""
    code = is_code(part)
    k = CODE_K if code else TEXT_K
    read = [code_tokens(text, own | bound_names(text)) if code else text_tokens(text)
            for text, own in ((a, own_a), (b, own_b))]
    runs = [_runs([_token_id(t) for t, _, _ in tokens], k).tolist() for tokens in read]
    common = set(runs[0]) & set(runs[1])
    spans = []
    for tokens, hashes in zip(read, runs):
        found = []
        for first, value in enumerate(hashes):
            if value not in common:
                continue
            begin, finish = tokens[first][1], tokens[first + k - 1][2]
            if found and begin <= found[-1][1]:
                found[-1] = (found[-1][0], max(found[-1][1], finish))
            elif finish > begin:
                found.append((begin, finish))
        spans.append(found)
    return spans[0], spans[1]
