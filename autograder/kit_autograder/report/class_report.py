"""The instructor's class report: ``OUT/records/*.json`` -> ``OUT/report.html``.

    python -m kit_autograder.report.class_report --out OUT --autograder ZIP     (make report)

One Spanish page about the class as a whole, to read before the next lecture: a summary, each
question (a histogram of its points and the pass rate of every hidden case), the mistakes the
diagnosis named (ranked by students, with the catalog's explanation and the catalog's blind
spot), what needs a person, and the acceptance criteria of the data questions (the challenge).

It is built from the records alone, the same source ``final_grades.csv`` and the feedback come
from, never from the CSV: ``ClassTally`` reads each record once and counts, ``render`` only
formats what it counted, so no number on the page is counted twice. The lesson supplies the
order of the questions, their notebook steps and, through its optional
``misconception_catalog()``, the Spanish name and explanation of each mistake.

The page needs nothing but itself: inline CSS and SVG (matplotlib), no script, no network, so
it opens from ``file://``. Student lists are folded in ``<details>``, which keeps a class of
500 under 1 MB.
"""

import argparse
import math
import statistics
import string
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ..spanish_numbers import number
from ..verdicts.record import Record
from . import markup, plots

REPORT_NAME = "report.html"
# The page's skeleton and style, kept as files so that they read (and diff) as HTML and CSS.
TEMPLATES = Path(__file__).with_name("templates")

# The sandbox's endings that mean "over a limit", in the instructor's words.
LIMITS = {"time": "tiempo", "memory": "memoria", "disk": "disco"}

# How a failed hidden case of a graded function was explained to the student, most specific
# first: each failure is counted under exactly one of these.
DIAGNOSES = {
    "named": "Error del catálogo",
    "found": "Otro fallo reconocido en la salida",
    "located": "Localizado por medición, fuera del catálogo",
    "hint": "Solo una pista genérica",
    "undiagnosed": "Respuesta incorrecta, sin pista",
    "error": "Error al ejecutar o sin implementar",
    "unanswered": "Sin respuesta (límite o proceso terminado)",
}

# The failures where the function answered, rightly typed or not: what a catalog can name.
WRONG_ANSWERS = ("named", "found", "located", "hint", "undiagnosed")

# Longer lists start folded, so that the page opens on its counts.
OPEN_LIST_ROWS = 20
OPEN_MISTAKES = 3
TOP_HINTS = 8


class ReportError(Exception):
    """The report cannot be built (no records to read)."""


@dataclass
class CaseTally:
    """One hidden case or criterion: how many graded submissions passed it."""

    description: str
    passed: int = 0
    total: int = 0


@dataclass
class MistakeTally:
    """One named mistake: who made it (a student counts once) and where it was recognised."""

    students: dict = field(default_factory=dict)  # stem -> file
    cases: dict = field(default_factory=dict)  # description -> None, in order of appearance


class ClassTally:
    """Everything the page shows, counted in one pass over the records."""

    def __init__(self, lesson):
        self.functions = list(lesson.FUNCTIONS)
        self.data_questions = list(lesson.DATA_QUESTIONS)
        self.steps = {name: spec.step for name, spec in lesson.FUNCTIONS.items()}
        catalog = getattr(lesson, "misconception_catalog", None)
        self.catalog = catalog() if catalog else {}
        self.submissions = 0
        self.graded = 0
        self.totals = []  # earned points of each graded submission
        self.points = {}  # question -> earned points of each graded submission
        self.possible_of = {}  # question -> points possible
        self.cases = {}  # (question, case) -> CaseTally, in the records' order
        self.mistakes = {}  # misconception id -> MistakeTally
        self.diagnoses = {name: dict.fromkeys(DIAGNOSES, 0) for name in self.functions}
        self.hints = {}  # generic hint -> {stem: file}
        self.flagged = []  # (file, stem, [flag texts])
        self.ungradable = []  # (file, stem, reason)
        self.over_limits = []  # (file, stem, limit, peak MB, seconds)
        self.students = {}  # file -> stem, of every submission

    def add(self, record: Record):
        self.submissions += 1
        student = (record.file, record.stem)
        self.students[record.file] = record.stem
        if record.flags:
            self.flagged.append((*student, [flag.text() for flag in record.flags]))
        limit = limit_reached(record)
        if limit:
            self.over_limits.append((*student, LIMITS[limit], record.sandbox.get("peak_mb"),
                                     record.sandbox.get("seconds")))
        for question, (_, possible) in record.scores.items():
            self.possible_of.setdefault(question, possible)
        if not record.graded:
            self.ungradable.append((*student, record.reason or ""))
            return
        self.graded += 1
        self.totals.append(record.earned)
        for question, (earned, _) in record.scores.items():
            self.points.setdefault(question, []).append(earned)
        for verdict in record.verdicts:
            if not verdict.public:
                self._add_verdict(verdict, student, record.diagnoses.get(verdict.question, []))

    def _add_verdict(self, verdict, student, diagnoses=()):
        tally = self.cases.setdefault((verdict.question, verdict.case),
                                      CaseTally(verdict.description))
        tally.total += 1
        tally.passed += verdict.passed
        if verdict.passed or verdict.question not in self.diagnoses:
            return
        diagnosis = diagnosis_of(verdict)
        self.diagnoses[verdict.question][diagnosis] += 1
        file, stem = student
        for mistake_id in verdict.misconceptions:
            mistake = self.mistakes.setdefault(mistake_id, MistakeTally())
            mistake.students[stem] = file
            mistake.cases[verdict.description] = None
        if diagnosis == "hint":
            # A record of format 1 kept its hints among the case's messages.
            hints = [m for m, kind in zip(verdict.messages, verdict.kinds) if kind == "hint"]
            hints += [d.message for d in diagnoses if d.kind == "hint" and verdict.case in d.cases]
            for message in hints:
                self.hints.setdefault(message, {})[stem] = file

    @property
    def possible(self):
        return sum(self.possible_of.values())

    def questions(self):
        """Every question, in the lesson's order, then any the lesson does not list."""
        known = self.functions + self.data_questions
        return known + sorted(q for q in self.possible_of if q not in known)


def limit_reached(record):
    """The limit a submission went over ("time", "memory", "disk"), or None.

    The sandbox's ending says how the job ended; an unanswered case says why the job stopped
    answering; a cell stopped for time means the notebook ran out of it while the job went on.
    """
    reasons = [record.sandbox.get("ending")] + [v.unverified for v in record.verdicts]
    if any(error.get("kind") == "time" for error in record.cell_errors):
        reasons.append("time")
    return next((reason for reason in reasons if reason in LIMITS), None)


def diagnosis_of(verdict):
    """Which of ``DIAGNOSES`` a failed verdict of a graded function received."""
    if "misconception" in verdict.kinds:
        return "named"
    if verdict.unverified:
        return "unanswered"
    if "located" in verdict.kinds:
        return "located"
    if "finding" in verdict.kinds:
        return "found"
    if "hint" in verdict.kinds:
        return "hint"
    if "error" in verdict.kinds:
        return "error"
    return "undiagnosed"


def read_records(out_dir):
    """The records of ``out_dir``, one at a time, in file-name order."""
    folder = Path(out_dir) / "records"
    paths = sorted(folder.glob("*.json"))
    if not paths:
        raise ReportError(f"no records in {folder}: run `make grade` first")
    for path in paths:
        yield Record.from_json(path.read_text("utf-8"))


def tally(out_dir, lesson) -> ClassTally:
    counted = ClassTally(lesson)
    for record in read_records(out_dir):
        counted.add(record)
    return counted


def write(out_dir, *, lesson, title=None, similarity_cutoff=None) -> Path:
    """Build ``out_dir/report.html`` from ``out_dir/records/``, and ``similarity.csv`` from
    ``out_dir/similarity/``; returns the page's path."""
    from ..similarity import section as similarity

    counted = tally(out_dir, lesson)
    page = render(counted, title=title, written=_written(out_dir, lesson, counted.students),
                  ingest=_ingest(out_dir), similar=similarity.write(out_dir, similarity_cutoff))
    path = Path(out_dir) / REPORT_NAME
    partial = path.with_name(f".{REPORT_NAME}.partial")
    partial.write_text(page, "utf-8", errors="replace")
    partial.replace(path)  # a reader never sees half a page
    return path


# --- rendering: formatting only; every number comes from the tally ----------------------------


_e = markup.html  # every text of the page, the students' file names and reasons among them


def percent(part, whole):
    """A share as a whole percentage, halves rounded up ("40 %"), or "—" of nothing."""
    if not whole:
        return "—"
    return f"{math.floor(100 * part / whole + 0.5)}\u00a0%"


def _student_link(file, stem):
    return f'<a href="feedback/{quote(stem)}.md">{_e(file)}</a>'


def _student_list(students):
    """A folded list of ``{stem: file}``, open when short."""
    ordered = sorted(students.items(), key=lambda item: item[1].casefold())
    items = "".join(f"<li>{_student_link(file, stem)}</li>" for stem, file in ordered)
    opened = " open" if len(ordered) <= 3 else ""
    count = "el estudiante" if len(ordered) == 1 else f"los {len(ordered)} estudiantes"
    return (f"<details{opened}><summary>Ver {count}</summary>"
            f'<ul class="students">{items}</ul></details>')


def _stat(key, value, label):
    return (f'<div class="stat"><span class="value" data-stat="{key}">{value}</span>'
            f'<span class="label">{label}</span></div>')


def _bar(part, whole):
    width = 0 if not whole else round(100 * part / whole, 1)
    return f'<span class="bar"><span style="width:{width}%"></span></span>'


def _question_title(question, steps):
    step = steps.get(question)
    return f"<code>{_e(question)}</code>" + (f" <small>({_e(step)})</small>" if step else "")


def _points_counts(points):
    """``{points: students}``, with sums of fractional points rounded as the CSV shows them."""
    counts = {}
    for value in points:
        value = round(value, 2)
        counts[value] = counts.get(value, 0) + 1
    return counts


def _points_figure(points, possible, key, xlabel):
    counts = _points_counts(points)
    if not counts:
        return ""
    svg = plots.points_chart(counts, possible=possible, xlabel=xlabel, key=key)
    values = sorted(counts)
    header = "".join(f"<th>{number(v)}</th>" for v in values)
    cells = "".join(f'<td data-points="{v:g}">{counts[v]}</td>' for v in values)
    return (f'<figure class="points" data-key="{_e(key)}">{svg}'
            f'<div class="scroll"><table class="counts"><tr><th scope="row">Puntos</th>'
            f'{header}</tr><tr><th scope="row">Estudiantes</th>{cells}</tr></table></div>'
            "</figure>")


def _case_rows(counted, question):
    rows = []
    for (q, case), tally in counted.cases.items():
        if q != question:
            continue
        failed = tally.total - tally.passed
        rows.append(f'<tr data-question="{_e(q)}" data-case="{_e(case)}">'
                    f"<td>«{_e(tally.description)}»</td>"
                    f'<td class="num passed">{tally.passed}</td>'
                    f'<td class="num failed">{failed}</td>'
                    f'<td class="rate">{_bar(tally.passed, tally.total)}'
                    f'<span class="pct">{percent(tally.passed, tally.total)}</span></td></tr>')
    return rows


def _case_table(counted, question, first_column):
    rows = _case_rows(counted, question)
    if not rows:
        return "<p>Ninguna entrega evaluada llegó a esta pregunta.</p>"
    return (f'<table class="cases"><thead><tr><th>{first_column}</th><th>Superan</th>'
            f"<th>Fallan</th><th>Tasa de acierto</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _summary(counted):
    possible = number(counted.possible)
    mean = number(statistics.fmean(counted.totals)) if counted.totals else "—"
    median = number(statistics.median(counted.totals)) if counted.totals else "—"
    figure = _points_figure(counted.totals, counted.possible, "total",
                            f"puntuación automática (de {possible})")
    return f"""
<section id="resumen">
  <h2>Resumen</h2>
  <div class="stats">
    {_stat("submissions", counted.submissions, "entregas")}
    {_stat("graded", counted.graded, "evaluadas")}
    {_stat("ungradable", len(counted.ungradable),
           '<a href="#no-evaluadas">no se pudieron evaluar</a>')}
    {_stat("flagged", len(counted.flagged), '<a href="#marcadas">marcadas para revisión</a>')}
    {_stat("mean", mean, f"puntuación media (de {possible})")}
    {_stat("median", median, f"mediana (de {possible})")}
  </div>
  <p class="note">La media, la mediana y todos los porcentajes de este informe son de las
  entregas evaluadas. Las que no se pudieron evaluar tienen 0 puntos en
  <code>final_grades.csv</code> y se listan en «Para revisar a mano». Las respuestas escritas,
  que corrige una persona, no están en estas cifras.</p>
  {figure}
</section>"""


def _questions_section(counted):
    overview, details = [], []
    for question in counted.questions():
        points = counted.points.get(question, [])
        possible = counted.possible_of.get(question, 0)
        full = sum(1 for p in points if math.isclose(p, possible))
        zero = sum(1 for p in points if p == 0)
        mean = number(statistics.fmean(points)) if points else "—"
        overview.append(
            f'<tr data-question="{_e(question)}"><td><a href="#pregunta-{_e(question)}">'
            f"{_question_title(question, counted.steps)}</a></td>"
            f'<td class="num mean">{mean} / {number(possible)}</td>'
            f'<td class="num full">{full}</td><td class="num zero">{zero}</td>'
            f'<td class="rate">{_bar(full, len(points))}'
            f'<span class="pct">{percent(full, len(points))}</span></td></tr>')
        figure = _points_figure(points, possible, f"q-{question}",
                                f"puntos en {question} (de {number(possible)})")
        if question in counted.data_questions:
            body = ('<p>Sus criterios de aceptación, uno a uno, están en '
                    '<a href="#reto">El reto</a>.</p>')
        else:
            body = _case_table(counted, question, "Caso oculto")
        details.append(f'<article id="pregunta-{_e(question)}">'
                       f"<h3>{_question_title(question, counted.steps)}</h3>"
                       f'<div class="question">{figure}<div class="detail">{body}</div></div>'
                       "</article>")
    return f"""
<section id="preguntas">
  <h2>Pregunta a pregunta</h2>
  <p>Qué funciones costaron más a la clase. Cada caso oculto vale lo mismo dentro de su
  pregunta; una función se evalúa aislada de las demás, así que un error cuesta puntos una sola
  vez.</p>
  <table class="overview"><thead><tr><th>Pregunta</th><th>Media</th>
  <th>Con todos los puntos</th><th>Con 0 puntos</th><th>Tasa de puntuación completa</th>
  </tr></thead><tbody>{''.join(overview)}</tbody></table>
  {''.join(details)}
</section>"""


def _mistakes_section(counted):
    ranked = sorted(counted.mistakes.items(),
                    key=lambda item: (-len(item[1].students), item[0]))
    items = []
    for rank, (mistake_id, tally) in enumerate(ranked, 1):
        entry = counted.catalog.get(mistake_id)
        name = entry.name if entry else mistake_id
        question = entry.question if entry else mistake_id.split(".")[0]
        step = f" · {_e(entry.step)}" if entry and entry.step else ""
        explanation = f"<p>{_e(entry.explanation)}</p>" if entry else ""
        cases = ", ".join(f"«{_e(c)}»" for c in tally.cases)
        students = len(tally.students)
        # The ranking reads as one line per mistake; only the most common start unfolded.
        opened = " open" if rank <= OPEN_MISTAKES else ""
        items.append(
            f'<li data-mistake="{_e(mistake_id)}"><details{opened}><summary>'
            f'<span class="name">{_e(name)}</span> <span class="meta">· '
            f"<code>{_e(question)}</code>{step} · "
            f'<strong class="count">{students}</strong> '
            f"{'estudiante' if students == 1 else 'estudiantes'} "
            f'(<span class="pct">{percent(students, counted.graded)}</span> de las '
            f"evaluadas)</span></summary>{explanation}"
            f'<p class="where">Reconocido en: {cases}.</p>'
            f"{_student_list(tally.students)}</details></li>")
    if items:
        seen = sum(1 for mistake_id in counted.mistakes if mistake_id in counted.catalog)
        listing = (f'<ol class="mistakes">{"".join(items)}</ol>'
                   + (f'<p class="note"><span data-stat="catalog-seen">{seen}</span> de los '
                      f"{len(counted.catalog)} errores del catálogo aparecen en esta clase.</p>"
                      if counted.catalog else ""))
    else:
        listing = "<p>El diagnóstico no reconoció ningún error del catálogo en esta clase.</p>"
    return f"""
<section id="errores">
  <h2>Errores frecuentes</h2>
  <p>Los errores típicos que el diagnóstico reconoció en los casos ocultos, de más a menos
  estudiantes. Un estudiante cuenta una vez por error, aunque lo cometa en varios casos. Cada
  estudiante enlaza con su informe, donde está lo que se le explicó.</p>
  {listing}
  {_blind_spot(counted)}
</section>"""


def _blind_spot(counted):
    totals = dict.fromkeys(DIAGNOSES, 0)
    rows = []
    for function, counts in counted.diagnoses.items():
        for key, value in counts.items():
            totals[key] += value
        cells = "".join(f'<td class="num" data-diagnosis="{key}">{value}</td>'
                        for key, value in counts.items())
        rows.append(f'<tr data-function="{_e(function)}"><td>'
                    f"{_question_title(function, counted.steps)}</td>{cells}"
                    f'<td class="num total">{sum(counts.values())}</td></tr>')
    failures = sum(totals.values())
    cells = "".join(f'<td class="num" data-diagnosis="{key}">{value}</td>'
                    for key, value in totals.items())
    rows.append(f'<tr class="sum" data-function=""><th scope="row">Total</th>{cells}'
                f'<td class="num total">{failures}</td></tr>')
    header = "".join(f"<th>{_e(label)}</th>" for label in DIAGNOSES.values())
    hints = sorted(counted.hints.items(), key=lambda item: (-len(item[1]), item[0]))
    hint_items = "".join(
        f'<li><span class="count">{len(students)}</span> '
        f"{'estudiante' if len(students) == 1 else 'estudiantes'}: «{_e(hint)}»</li>"
        for hint, students in hints[:TOP_HINTS])
    hint_list = (f"<details><summary>Las pistas genéricas más repetidas</summary>"
                 f'<ul class="hints">{hint_items}</ul></details>' if hints else "")
    # The share is of the wrong answers, the failures a catalog could name: an unnamed error is
    # nearly always a function still unimplemented, and an unanswered case has nothing to name.
    wrong = sum(totals[key] for key in WRONG_ANSWERS)
    neither = (f", y <strong data-stat=\"undiagnosed\">{totals['undiagnosed']}</strong> ni "
               "siquiera eso" if totals["undiagnosed"] else "")
    return f"""
  <h3 id="punto-ciego">El punto ciego del catálogo</h3>
  <p>De los <strong data-stat="wrong-answers">{wrong}</strong> fallos en casos ocultos en los que
  la función respondió algo equivocado,
  <strong data-stat="hint-only">{totals["hint"]}</strong>
  (<span data-stat="hint-share">{percent(totals["hint"], wrong)}</span>) solo recibieron una
  pista genérica{neither}, y <strong data-stat="located">{totals["located"]}</strong> solo el
  lugar donde la función se aparta de la correcta, localizado por medición: errores que el
  catálogo no sabe nombrar. Si se repiten, merece la pena añadirlos al catálogo. Los errores al ejecutar sin nombre (casi siempre una función sin
  implementar) y los casos sin respuesta quedan fuera de esa cuenta, pero no de la tabla.</p>
  <table class="diagnoses"><thead><tr><th>Función</th>{header}<th>Fallos</th></tr></thead>
  <tbody>{''.join(rows)}</tbody></table>
  {hint_list}"""


def _folded_table(rows, head):
    opened = " open" if len(rows) <= OPEN_LIST_ROWS else ""
    return (f"<details{opened}><summary>Ver la lista</summary><table><thead><tr>{head}</tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></details>")


def _needs_human(counted):
    parts = []
    flagged = [f'<tr data-file="{_e(file)}"><td>{_student_link(file, stem)}</td><td><ul>'
               + "".join(f"<li>{_e(text)}</li>" for text in texts) + "</ul></td></tr>"
               for file, stem, texts in sorted(counted.flagged, key=_by_file)]
    parts.append(f'<h3 id="marcadas">Marcadas para revisión ({len(flagged)})</h3>'
                 "<p>Un aviso nunca cambia una nota: dice dónde mirar.</p>"
                 + (_folded_table(flagged, "<th>Entrega</th><th>Avisos</th>") if flagged
                    else "<p>Ninguna.</p>"))
    ungradable = [f'<tr data-file="{_e(file)}"><td>{_student_link(file, stem)}</td>'
                  f'<td class="reason">{_e(reason)}</td></tr>'
                  for file, stem, reason in sorted(counted.ungradable, key=_by_file)]
    parts.append(f'<h3 id="no-evaluadas">No se pudieron evaluar ({len(ungradable)})</h3>'
                 "<p>Tienen 0 puntos en <code>final_grades.csv</code>; el motivo es el de su "
                 "columna <code>grading_status</code>.</p>"
                 + (_folded_table(ungradable, "<th>Entrega</th><th>Motivo</th>") if ungradable
                    else "<p>Ninguna.</p>"))
    limits = [f'<tr data-file="{_e(file)}"><td>{_student_link(file, stem)}</td>'
              f'<td class="limit">{_e(limit)}</td>'
              f'<td class="num">{_maybe(peak)}</td><td class="num">{_maybe(seconds)}</td></tr>'
              for file, stem, limit, peak, seconds in sorted(counted.over_limits, key=_by_file)]
    parts.append(f'<h3 id="limites">Por encima de los límites ({len(limits)})</h3>'
                 "<p>Se les acabó el tiempo o la memoria; las comprobaciones que no llegaron a "
                 "responder cuentan como no superadas.</p>"
                 + (_folded_table(limits, "<th>Entrega</th><th>Límite</th>"
                                          "<th>Memoria máxima (MB)</th><th>Duración (s)</th>")
                    if limits else "<p>Ninguna.</p>"))
    return f"""
<section id="revision">
  <h2>Para revisar a mano</h2>
  {''.join(parts)}
</section>"""


def _by_file(row):
    return row[0].casefold()


def _maybe(value):
    return "—" if value is None else number(value)


def _challenge(counted):
    if not counted.data_questions:
        return ""
    blocks = "".join(f"<h3>{_question_title(q, counted.steps)}</h3>"
                     f"{_case_table(counted, q, 'Criterio de aceptación')}"
                     for q in counted.data_questions)
    return f"""
<section id="reto">
  <h2>El reto: criterios de aceptación</h2>
  <p>Cuántas entregas evaluadas cumplen cada criterio. Los criterios se comprueban con código
  del corrector, a partir del resultado que deja el cuaderno del estudiante.</p>
  {blocks}
</section>"""


def _written(out_dir, lesson, students):
    """The written answers' section: first who of ``students`` (``{file: stem}``, from the
    records) has answers not yet graded (make export gives them no grade), then, once a person
    has graded some, per question the distribution of its points and how many got each rubric
    level (written/merge.py)."""
    from ..written.merge import class_summary, graded_counts

    name = getattr(lesson, "NAME", "")
    counts = graded_counts(out_dir, name, list(students))
    if counts is None:
        return ""
    summary = class_summary(out_dir, name) or []
    articles = []
    for entry in summary:
        question, points = entry["question"], entry["points"]
        mean = number(statistics.fmean(points)) if points else "—"
        figure = _points_figure(points, question.points, f"w-{question.name}",
                                f"puntos en la pregunta {entry['number']} "
                                f"(de {number(question.points)})")
        levels = "".join(f'<tr><td class="num">{number(level.points)}</td>'
                         f"<td>{_e(level.description)}</td>"
                         f'<td class="num" data-level="{level.points:g}">{count}</td></tr>'
                         for level, count in entry["levels"])
        articles.append(
            f'<article id="escrita-{_e(question.name)}" data-question="{_e(question.name)}">'
            f"<h3>Pregunta {entry['number']}: {_e(question.prompt)}</h3>"
            f'<p>Corregidas <span data-stat="graded">{entry["graded"]}</span> de '
            f"{entry['total']}; media {mean} / {number(question.points)}.</p>"
            f'<div class="question">{figure}<div class="detail"><table class="levels"><thead>'
            "<tr><th>Puntos</th><th>Nivel de la rúbrica</th><th>Estudiantes</th></tr></thead>"
            f"<tbody>{levels}</tbody></table></div></div></article>")
    return f"""
<section id="escritas">
  <h2>Respuestas escritas</h2>
  {_pending(counts, students)}
  {_GRADED_SO_FAR if articles else ""}
  {''.join(articles)}
</section>"""


_GRADED_SO_FAR = """<p>Lo que una persona ha corregido hasta ahora con la rúbrica
  (<code>written_scores.csv</code>). Los porcentajes de las secciones anteriores son solo de la
  parte automática.</p>"""


def _pending(counts, students):
    """Who has written answers not all graded: make export gives them no grade, the same
    rule whether none or some are graded."""
    pending = {file: done for file, (done, total) in counts.items() if done < total}
    if not pending:
        return ('<p id="sin-corregir" data-pending="0">Todas las respuestas escritas están '
                "corregidas: <code>make export</code> da la nota completa.</p>")
    listed = {students[file]: file for file in pending}
    questions = next(iter(counts.values()))[1]
    none = sum(1 for done in pending.values() if not done)
    which = ("todavía sin ninguna corregida" if none == len(pending) else
             f"{none} todavía sin ninguna corregida" if none else "")
    has = "tiene" if len(pending) == 1 else "tienen"
    return (f'<p id="sin-corregir" data-pending="{len(pending)}"><strong>{len(pending)} de '
            f"las {len(counts)} entregas {has} respuestas escritas sin corregir</strong> "
            f"({questions} preguntas por entrega{'; ' + which if which else ''}). "
            "<code>make export</code> no les pone nota hasta que estén todas corregidas "
            "(<code>make review</code>), salvo que exportes solo la parte automática con "
            "<code>AUTOMATIC_ONLY=1</code>.</p>" + _student_list(listed))


NOTICE_TITLES = {
    "undecided": "No se sabe qué archivo es el más reciente",
    "candidates": "Varios archivos de un mismo estudiante",
    "identity": "No se ha podido confirmar de quién es",
    "layout": "La descarga no tiene la forma de ninguna plataforma",
    "team": "Entregas en grupo",
    "not graded": "Archivos sin evaluar",
    "absent": "Sin entrega evaluable",
    "pick": "PICK= sin efecto",
}


def _ingest(out_dir):
    """What the download held that the instructor must look at before publishing grades: the
    manifest's notices and the people without a row, as the terminal printed them."""
    from ..lms.entries import INGEST_CSV, read_manifest

    try:
        manifest = read_manifest(out_dir) or {}
    except (OSError, ValueError):
        return ""
    notices = [(n.get("kind", ""), n.get("es", "")) for n in manifest.get("notices", [])]
    for absent in manifest.get("absent", []):
        who = " ".join(p for p in (absent.get("student_name"), absent.get("student_id")) if p)
        notices.append(("absent", f"{who or absent.get('origin', '')}: {absent.get('reason')}"))
    if not notices:
        return ""
    groups = {}
    for kind, text in notices:
        groups.setdefault(kind, []).append(text)
    parts = []
    for kind, texts in groups.items():
        items = "".join(f"<li>{_e(text)}</li>" for text in texts)
        parts.append(f"<h3>{_e(NOTICE_TITLES.get(kind, kind))} ({len(texts)})</h3><ul>{items}</ul>")
    return f"""
<section id="descarga">
  <h2>La descarga: revisa antes de publicar las notas</h2>
  <p>Lo que el corrector no ha podido decidir con certeza o ha dejado sin fila. Cada archivo de
  la descarga, evaluado o no, y por qué, está en <code>{INGEST_CSV}</code>.</p>
  {''.join(parts)}
</section>"""


def render(counted: ClassTally, *, title=None, written="", ingest="", similar="") -> str:
    """The page, as one string of HTML: the templates' skeleton and style around its sections;
    ``written``: the written answers' section, if any; ``ingest``: the download's notices."""
    heading = f"Informe de la clase: {title}" if title else "Informe de la clase"
    sections = [ingest, _summary(counted), _questions_section(counted), _mistakes_section(counted),
                _needs_human(counted), _challenge(counted), written, similar]
    links = (('<a href="#descarga">La descarga</a>' if ingest else "")
             + ('<a href="#reto">El reto</a>' if counted.data_questions else "")
             + ('<a href="#escritas">Respuestas escritas</a>' if written else "")
             + ('<a href="#similitud">Entregas parecidas</a>' if similar else ""))
    return string.Template((TEMPLATES / "report.html").read_text("utf-8")).substitute(
        heading=_e(heading), style=(TEMPLATES / "report.css").read_text("utf-8"),
        extra_links=links, sections="\n".join(sections))


def main(argv=None):
    parser = argparse.ArgumentParser(description="Rebuild OUT/report.html from OUT/records/, "
                                                 "without regrading.")
    parser.add_argument("--out", type=Path, required=True, help="a folder `make grade` wrote")
    parser.add_argument("--autograder", type=Path, required=True,
                        help="the autograder zip, for its lesson (steps and catalog)")
    parser.add_argument("--similarity-cutoff", default="",
                        help="the strength from which the report lists similar submissions "
                             "(SIMILARITY_CUTOFF=; docs/instructors.md)")
    args = parser.parse_args(argv)
    from ..similarity.flags import cutoff_setting

    try:
        similarity_cutoff = cutoff_setting(args.similarity_cutoff)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from ..bundle import BundleError, OpenedZip
    from ..written.scores import ScoresError
    from .outputs import rebuild

    try:
        with OpenedZip(args.autograder) as bundle:
            path = write(args.out, lesson=bundle.lesson, title=bundle.assignment_name,
                         similarity_cutoff=similarity_cutoff)
            rebuild(args.out, bundle)  # final_grades.csv and feedback/, written scores joined
    except (BundleError, ReportError, ScoresError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
