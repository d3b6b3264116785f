"""The class report's plots: matplotlib's SVG backend, made fit to inline in one HTML page.

Each plot carries its own text alternative (``describe``): what a screen reader says in its
place, the distribution's shape and its numbers, never «gráfico» (WCAG 2.1's 1.1.1).
"""

import html
import io
import re
import statistics

from ..spanish_numbers import number

BAR_COLOUR = "#3b6ea8"


def describe(counts, *, possible, xlabel):
    """The text alternative of a chart of ``{points: students}``: how many, at which points,
    the mean and the median, and where most of them are."""
    xlabel = re.sub(r"\s*\(de [^)]*\)$", "", xlabel)  # «… (de 20)»: said once, below
    total = sum(counts.values())
    if not total:
        return f"Distribución de {xlabel}: ningún estudiante todavía."
    values = sorted(counts, reverse=True)
    shown = [f"{counts[v]} con {number(v)}" for v in values[:6]]
    if len(values) > 6:
        shown.append(f"{sum(counts[v] for v in values[6:])} con otros valores")
    points = [v for v in values for _ in range(counts[v])]
    mode = max(values, key=lambda v: (counts[v], v))
    if counts.get(possible, 0) * 2 > total:
        shape = "La mayoría tiene la puntuación máxima."
    elif counts.get(0, 0) * 2 > total:
        shape = "La mayoría tiene 0."
    elif counts[mode] * 2 > total:
        shape = f"La mayoría tiene {number(mode)}."
    else:
        shape = (f"Está repartida; el valor más frecuente es {number(mode)} "
                 f"({counts[mode]} estudiante{'s' if counts[mode] != 1 else ''}).")
    return (f"Distribución de {xlabel}, sobre {number(possible)}: {total} "
            f"estudiante{'s' if total != 1 else ''}; {', '.join(shown)}. Media "
            f"{number(statistics.fmean(points))}, mediana {number(statistics.median(points))}. "
            f"{shape}")


def points_chart(counts, *, possible, xlabel, key):
    """Bars of ``{points: students}``, one per value, on an axis from 0 to ``possible``, with
    ``describe``'s sentence as its accessible name.

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
    return _inline(figure, key, describe(counts, possible=possible, xlabel=xlabel))


def _integer_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True, nbins=4)


def _inline(figure, key, alternative):
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
    label = html.escape(alternative, quote=True)
    svg = svg.replace("<svg ", f'<svg class="plot" role="img" aria-label="{label}" ', 1)
    # A <title> too, first child: what a pointer shows, and what older readers announce.
    svg = re.sub(r"(<svg\b[^>]*>)", lambda m: f"{m.group(1)}<title>{html.escape(alternative)}</title>",
                 svg, count=1)
    return svg.strip()
