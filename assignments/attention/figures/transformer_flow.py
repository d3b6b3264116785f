"""The step-8 diagram: one Transformer block as seed 003's flowchart draws it, with the two
residual connections drawn as what they are, paths that skip their sub-layer and join it at
the sum, not as boxes in the chain.

Drawn with matplotlib rather than kept as SVG because JupyterLab does not render an SVG
attachment of an untrusted notebook; the build renders this to a PNG attachment, which every
front end shows.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

INK, HEAD, BLOCK, RESIDUAL = "#444444", "#1f5fa8", "#7a3e9d", "#2e7d32"
# (label, fill): the two grey boxes are the block's input and what follows it.
STEPS = [
    ("tokens + codificación posicional", "#f2f2f2"),
    ("proyecciones W_Q, W_K, W_V", "#e8f0fb"),
    ("puntuaciones Q·Kᵀ/√d_k", "#e8f0fb"),
    ("máscara causal (opcional)", "#e8f0fb"),
    ("softmax por fila", "#e8f0fb"),
    ("salida = pesos · V", "#e8f0fb"),
    ("concatenar h cabezas + W_O", "#f3ecf7"),
    ("sumar + normalización de capa", "#f3ecf7"),
    ("FFN por token", "#f3ecf7"),
    ("sumar + normalización de capa", "#f3ecf7"),
    ("siguiente bloque ×N", "#f2f2f2"),
]
PITCH, BOX_H, LEFT, WIDTH = 50, 34, 150, 300  # in the page's pixels, top to bottom


def _bracket(ax, x, top, bottom, color, label):
    """A bracket to the left of the boxes from ``top`` to ``bottom``, labelled vertically."""
    ax.plot([x + 10, x, x, x + 10], [top, top, bottom, bottom], color=color, lw=2)
    ax.text(x - 7, (top + bottom) / 2, label, color=color, rotation=90, ha="center",
            va="center", fontsize=11)


def _skip(ax, source, target, x):
    """A residual path: from box ``source``'s right side around the sub-layer into box
    ``target``'s, where it is added."""
    start = 20 + source * PITCH + BOX_H / 2 + (6 if source else 0)
    end = 20 + target * PITCH + BOX_H / 2
    ax.plot([LEFT + WIDTH, x, x], [start, start, end], color=RESIDUAL, lw=1.8)
    ax.annotate("", xy=(LEFT + WIDTH + 1, end), xytext=(x, end),
                arrowprops=dict(arrowstyle="-|>", color=RESIDUAL, lw=1.8))


def draw():
    """The diagram as a matplotlib Figure, 520 × 574 page pixels at 100 dpi."""
    fig = plt.figure(figsize=(5.2, 5.74), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 520)
    ax.set_ylim(574, 0)  # y grows downwards, as on the page
    ax.axis("off")
    for i, (label, fill) in enumerate(STEPS):
        top = 20 + i * PITCH
        ax.add_patch(FancyBboxPatch((LEFT, top), WIDTH, BOX_H, boxstyle="round,pad=0,rounding_size=6",
                                    facecolor=fill, edgecolor=INK, lw=1))
        ax.text(LEFT + WIDTH / 2, top + BOX_H / 2, label, ha="center", va="center", fontsize=11)
        if i:
            ax.annotate("", xy=(300, top - 1), xytext=(300, top - PITCH + BOX_H),
                        arrowprops=dict(arrowstyle="-|>", color=INK, lw=1.5))
    _skip(ax, 0, 7, 478)  # x skips the attention sub-layer
    _skip(ax, 7, 9, 502)  # and the FFN
    ax.text(514, 20 + 8 * PITCH, "conexiones residuales", color=RESIDUAL, rotation=90,
            ha="center", va="center", fontsize=9)
    _bracket(ax, 128, 70, 304, HEAD, "una cabeza de atención (×h)")
    _bracket(ax, 88, 70, 504, BLOCK, "un bloque Transformer")
    return fig
