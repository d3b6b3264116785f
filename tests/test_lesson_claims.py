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
