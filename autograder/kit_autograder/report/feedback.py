"""The Spanish report a student reads, rendered from their record and nothing else, in sections.

What it shows is what the record lets through: scores, the verdicts' messages (written by
the grader, never quoting a hidden input or a reference value), the errors of the student's
own cells, and what the cells printed before any hidden input existed. Cells are numbered [n]
as Jupyter numbers them after "Restart & Run All".

The report is a list of ``Section``s, and every page is made of them:

* ``feedback.md`` is ``join(sections)``: the header (the score and its table), "Pregunta a
  pregunta" with one section per question, then the rest (the cells' errors, notes, flags,
  what the notebook printed);
* in ``results.json`` (otter_results.py) each question's box is that question's section's
  ``body``, and the page's own output is the header and the rest;
* a later page joins the same sections its own way: a section per written question (issue
  22) is one more ``Section(QUESTION, …)``; Moodle's HTML is ``join`` rendered by markdown-it
  with HTML disabled.

A section's ``title`` and ``body`` are Markdown, and everything in them that a student chose
(a file name, a message that quotes their text, what they printed) went through markup.py.
"""

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Optional

from ..spanish_numbers import number, thousands
from ..verdicts.messages import cell_error_text
from ..written import feedback_section
from . import markup

MAX_SHOWN_OUTPUT_CHARS = 5_000
MAX_CELL_ERRORS = 10

HEADER, QUESTION, DETAIL = "header", "question", "detail"
QUESTIONS_TITLE = "Pregunta a pregunta"


@dataclass(frozen=True)
class Section:
    """One part of the report. ``kind`` (HEADER, QUESTION or DETAIL) says where ``join`` puts
    it; ``title`` is one line of Markdown, ``body`` any Markdown; ``question`` names the
    question a QUESTION section is about (the box it fills in results.json)."""

    kind: str
    title: str
    body: str
    question: Optional[str] = None


def join(sections) -> str:
    """The report as one Markdown page: the header, the questions, then the rest."""
    parts = [f"# {s.title}\n\n{s.body}" for s in sections if s.kind == HEADER]
    questions = [s for s in sections if s.kind == QUESTION]
    if questions:
        parts.append(f"## {QUESTIONS_TITLE}")
        parts += [f"### {s.title}\n\n{s.body}" for s in questions]
    parts += [f"## {s.title}\n\n{s.body}" for s in sections if s.kind == DETAIL]
    return "\n\n".join(part.rstrip() for part in parts) + "\n"


def _sentence(text):
    text = str(text).strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def _item(lead, message, indent=""):
    """A list item ``lead`` + ``message`` (the kit's, maybe quoting the student), each line of
    the message on a line of its own within the item."""
    lines = markup.message(message)
    first = f"{indent}{lead}{lines[0]}"
    # Continuation lines sit two spaces in, inside the item: as deep as a long lead (a
    # diagnosis's scope) they would read as a code block.
    rest = [f"{indent}{' ' * min(len(lead), 2)}{line}" for line in lines[1:] if line]
    return "  \n".join([first, *rest])  # two blanks: a line break inside the item


# --- the sections ------------------------------------------------------------------------------


def sections_for(grader, record, written=None) -> list:
    """The sections of ``record``, with what the zip's grader knows: the points graded by hand
    and which functions each question calls (make grade and the Otter plugin both use this);
    ``written``: the person's marks of the written answers, once there are any."""
    settings = grader.bundle.settings
    return sections(record, manual_points=float(settings.get("manual_points", 0)),
                    depends={name: spec.stand_ins
                             for name, spec in grader.lesson.FUNCTIONS.items()},
                    written=written)


def render_for(grader, record, written=None) -> str:
    return join(sections_for(grader, record, written))


def sections(record, *, manual_points=0, depends=None, written=None) -> list:
    """``record`` as sections. ``manual_points``: the points a person grades by hand (written
    answers); ``depends``: {question: graded functions it calls}; ``written``: the person's
    marks of those answers, once there are any (written/scores.py)."""
    found = [_header(record, manual_points, written)]
    found += _questions(record, depends or {})
    if written is not None:
        found.append(_written(written))
    for detail in (_cell_errors, _notes, _flags, _output):
        section = detail(record)
        if section is not None:
            found.append(section)
    return found


def render(record, *, manual_points=0, depends=None, written=None) -> str:
    """The Markdown for ``record``: ``join(sections(...))``."""
    return join(sections(record, manual_points=manual_points, depends=depends, written=written))


def _written(written):
    """The written answers' marks, as a person gave them (written/feedback_section.py)."""
    lines = feedback_section.section_lines(written)
    return Section(DETAIL, lines[0].removeprefix("## "), "\n".join(lines[1:]).strip())


def _empty_answers_line(numbers):
    """The written answers left empty, said where the score is: empty, they earn nothing."""
    shown = _spanish_list([str(n) for n in numbers])
    which = (f"Tu respuesta escrita {shown} está vacía" if len(numbers) == 1 else
             f"Tus respuestas escritas {shown} están vacías")
    write = "Escríbela" if len(shown) == 1 else "Escríbelas"
    return (f"> **{which}** en el cuaderno que entregaste: así no suma puntos. {write} en "
            "su celda, guarda el cuaderno y vuelve a entregarlo.")


def _header(record, manual_points, written=None):
    earned, possible = record.earned, record.possible
    percent = round(100 * earned / possible) if possible else 0
    lines = [f"**Puntuación automática: {number(earned)} / {number(possible)}** ({percent} %)"]
    if written is not None:
        lines += feedback_section.summary_lines(written, earned, possible)
    elif manual_points:
        lines.append(f"Además, tus respuestas escritas valen {number(manual_points)} puntos más, "
                     "que corrige una persona con la rúbrica de la clase; no están en esta cifra.")
    if record.empty_answers and not (written is not None and written.complete):
        lines += ["", _empty_answers_line(record.empty_answers)]
    lines.append("")
    if not record.graded:
        lines += [f"> **No se ha podido evaluar tu entrega:** "
                  f"{markup.sentence(_sentence(record.reason))}", ">",
                  "> Por eso tiene 0 puntos en todas las preguntas. Corrígelo y vuelve a "
                  "entregar.", ""]
    lines += _score_table(record)
    # The file's own name: its path in an LMS's download («Ana_48211_assignsubmission_file/…»)
    # is the kit's key, not what the student handed in.
    shown = PurePosixPath(record.file).name or record.file
    return Section(HEADER, f"Informe de evaluación: {markup.code(shown)}", "\n".join(lines))


def _by_question(record):
    grouped = {}
    for verdict in record.verdicts:
        grouped.setdefault(verdict.question, []).append(verdict)
    return grouped


def _score_table(record):
    grouped = _by_question(record)
    lines = ["| Pregunta | Puntos | Comprobaciones ocultas superadas |", "|---|---:|---:|"]
    for question, (earned, possible) in record.scores.items():
        hidden = [v for v in grouped.get(question, []) if not v.public]
        shown = f"{sum(v.passed for v in hidden)} de {len(hidden)}" if record.graded else "—"
        lines.append(f"| {markup.code(question)} | {number(earned)} / {number(possible)} "
                     f"| {shown} |")
    return lines


def _questions(record, depends):
    if not record.graded:
        return []
    grouped = _by_question(record)
    failing = {q for q, vs in grouped.items() if any(not v.passed and not v.public for v in vs)}
    return [Section(QUESTION, f"{markup.code(question)}: {number(earned)} / {number(possible)}",
                    _question_body(grouped.get(question, []), depends.get(question, ()),
                                   failing, record.diagnoses.get(question, [])), question)
            for question, (earned, possible) in record.scores.items()]


def _question_body(verdicts, calls, failing, diagnoses=()):
    hidden = [v for v in verdicts if not v.public]
    public = [v for v in verdicts if v.public]
    if all(v.passed for v in verdicts):
        # Said only when the hidden cases pass too: never "all passed" for public ones alone.
        return "Todas sus comprobaciones, públicas y ocultas, han pasado."
    lines = []
    if public and all(v.passed for v in public):
        lines += ["Las pruebas públicas pasan, pero las comprobaciones ocultas no: las "
                  "públicas solo comprueban propiedades, no la respuesta.", ""]
    # Cases that fail for the same reason are said once, with the cases named together.
    by_message = {}
    for verdict in hidden:
        if not verdict.passed:
            by_message.setdefault(tuple(verdict.messages), []).append(verdict.description)
    for messages, descriptions in by_message.items():
        cases = ", ".join(f"«{markup.text(d)}»" for d in descriptions)
        lines.append(f"- {cases}:" if len(descriptions) == 1
                     else f"- {len(descriptions)} casos con el mismo fallo ({cases}):")
        lines += [_item("- ", message, "  ") for message in messages]
    lines += _diagnoses(diagnoses, hidden)
    # Blame by measurement where the grader measured it (Verdict.blamed), else the functions
    # the tests call that fail their own cases.
    measured = list(dict.fromkeys(name for v in public if not v.passed for name in v.blamed))
    blamed = measured or [d for d in calls if d in failing]
    # Public tests that fail for the same reason too (a stub fails them all alike), and a
    # hint two tests share (their failure message) is said once.
    by_message, said = {}, set()
    for verdict in public:
        if not verdict.passed:
            by_message.setdefault(tuple(verdict.messages), []).append(verdict.case)
    for messages, tests in by_message.items():
        names = ", ".join(map(markup.code, tests))
        lines.append(f"- Prueba pública {names}:" if len(tests) == 1
                     else f"- {len(tests)} pruebas públicas con el mismo fallo ({names}):")
        fresh = [[line for line in str(message).splitlines() if line not in said]
                 for message in messages]
        for new in fresh:
            said.update(new)
            if new:
                lines.append(_item("", "\n".join(new), "  "))
        if not any(fresh):
            lines[-1] += " el mismo fallo de arriba."
    own = {v.question for v in verdicts}
    if by_message and measured:
        one = sum(map(len, by_message.values())) == 1
        names = " y ".join(", ".join(map(markup.code, measured)).rsplit(", ", 1))
        single = len(measured) == 1
        elsewhere = (f", no aquí (mira {'su sección' if single else 'sus secciones'})"
                     if not set(measured) <= own else "")
        lines.append(f"  Con la versión correcta de {names} en lugar de "
                     f"{'la tuya' if single else 'las tuyas'}, "
                     f"{'esta prueba se cumple' if one else 'estas pruebas se cumplen'}: el fallo "
                     f"está en {'tu' if single else 'tus'} {names}{elsewhere}.")
    elif by_message and blamed and not measured:
        one = sum(map(len, by_message.values())) == 1
        # «tu propia `attention`, que también falla» / «tus propias `attention` y `multihead`…»
        names = " y ".join(", ".join(map(markup.code, blamed)).rsplit(", ", 1))
        single = len(blamed) == 1
        lines.append(f"  {'Esta prueba usa' if one else 'Estas pruebas usan'} "
                     f"{'tu propia' if single else 'tus propias'} {names}, que también "
                     f"{'falla' if single else 'fallan'}: {'corrígela' if single else 'corrígelas'} "
                     f"primero y vuelve a mirar {'esta' if one else 'estas'}.")
    return "\n".join(lines)


def _diagnoses(diagnoses, hidden):
    """What explains the function's failing cases, each said once; with the cases it explains
    when it does not explain them all."""
    failing = [v for v in hidden if not v.passed]
    described = {v.case: v.description for v in hidden}
    lines = []
    for diagnosis in diagnoses:
        scope = ""
        if len(failing) > 1 and set(diagnosis.cases) < {v.case for v in failing}:
            cases = " y ".join(f"«{markup.text(described.get(c, c))}»" for c in diagnosis.cases)
            scope = f" en {cases} ({len(diagnosis.cases)} de los {len(failing)} casos que fallan)"
        lines.append(_item(f"- **Diagnóstico**{scope}: ", _sentence(diagnosis.message)))
    return lines


def _sentence(text):
    """A diagnosis ends as a sentence does: the catalogue's do, the measured findings' are
    written as clauses that others quote inside theirs."""
    stripped = text.rstrip()
    return stripped if not stripped or stripped[-1] in ".!?…:" else stripped + "."


def _cell_errors(record):
    errors = [e for e in record.cell_errors if not e.get("skipped")]
    if not errors:
        return None
    lines = ["Tu cuaderno se ejecuta entero, de arriba abajo, como con *Kernel → Restart & Run "
             "All*. Los números entre corchetes son los que Jupyter muestra junto a cada celda "
             "tras hacerlo.", ""]
    own = [e for e in errors if e.get("knock_on_of") is None]
    knock_on = {}
    for error in errors:
        if error.get("knock_on_of") is not None:
            knock_on.setdefault(error["knock_on_of"], []).append(error)
    # A function not written yet fails every demo cell that uses it: one line per function,
    # not one per cell, so that the other errors stay in sight.
    pending = {}
    for error in own:
        if error.get("exception") == "NotImplementedError" and error.get("kind") != "time":
            pending.setdefault(error.get("message") or "", []).append(error)
    for message, same in pending.items():
        cells = _spanish_list([f"[{e['cell']}]" for e in same])
        text = cell_error_text("NotImplementedError", message)
        lines.append(f"- {'Celda' if len(same) == 1 else 'Celdas'} {cells}: {markup.code(text)}")
    grouped = {id(e) for same in pending.values() for e in same}
    own = [e for e in own if id(e) not in grouped]
    for error in own[:MAX_CELL_ERRORS]:
        lines.append(_error_line(error))
        later = knock_on.get(error["cell"], [])
        if later:
            cells = ", ".join(f"[{e['cell']}]" for e in later)
            lines.append(f"  - Por eso fallan también {cells}: usan nombres que esta celda "
                         "no llegó a definir. Corrige esta primero.")
    if len(own) > MAX_CELL_ERRORS:
        hidden = len(own) - MAX_CELL_ERRORS
        lines.append(f"- … y {hidden} {'error' if hidden == 1 else 'errores'} más.")
    return Section(DETAIL, "Errores al ejecutar tu cuaderno", "\n".join(lines))


def _spanish_list(items):
    """«a», «a y b», «a, b y c»."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} y {items[-1]}"


def _error_line(error):
    where = f", línea {error['line']}" if error.get("line") else ""
    first_line = markup.code(error.get("first_line", ""))
    if error.get("kind") == "time" and error.get("slow"):
        then = ("; las celdas siguientes sí se ejecutaron, y lo que definen se ha evaluado"
                if error.get("more") else "")
        return (f"- Celda [{error['cell']}] ({first_line}): tardó más de {error.get('budget')} s, "
                f"el máximo de una celda, y se detuvo{then}")
    if error.get("kind") == "time":
        return (f"- Celda [{error['cell']}] ({first_line}): se detuvo porque el cuaderno agotó "
                "su tiempo")
    text = cell_error_text(error["exception"], error.get("message"))
    raised = (f"; salta en tu línea {markup.code(error['raised_line'])}"
              if error.get("raised_line") else "")
    return f"- Celda [{error['cell']}] ({first_line}){where}: {markup.code(text)}{raised}"


def _notes(record):
    if not record.notes:
        return None
    return Section(DETAIL, "Avisos", "\n".join(f"- {markup.sentence(_sentence(note))}"
                                               for note in record.notes))


def _flags(record):
    if not record.flags:
        return None
    return Section(DETAIL, "Marcado para revisión", "\n".join(
        ["Una persona revisará estos puntos; por sí solos no cambian tu nota:", ""]
        + [f"- {markup.sentence(_sentence(flag.message))}" for flag in record.flags]))


def _output(record):
    text = record.output[:MAX_SHOWN_OUTPUT_CHARS]
    if not text.strip():
        return None
    lines = []
    if record.output_chars > len(text):
        lines += [f"(Recortado: se muestran los primeros {thousands(len(text))} caracteres de "
                  f"{thousands(record.output_chars)}.)", ""]
    return Section(DETAIL, "Lo que imprimió tu cuaderno", "\n".join(lines + [markup.block(text)]))
