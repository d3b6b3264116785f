"""What the lesson's text says is what its cells compute (issue 30.2): each number the text
cites is recomputed here from the cell that prints or draws it."""

import re

import matplotlib
import numpy as np

matplotlib.use("Agg")

from reference import attention as reference
from kit_autograder.build.otter_master import load_master
from lesson055 import MASTER


def cell_and_text_after(marker):
    cells = load_master(MASTER).cells
    at = next(i for i, c in enumerate(cells) if c.cell_type == "code" and marker in c.source)
    text = next(c.source for c in cells[at + 1:] if c.cell_type == "markdown")
    return cells[at].source, text


def spanish_power(value):
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa.replace('.', '{,}')} \\times 10^{{{int(exponent)}}}"


def test_step_4_measures_the_gradient_the_text_says_vanishes():
    import matplotlib.pyplot as plt

    source, text = cell_and_text_after("def mayor_derivada(")
    # The cell's generator is a child of the notebook's rng, as it is when the notebook runs.
    namespace = {"np": np, "plt": plt, "softmax": reference.softmax,
                 "rng": np.random.default_rng(0)}
    exec(source.replace("plt.show()", "plt.close('all')"), namespace)
    dimensions, raw, scaled = (namespace[n] for n in ("dimensiones", "sin_escalar", "escalando"))
    at = {d: v for d, v in zip(dimensions, raw)}
    assert f"{at[4]:.2f}".replace(".", ",") in text
    assert spanish_power(at[512]) in text and spanish_power(at[1024]) in text
    # «Se queda en torno a 0,2 en cualquier dimensión», and without scaling it falls.
    assert all(abs(v - 0.2) < 0.05 for v in scaled) and "en torno a 0,2" in text
    assert all(a > b for a, b in zip(raw, raw[1:]))


def test_the_claims_the_review_found_false_are_gone():
    source = MASTER.read_text("utf-8")
    for claim in ("ejecutan bien un modelo entrenado", "miles de millones de veces por respuesta",
                  "la razón de toda la investigación", "se barajan exactamente igual, pero no cambian",
                  "La página de la clase", "El texto original"):
        assert claim not in source, claim
    assert re.search(r"\*\*equivariancia a las permutaciones\*\*", source)


def test_step_8_diagram_labels_fit_their_boxes_and_say_normalización_de_capa():
    import importlib.util

    script = MASTER.parent / "figures" / "transformer_flow.py"
    spec = importlib.util.spec_from_file_location("transformer_flow", script)
    transformer_flow = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(transformer_flow)
    fig = transformer_flow.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    pixels_per_unit = fig.bbox.width / 520  # the axes span the 520-unit page
    labels = {label for label, _ in transformer_flow.STEPS}
    widths = {t.get_text(): t.get_window_extent(renderer).width / pixels_per_unit
              for t in ax.texts if t.get_text() in labels}
    assert set(widths) == labels
    assert all(w < transformer_flow.WIDTH - 10 for w in widths.values()), widths
    assert not any("layer norm" in label for label in labels)
    assert sum("normalización de capa" in label for label, _ in transformer_flow.STEPS) == 2


def test_prose_quotes_with_angle_quotes_and_counts_its_tokens():
    cells = load_master(MASTER).cells
    prose = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    # Straight double quotes in prose are the English style; the lesson quotes «así».
    outside_code = re.sub(r"`[^`]*`|\$[^$]*\$|<[^>]*>", "", prose)
    assert '"' not in outside_code, re.findall(r'.{30}".{30}', outside_code)[:3]
    loop = next(c.source for c in cells if c.cell_type == "code" and "Tras {T" in c.source)
    assert "'token, ' if T == 1" in loop


BEYOND = "## Más allá de los nueve pasos"


def demo_cells(cells):
    """``cells`` without the practice exercises' questions (their solution, stub and check):
    the demos and their text."""
    kept, in_question = [], False
    for cell in cells:
        if cell.cell_type == "raw" and cell.source.startswith(("# BEGIN QUESTION", "# END QUESTION")):
            in_question = cell.source.startswith("# BEGIN QUESTION")
        elif not in_question:
            kept.append(cell)
    return kept


def run_beyond_section():
    """The «Más allá» section's demo cells, run in order on the reference, after step 2's cell
    (whose `inputs` it reuses) and the given `mascara_causal`; with each cell's printed lines."""
    import contextlib
    import io

    cells = load_master(MASTER).cells
    start = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and BEYOND in c.source)
    end = next(i for i, c in enumerate(cells) if i > start and c.cell_type == "markdown"
               and c.source.startswith("## ") and BEYOND not in c.source)
    step_2 = next(c.source for c in cells if c.cell_type == "code" and "d_hidden = 16" in c.source)
    namespace = {"np": np, "rng": np.random.default_rng(0),
                 "mascara_causal": lambda n: np.tril(np.ones((n, n), dtype=bool)),
                 **{name: getattr(reference, name) for name in
                    ("attention", "multihead", "softmax", "init_multihead")}}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(step_2, namespace)
    printed = []
    section = demo_cells(cells[start:end])
    for cell in section:
        if cell.cell_type == "code":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(cell.source, namespace)
            printed.append(out.getvalue())
    text = "\n".join(c.source for c in section if c.cell_type == "markdown")
    return namespace, printed, text


def test_beyond_the_steps_every_demo_shows_what_its_text_says():
    ns, printed, text = run_beyond_section()
    cross, padding, heads, cache, gradient = printed
    # Cross-attention: n = 3 queries against m = 5 keys.
    assert ns["pesos_cruzados"].shape == (3, 5) and ns["salida_cruzada"].shape == (3, 4)
    assert np.allclose(ns["pesos_cruzados"].sum(axis=1), 1) and "(3, 5)" in cross
    # Padding: no weight on the padding, and the real tokens as without it («cero o redondeo»).
    assert "relleno: 0.0" in padding
    assert np.abs(ns["con_relleno"][:3] - ns["sola"]).max() < 1e-15
    # One matrix for every head equals the list of heads; the wrong reshape would not.
    assert np.abs(ns["juntas"] - reference.multihead(ns["x_cabezas"], ns["heads_demo"],
                                                     ns["W_O_demo"])).max() < 1e-14
    wrong = ns["x_cabezas"] @ ns["W_Q_todas"]
    assert not np.allclose(wrong.reshape(2, 6, -1), ns["Qs"])  # «reshape directo… mezclaría»
    # The KV cache gives the full causal computation, projecting 12 tokens instead of 78.
    assert np.abs(np.vstack(ns["filas_kv"]) - ns["completa"]).max() < 1e-14
    assert "12 con la caché; 78 recalculando" in cache
    # ∂y_T/∂x_1 does not vanish: «tras 60 tokens del orden de 10⁻² o más», where step 2's RNN
    # («llegaba a 10⁻¹³») had vanished.
    sizes = [float(line.rsplit(" ", 1)[1]) for line in gradient.strip().splitlines()]
    assert len(sizes) == 6 and 1e-2 <= sizes[-1] < 1e-1 and "del orden de $10^{-2}$" in text
    assert f"de {sizes[0]:.1f} con un token a {sizes[-1]:.3f} con 60".replace(".", ",") in text
    assert sizes == sorted(sizes, reverse=True)  # «baja a medida que…»
    # «No se desvanece exponencialmente»: over 60 tokens it falls by a factor of about 100,
    # the RNN's by about 10¹³.
    assert sizes[0] / sizes[-1] < 1e3 and ns["influence"][0] / ns["influence"][59] > 1e10
    assert ns["influence"][59] < 1e-12 and "10^{-13}" in text


def test_question_7s_previous_token_head_attends_to_the_previous_token():
    """The model answer of q7: W_Q = λR (R turns PE(i) into PE(i − 1)), W_K = λI; every row
    of PE has norm √(d/2); the first token attends mostly to itself."""
    n, d, lam = 12, 16, 3.0
    pe, omega = reference.positional_encoding(n, d)
    rotation = np.zeros((d, d))
    for i, w in enumerate(omega):  # (sin ωp, cos ωp) -> (sin ω(p-1), cos ω(p-1)), as rows
        c, s = np.cos(w), np.sin(w)
        rotation[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    assert np.allclose(pe[1:] @ rotation, pe[:-1])
    assert np.allclose(np.linalg.norm(pe, axis=1), np.sqrt(d / 2))
    _, weights = reference.attention(pe @ (lam * rotation), pe @ (lam * np.eye(d)), pe)
    assert (weights[1:].argmax(axis=1) == np.arange(n - 1)).all()
    assert weights[0].argmax() == 0
    # The control: W_Q = W_K = I attends to itself, not to the previous token.
    _, itself = reference.attention(pe * lam, pe * lam, pe)
    assert (itself.argmax(axis=1) == np.arange(n)).all()


def test_question_6c_a_mask_after_the_softmax_loses_mass_but_keeps_the_ratios():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    causal = np.tril(np.ones((5, 5), dtype=bool))
    _, unmasked = reference.attention(Q, K, V)
    after = unmasked * causal
    _, before = reference.attention(Q, K, V, causal)
    assert (after.sum(axis=1)[:-1] < 1).all() and np.isclose(after[0].sum(), unmasked[0, 0])
    assert np.allclose(after / after.sum(axis=1, keepdims=True), before)


def test_the_cost_exercise_s_solution_note_counts_what_the_two_loops_count():
    cells = load_master(MASTER).cells
    (note,) = [c.source for c in cells if c.cell_type == "markdown" and "Con $n = 1000$" in c.source]
    n = 1000
    without, with_cache = 0, 0
    for t in range(1, n + 1):
        without, with_cache = without + t * t, with_cache + t
    assert without == n * (n + 1) * (2 * n + 1) // 6 and with_cache == n * (n + 1) // 2
    spaced = lambda value: f"{value:,}".replace(",", " ")  # noqa: E731  (333 833 500)
    assert f"son {spaced(without)} frente a {spaced(with_cache)}, unas {without / with_cache:.0f} veces más" in note
    # «crece como n³/3» and «como n²/2»: the leading terms, within 1 % at n = 1000.
    assert abs(without / (n ** 3 / 3) - 1) < 0.01 and abs(with_cache / (n ** 2 / 2) - 1) < 0.01
    assert "$n^3/3$" in note and "$n^2/2$" in note


def test_the_ablation_numbers_the_notebook_quotes_are_the_ones_lab_py_carries():
    """The ablation section's example citation and its claims: numbers of result.ablacion, which
    tests/test_ablation.py holds to what `python ablacion.py` prints on any machine."""
    from attention.lab import ABLATION

    (text,) = [c.source for c in load_master(MASTER).cells
               if c.cell_type == "markdown" and "Sus números también se pueden citar" in c.source]
    (fact,) = [item for item in ABLATION["evidence"] if item["id"] == "sin_escala_raiz_dk"]
    seeds, values = ABLATION["seeds"], fact["values"]
    at_0 = seeds.index(0)
    spanish = lambda value: f"{value:.4g}".replace(".", ",")  # noqa: E731
    assert (f"en los 15 primeros pasos con la semilla 0 es {spanish(values['early_gradient_without'][at_0])}"
            f", y con la escala, {spanish(values['early_gradient_with'][at_0])}") in text
    assert seeds == list(range(8)) and "semillas 0 a 7" in text and "con ocho semillas" in text
    # «cambia su pérdida final en las ocho semillas (con la escala, en ninguna)»
    assert values["chaotic_seeds_without"] == 8 and values["chaotic_seeds_with"] == 0
    assert "en las ocho semillas (con la escala, en ninguna)" in text


def test_the_post_ln_and_pre_ln_figure_draws_what_its_text_says_in_spanish_labels_that_fit():
    """«Post-LN y pre-LN», drawn (issue 33): each label fits its box, in Spanish; post-LN puts a
    layer norm after each sum, pre-LN one before each sub-layer; each residual path leaves the
    main path and joins a sum, and in pre-LN nothing but sums lies between the block's input and
    its output along them."""
    import importlib.util

    script = MASTER.parent / "figures" / "post_ln_pre_ln.py"
    spec = importlib.util.spec_from_file_location("post_ln_pre_ln", script)
    figure = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figure)
    fig = figure.draw()
    renderer = fig.canvas.get_renderer()
    (ax,) = fig.axes
    units = fig.bbox.width / figure.PAGE_W
    labels = {label for column in (figure.POST_LN, figure.PRE_LN) for kind, label, _ in column
              if kind == "box"}
    widths = {t.get_text(): t.get_window_extent(renderer).width / units for t in ax.texts}
    assert labels <= set(widths)
    assert all(widths[label] < figure.BOX_W - 10 for label in labels), widths
    # Every text stays on the page.
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= fig.bbox.width and 0 <= box.y0 and box.y1 <= fig.bbox.height, \
            text.get_text()
    assert not any(word in " ".join(widths).lower() for word in ("layer norm", "input", "output", "add"))
    names = lambda column: [label if kind == "box" else "+" for kind, label, _ in column]  # noqa: E731
    post, pre = names(figure.POST_LN), names(figure.PRE_LN)
    assert post[1:-1] == ["atención multicabeza", "+", "normalización de capa", "FFN por token", "+",
                          "normalización de capa"]
    assert pre[1:-1] == ["normalización de capa", "atención multicabeza", "+", "normalización de capa",
                         "FFN por token", "+"]
    for column, skips in ((post, figure.POST_LN_SKIPS), (pre, figure.PRE_LN_SKIPS)):
        assert [column[target] for _, target in skips] == ["+", "+"]
        assert skips[0][0] == 0  # the first leaves from the block's input
    # Along pre-LN's residual paths, from the input to the last sum: sums only. Post-LN's pass
    # through a layer norm between them.
    assert [pre[i] for i in range(figure.PRE_LN_SKIPS[0][1], figure.PRE_LN_SKIPS[1][0] + 1)] == ["+"]
    assert post[figure.POST_LN_SKIPS[1][0]] == "normalización de capa"
    import matplotlib.pyplot as plt

    plt.close(fig)
