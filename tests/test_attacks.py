"""Grades that hold under attack (issue 11), through every door and in every mode.

One arena of submissions: two correct classmates (graded before and after everything else),
an untouched stub (the baseline), and one attack per class of the issue (attacks.py). The
arena is graded four ways, once per session each: `make grade` as root (bubblewrap), as an
ordinary user (bubblewrap through user namespaces), as root under Docker's default profile
(no namespaces, no Landlock: the degraded mode), and through Gradescope's entry point under
that same profile, one run per submission, two runs side by side. Each attack must score no
more than the stub, the classmates must keep full marks, no process may outlive the batch,
nothing outside OUT may change, and the batch must finish with a row for every file. Each
attack also has a positive control below: the same code, run without the sandbox, does what
it claims.

Issue 19's classes are in the same arena: numbers spelled into errors and shapes (26, and 15's
long decimals), a zeros answer (27), a table of answers in the upload's name or in the name of
the notebook inside an export zip (28, 29, which also print what the job sees), markup in
every text a student controls (30, its name first; 32, a zip's notebook names; 33,
student_extension's keys), and a kernelspec that is a string (31). What the student receives
is read as they read it: every output of results.json, and feedback.md, rendered by
markdown-it with raw HTML enabled in Chromium.
"""

import ast
import base64
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import attacks
from attention.cases import cases_for
from grading_harness import (Notebooks, grade_as_user, grade_docker_like, grade_gradescope,
                             grade_here, gradescope_scores, read_records, shared_folder,
                             total, with_call_timeout, write_folder, zip_bytes)
from markup_payloads import browser, inert, payload, seen, to_html  # noqa: F401 (a fixture)

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
MARKER = "kitattack" + hashlib.sha256(str(os.getpid()).encode()).hexdigest()[:10]
CLASSMATES = ("00_classmate.ipynb", "zz_classmate.ipynb")
STUB = "50_stub.ipynb"
DAEMON_DELAY = 3
MARKUP_NAME = "30_" + payload("archivo", slash=False) + ".ipynb"
GOOD_EXTENSION = {
    "assumption": "Mi attention reparte el peso según la afinidad.",
    "measurement": "La fila 1 del ejemplo trabajado pesa 0,6698 en su propia clave.",
    "conclusion": "El token 1 pone un 67 % de su atención en sí mismo.",
    "limitation": "Dos tokens con proyecciones a mano.",
    "risk": "No lo usaría para explicar un modelo entrenado.",
}


def snapshot(paths):
    """Every file under ``paths`` with its size and content hash."""
    found = {}
    for base in paths:
        for folder, _, files in os.walk(base):
            if "__pycache__" in folder:
                continue
            for name in files:
                path = os.path.join(folder, name)
                try:
                    with open(path, "rb") as f:
                        found[path] = hashlib.sha256(f.read()).hexdigest()
                except OSError:
                    continue
    return found


# Each hidden call of the arena gets this many seconds, not the 10 an instructor's zip gives:
# 23_hang's call never returns, and every door waited the whole limit for it (12 s, spinning a
# core). A correct function answers a call in milliseconds, on a loaded machine too.
ARENA_CALL_SECONDS = 2


class Arena:
    def __init__(self, dist, autograder_zip):
        self.zip = autograder_zip
        # Otter's doors read the limit from the zip: a copy whose settings say it, private to
        # root as the session's build is (it holds the reference).
        self.gradescope_zip = with_call_timeout(autograder_zip, ARENA_CALL_SECONDS,
                                                tempfile.mkdtemp(prefix="arena-zip-"))
        self.listener = attacks.Listener()
        udp, tcp = self.listener.ports
        self.outs = {door: shared_folder(f"arena-{door}-") / "out"
                     for door in ("root", "user", "docker")}
        self.targets = attacks.Targets(
            outs=list(self.outs.values()), marker=MARKER, udp_port=udp, tcp_port=tcp,
            host_ip=attacks.host_ip(), site_dirs=attacks.site_dirs(),
            # The grader's own copies of the reference. (The repository's copy is as
            # readable as the instructor leaves it; see test_sandbox_modes for what a job can
            # read in each mode.)
            secrets=[str(dist / "otter" / "reference" / "*" / "*.py"),
                     "/tmp/kit-bundle-*/source/files/reference/*/*.py",
                     "/tmp/gradescope-*/source/files/reference/*/*.py",
                     "/tmp/gradescope-*/submission/reference/*/*.py"],
            roots=["/tmp/gradescope-*"])
        self.notebooks = Notebooks(dist)
        self.leak = self.notebooks.with_function(
            "bare", "attention", attacks.LEAKY_FUNCTIONS["attention"],
            [attacks.LEAKY_FUNCTIONS["multihead"]])
        self.spelling = self.notebooks.bare([attacks.SPELLS_IN_SMALL_INTEGERS])
        self._renamed_name = None
        self.files = self._files(dist)
        self.folder = write_folder(shared_folder("arena-submissions-"), self.files)
        self.watched = [str(ROOT / "reference"), str(ROOT / "assignments"),
                        str(ROOT / "autograder"), *self.targets.site_dirs, str(dist)]

    def _files(self, dist):
        t, nb = self.targets, self.notebooks
        files = {name: nb.correct() for name in CLASSMATES}
        files[STUB] = nb.stub()
        files["10_forge_outputs.ipynb"] = nb.bare([attacks.forge_outputs_cell(t)])
        files["11_daemon.ipynb"] = nb.bare([attacks.daemon_cell(t, DAEMON_DELAY)])
        files["12_pth.ipynb"] = nb.bare([attacks.pth_cell(t)])
        files["13_parser_bomb.ipynb"] = nb.bare([attacks.PARSER_BOMB,
                                                 attacks.forged_results_cell(t)])
        files["14_forged_lab.ipynb"] = nb.bare([self.forged_lab_cell()])
        files["14_honest_stub_extension.ipynb"] = nb.stub([self.honest_extension_cell()])
        files["15_leak.ipynb"] = self.leak
        files["16_table.ipynb"] = nb.with_function("bare", "attention", self.table_source())
        files["17_network.ipynb"] = nb.bare([attacks.network_cell(t)])
        files["18_deep_tree.ipynb"] = nb.bare([attacks.deep_tree_cell()])
        files["19_process_hog.ipynb"] = nb.bare([attacks.process_hog_cell()])
        files["20_disk_fill.ipynb"] = nb.bare([attacks.disk_fill_cell()])
        files["21_kill.ipynb"] = nb.bare([attacks.KILL_CELL])
        files["22_secret_reader.ipynb"] = nb.with_function(
            "bare", "attention", attacks.secret_reader_function(t))
        files["23_hang.ipynb"] = nb.with_function("correct", "positional_encoding",
                                                  attacks.HANG_IN_CALL)
        files["24_exit.ipynb"] = nb.bare([attacks.EXIT_CELL])
        files["25_huge.ipynb"] = huge_notebook()
        # Issue 19: numbers spelled into errors and shapes, a zeros answer, the name as a
        # table (the upload's, and the notebook's inside an export zip), markup in every text a
        # student controls (the file's name first), and a kernelspec that is a string.
        files["26_small_ints.ipynb"] = self.spelling
        files["27_zeros.ipynb"] = nb.bare([attacks.RETURNS_ZEROS])
        self.renamed = nb.with_function("bare", "attention", attacks.READS_ITS_OWN_NAME)
        files[self.renamed_name] = self.renamed
        files["29_zip_renamed.zip"] = zip_bytes({self.table_name("29_"): self.renamed})
        definition, cells = attacks.markup_cells(payload)
        hostile = json.loads(nb.with_function("bare", "attention", definition, cells))
        hostile["metadata"]["kernelspec"]["name"] = payload("kernel")
        files[MARKUP_NAME] = json.dumps(hostile).encode()
        # The same tricks in student_extension's texts and keys, on a working notebook, so
        # that the challenge's validator gets far enough to quote them.
        extension = {**GOOD_EXTENSION, "assumption": payload("supuesto"),
                     payload("claveextra"): "x"}
        files["33_markup_extension.ipynb"] = nb.correct([
            f"resultado = {{**resultado_lab, 'student_extension': {extension!r}}}\n"
            "student_extension = resultado['student_extension']"])
        correct = json.loads(nb.correct())
        correct["metadata"]["kernelspec"] = "python3"
        files["31_kernelspec_string.ipynb"] = json.dumps(correct).encode()
        files["32_two_notebooks.zip"] = zip_bytes({
            payload("a", slash=False) + ".ipynb": nb.stub(),
            payload("b", slash=False) + ".ipynb": nb.stub()})
        return files

    # --- the lab's evidence, borrowed ---------------------------------------------------

    def classmate_lab_json(self):
        sys.path.insert(0, str(ROOT / "assignments"))
        import lab_runner
        from reference import attention as reference
        from attention import lab

        functions = {name: getattr(reference, name) for name in
                     ("attention", "multihead", "positional_encoding", "transformer_block")}
        return json.loads(lab_runner.to_json(lab.run_lab(functions, 55)))

    def forged_lab_cell(self):
        borrowed = self.classmate_lab_json()
        return (f"resultado = {{**{borrowed!r}, 'student_extension': {GOOD_EXTENSION!r}}}\n"
                f"student_extension = resultado['student_extension']")

    def honest_extension_cell(self):
        return (f"resultado = {{**resultado_lab, 'student_extension': {GOOD_EXTENSION!r}}}\n"
                f"student_extension = resultado['student_extension']")

    # --- a table of answers for leaked inputs ---------------------------------------------

    def leaked_inputs(self, notebook=None, function="attention"):
        """The hidden inputs of ``function`` that a submission (the leaky one) was given: what
        a leak through its feedback would have revealed (the test knows the salt)."""
        from conftest import TEST_SALT
        from kit_autograder.hidden_inputs import generator, identity, world

        from attention.cases import cases_for

        code = identity(world(self.leak if notebook is None else notebook))
        salt = base64.b64decode(TEST_SALT)
        return {case.name: case.inputs(generator(salt, code, function, case.name))
                for case in cases_for(function)}

    # --- a table of answers in a name --------------------------------------------------------

    TABLE_CASE = "una_consulta"  # the case whose answer fits in a file's name

    def table_name(self, prefix):
        from reference import attention as reference

        inputs = self.leaked_inputs(self.renamed)[self.TABLE_CASE]
        return attacks.table_name(inputs, reference.attention(**inputs),
                                  prefix=f"{prefix}tabla_")

    @property
    def renamed_name(self):
        if self._renamed_name is None:
            self._renamed_name = self.table_name("28_")
        return self._renamed_name

    def table_source(self):
        from reference import attention as reference

        table = {}
        for inputs in self.leaked_inputs().values():
            output, weights = reference.attention(**inputs)
            table[attacks.table_key(inputs["Q"])] = (output.tolist(), weights.tolist())
        return attacks.table_attention(table)

    @property
    def attacks(self):
        return sorted(name for name in self.files
                      if name not in CLASSMATES + (STUB, "14_honest_stub_extension.ipynb"))

    def seen_by_students(self, door, name):
        """feedback.md (the make grade doors) and every output of results.json: everything
        ``name``'s student reads. ``{"feedback": text or None, "outputs": [...], "boxes":
        {question: box}, "record": Record or None}``."""
        record = door.records.get(name)
        if record is not None:
            text = (door.out / "feedback" / f"{record.stem}.md").read_text("utf-8")
            data = json.loads((door.out / "results" / f"{record.stem}.json").read_text("utf-8"))
        else:
            text, data = None, door.results[name]
        return {"feedback": text, "record": record,
                "outputs": [part["output"] for part in [data, *data.get("tests", [])]
                            if "output" in part],
                "boxes": {t["name"]: t["output"] for t in data.get("tests", []) if "output" in t}}


def huge_notebook(cells=300_000):
    """A valid notebook of ``cells`` tiny code cells (tens of MB)."""
    cell = {"cell_type": "code", "execution_count": None, "id": "x", "metadata": {},
            "outputs": [], "source": "x = 1"}
    notebook = {"cells": [dict(cell, id=f"c{i}") for i in range(cells)],
                "metadata": {"otter": {"assignment_name": "055-atencion-transformer"},
                             "kernelspec": {"name": "python3", "display_name": "Python 3",
                                            "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(notebook).encode()


@pytest.fixture(scope="session")
def arena(built_dist, autograder_zip):
    arena = Arena(built_dist, autograder_zip)
    previous = os.environ.get("KIT_SANDBOX_LABEL")
    os.environ["KIT_SANDBOX_LABEL"] = MARKER
    yield arena
    arena.listener.close()
    if previous is None:
        os.environ.pop("KIT_SANDBOX_LABEL", None)
    else:
        os.environ["KIT_SANDBOX_LABEL"] = previous


class Outcome:
    """One door's grading of the arena, and what was true right after it returned."""

    def __init__(self, totals, records=None, results=None, door=None):
        self.totals, self.records, self.results = totals, records or {}, results or {}
        if door:  # every door's totals, side by side, for a reader of the run
            _add_to_table(door, totals)
        # The attacks' own processes carry the marker, and so do the sandbox's (the zygote,
        # its jobs and whatever a job forked), through the sandbox's label.
        self.survivors = attacks.processes_with(MARKER)
        attacks.kill_all(self.survivors)  # so that one door's failure cannot spoil the next


def _add_to_table(door, totals):
    """``door``'s totals into tests/artifacts/attack_scores.json. The Gradescope door writes
    from the other xdist worker, at the same time as the others: the read and the write are
    one step under a lock, and the file is replaced whole, never seen half-written."""
    import fcntl

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    table = ARTIFACTS / "attack_scores.json"
    with open(ARTIFACTS / "attack_scores.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        previous = json.loads(table.read_text("utf-8")) if table.exists() else {}
        partial = table.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps({**previous, door: totals}, indent=1, sort_keys=True))
        os.replace(partial, table)


def _graded(arena, door, grade):
    before = snapshot(arena.watched)
    out = arena.outs[door]
    rows = grade(arena.folder, out, arena.zip, call_timeout=ARENA_CALL_SECONDS)
    outcome = Outcome({name: total(row) for name, row in rows.items()}, read_records(out),
                      door=door)
    outcome.changed = sorted(path for path, digest in snapshot(arena.watched).items()
                             if before.get(path) != digest)
    outcome.csv_after_daemon = None
    time.sleep(DAEMON_DELAY + 1)  # long enough for the daemon, had it survived, to strike
    outcome.csv_after_daemon = (out / "final_grades.csv").read_text("utf-8")
    outcome.out = out
    return outcome


@pytest.fixture(scope="session")
def graded_as_root(arena):
    return _graded(arena, "root", grade_here)


@pytest.fixture(scope="session")
def graded_as_user(arena):
    return _graded(arena, "user", grade_as_user)


@pytest.fixture(scope="session")
def graded_docker_like(arena):
    return _graded(arena, "docker", grade_docker_like)


@pytest.fixture(scope="session")
def graded_on_gradescope(arena, otter_venvs):
    """Gradescope's entry point under Docker's profile, in the image's own Python: each
    attack in its own run, then a classmate, after all of them."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("mounting a tree at /autograder needs root and unshare(1)")
    before = snapshot(arena.watched)
    # Gradescope unpacks an uploaded zip itself: 32's notebooks arrive as two uploads there,
    # whose names are 30's trick again.
    names = [n for n in arena.attacks if n not in ("25_huge.ipynb", "32_two_notebooks.zip")] + [
        STUB, CLASSMATES[0]]

    def one(name):
        return name, grade_gradescope(arena.gradescope_zip, name, arena.files[name],
                                      otter_venvs.image, docker_like=True)

    # Three runs side by side, as graders on one host: each claims its jobs' user ids
    # (sandbox.client.UidClaims), so none kills another's jobs. Three, not two: a run spends
    # about 40 % of its time waiting (measured alone: 138 s of wall, 170 s of CPU on 2 cores).
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        results = dict(pool.map(one, names[:-1]))
    results.update([one(names[-1])])  # the classmate comes after all the attacks
    outcome = Outcome({name: sum(gradescope_scores(r).values()) for name, r in results.items()},
                      results=results, door="gradescope")
    outcome.changed = sorted(path for path, digest in snapshot(arena.watched).items()
                             if before.get(path) != digest)
    return outcome


# Gradescope's door, the longest, is graded by test_attacks_gradescope.py, which runs every
# door test of this module through it: xdist then gives the two modules to two workers.
DOORS = ["graded_as_root", "graded_as_user", "graded_docker_like"]


@pytest.fixture(params=DOORS)
def door(request):
    return request.getfixturevalue(request.param)


# --- what must hold through every door ----------------------------------------------------------


def test_correct_classmates_keep_full_marks_beside_every_attack(door):
    for name in CLASSMATES:
        if name in door.totals:
            assert door.totals[name] == 20, name


# Built on the solution, these attack availability rather than scores: their own tests say
# what they may keep.
NOT_STUB_BASED = ("14_forged_lab.ipynb", "23_hang.ipynb", "31_kernelspec_string.ipynb",
                  "33_markup_extension.ipynb")


def test_no_attack_scores_more_than_the_untouched_stub(arena, door):
    stub = door.totals[STUB]
    assert stub == 0
    higher = {name: door.totals[name] for name in arena.attacks
              if name in door.totals and name not in NOT_STUB_BASED and door.totals[name] > stub}
    assert not higher


def test_borrowed_lab_evidence_earns_nothing_over_honest_work(door):
    forged, honest = door.totals["14_forged_lab.ipynb"], door.totals.get(
        "14_honest_stub_extension.ipynb")
    if honest is None:  # Gradescope's runs grade the attacks and a classmate only
        assert forged <= 1, "only the risk criterion may hold without a working lab"
    else:
        assert forged <= honest


def test_no_process_started_by_a_submission_outlives_grading(door):
    assert door.survivors == []


def test_nothing_outside_out_changes(door):
    assert door.changed == []


def test_no_daemon_rewrites_the_results_after_the_batch(door):
    if door.records:
        assert MARKER not in door.csv_after_daemon
        assert "hacked" not in door.csv_after_daemon


def test_the_batch_finishes_with_a_row_for_every_file(arena, door):
    if door.records:
        assert set(door.totals) - {"points-per-question"} == set(arena.files)
        assert set(door.records) == set(arena.files)


def test_no_forged_file_survives_in_out(door):
    if door.records:
        for path in door.out.rglob("*"):
            if path.is_file():
                assert MARKER not in _written_by_the_kit(door, path), path


def _written_by_the_kit(door, path):
    """The text of ``path`` that the kit, not the submission, chose. The similarity pass keeps
    each submission's code as data (``OUT/similarity/<stem>.json``'s ``parts``), and an attack's
    code holds the marker: that quotation is left out, everything else of the record is kept,
    and the record must be one of a graded file's, in the kit's format."""
    text = path.read_text("utf-8", "replace")
    if path.parent.name != "similarity" or path.parent.parent != door.out:
        return text
    data = json.loads(text)
    assert set(data) == {"format", "file", "stem", "parts", "names"}, path
    assert data["stem"] == path.stem and data["file"] in door.records, path
    assert all(isinstance(part, str) for part in data["parts"].values()), path
    return json.dumps({**data, "parts": sorted(data["parts"])})


PUBLIC_ITEM = re.compile(r"^- (Prueba pública|\d+ pruebas públicas)", re.M)
# A hidden case's error may say the line the same error came out of in the public tests: that
# line was chosen on public inputs (grading.py's public_lines), and it is the student's code.
PUBLIC_LINE = re.compile(r"; en las pruebas públicas, este mismo error (?:salta en|iba por) tu "
                         r"línea `[^`\n]*`")


def section(seen_by, question):
    """What ``question``'s student reads about its hidden cases: in its box, in its section of
    the feedback and in its verdicts' messages (all three where the door writes them). Not its
    public tests' messages, which the notebook showed the student before any hidden input
    existed, and which quote the student's values on the public inputs, nor a public line."""
    def hidden_part(body):
        return PUBLIC_LINE.sub("", PUBLIC_ITEM.split(body)[0])

    texts = [hidden_part(seen_by["boxes"].get(question, ""))]
    if seen_by["feedback"] is not None:
        texts.append(hidden_part(seen_by["feedback"].split(f"### `{question}`: ")[1]
                                 .split("\n## ")[0].split("\n### ")[0]))
        texts += [PUBLIC_LINE.sub("", m) for v in seen_by["record"].verdicts
                  if v.question == question and not v.public for m in v.messages]
    return "\n".join(texts)


def arrays_in(value):
    """Every ndarray in a case's inputs, the heads' matrices among them."""
    if isinstance(value, np.ndarray):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(
        value, (list, tuple)) else []
    return [array for item in items for array in arrays_in(item)]


def shown_hidden_values(hidden, text):
    """The hidden arrays three or more of whose values ``text`` spells to six decimals, with
    those values: ``{(case, array): [values]}``.

    One or two values are not a leak. The record keeps the notebook's own printed output, and
    this leaky notebook prints some 1,200 six-decimal numbers of its own data there (the
    demo's inputs, step 9's): a normal draw shares its six decimals with one of them about
    twice in 10⁴ (measured), so some of a thousand hidden values does in a session in five
    (the harness adds the attack's cells with new random ids, so each session draws anew).
    Three of one array (80 values at most) by chance: about one session in 10⁵. A leak spells
    them all."""
    found = {}
    for case, inputs in enumerate(hidden):
        for index, array in enumerate(arrays_in(inputs)):
            if array.dtype == bool:
                continue
            spelled = [f"{x:.6f}" for x in array.ravel() if f"{x:.6f}" in text]
            if len(spelled) >= 3:
                found[(case, index)] = spelled
    return found


def case_sizes_of(arena, notebook, function):
    from attention.shapes import case_sizes

    return [case_sizes(function, inputs)
            for inputs in arena.leaked_inputs(notebook, function).values()]


LEAKS = {"15_leak.ipynb": ("leak", ("attention", "multihead")),
         "26_small_ints.ipynb": ("spelling", ("attention", "multihead"))}


@pytest.mark.parametrize("name", sorted(LEAKS))
def test_hidden_inputs_never_reach_what_students_see(arena, door, name):
    notebook = getattr(arena, LEAKS[name][0])
    seen_by = arena.seen_by_students(door, name)
    everything = "\n".join([seen_by["feedback"] or "", *seen_by["outputs"]] + (
        [seen_by["record"].to_json()] if seen_by["record"] else []))
    for function in LEAKS[name][1]:
        hidden = arena.leaked_inputs(notebook, function).values()
        # Long decimals anywhere (the notebook's own demo cells print the demo's inputs, which
        # are the student's to see; the hidden ones never).
        assert not shown_hidden_values(hidden, everything)
        # Any number, small integers included: in what the student reads of this function,
        # every integer is a size of one of its cases or one of the kit's own small numbers
        # (steps, counts), never one the code spelled.
        allowed = case_sizes_of(arena, notebook, function)
        described = {int(n) for case in cases_for(function)
                     for n in re.findall(r"\d+", case.description)}  # «del orden de 1000»
        shown = [int(n) for n in re.findall(r"(?<![\w.,])\d+(?![\w.,]\d)", section(seen_by,
                                                                                  function))]
        assert not [n for n in shown if n > 10 and n not in described
                    and not any(n in sizes for sizes in allowed)]
        if name == "26_small_ints.ipynb":
            spelled = {n for inputs in hidden
                       for n in attacks.spelled_numbers(attacks.SPELLS_IN_SMALL_INTEGERS,
                                                        function, inputs)}
            # (The empty array's 0 is a size of every case.)
            assert not {n for n in spelled if not any(n in sizes for sizes in allowed)} & set(
                shown)


def test_control_the_spelled_numbers_carry_the_hidden_inputs(arena):
    # What the sandbox would report of the error and of the shape, without the case's sizes
    # in the way: the digits of Q (pairs, from 20) and of X (triples, from 1000).
    hidden = next(iter(arena.leaked_inputs(arena.spelling).values()))
    spelled = attacks.spelled_numbers(attacks.SPELLS_IN_SMALL_INTEGERS, "attention", hidden)
    digits = "".join(f"{n - 20:02d}" for n in spelled[:4])
    assert digits == f"{abs(hidden['Q'].ravel()[0]):.6f}".replace(".", "")[:7] + digits[7:]
    multihead = next(iter(arena.leaked_inputs(arena.spelling, "multihead").values()))
    sizes = attacks.spelled_numbers(attacks.SPELLS_IN_SMALL_INTEGERS, "multihead", multihead)
    assert sizes[0] == 0 and all(1000 <= n < 2000 for n in sizes[1:])
    assert f"{sizes[1] - 1000:03d}" == f"{abs(multihead['X'].ravel()[0]):.6f}".replace(".", "")[:3]


ZEROS = ("attention", "multihead", "positional_encoding", "transformer_block")


def test_a_zeros_answer_reads_no_reference_value(arena, door):
    seen_by = arena.seen_by_students(door, "27_zeros.ipynb")
    for function in ZEROS:
        text = section(seen_by, function)
        assert "a partir de" in text or "no suma 1" in text, (function, text)
        assert not re.findall(r"\d[.,]\d", text), (function, text)


def test_control_a_zeros_answers_largest_error_is_the_references_largest_value(arena):
    from reference import attention as reference

    for inputs in arena.leaked_inputs(arena.files["27_zeros.ipynb"]).values():
        output, _ = reference.attention(**inputs)
        error = np.abs(np.zeros_like(output) - output)
        at = np.unravel_index(np.argmax(error), error.shape)
        assert error[at] == np.abs(output).max() and abs(output[at]) == error[at]


def test_a_table_in_the_uploads_name_or_the_zips_answers_nothing(arena, door):
    for name in (arena.renamed_name, "29_zip_renamed.zip"):
        if name in door.totals:
            assert door.totals[name] == door.totals[STUB] == 0, name


def test_the_job_sees_exactly_the_world_its_inputs_hash(arena, door, autograder_zip):
    import hashlib

    from kit_autograder.bundle import OpenedZip
    from kit_autograder.hidden_inputs import world

    with OpenedZip(autograder_zip) as bundle:
        support = bundle.support_files()
    expected = sorted([name, hashlib.sha256(data).hexdigest()]
                      for name, data in {**world(arena.renamed, {}, support), **support}.items())
    for name in (arena.renamed_name, "29_zip_renamed.zip"):
        if name not in door.totals:
            continue
        seen_by = arena.seen_by_students(door, name)
        text = seen_by["record"].output if seen_by["record"] else seen_by["outputs"][0]
        (line,) = [line for line in text.splitlines() if line.startswith("MUNDO ")]
        assert json.loads(line[len("MUNDO "):]) == expected, name


def test_control_the_table_in_a_name_answers_its_case_where_the_job_sees_that_name(arena,
                                                                                    tmp_path):
    from attention.judge import judge
    from kit_autograder.verdicts.in_process import run_in_process

    # The same bytes, hence the same inputs, under both names: only the name differs.
    assert arena.files[arena.renamed_name] == arena.renamed
    inputs = arena.leaked_inputs(arena.renamed)[arena.TABLE_CASE]
    for name in (arena.renamed_name, arena.table_name("29_")):
        folder = tmp_path / name[:3]
        folder.mkdir()
        (folder / name).write_bytes(arena.renamed)
        space = {}
        previous = os.getcwd()
        os.chdir(folder)
        try:
            exec(attacks.READS_ITS_OWN_NAME, space)
            assert judge("attention", inputs, run_in_process(space["attention"], inputs, 2)) == []
        finally:
            os.chdir(previous)


MARKUP_TAGS = ("archivo", "kernel", "salida", "mensaje", "línea", "excepción", "definición")


def test_no_element_script_or_heading_comes_from_a_students_text(arena, door, browser):
    names = [MARKUP_NAME, "33_markup_extension.ipynb"] + (
        ["32_two_notebooks.zip"] if door.records else [])
    for name in names:
        seen_by = arena.seen_by_students(door, name)
        pages = [seen_by["outputs"]] + ([[seen_by["feedback"]]] if seen_by["feedback"] else [])
        for texts in pages:
            found = seen(browser, to_html(texts))
            assert inert(found), (name, found)
    # The texts are there, as text: the test saw the fields it meant to.
    shown = "\n".join(arena.seen_by_students(door, MARKUP_NAME)["outputs"])
    assert [tag for tag in MARKUP_TAGS if tag not in shown] == []
    shown = "\n".join(arena.seen_by_students(door, "33_markup_extension.ipynb")["outputs"])
    assert "claveextra" in shown
    if door.records:
        assert inert(seen(browser, (door.out / "report.html").read_text("utf-8")))


def test_control_the_markup_would_run_and_forge_a_heading_unescaped(browser):
    for text in (payload("archivo", slash=False), payload("salida")):
        found = seen(browser, to_html([text]))
        assert found["ran"] >= 1 and {"NOTA FINAL 10/10", "NOTA FINAL 10 de 10"} & set(
            found["headings"])


def test_a_kernelspec_that_is_a_string_is_graded_with_a_note(arena, door):
    assert door.totals["31_kernelspec_string.ipynb"] == 20
    seen_by = arena.seen_by_students(door, "31_kernelspec_string.ipynb")
    assert "no dice qué kernel usa" in "\n".join(seen_by["outputs"])


def test_a_table_of_leaked_answers_answers_nothing(door):
    if door.records:
        assert door.records["16_table.ipynb"].scores["attention"][0] == 0
    else:
        assert gradescope_scores(door.results["16_table.ipynb"])["attention"] == 0


def test_a_function_that_never_returns_fails_closed_from_that_case_on(door):
    # Its positional_encoding answers the notebook and the even, small hidden case, and never
    # returns on the others; nothing after that is taken on trust.
    if door.records:
        record = door.records["23_hang.ipynb"]
        assert record.scores["positional_encoding"][0] <= 1
        assert record.scores["transformer_block"][0] == 0
        # (Its public tests ran before any hidden case, while it still answered.)
        from attention.cases import cases_for

        assert [v.unverified for v in record.verdicts
                if v.question == "transformer_block" and not v.public] == \
            ["time"] * len(cases_for("transformer_block"))
        assert any(flag.kind in ("límite", "ejecución") for flag in record.flags)
    else:
        scores = gradescope_scores(door.results["23_hang.ipynb"])
        assert scores["positional_encoding"] <= 1 and scores["transformer_block"] == 0


def test_a_huge_notebook_is_refused_with_its_reason_before_parsing(door):
    if door.records:
        record = door.records["25_huge.ipynb"]
        assert not record.graded and "MB" in record.reason or "celdas" in record.reason


def test_no_packet_or_connection_from_any_submission_reached_the_host(arena, door):
    time.sleep(0.5)
    assert not arena.listener.saw(MARKER)


# --- positive controls: without the sandbox, each attack does what it claims ---------------------


def test_control_forged_outputs_land_without_the_sandbox(tmp_path):
    # A Gradescope folder of the control's own: the arena's pattern would reach the folders of
    # another worker's Gradescope runs (it once forged test_otter_paths' results.json).
    (tmp_path / "gradescope-control" / "results").mkdir(parents=True)
    targets = attacks.Targets([tmp_path / "out"], MARKER, 1, 1, "127.0.0.1",
                              roots=[str(tmp_path / "gradescope-*")])
    attacks.run_plainly(attacks.forge_outputs_cell(targets))
    assert MARKER in (tmp_path / "out" / "final_grades.csv").read_text()
    assert (tmp_path / "out" / "results" / "00_classmate.json").exists()
    forged = tmp_path / "gradescope-control" / "results" / "results.json"
    assert MARKER in forged.read_text()


def test_control_a_daemon_outlives_its_parent_without_the_sandbox(tmp_path):
    marker = MARKER + "control"
    targets = attacks.Targets([tmp_path], marker, 1, 1, "127.0.0.1")
    attacks.run_plainly(attacks.daemon_cell(targets, delay=30))
    try:
        assert attacks.wait_until(lambda: attacks.processes_with(marker), 5)
    finally:
        attacks.kill_all(attacks.processes_with(marker))


def test_control_a_pth_file_lands_in_the_venv_without_the_sandbox(tmp_path):
    # The grader's own site-packages are writable by the grader's user, so unconfined the
    # attack would write there. The control writes into a site folder of its own and shows
    # that the .pth then runs in the next Python: in the real venv it would run in every Python
    # the other xdist worker starts meanwhile.
    assert attacks.site_dirs() and all(os.access(d, os.W_OK) for d in attacks.site_dirs())
    site = tmp_path / "site-packages"
    site.mkdir()
    targets = attacks.Targets([], MARKER, 1, 1, "127.0.0.1", site_dirs=[str(site)])
    attacks.run_plainly(attacks.pth_cell(targets))
    assert (site / "zz_kit_attack.pth").exists()
    after = subprocess.run([sys.executable, "-c", "import os, site; site.addsitedir(os.environ"
                            "['SITE']); print(os.environ.get('KIT_PWNED'))"],
                           env={**os.environ, "SITE": str(site)}, capture_output=True, text=True)
    assert after.stdout.strip() == MARKER


def test_control_the_parser_bomb_breaks_a_naive_parser():
    with pytest.raises((MemoryError, RecursionError, SyntaxError)):
        ast.parse(attacks.PARSER_BOMB)


def test_control_the_leaky_function_carries_the_inputs_in_its_message(arena):
    space = {}
    exec(attacks.LEAKY_FUNCTIONS["attention"], space)
    inputs = next(iter(arena.leaked_inputs().values()))
    with pytest.raises(Exception) as raised:
        np.array(space["attention"](**inputs), dtype=float)
    assert f"{inputs['Q'].ravel()[0]:.6f}" in str(raised.value)
    # What the leak test looks for: the message would fail it.
    assert shown_hidden_values([inputs], str(raised.value))


def test_control_the_table_earns_full_marks_on_the_inputs_it_was_built_from(arena):
    from attention.judge import judge
    from kit_autograder.verdicts.in_process import run_in_process

    space = {}
    exec(arena.table_source(), space)
    for inputs in arena.leaked_inputs().values():
        assert judge("attention", inputs, run_in_process(space["attention"], inputs, 2)) == []


def test_control_udp_and_tcp_reach_the_host_without_the_sandbox():
    listener = attacks.Listener()
    try:
        udp, tcp = listener.ports
        marker = MARKER + "net"
        attacks.run_plainly(attacks.network_cell(
            attacks.Targets([], marker, udp, tcp, attacks.host_ip())))
        assert attacks.wait_until(lambda: listener.saw(marker), 5)
    finally:
        listener.close()


def test_control_the_deep_tree_breaks_a_recursive_clean_up(tmp_path):
    attacks.run_plainly(attacks.deep_tree_cell(depth=1500, files=10), cwd=str(tmp_path))
    with pytest.raises(RecursionError):
        shutil.rmtree(tmp_path / "d")
    subprocess.run(["rm", "-rf", str(tmp_path / "d")], check=True)


def test_control_hog_processes_outlive_their_parent_without_the_sandbox():
    # A forked child keeps its parent's command line, so the marker finds every hog.
    marker = MARKER + "hog"
    attacks.run_plainly(attacks.process_hog_cell(count=3) + f"\n# {marker}\n")
    survivors = attacks.processes_with(marker)
    attacks.kill_all(survivors)
    assert len(survivors) == 3


def test_control_the_disk_fill_writes_without_a_cap(tmp_path):
    attacks.run_plainly(attacks.disk_fill_cell(megabytes=64).replace(
        '(os.getcwd(), os.environ.get("TMPDIR", "/tmp"), "/tmp", "/var/tmp", "/dev/shm")',
        "(os.getcwd(),)"), cwd=str(tmp_path))
    assert (tmp_path / "fill.bin").stat().st_size == 64 << 20


def test_control_a_kill_reaches_its_parent_without_the_sandbox():
    parent = subprocess.Popen([sys.executable, "-c",
                               "import subprocess, sys; subprocess.run([sys.executable, '-c', "
                               "'import os, signal; os.kill(os.getppid(), signal.SIGKILL)'])"])
    assert parent.wait(timeout=30) == -9


def test_control_the_secret_reader_answers_with_the_reference_without_the_sandbox(arena):
    from attention.judge import judge
    from kit_autograder.verdicts.in_process import run_in_process

    space = {}
    exec(attacks.secret_reader_function(arena.targets), space)
    inputs = next(iter(arena.leaked_inputs().values()))
    assert judge("attention", inputs, run_in_process(space["attention"], inputs, 2)) == []


def test_control_a_call_that_blocks_the_alarm_is_not_stopped_by_it():
    source = attacks.HANG_IN_CALL + (
        "\nimport signal, sys\nsignal.signal(signal.SIGALRM, lambda *a: sys.exit(3))\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.5)\npositional_encoding(6, 7)")
    with pytest.raises(subprocess.TimeoutExpired):
        attacks.run_plainly(source, timeout=3)
