"""The catalog of typical mistakes: every mutant is caught, named as itself and nothing else.

Each mutant goes through the same path as a student's function (run_in_process, then the
lesson's judge case by case, then ``summarize``, whose diagnosis the feedback gives once for
the function), on many draws of every hidden case, because each submission gets its own draw.
Run with ``-s`` to see the summary counts.
"""

import re
from pathlib import Path

import numpy as np
import pytest

from reference import attention as reference
from attention import misconceptions
from attention.cases import cases_for
from attention.diagnose import same_outcome
from draws import (GRADED_FUNCTIONS, SEEDS, diagnoses, draw, grade, named, outcome,
                   summaries, summary_ids)

ROOT = Path(__file__).resolve().parent.parent
CATALOG_IDS = [entry.id for entry in misconceptions.CATALOG]
FORMS = [(entry.id, index) for entry in misconceptions.CATALOG
         for index in range(len(entry.forms))]

# The mistakes issue 4 lists by name; the catalog may hold more, never fewer.
ISSUE_4_MISTAKES = [
    "attention.no_sqrt_dk", "attention.divides_by_dk", "attention.softmax_over_queries",
    "attention.mask_after_softmax", "attention.mask_inverted", "attention.unshifted_softmax",
    "attention.returns_only_output",
    "multihead.no_w_o", "multihead.sums_heads", "multihead.concat_along_rows",
    "multihead.mask_not_passed", "multihead.scales_by_d_model",
    "positional_encoding.sin_cos_swapped", "positional_encoding.exponent_i_over_d",
    "positional_encoding.halves_concatenated", "positional_encoding.transposed",
    "transformer_block.pre_ln", "transformer_block.no_attention_residual",
    "transformer_block.no_ffn_residual", "transformer_block.no_relu",
    "transformer_block.layer_norm_over_tokens", "transformer_block.mask_not_passed",
]


def _form(form_id):
    entry_id, index = form_id
    entry = misconceptions.get(entry_id)
    return entry, entry.forms[index]


# Forms whose every case the catalog cannot tell from another entry's, and so named with it as
# candidates: multiplying each head by the whole of W_O and summing, like summing the heads and
# multiplying by W_O, multiplies d_v columns by the h·d_v rows of W_O, which raises the same
# error on every case.
INDISTINGUISHABLE = {
    ("multihead.w_o_per_head", 1): {"multihead.sums_heads"},
    ("multihead.sums_heads", 0): {"multihead.w_o_per_head"},
    ("multihead.sums_heads", 1): {"multihead.w_o_per_head"},
}


@pytest.fixture(scope="module")
def mutant_grades():
    """{(entry id, form): {(case, seed): failures}} for every form of every entry."""
    return {form_id: grade(_form(form_id)[0].function, _form(form_id)[1])
            for form_id in FORMS}


@pytest.fixture(scope="module")
def mutant_summaries():
    """{(entry id, form): {seed: (failing cases, diagnoses)}} for every form of every entry."""
    return {form_id: summaries(_form(form_id)[0].function, _form(form_id)[1])
            for form_id in FORMS}


# --- the catalog itself ------------------------------------------------------------------------


def test_catalog_holds_every_mistake_issue_4_lists():
    assert set(ISSUE_4_MISTAKES) <= set(CATALOG_IDS)
    assert len(set(CATALOG_IDS)) == len(CATALOG_IDS), "catalog ids must be unique"


@pytest.mark.parametrize("misconception_id", CATALOG_IDS)
def test_entry_speaks_spanish_in_one_sentence_and_hints_without_code(misconception_id):
    entry = misconceptions.get(misconception_id)
    assert entry.function in GRADED_FUNCTIONS
    assert entry.forms, "every entry needs a mutant"
    assert entry.name and not entry.name.endswith(".")
    # One sentence: a single full stop, at the end ("…" and decimal points are not stops).
    assert entry.explanation.endswith(".") and not re.search(r"\.\s", entry.explanation)
    assert re.search(r"\bpasos? \d", entry.hint), "the hint must point to a notebook step"
    for text in (entry.name, entry.explanation, entry.hint):
        assert not re.search(r"`|np\.|axis|\bdef\b|\breturn\b|\[:", text), f"code in {text!r}"


def test_seed_003_errors_are_catalogued_or_taught_in_the_notebook():
    mapped = {entry.seed_error for entry in misconceptions.CATALOG if entry.seed_error}
    assert mapped == {2, 4}
    # Errors 1, 3 and 5 cannot show in a graded function's output; the master teaches them.
    master = (ROOT / "assignments" / "attention" / "master.py").read_text(encoding="utf-8")
    table = master.split("## Errores conceptuales frecuentes")[1].split("\n# %%")[0]
    for claim in ("tiene en cuenta el orden", "rol interpretable", "mezcla información entre tokens"):
        assert claim in table


@pytest.mark.parametrize("misconception_id", CATALOG_IDS)
def test_mutant_cell_runs_standalone_with_only_the_notebooks_names(misconception_id):
    """The rendered cell needs nothing but numpy and what the notebook defines before it."""
    entry = misconceptions.get(misconception_id)
    source = entry.source()
    assert source.startswith(f"def {entry.function}(")
    namespace = {"np": np, "softmax": reference.softmax, "layer_norm": reference.layer_norm,
                 "init_multihead": reference.init_multihead}
    for earlier in GRADED_FUNCTIONS[:GRADED_FUNCTIONS.index(entry.function)]:
        namespace[earlier] = getattr(reference, earlier)
    exec(compile(source, f"<{misconception_id}>", "exec"), namespace)
    for case in cases_for(entry.function):
        for seed in range(3):
            inputs = draw(case, seed)
            assert same_outcome(outcome(entry.function, namespace[entry.function], inputs),
                                outcome(entry.function, entry.mutant, inputs)), case.name


# --- caught and named, on every draw ------------------------------------------------------------


@pytest.mark.parametrize("form_id", FORMS, ids=[f"{i}[{k}]" for i, k in FORMS])
def test_mutant_is_caught_by_some_hidden_case_on_every_draw(mutant_grades, form_id):
    graded = mutant_grades[form_id]
    missed = [seed for seed in SEEDS if not any(graded[case.name, seed]
                                                for case in cases_for(form_id[0].split(".")[0]))]
    assert not missed, f"the hidden cases miss this mistake on draws {missed}"


@pytest.mark.parametrize("form_id", FORMS, ids=[f"{i}[{k}]" for i, k in FORMS])
def test_mutant_is_named_as_itself_for_the_whole_function_on_every_draw(mutant_summaries,
                                                                        form_id):
    """One diagnosis, naming the entry, for every failing case: no other entry reproduces the
    mutant on all of its failing cases while passing where it passes (else the cases could
    not tell them apart, and the feedback could only give both as candidates)."""
    expected = {form_id[0]} | INDISTINGUISHABLE.get(form_id, set())
    wrong = {seed: [(d.kind, d.ids, d.cases) for d in diagnoses]
             for seed, (failing, diagnoses) in mutant_summaries[form_id].items()
             if len(diagnoses) != 1 or set(diagnoses[0].ids) != expected
             or set(diagnoses[0].cases) != set(failing)}
    assert not wrong


def test_named_feedback_shows_name_explanation_and_hint(mutant_summaries):
    """Its message says how many cases it explains, and whether they are all the cases: the
    scale cannot show with one key (every weight is 1), so no_sqrt_dk fails all but that one;
    the keys taken for the values fail every case."""
    cases = len(cases_for("attention"))
    for entry_id, explained, start in (
            ("attention.no_sqrt_dk", cases - 1, f"que explica los {cases - 1} casos que fallan:"),
            ("attention.keys_for_values", cases,
             f"que explica los {cases} casos, que fallan todos:")):
        entry = misconceptions.get(entry_id)
        failing, diagnoses = mutant_summaries[entry.id, 0][0]
        assert len(failing) == explained, (entry_id, failing)
        text = diagnoses[0].message
        assert text.startswith(f"error típico reconocido, {start}"), text
        assert f": {entry.name}. {entry.explanation}" in text
        assert f"Pista: {entry.hint}" in text


def test_diagnosis_quotes_no_hidden_number(mutant_grades, mutant_summaries):
    """Catalog texts only, or generic hints with no decimals: nothing computed from the cases."""
    def without_catalog(text):
        for entry in misconceptions.CATALOG:
            for part in (entry.name, entry.explanation, entry.hint):
                text = text.replace(part, "")
        return text

    for grades in mutant_grades.values():
        for failures in grades.values():
            for diagnosis in diagnoses(failures):
                assert not re.search(r"\d[.,]\d", without_catalog(diagnosis.message))
    for found in mutant_summaries.values():
        for _, summary in found.values():
            for diagnosis in summary:
                assert not re.search(r"\d[.,]\d", without_catalog(diagnosis.message))


# --- no false name: mistakes outside the catalog get a generic hint ---------------------------


def _attention_scaled(factor):
    def attention(Q, K, V, mask=None):
        scores = factor * Q @ K.T / np.sqrt(K.shape[-1])
        weights = reference.softmax(scores if mask is None else np.where(mask, scores, -np.inf))
        return weights @ V, weights
    return attention


def _only_hints(function, fn):
    """Every failing draw's diagnoses, asserting that none of them names a mistake."""
    hints = []
    for seed, (failing, found) in summaries(function, fn).items():
        assert not summary_ids(found), f"false name on draw {seed}: {summary_ids(found)}"
        hints += [d.message for d in found]
    assert hints, "a failing function should get at least one hint"
    return hints


def test_scores_three_times_too_large_are_reported_as_too_concentrated():
    hints = _only_hints("attention", _attention_scaled(3.0))
    assert any("más concentrados" in hint for hint in hints)


def test_scores_three_times_too_small_are_reported_as_too_spread():
    hints = _only_hints("attention", _attention_scaled(1 / 3))
    assert any("más repartidos" in hint for hint in hints)


def test_right_weights_with_wrong_output_points_at_weights_times_v():
    def attention(Q, K, V, mask=None):
        output, weights = reference.attention(Q, K, V, mask)
        return 2 * output, weights
    assert any("los pesos son correctos pero la salida no" in h
               for h in _only_hints("attention", attention))


def test_overflow_outside_the_catalog_is_explained_but_not_named():
    def attention(Q, K, V, mask=None):  # shifts by the row minimum instead of the maximum
        scores = Q @ K.T / np.sqrt(K.shape[-1])
        scores = scores if mask is None else np.where(mask, scores, -np.inf)
        e = np.exp(scores - scores.min(axis=-1, keepdims=True))
        weights = e / e.sum(axis=-1, keepdims=True)
        return weights @ V, weights
    assert any("NaN o infinitos con puntuaciones grandes" in h
               for h in _only_hints("attention", attention))


def test_two_mistakes_are_named_together_where_neither_alone_explains_the_output():
    def attention(Q, K, V, mask=None):  # no √d_k and no shift of the maximum
        e = np.exp(Q @ K.T if mask is None else np.where(mask, Q @ K.T, -np.inf))
        weights = e / e.sum(axis=-1, keepdims=True)
        return weights @ V, weights
    grades = grade("attention", attention)
    for seed in SEEDS:
        # Small scores: the shift changes nothing, and the output is exactly no_sqrt_dk's.
        assert named(grades["causal", seed]) == ["attention.no_sqrt_dk"]
        # Scores of ~1e3 overflow whatever the scale, so only the overflow shows, and is named.
        assert named(grades["puntuaciones_grandes", seed]) == ["attention.unshifted_softmax"]
    # For the function, the pair explains every failing case, and is said once.
    for seed, (failing, found) in summaries("attention", attention).items():
        assert [(d.ids, d.cases) for d in found] == [
            (["attention.no_sqrt_dk", "attention.unshifted_softmax"], failing)], seed


def test_single_head_output_is_named_as_that_head_alone():
    def multihead(X, heads, W_O, mask=None):
        W_Q, W_K, W_V = heads[0]
        return reference.attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
    for key, failures in grade("multihead", multihead, range(5)).items():
        if key[0] == "una_cabeza":
            # With one head, using only the first head is no mistake, and W_O is what it lacks.
            assert named(failures) == ["multihead.no_w_o"], key
            continue
        assert named(failures) == ["multihead.one_head_only"], key
        assert any("head_1" in f.message for f in failures), key
    for seed, (failing, found) in summaries("multihead", multihead, range(5)).items():
        assert summary_ids(found) == ["multihead.one_head_only", "multihead.no_w_o"], seed
        assert [d.cases for d in found] == [["dos_cabezas", "causal", "dk_distinto_dv"],
                                            ["una_cabeza"]], seed


def test_sines_everywhere_are_reported_by_row_zero_and_pairs():
    def positional_encoding(n_positions, d_model):
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        return np.sin(np.arange(n_positions)[:, None] * np.repeat(omega, 2)[:d_model]), omega
    hints = _only_hints("positional_encoding", positional_encoding)
    assert any("fila de la posición 0" in h for h in hints)
    assert any("sin² + cos²" in h for h in hints)
    assert any("omega es correcta" in h for h in hints)


def test_unnormalized_block_output_is_reported_and_normalized_one_points_earlier():
    def without_final_norm_ffn_doubled(x, heads, W_O, W1, b1, W2, b2, mask=None):
        x = reference.layer_norm(x + reference.multihead(x, heads, W_O, mask))
        return x + 2 * (np.maximum(0, x @ W1 + b1) @ W2 + b2)

    def first_sublayer_only(x, heads, W_O, W1, b1, W2, b2, mask=None):
        return reference.layer_norm(x + reference.multihead(x, heads, W_O, mask))

    assert any("no tienen media 0 y varianza 1" in h
               for h in _only_hints("transformer_block", without_final_norm_ffn_doubled))
    assert any("normalizada por filas" in h
               for h in _only_hints("transformer_block", first_sublayer_only))


# --- the numbers issue 4 asks for ----------------------------------------------------------------


def test_check_level_summary(mutant_grades, mutant_summaries):
    """Caught on every draw and named, out of how many forms (printed with -s)."""
    caught = sum(all(any(failures for (case, seed), failures in grades.items() if seed == s)
                     for s in SEEDS)
                 for grades in mutant_grades.values())
    right = sum(all(len(d) == 1 and set(d[0].ids) == {form_id[0]}
                    | INDISTINGUISHABLE.get(form_id, set()) for _, d in found.values())
                for form_id, found in mutant_summaries.items())
    total = len(FORMS)
    per_function = {f: len(misconceptions.for_function(f)) for f in GRADED_FUNCTIONS}
    print(f"\n[judge] {len(CATALOG_IDS)} mistakes in {total} forms {per_function}, over "
          f"{len(SEEDS)} draws of every case: caught on every draw {caught}/{total}, named as "
          f"themselves and only themselves, once for the function, {right}/{total} "
          f"({len(INDISTINGUISHABLE)} of them beside the entry no case tells them from)")
    assert caught == right == total


# --- wording the issues corrected --------------------------------------------------------------


def test_halves_are_called_another_layout_not_a_broken_rotation():
    """Halves hold the same numbers in another column order: a convention, not the rotation."""
    text = misconceptions.get("positional_encoding.halves_concatenated").explanation
    assert "rotación" not in text and "convención del cuaderno" in text


def test_dividing_by_d_k_is_not_said_to_make_weights_almost_uniform():
    """With the hidden d_k = 3 the weights are only more spread out, not nearly uniform."""
    text = misconceptions.get("attention.divides_by_dk").explanation
    assert "uniforme" not in text and "más repartidos" in text


# The mistakes issue 20 lists, each a catalog entry (the others are findings: float16, ω = 1).
ISSUE_20_MISTAKES = [
    "attention.sqrt_of_num_queries", "attention.sqrt_of_num_keys", "attention.sqrt_of_d_v",
    "attention.mask_added", "attention.weights_transposed", "attention.keys_for_values",
    "multihead.w_o_per_head", "multihead.heads_not_split", "multihead.scales_by_d_model_over_h",
    "multihead.scales_by_d_v", "multihead.w_k_for_values",
    "positional_encoding.reshaped_not_transposed",
    "transformer_block.leaky_relu", "transformer_block.no_b1", "transformer_block.no_b2",
    "transformer_block.b1_after_relu", "transformer_block.second_residual_from_input",
    "transformer_block.no_attention_residual", "transformer_block.no_ffn_residual",
    "transformer_block.w1_transposed", "transformer_block.one_layer_ffn",
]


def test_catalog_holds_every_mistake_issue_20_lists():
    assert set(ISSUE_20_MISTAKES) <= set(CATALOG_IDS)
