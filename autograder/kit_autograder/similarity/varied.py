"""A class of kept parts for ``make bench``, from a graded folder's: its time at any size.

``make bench`` grades its synthetic submissions, a few variants repeated; a class of a thousand
differs from one student to the next. Each student here takes each part of one graded
submission and changes it as independent work differs: code, a number here and a line of
their own there; text, a word in five another word of the class's. What matters is the pass's
time (the parts' sizes, how many features each pair shares); what it lists says nothing about
detection, which the planted classes of ``tests/similarity_class.py`` measure.
"""

import json
import random
import re
from pathlib import Path

from . import compare, parts

WORD = re.compile(r"\w+")
DIGIT = re.compile(r"\d")
CHANGED_LINES = 0.3  # of a student's code
CHANGED_WORDS = 0.2  # of a student's text


def _code(text, rng):
    lines = []
    for line in text.split("\n"):
        lines.append(line)
        if rng.random() < CHANGED_LINES:
            digits = [m.start() for m in DIGIT.finditer(line)]
            if digits:
                at = rng.choice(digits)
                lines[-1] = f"{line[:at]}{rng.randrange(10)}{line[at + 1:]}"
            elif line.strip():
                indent = line[: len(line) - len(line.lstrip())]
                if line.rstrip().endswith(":"):
                    indent += "    "
                lines.append(f"{indent}propio_{rng.randrange(10_000)} = {rng.randrange(100)}")
    return "\n".join(lines)


def _text(text, vocabulary, rng):
    return WORD.sub(lambda m: rng.choice(vocabulary) if rng.random() < CHANGED_WORDS
                    else m.group(0), text)


def write_class(out, folder, size, seed=0):
    """``folder/similarity/``: ``size`` students made from the parts kept in ``out``."""
    kept = [entry for entry in parts.load_all(out) if entry["parts"]]
    if not kept:
        raise ValueError(f"{out}: no kept parts to make a class from")
    vocabulary = {}
    for entry in kept:
        for part, text in entry["parts"].items():
            if not compare.is_code(part):
                vocabulary.setdefault(part, []).extend(WORD.findall(text))
    rng = random.Random(seed)
    target = Path(folder) / parts.FOLDER
    target.mkdir(parents=True, exist_ok=True)
    for number in range(size):
        model = rng.choice(kept)
        found = {part: _code(text, rng) if compare.is_code(part)
                 else _text(text, vocabulary[part] or ["palabra"], rng)
                 for part, text in model["parts"].items()}
        stem = f"estudiante_{number:05d}"
        data = {"format": parts.FORMAT, "file": f"{stem}.ipynb", "stem": stem, "parts": found,
                "names": model.get("names", {})}
        (target / f"{stem}.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")
