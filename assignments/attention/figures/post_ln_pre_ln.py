"""The «Post-LN y pre-LN» figure: the two orders of a block side by side, each with its residual
paths drawn as what they are, lines that skip a sub-layer and join the main path at a sum.

In post-LN (step 8, the original paper) each sum is followed by a layer norm, so the residual
path goes through both; in pre-LN each sub-layer reads a normalised copy of x, and the residual
path runs from the block's input to its output without any operation on it. Drawn with
matplotlib, as transformer_flow.py, and rendered by the build to a PNG attachment.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Circle, FancyBboxPatch  # noqa: E402

INK, RESIDUAL, NORM, SUBLAYER, END = "#444444", "#2e7d32", "#fdf2d9", "#e8f0fb", "#f2f2f2"

# Each column, top to bottom: (kind, label, fill). A "sum" is the circle where a residual path
# joins; every other step is a box.
POST_LN = [
    ("box", "x, entrada del bloque", END),
    ("box", "atención multicabeza", SUBLAYER),
    ("sum", "", None),
    ("box", "normalización de capa", NORM),
    ("box", "FFN por token", SUBLAYER),
    ("sum", "", None),
    ("box", "normalización de capa", NORM),
    ("box", "salida del bloque", END),
]
PRE_LN = [
    ("box", "x, entrada del bloque", END),
    ("box", "normalización de capa", NORM),
    ("box", "atención multicabeza", SUBLAYER),
    ("sum", "", None),
    ("box", "normalización de capa", NORM),
    ("box", "FFN por token", SUBLAYER),
    ("sum", "", None),
    ("box", "salida del bloque", END),
]
# Each residual path: (the step below which it branches off the main path, the sum it joins),
# by index in its column. Both run down one line to the right of the column, so where nothing
# interrupts the path (pre-LN) the line is unbroken, and where a layer norm does (post-LN) the
# line breaks there.
POST_LN_SKIPS = [(0, 2), (3, 5)]
PRE_LN_SKIPS = [(0, 3), (3, 6)]
TITLES = ("Post-LN (paso 8, artículo original)", "Pre-LN (GPT-2 y posteriores)")
NOTES = ("el camino residual atraviesa\ncada normalización de capa",
         "el camino residual va de la entrada\na la salida sin ninguna operación")

PAGE_W, PAGE_H = 800, 560  # in the page's pixels, y growing downwards
TOP, PITCH, BOX_H, BOX_W, SUM_R = 70, 54, 32, 220, 11
COLUMNS = (90, 470)  # the left edge of each column's boxes
SKIP_X = BOX_W + 34  # where the residual paths run down, from a column's left edge


def _center_y(step):
    return TOP + step * PITCH + BOX_H / 2


def _half_height(kind):
    return BOX_H / 2 if kind == "box" else SUM_R


def _column(ax, left, steps, skips, title, note):
    middle = left + BOX_W / 2
    ax.text(middle, 30, title, ha="center", va="center", fontsize=13, fontweight="bold")
    for i, (kind, label, fill) in enumerate(steps):
        y = _center_y(i)
        if kind == "box":
            ax.add_patch(FancyBboxPatch((left, y - BOX_H / 2), BOX_W, BOX_H,
                                        boxstyle="round,pad=0,rounding_size=6",
                                        facecolor=fill, edgecolor=INK, lw=1))
            ax.text(middle, y, label, ha="center", va="center", fontsize=11)
        else:
            ax.add_patch(Circle((middle, y), SUM_R, facecolor="white", edgecolor=INK, lw=1.2))
            ax.text(middle, y + 1, "+", ha="center", va="center", fontsize=14)
        if i:  # the main path, from the step above
            top = _center_y(i - 1) + _half_height(steps[i - 1][0])
            bottom = y - _half_height(kind)
            ax.annotate("", xy=(middle, bottom - 1), xytext=(middle, top),
                        arrowprops=dict(arrowstyle="-|>", color=INK, lw=1.4))
    x = left + SKIP_X
    for source, target in skips:
        # It branches off the main path just below its source, a dot where it splits.
        branch = _center_y(source) + _half_height(steps[source][0]) + 7
        end = _center_y(target)
        ax.plot([middle, x, x], [branch, branch, end], color=RESIDUAL, lw=2,
                solid_joinstyle="miter")
        ax.plot([middle], [branch], "o", color=RESIDUAL, markersize=5)
        ax.annotate("", xy=(middle + SUM_R + 1, end), xytext=(x, end),
                    arrowprops=dict(arrowstyle="-|>", color=RESIDUAL, lw=2))
    ax.text(middle, TOP + len(steps) * PITCH + 14, note, ha="center", va="top", fontsize=10.5,
            color=RESIDUAL, linespacing=1.3)


def draw():
    """The two blocks as a matplotlib Figure, 800 × 560 page pixels at 100 dpi."""
    fig = plt.figure(figsize=(PAGE_W / 100, PAGE_H / 100), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, PAGE_W)
    ax.set_ylim(PAGE_H, 0)
    ax.axis("off")
    for left, steps, skips, title, note in zip(COLUMNS, (POST_LN, PRE_LN),
                                                (POST_LN_SKIPS, PRE_LN_SKIPS), TITLES, NOTES):
        _column(ax, left, steps, skips, title, note)
    return fig
