"""Every pair's similarity, part by part, through an index of fingerprints.

copydetect (MIT, pure Python) does the work a copy detector needs: its ``filter_code`` reads a
part with Pygments' Python lexer, drops comments and blank lines and writes every identifier
as one letter, so renaming and re-commenting change nothing; its ``winnow`` keeps a few
fingerprints of each document (Schleimer, Wilkerson and Aiken's winnowing: any shared run of
``GUARANTEE`` characters leaves a shared fingerprint); its ``get_copied_slices`` gives the
shared passages back in the original text, for the report to mark. The k-grams are hashed
here, with a rolling polynomial hash, because copydetect hashes them with Python's ``hash()``,
which is seeded per process: ``make report`` must find the very pairs ``make grade`` found.

Pairs grow as n²; what each pair shares is counted through an inverted index, fingerprint ->
submissions, so a class costs the postings it has, not n² comparisons. A fingerprint that
more than ``COMMON_SHARE`` of the class holds is what the class shares (a formula everybody
writes the same way): it is left out of the index and of the pair's score, which also bounds
the work per fingerprint.
"""

import re
from dataclasses import dataclass

import numpy as np

# Characters of the filtered code (identifiers as one letter) in a fingerprint, and the length
# of a shared run that is sure to leave one: the noise and guarantee thresholds of copydetect,
# smaller than its defaults (25, 30) because a graded function is ten lines.
CODE_NOISE, CODE_GUARANTEE = 20, 24
# Written text: casefolded words and single spaces; a synonym swapped every few words still
# leaves runs of this length.
TEXT_NOISE, TEXT_GUARANTEE = 14, 17
# A fingerprint held by more submissions than this share of the class (and at least
# MIN_COMMON) is the class's common ground, not evidence about one pair.
COMMON_SHARE = 0.05
MIN_COMMON = 8

_PRIME = (1 << 52) - 47  # below 2**53: copydetect's winnowing compares hashes as floats
_BASE = 1_000_003


@dataclass
class Printed:
    """One part of one submission, fingerprinted."""

    text: str  # as kept in OUT/similarity/, what the report shows
    hashes: np.ndarray  # the winnowed fingerprints, unique
    filtered: str = ""  # what was fingerprinted
    offsets: object = None  # where each character of ``filtered`` came from in ``text``
    positions: dict = None  # fingerprint -> positions in ``filtered``
    noise: int = 0  # the k of its k-grams


def is_code(part: str) -> bool:
    return not part.startswith(("written:", "challenge:"))


def rolling_hashes(text: str, k: int) -> np.ndarray:
    """The hash of every k-gram of ``text``, the same in every process."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    if len(codes) < k:
        return np.zeros(0, dtype=np.int64)
    hashes = np.zeros(len(codes) - k + 1, dtype=np.int64)
    # Horner over the window, vectorised across windows: k steps of n operations each.
    for offset in range(k):
        hashes = (hashes * _BASE + codes[offset:offset + len(hashes)]) % _PRIME
    return hashes


def _normal_text(text: str) -> tuple:
    """Casefolded words joined by single spaces, and where each character came from."""
    kept, origin = [], []
    for match in re.finditer(r"\w+", text):
        if kept:
            kept.append(" ")
            origin.append((match.start(), match.start()))
        word = match.group(0).casefold()
        kept.extend(word)
        origin.extend((match.start() + i, match.start() + i + 1) for i in range(len(word)))
    return "".join(kept), origin


def _own_names(text: str) -> set:
    """The names the student's code binds itself (variables, loop targets, helpers):
    renaming them changes nothing, while numpy's and the lesson's names stay as evidence."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda, ast.AsyncFunctionDef)):
            if not isinstance(node, ast.Lambda):
                names.add(node.name)
            names.update(arg.arg for arg in node.args.args + node.args.kwonlyargs)
    return names


def _normal_code(text: str) -> tuple:
    """The code's tokens without comments and layout, the student's own names as «V», and
    where each character came from. A part that Python's tokenizer cannot read is read as
    copydetect's filter reads it (every name as one letter)."""
    import io
    import tokenize

    from copydetect.utils import filter_code

    own = _own_names(text)
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    kept, origin = [], []
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}
    try:
        previous = None
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in skip:
                if token.type == tokenize.NEWLINE:
                    kept.append(";")
                    at = starts[token.start[0] - 1] + token.start[1]
                    origin.append((at, at))
                continue
            start = starts[token.start[0] - 1] + token.start[1]
            shown = token.string
            if token.type == tokenize.NAME and token.string in own and previous != ".":
                shown = "V"
            elif token.type == tokenize.STRING:
                shown = "S"
            kept.append(shown)
            end = start + len(token.string)
            origin.extend([(start + i, start + i + 1) for i in range(len(shown))] if shown ==
                          token.string else [(start, end)] * len(shown))
            previous = token.string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        filtered, offsets = filter_code(text, "part.py")
        return filtered, offsets
    return "".join(kept), origin


def fingerprint(part: str, text: str) -> Printed:
    from copydetect.utils import winnow

    if is_code(part):
        filtered, offsets = _normal_code(text)
        noise, guarantee = CODE_NOISE, CODE_GUARANTEE
    else:
        filtered, offsets = _normal_text(text)
        noise, guarantee = TEXT_NOISE, TEXT_GUARANTEE
    hashes = rolling_hashes(filtered, noise)
    if len(hashes) == 0:
        return Printed(text, hashes, filtered, offsets, {}, noise)
    selected, where = winnow(hashes, guarantee - noise + 1, remove_duplicates=False)
    positions = {}
    for value, index in zip(selected.tolist(), where.tolist()):
        positions.setdefault(value, []).append(index)
    return Printed(text, np.unique(selected), filtered, offsets, positions, noise)


@dataclass
class PartScores:
    """One part across the class: the similarity of every pair that shares a fingerprint."""

    part: str
    members: list  # indexes of the submissions that have this part
    pairs: dict  # (i, j), i < j -> score in (0, 1]

    @property
    def compared(self):
        """How many pairs of the class have this part on both sides."""
        return len(self.members) * (len(self.members) - 1) // 2


def score_part(part: str, printed: dict) -> PartScores:
    """``printed``: {submission index: Printed}. Each pair's score: the fingerprints both
    hold over the fewer of the two hold, the class's common ground left out of both."""
    members = sorted(printed)
    if len(members) < 2:
        return PartScores(part, members, {})
    limit = max(MIN_COMMON, int(COMMON_SHARE * len(members)))
    owners = np.concatenate([np.full(len(printed[m].hashes), m, dtype=np.int64)
                             for m in members])
    values = np.concatenate([printed[m].hashes for m in members])
    order = np.lexsort((owners, values))
    values, owners = values[order], owners[order]
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    counts = np.diff(np.r_[starts, len(values)])
    common = np.repeat(counts > limit, counts)
    own = {m: 0 for m in members}
    for m, n in zip(*np.unique(owners[~common], return_counts=True)):
        own[int(m)] = int(n)
    keys = []
    for start, count in zip(starts.tolist(), counts.tolist()):
        if 2 <= count <= limit:
            holders = owners[start:start + count]
            left, right = np.triu_indices(count, 1)
            keys.append(holders[left] * (1 << 32) + holders[right])
    pairs = {}
    if keys:
        shared, times = np.unique(np.concatenate(keys), return_counts=True)
        for key, n in zip(shared.tolist(), times.tolist()):
            i, j = key >> 32, key & 0xFFFFFFFF
            pairs[(i, j)] = n / max(1, min(own[i], own[j]))
    return PartScores(part, members, pairs)


def shared_passages(a: Printed, b: Printed):
    """``(spans in a.text, spans in b.text)``: the passages the two share, as
    ``[(start, end)]``, merged, through copydetect's slices."""
    from copydetect.utils import get_copied_slices

    common = set(a.positions) & set(b.positions)
    spans = []
    for printed in (a, b):
        where = np.array(sorted(i for h in common for i in printed.positions[h]), dtype=np.int64)
        slices = get_copied_slices(where, printed.noise) if len(where) else np.zeros((2, 0), dtype=np.int64)
        spans.append(_to_text(printed, slices))
    return spans[0], spans[1]


def _to_text(printed: Printed, slices):
    """Slices of the filtered text, as spans of the kept text."""
    found = []
    for start, end in zip(slices[0].tolist(), slices[1].tolist()):
        if isinstance(printed.offsets, np.ndarray):  # code: copydetect's offsets table
            offsets = printed.offsets
            if len(offsets):
                shift = offsets[:, 1][np.clip(np.searchsorted(offsets[:, 0], [start, end]),
                                              0, len(offsets) - 1)]
                start, end = start + int(shift[0]), end + int(shift[1])
        else:  # where each character came from: (start, end) in the kept text
            origin = printed.offsets
            start, end = origin[start][0], origin[min(end, len(origin)) - 1][1]
        start, end = max(0, start), min(len(printed.text), end)
        if end > start:
            found.append((start, end))
    merged = []
    for start, end in sorted(found):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
