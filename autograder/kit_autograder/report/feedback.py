"""The Spanish report a student reads, rendered from their record and nothing else.

What it shows is what the record lets through: scores, the verdicts' messages (written by
the grader, never quoting a hidden input, a reference value or the student's exception
text), the errors of the student's own cells, and what the cells printed before any hidden
input existed. Cells are numbered [n] as Jupyter numbers them after "Restart & Run All".
"""

import re

from ..verdicts.messages import cell_error_text

MAX_SHOWN_OUTPUT_CHARS = 5_000
MAX_CELL_ERRORS = 10


def number(value):
    """A score as a Spanish reader writes it: 5, 1,67."""
    text = f"{round(float(value), 2):.2f}".rstrip("0").rstrip(".")
    return text.replace(".", ",")


def thousands(value):
    return f"{int(value):,}".replace(",", ".")


def _code(text):
    return "`" + str(text).replace("`", "'") + "`"


def _sentence(text):
    text = str(text).strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def _indent(text, prefix="  "):
    return "\n".join(prefix + line if line else line for line in str(text).splitlines())


def render_for(grader, record) -> str:
    """The Markdown for ``record``, with what the zip's grader knows: the points graded by hand
    and which functions each question calls (make grade and the Otter plugin both use this)."""
    settings = grader.bundle.settings
    return render(record, manual_points=float(settings.get("manual_points", 0)),
                  depends={name: spec.stand_ins for name, spec in grader.lesson.FUNCTIONS.items()})


def render(record, *, manual_points=0, depends=None) -> str:
    """The Markdown for ``record``. ``manual_points``: the points a person grades by hand
    (written answers); ``depends``: {question: graded functions it calls}."""
    lines = [f"# Informe de evaluación: {_code(record.file)}", ""]
    earned, possible = record.earned, record.possible
    percent = round(100 * earned / possible) if possible else 0
    lines.append(f"**Puntuación automática: {number(earned)} / {number(possible)}** ({percent} %)")
    if manual_points:
        lines.append(f"Además, tus respuestas escritas valen {number(manual_points)} puntos más, "
                     "que corrige una persona con la rúbrica de la clase; no están en esta cifra.")
    lines.append("")
    if not record.graded:
        lines += [f"> **No se ha podido evaluar tu entrega:** {_sentence(record.reason)}", ">",
                  "> Por eso tiene 0 puntos en todas las preguntas. Corrígelo y vuelve a "
                  "entregar.", ""]
    lines += _score_table(record) + _questions(record, depends or {})
    lines += _cell_errors(record) + _notes(record) + _flags(record) + _output(record)
    return "\n".join(lines).rstrip() + "\n"


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
        lines.append(f"| {_code(question)} | {number(earned)} / {number(possible)} | {shown} |")
    return lines + [""]


def _questions(record, depends):
    if not record.graded:
        return []
    grouped = _by_question(record)
    failing = {q for q, vs in grouped.items() if any(not v.passed and not v.public for v in vs)}
    lines = ["## Pregunta a pregunta", ""]
    for question, (earned, possible) in record.scores.items():
        verdicts = grouped.get(question, [])
        lines += [f"### {_code(question)}: {number(earned)} / {number(possible)}", ""]
        hidden = [v for v in verdicts if not v.public]
        public = [v for v in verdicts if v.public]
        if all(v.passed for v in verdicts):
            # Said only when the hidden cases pass too: never "all passed" for public ones alone.
            lines += ["Todas sus comprobaciones, públicas y ocultas, han pasado.", ""]
            continue
        if public and all(v.passed for v in public):
            lines += ["Las pruebas públicas pasan, pero las comprobaciones ocultas no: las "
                      "públicas solo comprueban propiedades, no la respuesta.", ""]
        # Cases that fail for the same reason are said once, with the cases named together.
        by_message = {}
        for verdict in hidden:
            if not verdict.passed:
                by_message.setdefault(tuple(verdict.messages), []).append(verdict.description)
        for messages, descriptions in by_message.items():
            cases = ", ".join(f"«{d}»" for d in descriptions)
            lines.append(f"- {cases}:" if len(descriptions) == 1
                         else f"- {len(descriptions)} casos con el mismo fallo ({cases}):")
            lines += [_indent(f"- {message}", "  ") for message in messages]
        lines += _diagnoses(record.diagnoses.get(question, []), hidden)
        blamed = [d for d in depends.get(question, ()) if d in failing]
        for verdict in public:
            if verdict.passed:
                continue
            lines.append(f"- Prueba pública {_code(verdict.case)}:")
            lines += [_indent(message, "  ") for message in verdict.messages]
            if blamed:
                lines.append(f"  Esta prueba usa tus propias {', '.join(map(_code, blamed))}, "
                             "que también fallan: corrígelas primero y vuelve a mirar esta.")
        lines.append("")
    return lines


def _diagnoses(diagnoses, hidden):
    """What explains the function's failing cases, each said once; with the cases it explains
    when it does not explain them all."""
    failing = [v for v in hidden if not v.passed]
    described = {v.case: v.description for v in hidden}
    lines = []
    for diagnosis in diagnoses:
        scope = ""
        if len(failing) > 1 and set(diagnosis.cases) < {v.case for v in failing}:
            cases = " y ".join(f"«{described.get(c, c)}»" for c in diagnosis.cases)
            scope = f" en {cases} ({len(diagnosis.cases)} de los {len(failing)} casos que fallan)"
        first, *rest = f"**Diagnóstico**{scope}: {diagnosis.message}".splitlines()
        lines += [f"- {first}"] + [_indent(line) for line in rest]
    return lines


def _cell_errors(record):
    errors = [e for e in record.cell_errors if not e.get("skipped")]
    if not errors:
        return []
    lines = ["## Errores al ejecutar tu cuaderno", "",
             "Tu cuaderno se ejecuta entero, de arriba abajo, como con *Kernel → Restart & Run "
             "All*. Los números entre corchetes son los que Jupyter muestra junto a cada celda "
             "tras hacerlo.", ""]
    own = [e for e in errors if e.get("knock_on_of") is None]
    knock_on = {}
    for error in errors:
        if error.get("knock_on_of") is not None:
            knock_on.setdefault(error["knock_on_of"], []).append(error)
    for error in own[:MAX_CELL_ERRORS]:
        lines.append(_error_line(error))
        later = knock_on.get(error["cell"], [])
        if later:
            cells = ", ".join(f"[{e['cell']}]" for e in later)
            lines.append(f"  - Por eso fallan también {cells}: usan nombres que esta celda "
                         "no llegó a definir. Corrige esta primero.")
    if len(own) > MAX_CELL_ERRORS:
        lines.append(f"- … y {len(own) - MAX_CELL_ERRORS} errores más.")
    return lines + [""]


def _error_line(error):
    where = f", línea {error['line']}" if error.get("line") else ""
    if error.get("kind") == "time":
        return (f"- Celda [{error['cell']}] ({_code(error['first_line'])}): se detuvo porque "
                "el cuaderno agotó su tiempo")
    text = cell_error_text(error["exception"], error.get("message"))
    return f"- Celda [{error['cell']}] ({_code(error['first_line'])}){where}: {_code(text)}"


def _notes(record):
    if not record.notes:
        return []
    return ["## Avisos", ""] + [f"- {_sentence(note)}" for note in record.notes] + [""]


def _flags(record):
    if not record.flags:
        return []
    return (["## Marcado para revisión", "",
             "Una persona revisará estos puntos; por sí solos no cambian tu nota:", ""]
            + [f"- {_sentence(flag.message)}" for flag in record.flags] + [""])


def _fence(text):
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _output(record):
    text = record.output[:MAX_SHOWN_OUTPUT_CHARS]
    if not text.strip():
        return []
    fence = _fence(text)
    lines = ["## Lo que imprimió tu cuaderno", ""]
    if record.output_chars > len(text):
        lines += [f"(Recortado: se muestran los primeros {thousands(len(text))} caracteres de "
                  f"{thousands(record.output_chars)}.)", ""]
    return lines + [fence + "text", text.rstrip("\n"), fence, ""]
