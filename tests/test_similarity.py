"""The similarity pass (issue 50): what is compared, how, and what a person is shown.

The planted classes (``similarity_class.py``: independent students written as a class writes,
and ten copies disguised as students disguise them) are compared here without grading them:
their kept parts are what ``make grade`` keeps, made from the same notebooks, on two seeds with
the same settings. The last test goes through ``make grade``'s command line and ``make report``.
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

ROOT = Path(__file__).resolve().parent.parent

STUB = '''def attention(Q, K, V, mask=None):
    """Atención de producto escalar escalado: devuelve (salida, pesos)."""
    raise NotImplementedError("Implementa attention")
'''
GIVEN = '''def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''
DEMO = '''scores = X @ q / np.sqrt(4)
weights = softmax(scores)
'''
QUESTION = ("**Pregunta 1.** Define la atención y la arquitectura Transformer sin usar una marca "
            "o un framework como definición.")
RECEIVED = [{"cell_type": "code", "source": STUB}, {"cell_type": "code", "source": GIVEN},
            {"cell_type": "code", "source": DEMO},
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


def body(source, functions=("attention",), material=None):
    return parts.code_parts([source], functions, material or shared())[functions[0]]


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


def test_a_line_a_demo_cell_also_has_stays_in_the_function_that_writes_it():
    # The notebook's demo has `weights = softmax(scores)`; in a student's attention it is theirs.
    student = STUDENT.replace("softmax(scores, axis=-1)", "softmax(scores)")
    assert "weights = softmax(scores)" in body(student)
    # Control: the same line in a cell of its own is the demo's, and is left out.
    assert parts.HELPERS not in parts.code_parts([student, DEMO], ["attention"], shared())


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
    assert {"softmax", "layer_norm", "init_multihead"} <= set(material["names"])
    assert len(material["in_functions"]) < len(material["statements"])


def features(text, part="attention", own=frozenset()):
    return set(compare.features(part, text, own).tolist())


def test_renaming_and_recommenting_leave_the_features_unchanged():
    same = features(body(STUDENT))
    assert same and features(body(RENAMED)) == same
    # Control: another implementation shares little.
    assert len(features(body(OTHER)) & same) < len(same) / 4


LOOP = '''outs = []
for W_Q, W_K, W_V in heads:
    Q_h = X @ W_Q
    salida = attention(Q_h, X @ W_K, X @ W_V, mask)[0]
    outs.append(salida)
return np.concatenate(outs, axis=1) @ W_O
'''
COMPREHENSION = '''cabezas = [attention(X @ a, X @ b, X @ c, mask)[0] for a, b, c in heads]
return np.concatenate(cabezas, axis=1) @ W_O
'''


def test_a_loop_that_appends_and_the_comprehension_it_is_read_the_same():
    assert features(LOOP, "multihead") == features(COMPREHENSION, "multihead")
    # Control: as written, the comprehension is no statement of the loop's.
    own = compare.bound_names(LOOP) | compare.bound_names(COMPREHENSION)
    as_written = [compare._statements([t for t, _, _ in compare.code_tokens(text, own)])
                  for text in (LOOP, COMPREHENSION)]
    assert as_written[1][0] not in as_written[0]


def test_which_name_goes_where_survives_renaming():
    # A copy keeps which projection feeds which argument, whatever the names: the keys used
    # as values is one function, the three projections another.
    keys_twice = "return attention(X @ a, X @ b, X @ b, mask)[0]"
    renamed = "return attention(X @ q1, X @ k1, X @ k1, mask)[0]"
    own = frozenset({"a", "b", "c", "q1", "k1"})  # bound by the loop a student wrote around it
    assert features(renamed, "multihead", own) == features(keys_twice, "multihead", own)
    assert features(keys_twice, "multihead", own) != features(
        "return attention(X @ a, X @ b, X @ c, mask)[0]", "multihead", own)


def test_a_helper_renamed_with_the_rest_of_the_copy_is_still_the_same_function():
    source = "def _freq(d):\n    return 1 / 10000 ** (np.arange(0, d, 2) / d)\n\n\n" \
             "def positional_encoding(n_positions, d_model):\n    omega = _freq(d_model)\n" \
             "    return np.outer(np.arange(n_positions), omega), omega\n"
    copy = source.replace("_freq", "frecuencias").replace("omega", "w")
    found = []
    for text in (source, copy):
        names = {}
        kept = parts.code_parts([text], ["positional_encoding"], shared(), names)
        found.append((kept["positional_encoding"], frozenset(names["positional_encoding"])))
    assert features(found[0][0], "positional_encoding", found[0][1]) == \
        features(found[1][0], "positional_encoding", found[1][1])
    # Control: without the names the helpers' cell binds, the helper's name tells them apart.
    assert features(found[0][0], "positional_encoding") != \
        features(found[1][0], "positional_encoding")


def test_case_and_accents_do_not_hide_a_copied_answer():
    answer = "La atención compara cada consulta con todas las claves del diccionario."
    assert features(answer.lower().replace("ó", "o"), "written:1") == features(answer,
                                                                                 "written:1")
    assert features(answer.replace("claves", "llaves"), "written:1") != features(answer,
                                                                                  "written:1")


FEATURES = ("from kit_autograder.similarity import compare; print(sorted(compare.features("
            "'attention', 'x = np.sqrt(K.shape[-1]) + Q @ K.T\\nreturn x').tolist()))")


def _in_process_with_seed(code, seed):
    environment = {**os.environ, "PYTHONHASHSEED": str(seed)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environment, check=True).stdout


def test_features_are_the_same_in_every_process():
    assert _in_process_with_seed(FEATURES, 1) == _in_process_with_seed(FEATURES, 2)
    # Positive control: Python's own hash of a text depends on the process's hash seed.
    assert _in_process_with_seed("print(hash('np.sqrt'))", 1) != \
        _in_process_with_seed("print(hash('np.sqrt'))", 2)


def test_what_the_whole_class_writes_weighs_nothing():
    common = "w = softmax(Q @ K.T / np.sqrt(d))\nreturn w @ V, w"
    printed = {i: compare.features("attention", common) for i in range(40)}
    assert compare.score_part("attention", printed).pairs == {}
    rare = "z = np.einsum('ik,jk->ij', Q, K) / np.sqrt(d)\nreturn softmax(z) @ V, softmax(z)"
    printed[40] = printed[41] = compare.features("attention", rare)
    scores = compare.score_part("attention", printed).pairs
    rare_pair = scores.pop((40, 41))
    assert rare_pair > 50 * max(scores.values())  # the 40 now weigh log10(42/40) each


def test_the_same_uncommon_mistake_makes_a_pair_stronger():
    kept = [{"file": f"{i}.ipynb", "stem": str(i), "parts": {"attention": text}}
            for i, text in enumerate([body(STUDENT), body(RENAMED)] + [
                f"v{i} = np.tanh(Q * {i}) @ np.arange({i} * 7)\nreturn v{i}" for i in range(30)])]
    mistakes = {entry["stem"]: {} for entry in kept}  # every one graded, two with the mistake
    mistakes.update({"0": {"attention": {"attention.no_sqrt_dk"}},
                     "1": {"attention": {"attention.no_sqrt_dk"}}})
    plain, _ = flags.analyse(kept, {}, cutoff=-99)
    with_mistake, _ = flags.analyse(kept, mistakes, cutoff=-99)
    assert (plain[0].a["file"], plain[0].b["file"]) == ("0.ipynb", "1.ipynb")
    assert with_mistake[0].evidence > plain[0].evidence
    assert with_mistake[0].findings[0].mistakes == ["attention.no_sqrt_dk"]


def test_the_cutoff_setting_reads_a_number_or_says_what_to_give():
    assert flags.cutoff_setting("") is None and flags.cutoff_setting(" 2,5 ") == 2.5
    assert flags.cutoff_setting("-1") == -1
    with pytest.raises(ValueError, match=r"^SIMILARITY_CUTOFF=mucho: not a number; give the "
                                         r"strength from which similar submissions are listed"):
        flags.cutoff_setting("mucho")


# --- the planted classes ----------------------------------------------------------------------

SEEDS = (50, 51)  # the same settings on both


@pytest.fixture(scope="module", params=SEEDS, ids=[f"seed{s}" for s in SEEDS])
def planted(request, built_dist, autograder_zip, tmp_path_factory):
    """A planted class, kept as ``make grade`` keeps it, and what the pass lists."""
    student = nbformat.read(built_dist / "student" / "notebook_student.ipynb", as_version=4)
    klass = planted_class.build(student, n_independent=60, seed=request.param)
    out = tmp_path_factory.mktemp(f"planted{request.param}")
    planted_class.keep(klass, out, autograder_zip)
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
    for copy, source, plant in uses:
        if disguise == "paraphrase":
            changed = [q for q in plant.written
                       if klass.students[copy].answers[q] != klass.students[source].answers[q]]
        else:
            changed = [f for f in plant.functions
                       if klass.students[copy].code[f] != klass.students[source].code[f]]
        assert changed, f"{disguise} left {copy}'s copy of {source} unchanged"


def test_the_report_lists_nine_of_ten_planted_copies_and_at_most_two_independent_pairs(planted):
    _, flagged, keys, copies = planted
    listed = [copies[key].name for key in keys if key in copies]
    independent = [key for key in keys if key not in copies]
    assert len(listed) >= 9, sorted(set(p.name for p in copies.values()) - set(listed))
    assert len(independent) <= 2, independent
    # The copies come first: no independent pair outranks the ninth copy.
    assert all(key in copies for key in keys[:9])


def test_the_section_marks_the_shared_passages_of_a_flagged_pair(planted):
    _, flagged, _, copies = planted
    page = section.render(flagged, {"attention": 1})
    assert page.count("<mark>") > 10 and 'id="similitud"' in page
    assert 'tabindex="0"' in page  # the scrolling texts take the keyboard's focus
    assert "(1 parte:" in page and "(2 partes:" in section.render(flagged, {"a": 1, "b": 2})


# --- make grade and make report --------------------------------------------------------------


def batch(folder, out, autograder_zip, *extra):
    return subprocess.run(
        [sys.executable, "-m", "kit_autograder.batch", "--autograder", str(autograder_zip),
         "--submissions", str(folder), "--out", str(out), "--jobs", "2", *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=900)


def report(out, autograder_zip, *extra):
    return subprocess.run(
        [sys.executable, "-m", "kit_autograder.report.class_report", "--autograder",
         str(autograder_zip), "--out", str(out), *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=300)


def listed_pairs(out):
    import csv

    with open(out / section.CSV_NAME, newline="", encoding="utf-8") as f:
        return {tuple(sorted((row["file_a"], row["file_b"]))) for row in csv.DictReader(f)}


def test_make_grade_keeps_every_part_and_lists_the_copy_from_its_cutoff(built_dist,
                                                                        autograder_zip,
                                                                        tmp_path):
    student = nbformat.read(built_dist / "student" / "notebook_student.ipynb", as_version=4)
    copy = planted_class.Plant("casi_todo", planted_class.GRADED, ("rename", "comments"),
                               written=("q1", "q2", "q3"), challenge=True)
    klass = planted_class.build(student, n_independent=12, seed=7, planted=(copy,))
    folder = tmp_path / "entregas"
    folder.mkdir()
    for name, data in klass.files.items():
        (folder / name).write_bytes(data)
    (folder / "roto.ipynb").write_bytes(b"{ no es un cuaderno")
    out = tmp_path / "notas"
    graded = batch(folder, out, autograder_zip, "--similarity-cutoff", "1000")
    assert graded.returncode == 0, graded.stderr[-3000:]
    kept = {path.stem: json.loads(path.read_text("utf-8"))
            for path in (out / parts.FOLDER).glob("*.json")}
    assert set(kept) == {Path(name).stem for name in klass.files} | {"roto"}
    assert kept["roto"]["parts"] == {}  # nothing to compare, and no crash
    for name, student in klass.students.items():
        found = kept[Path(name).stem]["parts"]
        assert set(planted_class.GRADED) & set(found), name
        assert ("written:1" in found) == bool(student.answers["q1"]), name
        assert "challenge:assumption" in found, name
    # make grade honours the cutoff: at 1000 nothing is listed.
    assert listed_pairs(out) == set()
    assert "Ninguna pareja destaca" in (out / "report.html").read_text("utf-8")
    # make report, at the default, lists the copy, and only it (the positive control).
    (copy_file, (source, _)), = klass.planted.items()
    rebuilt = report(out, autograder_zip)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert listed_pairs(out) == {tuple(sorted((copy_file, source)))}
    page = (out / "report.html").read_text("utf-8")
    assert f'data-pair="{min(copy_file, source)}|{max(copy_file, source)}"' in page \
        and "<mark>" in page
    # A setting that is not a number stops make report with one line, before anything.
    refused = report(out, autograder_zip, "--similarity-cutoff", "mucho")
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: SIMILARITY_CUTOFF=mucho: not a number")
