"""Browser tests of the explorer page (issue 7), in Debian's headless Chromium.

Each test sets inputs as a student would, reads the numbers the page shows, and compares them
with the hidden reference (or numpy) to four decimals. The page is built with build.py into a
temporary folder, so these tests do not depend on `make explorer` having run.
"""

import itertools
import math

import numpy as np
import pytest

from explorer_helpers import (
    ARTIFACTS, CHROMIUM, as_typed, assert_shown, build_page, chromium, entropy_bits,
    read_exact_row, read_matrix, shown_number,
)

if not CHROMIUM.exists():
    pytest.skip(
        "Chromium no encontrado: instala el paquete Debian chromium; .ci/run lo instala",
        allow_module_level=True,
    )

from reference.attention import attention, positional_encoding, softmax  # noqa: E402

PRESET_BUTTONS = ["ejemplo", "grandes", "simetrica"]


@pytest.fixture(scope="module")
def page_url(tmp_path_factory):
    return build_page(tmp_path_factory.mktemp("explorer")).as_uri()


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def tab(browser):
    """One tab for the module: a fresh navigation per test is enough, and twice as fast."""
    tab = browser.new_page(viewport={"width": 1100, "height": 900})
    tab.errors = []
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    yield tab
    tab.close()


@pytest.fixture
def page(tab, page_url):
    """The built page, freshly loaded; any script error fails the test that caused it."""
    tab.errors.clear()
    tab.goto(page_url)
    yield tab
    assert not tab.errors, f"script errors on the page: {tab.errors}"


# --- Exhibit 1: the QKV calculator -------------------------------------------------------------

def read_inputs(page, name):
    """An editable matrix (X, WQ, WK or WV) as the numbers its inputs hold."""
    values = page.eval_on_selector_all(
        f"#qkv-{name} input", "inputs => inputs.map(i => [+i.dataset.row, +i.dataset.col, i.value])"
    )
    out = np.zeros((1 + max(v[0] for v in values), 1 + max(v[1] for v in values)))
    for i, j, text in values:
        out[i, j] = shown_number(text.replace(",", "."))
    return out


def set_inputs(page, name, M, comma=False):
    for (i, j), x in np.ndenumerate(M):
        page.fill(f"#qkv-{name}-r{i}c{j}", as_typed(x, comma))


def set_toggles(page, causal, scaled):
    page.set_checked("#qkv-causal", causal)
    page.set_checked("#qkv-scale", scaled)


def expected_qkv(X, WQ, WK, WV, causal=False, scaled=True):
    """What the calculator must show, from the reference; unscaled scores via Q·√d_k."""
    Q, K, V = X @ WQ, X @ WK, X @ WV
    d_k = K.shape[1]
    mask = np.tril(np.ones((len(X), len(X)), dtype=bool)) if causal else None
    Z, A = attention(Q if scaled else Q * np.sqrt(d_k), K, V, mask)
    S = Q @ K.T / (np.sqrt(d_k) if scaled else 1)
    if causal:
        S = np.where(mask, S, -np.inf)
    return {"Q": Q, "K": K, "V": V, "raw": Q @ K.T, "S": S, "A": A, "Z": Z}


def assert_calculator_shows(page, expected, what):
    for name, value in expected.items():
        assert_shown(read_matrix(page, f"#qkv-{name}"), value, f"{what}: {name}")


def documented_matrix(page, key):
    text = page.text_content(f'#qkv-worked-doc code[data-matrix="{key}"]')
    return np.array(eval(text.split("=")[-1]))  # the note writes plain Python list literals


def test_worked_example_note_matches_inputs_and_reference(page):
    doc = {key: documented_matrix(page, key) for key in ["X", "WQ", "WK", "WV", "Q", "K", "V", "QKt", "A0"]}
    for key in ["X", "WQ", "WK", "WV"]:
        np.testing.assert_array_equal(read_inputs(page, key), doc[key], err_msg=key)
    X, WQ, WK, WV = doc["X"], doc["WQ"], doc["WK"], doc["WV"]
    np.testing.assert_array_equal(doc["Q"], X @ WQ)
    np.testing.assert_array_equal(doc["K"], X @ WK)
    np.testing.assert_array_equal(doc["V"], X @ WV)
    np.testing.assert_array_equal(doc["QKt"], (X @ WQ) @ (X @ WK).T)
    # "puedes comprobarlos a mano": the note promises integers.
    assert all(np.array_equal(doc[k], np.round(doc[k])) for k in ["Q", "K", "V", "QKt"])
    assert_shown(doc["A0"], attention(X @ WQ, X @ WK, X @ WV)[1][0], "documented first row of A")


def test_default_calculator_matches_reference(page):
    M = {key: read_inputs(page, key) for key in ["X", "WQ", "WK", "WV"]}
    assert_calculator_shows(page, expected_qkv(M["X"], M["WQ"], M["WK"], M["WV"]), "default")
    assert_shown(read_matrix(page, "#qkv-rowsums").ravel(), np.ones(3), "row sums of A")


def test_edited_inputs_with_decimal_commas_match_reference(page):
    rng = np.random.default_rng(55)
    M = {key: np.round(rng.uniform(-2, 2, shape), 2)
         for key, shape in [("X", (3, 2)), ("WQ", (2, 2)), ("WK", (2, 2)), ("WV", (2, 2))]}
    for key, value in M.items():
        set_inputs(page, key, value, comma=True)
    assert "," in page.input_value("#qkv-X-r0c0") or float(M["X"][0, 0]).is_integer()
    assert_calculator_shows(page, expected_qkv(M["X"], M["WQ"], M["WK"], M["WV"]), "comma input")


def test_decimal_comma_and_point_give_the_same_weights(page):
    set_inputs(page, "X", np.array([[0.5, 1.5], [-0.25, 1], [2, -0.75]]), comma=True)
    with_comma = read_matrix(page, "#qkv-A")
    set_inputs(page, "X", np.array([[0.5, 1.5], [-0.25, 1], [2, -0.75]]), comma=False)
    np.testing.assert_array_equal(read_matrix(page, "#qkv-A"), with_comma)
    assert page.get_attribute("#qkv-X-r0c0", "aria-invalid") == "false"


def test_causal_toggle_zeroes_future_weights(page):
    set_toggles(page, causal=True, scaled=True)
    A = read_matrix(page, "#qkv-A")
    assert np.all(A[np.triu_indices(3, k=1)] == 0.0)
    np.testing.assert_array_equal(A[0], [1.0, 0.0, 0.0])
    M = {key: read_inputs(page, key) for key in ["X", "WQ", "WK", "WV"]}
    assert_calculator_shows(page, expected_qkv(M["X"], M["WQ"], M["WK"], M["WV"], causal=True), "causal")


def test_scale_toggle_off_uses_unscaled_scores(page):
    set_toggles(page, causal=False, scaled=False)
    M = {key: read_inputs(page, key) for key in ["X", "WQ", "WK", "WV"]}
    expected = expected_qkv(M["X"], M["WQ"], M["WK"], M["WV"], scaled=False)
    assert_calculator_shows(page, expected, "unscaled")
    assert_shown(read_matrix(page, "#qkv-S"), expected["raw"], "unscaled scores are QKᵀ itself")


@pytest.mark.parametrize("preset", PRESET_BUTTONS)
def test_presets_match_reference_with_every_toggle(page, preset):
    page.set_checked("#qkv-causal", True)
    page.click(f'[data-preset="{preset}"]')
    # Loading a preset resets the toggles, as the page says.
    assert not page.is_checked("#qkv-causal") and page.is_checked("#qkv-scale")
    M = {key: read_inputs(page, key) for key in ["X", "WQ", "WK", "WV"]}
    for causal, scaled in itertools.product([False, True], repeat=2):
        set_toggles(page, causal, scaled)
        expected = expected_qkv(M["X"], M["WQ"], M["WK"], M["WV"], causal, scaled)
        assert_calculator_shows(page, expected, f"{preset}, causal={causal}, scaled={scaled}")


def test_large_scores_preset_saturates_more_without_scaling(page):
    page.click('[data-preset="grandes"]')
    assert np.abs(read_matrix(page, "#qkv-raw")).max() >= 10, "the preset is named for large scores"
    scaled = read_matrix(page, "#qkv-A")
    set_toggles(page, causal=False, scaled=False)
    unscaled = read_matrix(page, "#qkv-A")
    assert np.all(unscaled.max(axis=1) >= scaled.max(axis=1))
    assert unscaled.max(axis=1).min() > 0.99, "without √d_k every row is nearly one-hot"


def test_wk_equals_wq_preset_is_the_documented_counterexample(page):
    page.click('[data-preset="simetrica"]')
    np.testing.assert_array_equal(read_inputs(page, "WK"), read_inputs(page, "WQ"))
    raw = read_matrix(page, "#qkv-raw")
    np.testing.assert_array_equal(raw, raw.T)
    assert np.all(np.linalg.eigvalsh(raw) >= -1e-9), "QKᵀ = XWWᵀXᵀ is positive semidefinite"
    # What the erratum claims, on the page's own numbers.
    assert_shown(read_matrix(page, "#qkv-Q")[0], [1, 1])
    assert_shown(read_matrix(page, "#qkv-K")[1], [2, 3])
    assert raw[0, 1] == 5 and raw[0, 0] == 2
    A = read_matrix(page, "#qkv-A")
    assert A[0, 1] > A[0, 0], "t1 gives t2 more weight than itself"
    longest = int(np.argmax(np.diag(raw)))
    assert A[longest, longest] == A[longest].max(), "the longest query attends most to itself"
    for i, j in itertools.combinations(range(3), 2):
        assert raw[i, i] >= raw[i, j] or raw[j, j] >= raw[i, j], "one of each pair prefers itself"
    observations = page.text_content("#qkv-observations")
    assert "t1 da más peso a t2" in observations and "QKᵀ es simétrica" in observations


def test_invalid_cell_is_flagged_and_blanks_the_results(page):
    page.fill("#qkv-X-r1c0", "dos")
    assert page.get_attribute("#qkv-X-r1c0", "aria-invalid") == "true"
    assert "X" in page.text_content("#qkv-status")
    assert set(page.eval_on_selector_all("#qkv-A tbody td", "c => c.map(x => x.textContent)")) == {"\u2014"}
    page.fill("#qkv-X-r1c0", "0,5")
    assert page.text_content("#qkv-status") == ""
    assert not np.isnan(read_matrix(page, "#qkv-A")).any()


# --- Exhibit 2: why divide by √d_k ------------------------------------------------------------

def dk_options(page):
    return page.eval_on_selector_all("#escala-dk option", "o => o.map(x => Number(x.value))")


def test_entropy_with_and_without_scaling_matches_numpy(page):
    for dk in dk_options(page):
        page.select_option("#escala-dk", str(dk))
        scores = np.array([float(s) for s in page.eval_on_selector_all(
            "#escala-bars .bar-row", "rows => rows.map(r => r.dataset.score)")])
        assert len(scores) == 8
        raw, scaled = softmax(scores), softmax(scores / np.sqrt(dk))
        assert_shown(shown_number(page.text_content("#escala-h-raw")), entropy_bits(raw), f"d_k={dk}")
        assert_shown(shown_number(page.text_content("#escala-h-scaled")), entropy_bits(scaled), f"d_k={dk}")
        bars = [shown_number(t.split(":")[-1]) for t in page.eval_on_selector_all(
            "#escala-bars .bar-value", "v => v.map(x => x.textContent)")]
        assert_shown(np.array(bars).reshape(8, 2), np.stack([raw, scaled], axis=1), f"bars d_k={dk}")
        # The page says the entropy rises with scaling; it must, for d_k > 1.
        assert entropy_bits(scaled) > entropy_bits(raw)


def test_typical_score_deviation_tracks_sqrt_dk(page):
    for dk in dk_options(page):
        page.select_option("#escala-dk", str(dk))
        std = shown_number(page.text_content("#escala-std"))
        assert_shown(shown_number(page.text_content("#escala-sqrt")), math.sqrt(dk))
        assert abs(std / math.sqrt(dk) - 1) < 0.1, f"d_k={dk}: measured {std}"
        assert_shown(shown_number(page.text_content("#escala-std-scaled")), std / math.sqrt(dk), f"d_k={dk}")


def test_redraw_gives_new_scores(page):
    before = page.eval_on_selector_all("#escala-bars .bar-row", "r => r.map(x => x.dataset.score)")
    page.click("#escala-redraw")
    after = page.eval_on_selector_all("#escala-bars .bar-row", "r => r.map(x => x.dataset.score)")
    assert before != after and page.text_content("#escala-round") == "2"


# --- Exhibit 3: several heads -------------------------------------------------------------------

def head_scores(page):
    return [np.array(s) for s in page.eval_on_selector("#cabezas-arcs", "svg => JSON.parse(svg.dataset.scores)")]


def test_head_weights_and_arcs_are_the_softmax_of_their_scores(page):
    for h, scores in enumerate(head_scores(page)):
        page.check(f"#cabezas-head-{h}")
        expected = softmax(scores, axis=-1)
        assert_shown(read_matrix(page, "#cabezas-A"), expected, f"head {h}")
        arcs = page.eval_on_selector_all(
            "#cabezas-arcs path.arc",
            "ps => ps.map(p => [+p.dataset.query, +p.dataset.key, +p.getAttribute('stroke-width'),"
            " +p.getAttribute('stroke-opacity')])",
        )
        assert len(arcs) == expected.size
        for i, j, width, opacity in arcs:
            assert width == pytest.approx(12 * expected[i, j]), "thickness ∝ α_ij"
            assert opacity == pytest.approx(expected[i, j])


def test_sum_over_heads_adds_their_weights(page):
    total = sum(softmax(s, axis=-1) for s in head_scores(page))
    shown = read_matrix(page, "#cabezas-sum")
    assert_shown(shown, total)
    # Six rounded cells: their sum may be off by up to six half-units of the last decimal.
    np.testing.assert_allclose(shown.sum(axis=1), 3.0, rtol=0, atol=6 * 5.0001e-5)


def highlighted_row(page, table):
    rows = page.eval_on_selector_all(f"{table} tbody tr.row-highlight", "rs => rs.map(r => +r.dataset.row)")
    return rows[0] if len(rows) == 1 else (None if not rows else rows)


def dimmed_queries(page):
    return set(page.eval_on_selector_all("#cabezas-arcs path.arc.dimmed", "ps => ps.map(p => +p.dataset.query)"))


def test_row_highlight_follows_keyboard_focus(page):
    page.focus("#cabezas-head-0")
    page.keyboard.press("Tab")
    focused = page.evaluate("() => [document.activeElement.closest('table')?.id, document.activeElement.dataset.row]")
    assert focused == ["cabezas-A", "0"], "Tab goes from the head choice into the weight matrix"
    assert highlighted_row(page, "#cabezas-A") == 0
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("() => [document.activeElement.dataset.row, document.activeElement.dataset.col]") == ["2", "1"]
    assert highlighted_row(page, "#cabezas-A") == 2
    assert dimmed_queries(page) == {0, 1, 3, 4, 5}, "only the arcs of the focused row stay bright"
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid", "the focused cell shows a visible outline"
    page.keyboard.press("Tab")
    assert highlighted_row(page, "#cabezas-A") is None and dimmed_queries(page) == set()


def test_row_highlight_follows_hover(page):
    page.hover('#cabezas-A td[data-row="3"][data-col="0"]')
    assert highlighted_row(page, "#cabezas-A") == 3
    assert dimmed_queries(page) == {0, 1, 2, 4, 5}


def test_tab_order_reaches_calculator_outputs_after_inputs(page):
    page.focus("#qkv-WV-r1c1")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.closest('table')?.id") == "qkv-Q"
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.closest('table')?.id") == "qkv-K"


# --- Exhibit 4: positional encoding ---------------------------------------------------------------

def test_heatmap_readout_matches_reference(page):
    for d, moves in [(16, {"ArrowDown": 5, "ArrowRight": 3}), (64, {"ArrowDown": 40, "ArrowRight": 17})]:
        page.reload()  # the cursor starts at position 0, dimension 0
        page.select_option("#pe-d", str(d))
        page.focus("#pe-heatmap")
        for key, times in moves.items():
            for _ in range(times):
                page.keyboard.press(key)
        pos, dim = moves["ArrowDown"], moves["ArrowRight"]
        readout = page.text_content("#pe-readout")
        assert readout.startswith(f"posición {pos}, dimensión {dim}:")
        assert_shown(shown_number(readout.split("=")[-1]), positional_encoding(64, d)[0][pos, dim])


def similarity_table(page):
    rows = page.eval_on_selector_all(
        "#pe-dots tbody tr",
        "rs => rs.map(r => [+r.dataset.delta, ...[...r.querySelectorAll('td')].map(c => c.textContent)])",
    )
    return {row[0]: [shown_number(t) for t in row[1:]] for row in rows}


def test_similarity_depends_only_on_delta(page):
    page.fill("#pe-posA", "3")
    page.fill("#pe-posB", "41")
    for d in [16, 64]:
        page.select_option("#pe-d", str(d))
        pe = positional_encoding(41 + 101, d)[0]
        table = similarity_table(page)
        assert table, "the table of PE_pos · PE_pos+Δ is rendered"
        for delta, (from_a, from_b, closed) in table.items():
            assert_shown(from_a, pe[3] @ pe[3 + delta], f"d={d} Δ={delta} from 3")
            assert_shown(from_b, pe[41] @ pe[41 + delta], f"d={d} Δ={delta} from 41")
            assert_shown(closed, np.cos(delta / 10000 ** (np.arange(0, d, 2) / d)).sum())
            assert from_a == from_b


def test_similarity_decays_but_not_monotonically(page):
    for d in [16, 32, 64, 128]:
        page.select_option("#pe-d", str(d))
        pe = positional_encoding(101, d)[0]
        f = pe @ pe[0]  # f[Δ] = PE_0 · PE_Δ
        assert f[0] == pytest.approx(d / 2) and np.all(f[1:] < f[0]), "highest at Δ = 0"
        rises = np.flatnonzero(np.diff(f) > 0)
        assert len(rises) > 0, "the page says it is not monotone; numpy must agree"
        stated = page.get_attribute("#pe-shape", "data-first-rise")
        assert int(stated) == rises[0]
        assert "no de forma monótona" in page.text_content("#pe-shape")


def test_d4_table_of_three_contiguous_tokens_matches_reference(page):
    page.fill("#pe-start", "5")
    shown = read_matrix(page, "#pe-d4")
    expected = positional_encoding(8, 4)[0][5:8]
    assert_shown(shown, expected)
    text = page.text_content("#pe-d4-dots")
    first, second = (shown_number(t.split("=")[-1]) for t in text.split(":")[0].split(" y "))
    assert_shown(first, expected[0] @ expected[1])
    assert_shown(second, expected[1] @ expected[2])


def test_position_input_rejects_non_integers(page):
    page.fill("#pe-start", "1,5")
    assert page.get_attribute("#pe-start", "aria-invalid") == "true"
    assert "entero" in page.text_content("#pe-d4-status")


# --- Exhibit 5: "La capital de ___ es …" ---------------------------------------------------------

# The toy as the page describes it in prose (step 2 and step 7), not as its script computes it.
TOY_W_Q = np.array([[0, 0, 0], [0, 0, 0], [0, 3, 0]])
TOY_W_K = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]])
TOY_W_V = np.array([[1, 0, 0], [0, 0, 0], [0, 0, 0]])
TOY_U = np.array([[4, 0, 1], [-4, 0, 1]] + [[0, 0, 0]] * 6)


def set_identity(page, value):
    page.fill("#capital-id", as_typed(value, comma=True))


def test_capital_walkthrough_matches_reference(page):
    for identity in [1, -1, 0.35, -0.9]:
        set_identity(page, identity)
        X = read_matrix(page, "#capital-X")
        assert X.shape == (5, 3) and X[3, 0] == identity
        Z, A = attention(X @ TOY_W_Q, X @ TOY_W_K, X @ TOY_W_V)
        assert_shown(read_matrix(page, "#capital-attn")[0], A[4], f"attention row, identity {identity}")
        assert_shown(read_matrix(page, "#capital-z")[0], Z[4])
        h = X[4] + Z[4]
        assert_shown(read_matrix(page, "#capital-h")[0], h)
        assert_shown(read_matrix(page, "#capital-logits")[0], TOY_U @ h)
        probs = softmax(TOY_U @ h)
        assert_shown(read_matrix(page, "#capital-probs")[0], probs)
        assert_shown(shown_number(page.text_content("#capital-p")), probs.max())
        assert_shown(shown_number(page.text_content("#capital-loss")), -np.log(probs.max()))
        assert page.text_content("#capital-pred") == ["París", "Roma"][int(np.argmax(probs))]


def test_attention_row_of_es_is_identical_across_countries(page):
    rows, values = [], []
    for identity in [1, -1, 0, 0.5, -0.25]:
        set_identity(page, identity)
        rows.append(read_exact_row(page, "#capital-attn"))
        values.append(read_exact_row(page, "#capital-z"))
    assert all(row == rows[0] for row in rows), "bit for bit the same attention row"
    assert len({tuple(v) for v in values}) == len(values), "the content that travels does change"


def test_identity_zero_gives_equal_paris_and_roma(page):
    page.click('#capital [data-identity="0"]')
    exact = read_exact_row(page, "#capital-probs")
    assert exact[0] == exact[1]
    probs = read_matrix(page, "#capital-probs")[0]
    assert probs[0] == probs[1] and probs[0] == probs.max()
    assert "empate" in page.text_content("#capital-pred")
    assert_shown(shown_number(page.text_content("#capital-loss")), -math.log(float(exact[0])))


def test_loss_is_minus_log_of_the_predicted_probability(page):
    for button in ["1", "-1"]:
        page.click(f'#capital [data-identity="{button}"]')
        p = shown_number(page.text_content("#capital-p"))
        assert p == read_matrix(page, "#capital-probs")[0].max()
        loss = float(page.get_attribute("#capital-loss", "data-value"))
        assert loss == pytest.approx(-math.log(float(page.get_attribute("#capital-p", "data-value"))))
        assert_shown(shown_number(page.text_content("#capital-loss")), loss)


def test_mirrored_identity_swaps_paris_and_roma(page):
    set_identity(page, 0.9)
    france = read_matrix(page, "#capital-probs")[0]
    set_identity(page, -0.9)
    italy = read_matrix(page, "#capital-probs")[0]
    assert italy[1] == france[0] and italy[0] == france[1]


def test_identity_typed_with_comma_equals_slider(page):
    page.fill("#capital-id", "\u22120,5")
    typed = read_exact_row(page, "#capital-probs")
    page.eval_on_selector("#capital-id-range", "r => { r.value = '-0.5'; r.dispatchEvent(new Event('input')); }")
    assert read_exact_row(page, "#capital-probs") == typed
    assert page.input_value("#capital-id") == "\u22120.5"


# --- The page as a whole ------------------------------------------------------------------------

def test_every_input_and_select_has_a_label(page):
    unlabeled = page.eval_on_selector_all(
        "input, select, textarea",
        "els => els.filter(e => !e.labels || e.labels.length === 0"
        " || [...e.labels].every(l => !l.textContent.trim())).map(e => e.id || e.outerHTML)",
    )
    assert unlabeled == []
    assert page.eval_on_selector_all("input, select", "els => els.length") > 25


def test_page_makes_no_network_request(browser, page_url):
    tab = browser.new_page()
    requests = []
    tab.on("request", lambda request: requests.append(request.url))
    tab.goto(page_url)
    tab.close()
    assert requests and all(url.startswith(("file://", "data:")) for url in requests), requests


SCREENSHOTS = {
    "1_calculadora_qkv": lambda page: (page.click('[data-preset="simetrica"]'), page.focus('#qkv-A td[data-row="0"][data-col="1"]')),
    "2_escala_raiz_dk": lambda page: page.select_option("#escala-dk", "512"),
    "3_cabezas": lambda page: (page.check("#cabezas-head-2"), page.focus('#cabezas-A td[data-row="3"][data-col="0"]')),
    "4_codificacion_posicional": lambda page: (page.focus("#pe-heatmap"), page.keyboard.press("ArrowRight")),
    "5_capital": lambda page: page.click('#capital [data-identity="0"]'),
}


@pytest.mark.parametrize("name", SCREENSHOTS)
def test_screenshot_of_each_exhibit_is_saved(page, name):
    SCREENSHOTS[name](page)
    section = {"1": "#qkv", "2": "#escala", "3": "#cabezas", "4": "#posiciones", "5": "#capital"}[name[0]]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.locator(section).screenshot(path=str(path))
    assert path.stat().st_size > 20_000, "a rendered exhibit, not an empty box"


# --- accessibility: WCAG 2.1 AA, as axe-core reads it (issue 25) ---------------------------------


def test_the_explorer_passes_axe_cores_wcag_a_and_aa_rules(page):
    from accessibility import wcag_violations

    count, report = wcag_violations(page)
    assert count == 0, report


def test_control_an_unlabelled_input_is_a_violation_on_the_explorer(page):
    from accessibility import violated_rules

    page.evaluate("""() => { const input = document.createElement('input');
                           document.querySelector('main, body').prepend(input); }""")
    assert "label" in violated_rules(page)


def test_without_its_scripts_the_page_says_to_open_it_in_the_browser(browser, page_url):
    # What JupyterLab's HTML viewer does to an untrusted page: it runs no script. The control:
    # with scripts (the other tests' tab), the notice is not shown.
    quiet = browser.new_context(java_script_enabled=False).new_page()
    quiet.goto(page_url)
    notice = quiet.locator("p.noscript")
    assert notice.is_visible() and "Open in New Browser Tab" in notice.inner_text()
    quiet.context.close()


def test_with_its_scripts_the_open_in_the_browser_notice_is_hidden(page):
    assert not page.locator("p.noscript").is_visible()
