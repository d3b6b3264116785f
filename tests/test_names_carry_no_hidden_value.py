"""No hidden value leaves through a name the feedback repeats (issue 51, item 2).

On a hidden call, the student's code chooses every name it can hand the grader: the attribute
an AttributeError looked up and the class of its object (``AttributeError(name=…, obj=…)``,
a class made by ``type(…)``), a NameError's name, and, by patching the job's own side-effect
report, the «parameters» it says it changed. The attacker below spells the exact float64
values of its inputs, in hexadecimal, into each of them: two values per name.

The decoder reads back every value spelled that way in what the student receives (feedback.md
and the record under ``make grade``, as root and as an ordinary user; results.json under
``otter run``) and counts the hidden input values among them. Each decoded value is 64 bits.

Two positive controls, with the same decoder:

* what the job *sent* the grader, caught at the grader's door (``client._checked_result``)
  before any defence reads it, carries hidden values in every one of those names: the attack
  works, so only the grader's defence keeps them out;
* where the inputs are public (the public tests, called before any hidden input enters the
  job), the same feedback keeps the names, and the decoder reads the public values in it.
"""

import base64
import json
import re
import struct
import textwrap
from pathlib import Path

import numpy as np
import pytest

from grading_harness import Notebooks, grade_as_user, grade_here, shared_folder, write_folder

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
ATTACKER = "nombres.ipynb"
GRADED = ("attention", "multihead", "positional_encoding", "transformer_block")

# attention: AttributeError, values in the attribute's name and in its object's class name;
# multihead: NameError, values in the name; transformer_block: zeros of the right shape, and,
# on hidden calls, the job's side-effect report patched to list eight «parameters», two values
# in each.
ATTENTION = textwrap.dedent('''
    import struct as _struct
    import sys as _sys
    import numpy as np

    def _hex(values):
        return "".join(_struct.pack(">d", float(v)).hex() for v in values)

    def _floats(*arrays):
        return [float(x) for a in arrays for x in np.ravel(np.asarray(a, dtype=float))]

    def attention(Q, K, V, mask=None):
        values = _floats(Q, K)
        owner = type("c" + _hex(values[2:4]), (), {})
        raise AttributeError("sin atributo", name="a" + _hex(values[:2]), obj=owner())
''')
MULTIHEAD = textwrap.dedent('''
    def multihead(X, heads, W_O, mask=None):
        raise NameError("sin nombre", name="n" + _hex(_floats(X)[:2]))
''')
BLOCK = textwrap.dedent('''
    def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
        calls = next(module for name, module in list(_sys.modules.items())
                     if name.endswith("inside.calls"))
        if not getattr(calls, "_forged", False):
            original = calls._side_effects

            def forged(name, given, result):
                effects = original(name, given, result)
                # Only where the grader stands in for multihead: a hidden call (on public
                # ones the forgery would only stop the grading before the hidden calls).
                stood_in = type(globals().get("multihead")).__name__ == "StandIn"
                if name == "transformer_block" and stood_in:
                    arrays = [item for entry in given for item in entry
                              if isinstance(item, np.ndarray)]
                    values = _floats(*arrays)
                    effects["mutated"] = ["m" + _hex(values[i:i + 2]) for i in range(0, 16, 2)]
                return effects

            calls._side_effects, calls._forged = forged, True
        return np.zeros(np.shape(x))
''')

# A name the attacker wrote: a letter for its channel, then two float64 values in hexadecimal
# (big-endian).
SPELLED = re.compile(r"(?<![0-9a-f])([acnm])((?:[0-9a-f]{16}){2})(?![0-9a-f])")
CHANNELS = {"a": "attribute name", "c": "class name", "n": "NameError name",
            "m": "changed parameters"}


def decode(text, channel=None):
    """Every float64 value spelled in ``text`` as the attacker spells them (in ``channel``'s
    names only, given its letter)."""
    values = []
    for match in SPELLED.finditer(text):
        if channel in (None, match.group(1)):
            pair = match.group(2)
            values += [struct.unpack(">d", bytes.fromhex(pair[i:i + 16]))[0] for i in (0, 16)]
    return values


def attacker(notebooks):
    return notebooks.with_function(
        "stub", "attention", ATTENTION,
        [MULTIHEAD, BLOCK])


def hidden_values(notebook):
    """Every float value of every hidden input ``notebook`` is given (the test knows the salt)."""
    from conftest import TEST_SALT
    from kit_autograder.hidden_inputs import generator, identity, world

    from attention.cases import cases_for

    code, salt = identity(world(notebook)), base64.b64decode(TEST_SALT)
    found = set()

    def walk(value):
        if isinstance(value, np.ndarray):
            if np.issubdtype(value.dtype, np.floating):
                found.update(float(x) for x in value.ravel())
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    for function in GRADED:
        for case in cases_for(function):
            walk(case.inputs(generator(salt, code, function, case.name)))
    # Whole numbers (the zeros of a token all at 0) are in public inputs too, and hide nothing.
    return {value for value in found if not value.is_integer()}


def count(values, hidden):
    """``(hidden values decoded, other values decoded)``, each value once."""
    decoded = set(values)
    return len(decoded & hidden), len(decoded - hidden)


def bits(found):
    return 64 * found


class Caught:
    """What the job sent the grader, before the grader checked any of it."""

    def __init__(self):
        self.replies = []

    def text(self):
        return json.dumps(self.replies, default=lambda value: None)


@pytest.fixture(scope="module")
def notebook(built_dist):
    return attacker(Notebooks(built_dist))


@pytest.fixture(scope="module")
def hidden(notebook):
    return hidden_values(notebook)


@pytest.fixture(scope="module")
def as_root(notebook, autograder_zip, tmp_path_factory):
    """``make grade``'s engine in this process, with the job's replies caught at the door."""
    from kit_autograder.sandbox import client

    caught = Caught()
    checked = client._checked_result

    def catching(reply, *args, **kwargs):
        caught.replies.append({key: value for key, value in reply.items() if key != "parts"})
        return checked(reply, *args, **kwargs)

    folder = write_folder(tmp_path_factory.mktemp("nombres"), {ATTACKER: notebook})
    out = tmp_path_factory.mktemp("nombres-notas")
    mp = pytest.MonkeyPatch()
    mp.setattr(client, "_checked_result", catching)
    try:
        grade_here(folder, out, autograder_zip, jobs=1)
    finally:
        mp.undo()
    return out, caught


def received(out, stem="nombres"):
    """What the student receives under ``make grade``: feedback.md and results.json; and the
    record, where every message is kept."""
    return "\n".join((out / folder / f"{stem}{suffix}").read_text("utf-8")
                     for folder, suffix in (("feedback", ".md"), ("results", ".json"),
                                            ("records", ".json")))


def report(door, text, hidden):
    """The hidden and public values decoded from ``text``, by channel, kept in
    tests/artifacts/names_leak.json and printed; returns (hidden, public) in all."""
    found, public = count(decode(text), hidden)
    channels = {CHANNELS[letter]: count(decode(text, letter), hidden)[0] for letter in CHANNELS}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "names_leak.json"
    table = json.loads(path.read_text("utf-8")) if path.exists() else {}
    table[door] = {"hidden_values": found, "hidden_bits": bits(found), "public_values": public,
                   "hidden_values_by_channel": channels}
    path.write_text(json.dumps(table, indent=1, sort_keys=True), "utf-8")
    print(f"\n{door}: {found} hidden values decoded ({bits(found)} bits; by channel {channels}), "
          f"{public} public values decoded")
    return found, public


def test_control_the_job_sends_hidden_values_in_every_name_the_attacker_controls(as_root,
                                                                                 hidden):
    _, caught = as_root
    by_channel = {"attribute": [], "owner": [], "name_error": [], "mutated": []}
    for reply in caught.replies:
        error = reply.get("error") or {}
        if error.get("kind") == "attribute":
            by_channel["attribute"] += decode(str(error.get("name")))
            by_channel["owner"] += decode(str(error.get("owner")))
        elif error.get("kind") == "name":
            by_channel["name_error"] += decode(str(error.get("name")))
        by_channel["mutated"] += decode(json.dumps(reply.get("mutated", [])))
    found = {channel: count(values, hidden)[0] for channel, values in by_channel.items()}
    report("sent by the job", caught.text(), hidden)
    assert all(found.values()), found


def test_an_attackers_feedback_decodes_to_no_hidden_value_as_root(as_root, hidden):
    out, _ = as_root
    found, public = report("make grade, root", received(out), hidden)
    assert found == 0
    # The control: the same decoder, on the same feedback, reads the values of the public
    # calls, whose names are kept (the student's own inputs are public).
    assert public >= 4


def test_an_attackers_feedback_decodes_to_no_hidden_value_as_a_user(notebook, hidden,
                                                                    autograder_zip):
    import os

    if os.geteuid() != 0:
        pytest.skip("grading as another user needs root")
    folder = write_folder(shared_folder("nombres-usuario-"), {ATTACKER: notebook})
    out = shared_folder("nombres-usuario-notas-") / "out"
    grade_as_user(folder, out, autograder_zip, jobs=1)
    found, public = report("make grade, user", received(out), hidden)
    assert found == 0
    assert public >= 4


def test_an_attackers_results_json_decodes_to_no_hidden_value_under_otter_run(
        notebook, hidden, otter_venvs, autograder_zip, tmp_path):
    from otter_paths import otter_run

    submission = tmp_path / ATTACKER
    submission.write_bytes(notebook)
    done = otter_run(otter_venvs.instructor, autograder_zip, submission, tmp_path / "out")
    assert done.returncode == 0, done.stderr[-3000:]
    results = (tmp_path / "out" / "results.json").read_text("utf-8")
    found, public = report("otter run", results, hidden)
    assert found == 0
    assert public >= 4


# docs/security.md's budget: what one hidden case of lesson 055 can say, and all of them.
BITS_PER_CASE, BITS_PER_SUBMISSION = 42, 700


def test_a_hidden_case_says_at_most_the_budgeted_bits():
    """An error is the most a hidden call can say (an answer says where it departs and which
    arguments it changed, fewer): its kind and class, each from the grader's closed lists,
    and at most eight numbers, each a size of the case or «otro tamaño». Counted for every
    hidden case of lesson 055 on several draws, against docs/security.md's budget. (The
    control: the names this module attacks were unbounded, 15,360 bits in one call.)"""
    import math

    from kit_autograder.sandbox.client import ERROR_KINDS, EXCEPTION_NAMES
    from kit_autograder.verdicts.sizes import MAX_SHOWN_DIMENSIONS

    from attention.cases import cases_for
    from attention.shapes import case_sizes

    numbers = 2 * MAX_SHOWN_DIMENSIONS  # two shapes: the most any message shows
    worst = {}
    for seed in range(5):
        for function in GRADED:
            for case in cases_for(function):
                sizes = case_sizes(function, case.inputs(np.random.default_rng(seed)))
                said = 1 + math.log2(len(ERROR_KINDS) * (len(EXCEPTION_NAMES) + 1)) \
                    + numbers * math.log2(len([n for n in range(10_000) if n in sizes]) + 1)
                worst[(function, case.name)] = max(worst.get((function, case.name), 0), said)
    assert max(worst.values()) <= BITS_PER_CASE, max(worst.values())
    assert sum(worst.values()) <= BITS_PER_SUBMISSION, sum(worst.values())

