"""Each submission's own hidden inputs, from a secret salt and everything the submission brings.

The numbers of a hidden case come from a generator seeded with
HMAC-SHA256(salt, the submission's bytes, function, case). So:

* regrading the same file gives the same inputs and the same score;
* two different submissions get different inputs: a set of inputs leaked through one
  submission's feedback, or a table of answers pasted into another, answers nothing there,
  because pasting the table changes the submission and hence the inputs;
* without the salt (it lives only in the autograder zip) nobody can compute them offline.

The identity is every byte the student's code can read of its own submission: the notebook
file whole (code, but also Markdown, outputs and metadata, which a cell can open and read)
and the other files of an export zip. A table hidden in a Markdown cell, with the code cells
left as they were, still changes the inputs it was meant to answer.
"""

import hashlib
import hmac

import numpy as np


def identity(notebook: bytes, extra_files=None) -> bytes:
    """The submission's identity: its notebook's bytes, then each other file, by name."""
    digest = hashlib.sha256()
    parts = [notebook]
    for name in sorted(extra_files or {}):
        parts += [name.encode("utf-8", "surrogatepass"), extra_files[name]]
    for data in parts:
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.digest()


def generator(salt: bytes, submission_identity: bytes, function: str, case: str):
    message = b"\0".join([submission_identity, function.encode(), case.encode()])
    seed = hmac.new(salt, message, hashlib.sha256).digest()
    return np.random.default_rng(int.from_bytes(seed, "big"))
