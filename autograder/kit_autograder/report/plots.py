"""The class report's plots: matplotlib's SVG backend, made fit to inline in one HTML page."""

import io
import re

from .feedback import number

BAR_COLOUR = "#3b6ea8"


def points_chart(counts, *, possible, xlabel, key):
    """Bars of ``{points: students}``, one per value, on an axis from 0 to ``possible``.

    ``key`` must be unique in the page: it salts the SVG's ids (see ``_inline``).
    """
    from matplotlib.figure import Figure

    values = sorted(counts)
    # Narrow bars when the points are fine-grained, so that neighbours never overlap.
    steps = [b - a for a, b in zip(values, values[1:])]
    width = 0.8 * min(steps + [max(possible, 1) / 10, 1])
    figure = Figure(figsize=(4.2, 2.1), layout="constrained")
    axes = figure.subplots()
    bars = axes.bar(values, [counts[v] for v in values], width=width, color=BAR_COLOUR)
    axes.bar_label(bars, fontsize=8, padding=1)
    axes.set_xlim(-0.6 * max(width, possible / 20), possible + 0.6 * max(width, possible / 20))
    axes.set_xticks(values, [number(v) for v in values], fontsize=8)
    axes.set_xlabel(xlabel, fontsize=9)
    axes.set_ylabel("estudiantes", fontsize=9)
    axes.set_ylim(0, max(counts.values(), default=1) * 1.25)
    axes.yaxis.set_major_locator(_integer_locator())
    axes.tick_params(axis="y", labelsize=8)
    axes.spines[["top", "right"]].set_visible(False)
    return _inline(figure, key)


def _integer_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True, nbins=4)


def _inline(figure, key):
    """The figure as an ``<svg>`` element for an HTML page, with no XML prologue or metadata.

    Inline SVGs share the page's id namespace: the ids a figure references (its clip paths and
    tick markers) are salted with ``key`` so that two plots never clip each other, and the ids
    nothing references are dropped. Text stays text (``svg.fonttype: none``), which keeps
    each plot a few kilobytes and lets the browser draw the accents with its own fonts.
    """
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"report-{key}"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    referenced = set(re.findall(r"(?:url\(#|href=\"#)([^)\"]+)", svg))
    svg = re.sub(r' id="([^"]+)"', lambda m: m.group(0) if m.group(1) in referenced else "", svg)
    return svg.replace("<svg ", '<svg class="plot" role="img" ', 1).strip()
