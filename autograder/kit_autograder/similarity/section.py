"""The class report's section on similar submissions, and ``OUT/similarity.csv`` beside it.

Built from ``OUT/similarity/`` (the parts kept at grading time) and ``OUT/records/`` (the
mistakes), so ``make report`` rebuilds it without regrading. The page lists the flagged pairs,
strongest first; each unfolds into its unusual parts, the two texts side by side with the
passages they share marked. The CSV has every flagged pair and part, the page the first
``SHOWN_PAIRS`` pairs and each one's ``SHOWN_PARTS`` strongest parts.
"""

import csv
from pathlib import Path

from ..report import markup
from ..verdicts.record import Record
from . import compare, flags, parts

CSV_NAME = "similarity.csv"
SHOWN_PAIRS = 40
SHOWN_PARTS = 6  # a pair's strongest parts, side by side; the CSV has them all
COLUMNS = ("rank", "file_a", "file_b", "strength", "part", "score", "class_share", "evidence",
           "shared_mistakes")

_e = markup.html


def part_label(part: str) -> str:
    """The part as the page names it, in Spanish."""
    kind, _, name = part.partition(":")
    if part == parts.HELPERS:
        return "Otro código propio (celdas y funciones auxiliares)"
    if kind == "written":
        return f"Pregunta escrita {name}"
    if kind == "challenge":
        return f"Reto: texto «{name}»"
    return f"Función {part}"


def _mistakes(out):
    found = {}
    folder = Path(out) / "records"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = Record.from_json(path.read_text("utf-8"))
        except (OSError, ValueError, TypeError):
            continue
        if record.graded:
            found[record.stem] = flags.mistakes_of(record)
    return found


def analyse(out, cutoff=None):
    """The flagged pairs of a graded folder, strongest first, and the pairs compared per part."""
    kept = parts.load_all(out)
    return flags.analyse(kept, _mistakes(out),
                         cutoff=flags.CUTOFF if cutoff is None else float(cutoff))


def write_csv(out, flagged):
    path = Path(out) / CSV_NAME
    partial = path.with_name(f".{CSV_NAME}.partial")
    with open(partial, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        for rank, pair in enumerate(flagged, 1):
            for finding in pair.findings:
                writer.writerow([rank, pair.a["file"], pair.b["file"], f"{pair.strength:.2f}",
                                 finding.part, f"{finding.score:.3f}", f"{finding.share:.4f}",
                                 f"{finding.evidence:.2f}", " ".join(finding.mistakes)])
    partial.replace(path)
    return path


def _marked(text, spans):
    pieces, position = [], 0
    for start, end in spans:
        pieces.append(_e(text[position:start]))
        pieces.append(f"<mark>{_e(text[start:end])}</mark>")
        position = end
    pieces.append(_e(text[position:]))
    return "".join(pieces)


def _side(file, text, spans, part, code):
    label = f"{part_label(part)} de {file}"
    body = _marked(text, spans)
    block = (f'<pre tabindex="0" aria-label="{_e(label)}"><code>{body}</code></pre>' if code
             else f'<div class="text" tabindex="0" aria-label="{_e(label)}">{body}</div>')
    return f"<figure><figcaption>{_e(file)}</figcaption>{block}</figure>"


def _percent(value):
    return f"el {100 * value:.0f}\u00a0%" if value >= 0.01 else "menos del 1\u00a0%"


def _decimal(value):
    return f"{value:.1f}".replace(".", ",").replace("-", "\u2212")


def _count(n):
    return f"{n:,}".replace(",", "\u00a0")


def _place(rank):
    return "la pareja" if rank == 1 else f"la {rank}.ª pareja"


def _finding(pair, finding):
    a_spans, b_spans = flags.passages(pair, finding.part)
    code = compare.is_code(finding.part)
    mistakes = ("" if not finding.mistakes else
                "<li>El mismo error poco frecuente en los dos: "
                + ", ".join(f"<code>{_e(m)}</code>" for m in finding.mistakes) + "</li>")
    rank = max(1, round(finding.share * finding.compared))
    return (f'<div class="finding" data-part="{_e(finding.part)}">'
            f"<h4>{_e(part_label(finding.part))}</h4>"
            f'<ul class="meta"><li>Entre las {_count(finding.compared)} parejas de la clase, '
            f'<strong data-score="{finding.score:.3f}">{_place(rank)}</strong> '
            f"que más comparte en esta parte ({_percent(finding.share)} de las parejas "
            f"se parecen igual o más)</li>{mistakes}</ul>"
            f'<div class="side-by-side">'
            f'{_side(pair.a["file"], pair.a["parts"][finding.part], a_spans, finding.part, code)}'
            f'{_side(pair.b["file"], pair.b["parts"][finding.part], b_spans, finding.part, code)}'
            "</div></div>")


def render(flagged, compared, cutoff=None) -> str:
    cutoff = flags.CUTOFF if cutoff is None else cutoff
    items = []
    for rank, pair in enumerate(flagged[:SHOWN_PAIRS], 1):
        names = ", ".join(part_label(f.part) for f in pair.findings)
        body = "".join(_finding(pair, finding) for finding in pair.findings[:SHOWN_PARTS])
        hidden = len(pair.findings) - SHOWN_PARTS
        if hidden > 0:
            body += (f'<p class="note">{"Otra parte" if hidden == 1 else f"Otras {hidden} partes"}'
                     f" en <code>{CSV_NAME}</code>.</p>")
        items.append(
            f'<li data-pair="{_e(pair.a["file"])}|{_e(pair.b["file"])}">'
            f'<details{" open" if rank == 1 else ""}><summary><span class="name">'
            f'{_e(pair.a["file"])} y {_e(pair.b["file"])}</span> <span class="meta">· '
            f'fuerza <strong data-strength="{pair.strength:.2f}">{_decimal(pair.strength)}'
            f"</strong> · {_e(names)}</span></summary>{body}</details></li>")
    more = (f"<p>La página muestra las {SHOWN_PAIRS} primeras; todas están en "
            f"<code>{CSV_NAME}</code>.</p>" if len(flagged) > SHOWN_PAIRS else "")
    listing = (f'<ol class="similar">{"".join(items)}</ol>{more}' if items else
               "<p>Ninguna pareja destaca sobre lo que se parecen entre sí las entregas de esta "
               "clase.</p>")
    compared_parts = sum(1 for n in compared.values() if n)
    return f"""
<section id="similitud">
  <h2>Entregas parecidas: para que las mire una persona</h2>
  <p>Parejas de entregas que se parecen mucho más de lo que se parecen entre sí las entregas de
  esta clase, parte por parte ({compared_parts} parte{"" if compared_parts == 1 else "s"}: cada función, el otro código propio,
  cada respuesta escrita y cada texto del reto), sin contar lo que todos recibieron en el
  cuaderno. Un parecido no es una prueba ni cambia ninguna nota, y ningún estudiante lo ve: dice
  dónde mirar. Las partes compartidas están marcadas en los dos textos.</p>
  <p class="note">Una parte es inusual cuando, como mucho, {_percent(flags.PART_TAIL)} de las
  parejas de la clase se parecen tanto en ella, y cuenta lo raro que es ese parecido en esta clase
  (un mismo error poco frecuente en los dos suma lo raro que es). La fuerza de una pareja compara
  lo que suman sus partes inusuales con lo que suman las demás parejas de esta clase: con fuerza
  0, en una clase como esta cabría esperar por azar una pareja así de parecida; con 1, en una de
  cada diez clases; con 2, en una de cada cien. Se listan desde la fuerza {_decimal(cutoff)}
  (<code>SIMILARITY_CUTOFF</code>); la lista, con cada parte, está también en
  <code>{CSV_NAME}</code>.</p>
  {listing}
</section>"""


def write(out, cutoff=None) -> str:
    """``OUT/similarity.csv``, and the section's HTML ("" when nothing was kept: a folder
    graded before the similarity pass)."""
    if not (Path(out) / parts.FOLDER).is_dir():
        return ""
    flagged, compared = analyse(out, cutoff)
    write_csv(out, flagged)
    return render(flagged, compared, cutoff)
