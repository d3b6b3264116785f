"""What the lesson's text says is what its cells compute (issue 30.2): each number the text
cites is recomputed here from the cell that prints or draws it."""

import json
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


class Nudged:
    """A generator whose normal draws are nudged by ``size``·N(0, 1): the cited numbers must
    not notice (issue 48: cite only what survives 1e-12)."""

    def __init__(self, generator, size=1e-12):
        self.generator, self.size, self.noise = generator, size, np.random.default_rng(12)

    def normal(self, *args, **kwargs):
        draw = self.generator.normal(*args, **kwargs)
        return draw + self.size * self.noise.normal(size=np.shape(draw))

    def spawn(self, count):
        return [Nudged(child, self.size) for child in self.generator.spawn(count)]


def run_cell(source, rng, **names):
    """``source`` run as the notebook runs it, with the reference's softmax and ``rng``: what
    it printed, and its namespace."""
    import contextlib
    import io

    import matplotlib.pyplot as plt

    namespace = {"np": np, "plt": plt, "softmax": reference.softmax, "rng": rng, **names}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(source.replace("plt.show()", "plt.close('all')"), namespace)
    return printed.getvalue(), namespace


def spanish(value, digits=2):
    return f"{value:.{digits}g}".replace(".", ",")


def test_step_4_measures_the_gradient_that_reaches_the_query_as_its_text_says():
    """Issue 48.2: the typical query's gradient vanishes without the scale, the mean does not;
    the text says so with the cell's own numbers, and so does q9's model answer."""
    source, text = cell_and_text_after("def gradiente_en_q(")
    # The cell's generator is a child of the notebook's rng, as it is when the notebook runs.
    _, ns = run_cell(source, np.random.default_rng(0))
    dims = ns["dimensiones"]
    median = {d: m for d, m in zip(dims, ns["medianas"])}  # (without, with the scale)
    mean = {d: m for d, m in zip(dims, ns["medias"])}
    assert median[16][0] > median[4][0] and all(
        median[a][0] > median[b][0] for a, b in zip(dims[1:], dims[2:]))  # rises, then falls
    assert (f"({spanish(median[4][0])} con $d_k = 4$, {spanish(median[16][0])} con 16), pero desde "
            f"$d_k = 64$ cae: {spanish(median[256][0])} con 256 y "
            f"${spanish_power(median[1024][0])}$ con 1024") in text
    assert f"donde el {100 * ns['casi_nada'][-1]:.0f} % de las consultas recibe menos de una milésima" in text
    assert all(0.25 < m[1] < 0.35 for m in median.values()) and "en torno a 0,3" in text
    assert all(m[0] > m[1] for m in mean.values())  # «mayor que escalando en todas»
    ratio = mean[64][0] / mean[64][1]
    assert (f"{spanish(ratio)} veces con $d_k = 64$ ({spanish(mean[64][0])} frente a "
            f"{spanish(mean[64][1])})") in text
    # q9's model answer cites the same numbers.
    (answer,) = [c.source for c in load_master(MASTER).cells
                 if c.cell_type == "markdown" and c.source.startswith("(a) Quitar la escala")]
    assert f"su gradiente cae a {spanish(median[256][0])} con $d_k = 256$" in answer
    assert f"la media es {spanish(ratio)} veces la de escalando con $d_k = 64$" in answer


def shown(source, rng):
    """What a step-4 cell shows, as it shows it: its printed text, and the numbers its figure
    writes (two significant digits)."""
    printed, ns = run_cell(source, rng)
    drawn = [f"{value:.2g}" for name in ("medianas", "medias", "casi_nada") if name in ns
             for value in np.ravel(ns[name])]
    return printed + " ".join(drawn)


def test_step_4_shows_the_same_with_its_draws_nudged_by_1e_12():
    """Every number step 4's cells print or draw survives a 1e-12 nudge of their random inputs."""
    cells = [cell_and_text_after(marker)[0] for marker in ("for d_k in [4, 64, 512]:",
                                                          "def gradiente_en_q(")]
    for source in cells:
        assert shown(source, Nudged(np.random.default_rng(0))) == shown(source, np.random.default_rng(0))
    # The control: the nudge reaches the draws (the unrounded numbers move).
    _, plain = run_cell(cells[1], np.random.default_rng(0))
    _, nudged = run_cell(cells[1], Nudged(np.random.default_rng(0)))
    assert not np.array_equal(plain["medias"], nudged["medias"])


def test_step_2_says_what_shrinks_the_product_with_the_cell_s_own_numbers():
    """Issue 48.3: W alone would make the product grow (spectral radius 1.09, ‖W⁶⁰‖ = 240); the
    derivative of tanh, of mean 0.53 along the sequence, shrinks it."""
    source, _ = cell_and_text_after("d_hidden = 16")
    cells = load_master(MASTER).cells
    at = next(i for i, c in enumerate(cells) if c.cell_type == "code" and "d_hidden = 16" in c.source)
    text = "\n".join(c.source for c in cells[at + 1:at + 3] if c.cell_type == "markdown")
    for rng in (np.random.default_rng(0), Nudged(np.random.default_rng(0))):
        _, ns = run_cell(source, rng)
        W, h, slopes = ns["W"], np.zeros(ns["d_hidden"]), []
        for x in ns["inputs"]:
            h = np.tanh(W @ h + ns["U"] @ x)
            slopes.append(1 - h ** 2)
        radius = np.abs(np.linalg.eigvals(W)).max()
        grows = np.linalg.norm(np.linalg.matrix_power(W, len(ns["inputs"])))
        assert f"su radio espectral (el mayor módulo de sus valores propios) es {spanish(radius, 3)}" in text
        assert f"$W^{{60}}$ tendría norma {grows:.0f}" in text and radius > 1
        assert f"aquí vale de media {spanish(np.mean(slopes))}" in text
    assert "escala 0,9" not in source + text


def test_table_1_is_read_as_the_paper_reads_it():
    """Issue 48.5: the first column favours self-attention when n < d (n = 50, d = 512: 1,3·10⁶
    against 1,3·10⁷); the restricted-attention row is there; O(log_k n) is the dilated
    convolutions'."""
    (text,) = [c.source for c in load_master(MASTER).cells
               if c.cell_type == "markdown" and "| Tipo de capa |" in c.source]
    n, d = 50, 512
    power = lambda value: f"{value / 10 ** int(np.log10(value)):.1f}".replace(".", "{,}") \
        + f" \\cdot 10^{{{int(np.log10(value))}}}"  # noqa: E731
    assert n < d and n * n * d < n * d * d
    assert f"$n^2 d = {power(n * n * d)}$ operaciones frente a $n d^2 = {power(n * d * d)}$" in text
    assert f"{n * d * d / (n * n * d):.0f}" == "10" and "diez veces menos" in text
    assert "$O(\\log_k n)$ con convoluciones dilatadas" in text and "$O(n/k)$ con núcleos contiguos" in text
    assert "| Autoatención restringida" in text and "$O(r \\cdot n \\cdot d)$ | $O(1)$ | $O(n/r)$ |" in text
    assert "El precio de la autoatención está en la primera columna" not in text


def test_the_hours_match_their_parts():
    """Issue 48.9: the estimate is the sum of its parts (the review's estimate of the parts was
    7 to 8.5 hours, where the notebook said 6)."""
    (intro,) = [c.source for c in load_master(MASTER).cells
                if c.cell_type == "markdown" and "**Horas estimadas:**" in c.source]
    line = intro[intro.index("**Horas estimadas:**"):].splitlines()[0]
    total = float(re.search(r"\*\*Horas estimadas:\*\* (\d+(?:,\d+)?)", line)[1].replace(",", "."))
    parts = [float(p.replace(",", ".")) for p in re.findall(r"(?:así: |, |y )(\d+(?:,\d+)?) para", line)]
    assert len(parts) == 5 and sum(parts) == total and 7 <= total <= 8.5, (parts, total)


def tour_visible(cell):
    """Whether a master cell reaches the guided tour (which has no exercise, question or graded
    function)."""
    return "graded-only" not in cell.metadata.get("tags", []) and \
        "solution-note" not in cell.metadata.get("tags", [])


def test_the_smaller_claims_of_the_review_hold():
    """Issue 48.10, the claims that need no run of their own: each names what it points at, and
    says what holds."""
    from attention.lab import ABLATION

    cells = load_master(MASTER).cells
    prose = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    # Step 9 points at the table by its name and its row, not «the third error of the table that
    # follows» (35 cells later).
    assert "el tercer error de la tabla que sigue" not in prose
    row = "«Cada cabeza tiene un rol interpretable asignado.»"
    assert f"| {row} |" in prose and ("tabla «Errores conceptuales frecuentes», más abajo, "
                                       f"{row[:-2]}»") in prose
    # Permuting the tokens only permutes the outputs without a mask; with the causal mask order
    # counts, and the ablation without positions learns more than half of the shifted copy.
    assert "Sin codificación posicional y sin máscara, permutar los tokens solo permuta las salidas" in prose
    (positions,) = [e for e in ABLATION["evidence"] if e["id"] == "sin_codificacion_posicional"]
    assert min(positions["values"]["accuracy_without"]) > 0.5 and "más de la mitad" in prose
    rng = np.random.default_rng(3)
    X, perm = rng.normal(size=(6, 8)), rng.permutation(6)
    heads = [tuple(rng.normal(0, 0.4, (8, 4)) for _ in range(3)) for _ in range(2)]
    W_O, causal = rng.normal(0, 0.4, (8, 8)), np.tril(np.ones((6, 6), dtype=bool))
    assert np.allclose(reference.multihead(X, heads, W_O)[perm], reference.multihead(X[perm], heads, W_O))
    assert not np.allclose(reference.multihead(X, heads, W_O, causal)[perm],
                           reference.multihead(X[perm], heads, W_O, causal))
    # The guided tour points at no question and no graded function it does not have.
    (questions,) = [c for c in cells if c.cell_type == "markdown" and "Las preguntas 6 a 8" in c.source]
    assert not tour_visible(questions)
    assert "el laboratorio de `notebook_student.ipynb`" not in prose
    # RMSNorm is a normalisation that pre-LN models often use, not a variant of pre-LN.
    assert "(o su variante con RMSNorm)" not in prose and "muchos con RMSNorm en lugar de LayerNorm" in prose
    # Exercise E counts the q·k products only, and says what else the cache saves.
    (exercise,) = [c.source for c in cells if c.cell_type == "markdown"
                   and "**Ejercicio sin nota E: `productos_escalares`.**" in c.source]
    assert "Cuenta solo los productos $q \\cdot k$" in exercise and "las proyecciones $K$ y $V$" in exercise


def test_step_7_cites_the_rotation_error_by_its_size_only():
    """A round-off difference changes its digits from one machine to the next (issue 48: cite
    only what survives): the text gives its order of magnitude, which the cell's error has."""
    source, text = cell_and_text_after("error = np.max(np.abs(PE[k:] - PE[:-k] @ R.T))")
    PE, omega = reference.positional_encoding(100, 16)
    namespace = {"np": np, "PE": PE, "omega": omega}
    exec(source[source.index("k = 3"):source.index("print(")], namespace)  # the cell's R and error
    assert namespace["error"] < 1e-14  # round-off, whatever its digits
    assert "del orden de $10^{-15}$" in text and "2{,}4" not in text


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
    # Padding (issue 48.4): in an encoder, the real tokens change without the padding mask and
    # not with it («cero o redondeo»); in a decoder padded on the right, the causal mask alone
    # already hides the padding from them; padded on the left, it would not.
    assert "peso sobre el relleno 0.0" in padding
    assert np.abs(ns["salida_sin"][:3] - ns["sola"]).max() > 0.1
    assert np.abs(ns["salida_con"][:3] - ns["sola"]).max() < 1e-15
    assert np.abs(ns["causal_rellenada"][:3] - ns["causal_sola"]).max() < 1e-15
    assert padding.count("cambian hasta 0.00") == 2 and "cambian hasta 0.2" in padding
    left = np.vstack([np.zeros((2, 8)), ns["frase"]])
    left_causal, _ = reference.attention(*ns["proyecta"](left), mask=np.tril(np.ones((5, 5), dtype=bool)))
    assert np.abs(left_causal[2:] - ns["causal_sola"]).max() > 0.1
    assert "Con el relleno a la **izquierda**" in text
    # One matrix for every head equals the list of heads; the wrong reshape would not.
    assert np.abs(ns["juntas"] - reference.multihead(ns["x_cabezas"], ns["heads_demo"],
                                                     ns["W_O_demo"])).max() < 1e-14
    wrong = ns["x_cabezas"] @ ns["W_Q_todas"]
    assert not np.allclose(wrong.reshape(2, 6, -1), ns["Qs"])  # «reshape directo… mezclaría»
    # The KV cache gives the full causal computation, projecting 12 tokens instead of 78.
    assert np.abs(np.vstack(ns["filas_kv"]) - ns["completa"]).max() < 1e-14
    assert "12 con la caché; 78 recalculando" in cache
    # ∂y_T/∂x_1 does not vanish (issue 48.10: beside the RNN's ∂h_T/∂x_1 on the same sequence,
    # like with like): «del orden de 10⁻² o más» after 60 tokens, where the RNN's is 10⁻¹³.
    lines = gradient.strip().splitlines()
    attention_sizes = [float(re.search(r"con atención: (\S+);", line)[1]) for line in lines]
    rnn_sizes = [float(line.rsplit(" ", 1)[1]) for line in lines]
    assert attention_sizes == [float(f"{v:.2e}") for v in ns["atencion"]]
    assert len(lines) == 6 and 1e-2 <= attention_sizes[-1] < 1e-1 and "del orden de $10^{-2}$" in text
    assert (f"de {attention_sizes[0]:.1f} con un token a {attention_sizes[-1]:.3f} con 60".replace(".", ",")
            in text)
    assert attention_sizes == sorted(attention_sizes, reverse=True)  # «baja a medida que…»
    assert f"ha caído a ${spanish_power(rnn_sizes[-1])}$" in text and rnn_sizes[-1] < 1e-12
    # The RNN's is the step-2 chain rule for ∂h_T/∂x_1, checked here by finite differences where
    # they can resolve it (the first 10 tokens).
    W, U, inputs = ns["W"], ns["U"], ns["inputs"]

    def final_state(X):
        h = np.zeros(len(W))
        for x in X:
            h = np.tanh(W @ h + U @ x)
        return h

    for T in (1, 5, 10):
        columns = []
        for j in range(16):
            up, down = inputs[:T].copy(), inputs[:T].copy()
            up[0, j] += 1e-6
            down[0, j] -= 1e-6
            columns.append((final_state(up) - final_state(down)) / 2e-6)
        assert np.isclose(np.linalg.norm(np.array(columns)), ns["rnn"][T - 1], rtol=1e-5)
    # «No se desvanece exponencialmente»: over 60 tokens it falls by a factor of about 100,
    # the RNN's by about 10¹³.
    assert attention_sizes[0] / attention_sizes[-1] < 1e3 and rnn_sizes[0] / rnn_sizes[-1] > 1e10


def previous_token_head(n, d, lam=3.0, mask=None):
    """q7's construction, W_Q = λR (R turns PE(i) into PE(i − 1)), W_K = λI: its weights."""
    pe, omega = reference.positional_encoding(n, d)
    rotation = np.zeros((d, d))
    for i, w in enumerate(omega):  # (sin ωp, cos ωp) -> (sin ω(p-1), cos ω(p-1)), as rows
        c, s = np.cos(w), np.sin(w)
        rotation[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    assert np.allclose(pe[1:] @ rotation, pe[:-1])
    assert np.allclose(np.linalg.norm(pe, axis=1), np.sqrt(d / 2))
    return reference.attention(pe @ (lam * rotation), pe @ (lam * np.eye(d)), pe, mask)[1]


def test_question_7s_previous_token_head_attends_to_the_previous_token():
    """The model answer of q7 (issue 48.6): every query from 1 on attends most to the previous
    key, with the causal mask and without; the first token's weight on itself is exactly 1 with
    the mask, and without it its best key is its own with d_model = 16 but position 5 with 8."""
    (answer,) = [c.source for c in load_master(MASTER).cells
                 if c.cell_type == "markdown" and c.source.startswith("Cada pareja de columnas de $PE(i)$")]
    n = 12
    causal = np.tril(np.ones((n, n), dtype=bool))
    for d in (16, 8):
        for mask in (None, causal):
            weights = previous_token_head(n, d, mask=mask)
            assert (weights[1:].argmax(axis=1) == np.arange(n - 1)).all(), (d, mask is None)
        assert previous_token_head(n, d, mask=causal)[0, 0] == 1.0
    assert previous_token_head(n, 16)[0].argmax() == 0 and previous_token_head(n, 8)[0].argmax() == 5
    assert "su peso sobre sí mismo es exactamente 1" in answer
    assert ("con 12 posiciones y $d_{\\text{model}} = 16$ lo es, pero con $d_{\\text{model}} = 8$ es la de la "
            "posición 5") in answer
    assert abs(5 - (-1 + 2 * np.pi)) < 0.3 and "$2\\pi \\approx 6{,}3$" in answer  # «casi una vuelta»
    assert "atiende sobre todo a sí mismo" not in answer
    # The control: W_Q = W_K = I attends to itself, not to the previous token.
    pe = reference.positional_encoding(n, 16)[0]
    _, itself = reference.attention(pe * 3.0, pe * 3.0, pe)
    assert (itself.argmax(axis=1) == np.arange(n)).all()
    # The question asks for a check with the student's functions: a cell follows it for that.
    cells = load_master(MASTER).cells
    at = next(i for i, c in enumerate(cells) if "**Pregunta 7.**" in c.source)
    assert any(c.cell_type == "code" and "Pregunta 7: comprueba aquí" in c.source for c in cells[at:at + 12])


def test_question_9s_model_answer_cites_the_ablation_s_numbers():
    """Issue 48.6: q9's model answer cites numbers, as its own top level asks, and they are the
    ablation's, which any machine prints."""
    from attention.lab import ABLATION

    (answer,) = [c.source for c in load_master(MASTER).cells
                 if c.cell_type == "markdown" and c.source.startswith("(a) Quitar la escala")]
    (fact,) = [item for item in ABLATION["evidence"] if item["id"] == "sin_escala_raiz_dk"]
    values, at_0 = fact["values"], ABLATION["seeds"].index(0)
    cite = lambda value: f"{value:.4g}".replace(".", ",")  # noqa: E731
    assert (f"({cite(values['early_gradient_without'][at_0])} frente a "
            f"{cite(values['early_gradient_with'][at_0])} con la semilla 0)") in answer
    assert (f"{cite(values['initial_max_weight_without'][at_0])} frente a "
            f"{cite(values['initial_max_weight_with'][at_0])}") in answer
    assert (f"en {values['chaotic_seeds_without']} de 8 semillas sin la escala y en "
            f"{values['chaotic_seeds_with']} de 8 con ella") in answer
    assert f"con la escala, {cite(values['held_out_loss_median_with'])})" in answer


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


THREADED_SCRIPT = """
import os, sys
sys.path[:0] = {paths!r}
import test_lesson_claims as claims
import numpy as np
for marker in ("d_hidden = 16", "for d_k in [4, 64, 512]:", "def gradiente_en_q("):
    print(claims.shown(claims.cell_and_text_after(marker)[0], np.random.default_rng(0)))
"""


def test_steps_2_and_4_print_the_same_with_one_and_two_blas_threads():
    """The cells whose numbers the text cites, run with one BLAS thread and with two (another
    order of summation): the same text."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    paths = [str(tests), str(tests.parent), str(tests.parent / "autograder"),
             str(tests.parent / "assignments")]
    printed = {}
    for threads in ("1", "2"):
        environment = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads,
                       "MKL_NUM_THREADS": threads, "MPLBACKEND": "Agg"}
        done = subprocess.run([sys.executable, "-c", THREADED_SCRIPT.format(paths=paths)],
                              capture_output=True, text=True, env=environment, timeout=300)
        assert done.returncode == 0, done.stderr
        printed[threads] = done.stdout
    assert "Tras 60 tokens" in printed["1"] and "d_k = 512" in printed["1"]
    assert printed["1"] == printed["2"]


def test_the_spanish_of_the_review_is_fixed():
    """Issue 48.12: q1–q5 worded once (the notebook's words, in the rubric and assessment.md);
    no calques («producto escalar escalado», «acceso blando», «ejemplo trabajado», «(*positional*)»);
    «pesos» only for attention weights, «parámetros» for what a model learns."""
    import yaml
    from pathlib import Path

    from attention import ablacion, lab

    root = Path(__file__).resolve().parent.parent
    rubric = yaml.safe_load((root / "rubrics" / "attention.yaml").read_text("utf-8"))
    assessment = (root / "assessment.md").read_text("utf-8")
    cells = load_master(MASTER).cells
    for n in range(1, 6):
        (asked,) = [re.search(rf"\*\*Pregunta {n}\.\*\* (.*)", c.source)[1] for c in cells
                    if c.cell_type == "markdown" and f"**Pregunta {n}.**" in c.source]
        plain = asked.replace("*", "").replace("`", "")
        assert rubric["written"][f"q{n}"]["pregunta"] == plain
        assert f"**q{n}.** {plain}" in assessment
    # The public test cells keep another engineer's wording; everything else is the lesson's.
    prose = "\n".join(c.source for c in cells if "BEGIN TEST CONFIG" not in c.source)
    shipped = "\n".join([prose, assessment, json.dumps(lab.GLOSSES, ensure_ascii=False),
                         json.dumps(lab.ABLATION, ensure_ascii=False), " ".join(lab.LIMITATIONS),
                         " ".join(a.fact for a in ablacion.ABLATIONS)])
    for calque in ("producto escalar escalado", "acceso blando", "ejemplo trabajado",
                   "(*positional*)", "pesos aleatorios", "pesos entrenados", "pesos iniciales",
                   "pesos recurrentes", "Los pesos W_Q"):
        assert calque not in shipped, calque
    assert "parámetros aleatorios" in prose and "parámetros iniciales" in prose


def test_no_demo_cell_rebinds_a_name_that_from_numpy_import_star_brings():
    """A student whose functions use `from numpy import *` (sin, cos, outer…) calls them after
    every demo cell has run: a demo that rebinds one of those names (a loop over `sin, con`
    did) breaks correct code (tests/test_probe.py's ok_star_numpy_pe found it)."""
    import ast

    star = set(np.__all__) | {"pi", "e"}
    rebound = {}
    for cell in load_master(MASTER).cells:
        if cell.cell_type != "code" or "BEGIN TEST CONFIG" in cell.source:
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # an exercise's solution-and-prompt cell, Otter's own syntax
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in star:
                rebound[node.id] = cell.source.splitlines()[0]
    assert not rebound, rebound
    # The control: the loop that did it is caught.
    loop = ast.parse("for d_k, sin, con in zip(a, b, c):\n    pass\n")
    assert any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in star
               for n in ast.walk(loop))


def step_4_in_a_python_loop(propio, dimensiones, n_consultas):
    """Step 4's measurement as the cell first computed it, one query at a time (issue 52.3):
    10,000 pairs of softmaxes in a Python loop."""
    def gradiente_en_q(q, K, u, c):
        w = reference.softmax(K @ q * c)
        return np.linalg.norm(c * K.T @ (w * (u - w @ u)))

    medianas, medias, casi_nada = [], [], []
    for d_k in dimensiones:
        tamaños = []
        for _ in range(n_consultas):
            q, K, u = propio.normal(size=d_k), propio.normal(size=(10, d_k)), propio.normal(size=10)
            tamaños.append((gradiente_en_q(q, K, u, 1.0), gradiente_en_q(q, K, u, 1 / np.sqrt(d_k))))
        tamaños = np.array(tamaños)
        medianas.append(np.median(tamaños, axis=0))
        medias.append(tamaños.mean(axis=0))
        casi_nada.append(np.mean(tamaños[:, 0] < 1e-3))
    return medianas, medias, casi_nada


def test_step_4_s_vectorised_cell_computes_what_the_loop_did():
    """The cell draws every query's q, K and u in the loop's order, so the same numbers come
    out (to round-off), and the figure shows the same digits."""
    source, _ = cell_and_text_after("def gradiente_en_q(")
    assert "for consulta in range" not in source  # no Python loop over the queries
    _, ns = run_cell(source, np.random.default_rng(0))
    looped = step_4_in_a_python_loop(np.random.default_rng(0).spawn(1)[0], ns["dimensiones"],
                                     ns["n_consultas"])
    for name, values in zip(("medianas", "medias", "casi_nada"), looped):
        assert np.allclose(ns[name], values, rtol=1e-12, atol=0), name
        assert [f"{v:.2g}" for v in np.ravel(ns[name])] == [f"{v:.2g}" for v in np.ravel(values)]
    # The control: the same draws split in another order (the keys first) give other numbers.
    split = "q, K, u = filas[:, :d_k], filas[:, d_k:11 * d_k].reshape(n_consultas, 10, d_k), filas[:, 11 * d_k:]"
    assert split in source
    keys_first = source.replace(split, "K, q, u = filas[:, :10 * d_k].reshape(n_consultas, 10, d_k), "
                                       "filas[:, 10 * d_k:11 * d_k], filas[:, 11 * d_k:]")
    _, other = run_cell(keys_first, np.random.default_rng(0))
    assert not np.allclose(other["medias"], looped[1], rtol=1e-6)


def test_step_4_s_few_queries_with_two_near_tied_keys_carry_the_gradient():
    """The explanation of the mean (issue 48.2): without the scale, the queries whose two
    largest weights are close get a far larger gradient than the saturated rest, and a few of
    them carry most of the sum a batch makes. Measured on the cell's own 1000 queries at
    d_k = 1024 (the last it draws)."""
    source, text = cell_and_text_after("def gradiente_en_q(")
    _, ns = run_cell(source, np.random.default_rng(0))
    q, K, u = ns["q"], ns["K"], ns["u"]
    assert K.shape == (1000, 10, 1024)
    sizes = ns["gradiente_en_q"](q, K, u, 1.0)
    weights = reference.softmax(np.einsum("nkd,nd->nk", K, q))
    first, second = np.sort(weights, axis=1)[:, -1], np.sort(weights, axis=1)[:, -2]
    near_tie = first - second < 0.5
    assert 0 < near_tie.mean() < 0.2  # «unas pocas»
    assert np.median(sizes[near_tie]) > 1e3 * np.median(sizes[~near_tie])  # «un gradiente enorme»
    assert np.sort(sizes)[::-1][:100].sum() > 0.5 * sizes.sum()  # a tenth of them, most of the sum
    assert "las que tienen dos claves casi empatadas en cabeza, reciben un gradiente enorme" in text
