"""Each submission's own hidden inputs, from a secret salt and everything its code can observe.

The numbers of a hidden case come from a generator seeded with
HMAC-SHA256(salt, identity, function, case). So:

* regrading the same file gives the same inputs and the same score;
* two different submissions get different inputs: a set of inputs leaked through one
  submission's feedback, or a table of answers pasted into another, answers nothing there,
  because pasting the table changes the submission and hence the inputs;
* without the salt (it lives only in the autograder zip) nobody can compute them offline.

**The invariant.** The job that runs a submission sees, of that submission, exactly its
``world``: a folder of files, ``{name: bytes}``, laid out beside the kit's own support files.
The identity is a hash of that world and of nothing else, so *any two submissions whose
job-visible worlds differ get different inputs, and the same world always gets the same ones*.
The world is built here, once, for every door (``make grade``, and Otter's for Gradescope,
``otter grade`` and ``otter run``):

* the notebook, always under the one name ``NOTEBOOK_NAME``: the job never learns what the
  upload was called, or what the notebook inside an export zip was called. A name can carry
  a table of answers as well as a Markdown cell can, and it is not part of the identity;
* the other top-level files of an export zip, by name, except those named like one of the
  kit's support files, which the kit's own copy replaces (the job never sees the student's).

Everything else a job can observe is the kit's or the host's, not the submission's: the
support files, the time, its process and user ids, its scratch folder. Some of those depend on
where the file sorts in a batch, which its name decides; that is a position, not a table.
"""

import hashlib
import hmac

import numpy as np

NOTEBOOK_NAME = "entrega.ipynb"


def world(notebook: bytes, extra_files=None, kit_files=()) -> dict:
    """What a job sees of a submission: ``{name: bytes}``, every name fixed or the student's
    own extra files', never the upload's."""
    files = {name: data for name, data in (extra_files or {}).items()
             if name not in kit_files and name != NOTEBOOK_NAME}
    files[NOTEBOOK_NAME] = notebook
    return files


def identity(files: dict) -> bytes:
    """The identity of a job-visible world (``world``): every name and every byte of it."""
    digest = hashlib.sha256()
    for name in sorted(files):
        for data in (name.encode("utf-8", "surrogatepass"), files[name]):
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)
    return digest.digest()


def generator(salt: bytes, submission_identity: bytes, function: str, case: str):
    message = b"\0".join([submission_identity, function.encode(), case.encode()])
    seed = hmac.new(salt, message, hashlib.sha256).digest()
    return np.random.default_rng(int.from_bytes(seed, "big"))


def redrawn(value, rng):
    """``value`` with every array of real numbers in it drawn afresh from ``rng``, same shapes
    and the same spread (nested in lists and tuples too), or None when it holds none: masks,
    sizes and other values are kept. The probes that ask «does the answer follow the input?»
    (a cache, an ignored argument) share it."""
    if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating):
        return rng.normal(size=value.shape) * (float(np.std(value)) or 1.0)
    if isinstance(value, (list, tuple)):
        items = [redrawn(item, rng) for item in value]
        if all(item is None for item in items):
            return None
        return type(value)(new if new is not None else old for new, old in zip(items, value))
    return None
