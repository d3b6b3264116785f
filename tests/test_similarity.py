"""The similarity pass (issue 50): what is compared, how, and what a person is shown.

The planted class (``similarity_class.py``: independent students drawn from a grammar, and ten
copies disguised as students disguise them) is compared here without grading it: its kept
parts are what ``make grade`` keeps, made from the same notebooks; the slow test at the end
goes through ``make grade``'s engine and the report.
"""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

import similarity_class as planted_class
from kit_autograder.bundle import PLUGIN
from kit_autograder.similarity import compare, flags, parts, section

STUB = '''def attention(Q, K, V, mask=None):
    """Atención de producto escalar escalado: devuelve (salida, pesos)."""
    raise NotImplementedError("Implementa attention")
'''
GIVEN = '''def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''
QUESTION = ("**Pregunta 1.** Define la atención y la arquitectura Transformer sin usar una marca "
            "o un framework como definición.")
RECEIVED = [{"cell_type": "code", "source": STUB}, {"cell_type": "code", "source": GIVEN},
            {"cell_type": "markdown", "source": QUESTION}]

STUDENT = '''def attention(Q, K, V, mask=None):
    """Atención de producto escalar escalado: devuelve (salida, pesos)."""
    scores = Q @ K.T / np.sqrt(K.shape[-1])  # escalo
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
'''
RENAMED = '''def attention(Q, K, V, mask=None):
    # otra forma de llamarlo
    s = Q @ K.T / np.sqrt(K.shape[-1])

    w = softmax(s, axis=-1)
    return w @ V, w
'''
OTHER = '''def attention(Q, K, V, mask=None):
    out = np.einsum("ik,jk->ij", Q, K) * K.shape[1] ** -0.5
    return np.einsum("ij,jv->iv", softmax(out), V), softmax(out)
'''


def shared():
    return parts.Shared({parts.SETTING: parts.shared_material(RECEIVED)})


def test_signature_docstring_and_received_code_are_left_out_of_a_function():
    student = STUDENT + "\n" + GIVEN  # a student who pasted the given softmax again
    found = parts.code_parts([student], ["attention"], shared())
    assert "Atención de producto" not in found["attention"]
    assert "def attention" not in found["attention"]
    assert "scores = Q @ K.T" in found["attention"]
    assert parts.HELPERS not in found  # the pasted softmax is what everybody received
    # Positive control: without the build's material, the pasted helper is the student's.
    assert "def softmax" in parts.code_parts([student], ["attention"], parts.Shared())[
        parts.HELPERS]


def test_a_question_copied_into_an_answer_is_left_out():
    answer = QUESTION + " La atención pondera los valores según las claves."
    kept = shared().own_text(answer)
    assert "marca o un framework" not in kept and "pondera los valores" in kept
    assert "marca o un framework" in parts.Shared().own_text(answer)  # control


def test_the_zip_carries_what_every_student_received(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as zf:
        config = json.loads(zf.read("otter_config.json"))
    settings = next(entry[PLUGIN] for entry in config["plugins"] if PLUGIN in entry)
    material = settings[parts.SETTING]
    assert len(material["statements"]) > 50 and len(material["passages"]) > 1000


def test_renaming_and_recommenting_leave_the_fingerprints_unchanged():
    def body(source):
        return parts.code_parts([source], ["attention"], shared())["attention"]

    same = compare.fingerprint("attention", body(STUDENT)).hashes
    assert len(same) and set(compare.fingerprint("attention", body(RENAMED)).hashes) == set(same)
    # Control: another implementation shares nothing.
    assert not set(compare.fingerprint("attention", body(OTHER)).hashes) & set(same)


FINGERPRINTS = ("from kit_autograder.similarity import compare; "
                "print(sorted(compare.fingerprint('attention', 'x = np.sqrt(K.shape[-1]) + Q @ "
                "K.T\\nreturn x').hashes.tolist()))")
COPYDETECT = ("import io, copydetect; print(sorted(copydetect.CodeFingerprint('a.py', 20, 5, "
              "fp=io.StringIO('x = np.sqrt(K.shape[-1]) + Q @ K.T\\nreturn x')).hashes))")


def _in_process_with_seed(code, seed):
    environment = {**os.environ, "PYTHONHASHSEED": str(seed)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environment, check=True).stdout


def test_fingerprints_are_the_same_in_every_process():
    assert _in_process_with_seed(FINGERPRINTS, 1) == _in_process_with_seed(FINGERPRINTS, 2)
    # Positive control: copydetect's own fingerprints depend on the process's hash seed.
    assert _in_process_with_seed(COPYDETECT, 1) != _in_process_with_seed(COPYDETECT, 2)


def test_what_most_of_the_class_shares_is_left_out_of_every_score():
    printed = {i: compare.fingerprint("attention", "w = softmax(Q @ K.T / np.sqrt(d))\n"
                                                   "return w @ V, w") for i in range(40)}
    assert compare.score_part("attention", printed).pairs == {}
    printed[40] = compare.fingerprint("attention", "z = np.einsum('ik,jk->ij', Q, K) / np.sqrt(d)")
    printed[41] = compare.fingerprint("attention", "z = np.einsum('ik,jk->ij', Q, K) / np.sqrt(d)")
    assert compare.score_part("attention", printed).pairs == {(40, 41): 1.0}


def test_the_same_uncommon_mistake_makes_a_pair_stronger():
    kept = [{"file": f"{i}.ipynb", "stem": str(i), "parts": {"attention": text}}
            for i, text in enumerate([STUDENT, RENAMED] + [
                f"v{i} = np.tanh(Q * {i}) @ np.arange({i} * 7)\nreturn v{i}" for i in range(30)])]
    mistakes = {entry["stem"]: {} for entry in kept}  # every one graded, two with the mistake
    mistakes.update({"0": {"attention": {"attention.no_sqrt_dk"}},
                     "1": {"attention": {"attention.no_sqrt_dk"}}})
    plain, _ = flags.analyse(kept, {}, cutoff=0)
    with_mistake, _ = flags.analyse(kept, mistakes, cutoff=0)
    assert plain[0].a["file"] == "0.ipynb" and plain[0].b["file"] == "1.ipynb"
    assert with_mistake[0].strength > plain[0].strength
    assert with_mistake[0].findings[0].mistakes == ["attention.no_sqrt_dk"]


# --- the planted class -----------------------------------------------------------------------

FIELDS = {"supuesto": "assumption", "medicion": "measurement", "conclusion": "conclusion",
          "limitacion": "limitation", "riesgo": "risk"}


@pytest.fixture(scope="module")
def planted(built_dist, autograder_zip, tmp_path_factory):
    """The planted class, kept as ``make grade`` keeps it, and its flags."""
    student = nbformat.read(built_dist / "student" / "notebook_student.ipynb", as_version=4)
    klass = planted_class.build(student)
    with zipfile.ZipFile(autograder_zip) as zf:
        config = json.loads(zf.read("otter_config.json"))
    material = parts.Shared(next(e[PLUGIN] for e in config["plugins"] if PLUGIN in e))
    out = tmp_path_factory.mktemp("planted")
    for name, data in klass.files.items():
        path = out / "submissions" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        texts = {FIELDS[k]: v for k, v in klass.students[name].challenge.items()}
        parts.keep(out, Path(name).stem, name, path, planted_class.GRADED, material, texts)
    flagged, compared = flags.analyse(parts.load_all(out))
    keys = [tuple(sorted((pair.a["file"], pair.b["file"]))) for pair in flagged]
    copies = {tuple(sorted((c, s))): plant for c, (s, plant) in klass.planted.items()}
    return klass, flagged, keys, copies


def test_the_planted_class_has_sixty_independent_students_and_ten_copies(planted):
    klass, _, _, copies = planted
    assert len(klass.files) - len(copies) >= 60 and len(copies) == 10


@pytest.mark.parametrize("disguise", sorted(planted_class.DISGUISES) + ["paraphrase"])
def test_each_disguise_changes_what_a_plain_comparison_sees(planted, disguise):
    """The control of each disguise: the copied text is not the source's text, so a detector
    comparing text as it is would not find it."""
    klass, _, _, copies = planted
    uses = [(c, s, p) for c, (s, p) in klass.planted.items()
            if disguise in p.disguises or (disguise == "paraphrase" and p.written)]
    assert uses
    heads = {f: ["def f():"] for f in planted_class.GRADED}  # the bodies are what differ
    for copy, source, plant in uses:
        if disguise == "paraphrase":
            question = plant.written[0]
            assert klass.students[copy].answers[question] != klass.students[source].answers[question]
            continue
        changed = [f for f in plant.functions
                   if klass.students[copy].code[f].render(heads[f])
                   != klass.students[source].code[f].render(heads[f])]
        assert changed, f"{disguise} left {copy}'s copy of {source} unchanged"


def test_flagged_copies_and_independent_pairs_today(planted):
    """What the pass does on the planted class now: the floor a change must not go below."""
    _, flagged, keys, copies = planted
    caught = [key for key in keys if key in copies]
    independent = [key for key in keys if key not in copies]
    assert len(caught) >= 7, [copies[k].name for k in copies if k not in caught]
    assert len(independent) <= 2, independent
    # The flagged copies come first: no independent pair outranks more than two of them.
    assert all(key in copies for key in keys[:5])


@pytest.mark.xfail(strict=True, reason="issue 50's target, not met yet: the pass catches 7 of "
                                       "the 10 planted copies (see docs/instructors.md)")
def test_the_report_flags_nine_of_ten_planted_copies_and_at_most_two_independent_pairs(planted):
    _, flagged, keys, copies = planted
    assert sum(key in copies for key in keys) >= 9
    assert sum(key not in copies for key in keys) <= 2


def test_the_section_marks_the_shared_passages_of_a_flagged_pair(planted):
    _, flagged, _, copies = planted
    page = section.render(flagged, {"attention": 1})
    assert page.count("<mark>") > 10 and 'id="similitud"' in page
    assert 'tabindex="0"' in page  # the scrolling texts take the keyboard's focus
