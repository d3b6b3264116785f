"""Step 5 (students): the Spanish Markdown report for one submission, from its diagnosis.

It holds only what ``diagnose`` lets through: scores, the tests' own messages (which never
name hidden inputs or reference values), the errors of the student's cells and the student's
own printed output, truncated.
"""

import re

from .diagnose import Diagnosis, thousands

MAX_SHOWN_OUTPUT_CHARS = 5_000


def number(value):
    """A score as a Spanish reader writes it: 5, 1,67."""
    text = f"{round(float(value), 2):.2f}".rstrip("0").rstrip(".")
    return text.replace(".", ",")


def _code(text):
    """Inline code that survives backticks in the text."""
    return "`" + str(text).replace("`", "'") + "`"


def _sentence(text):
    """Capitalised, with a full stop unless it already ends in one (or in ? or !)."""
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def _fence(text):
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _indent(text, prefix="  "):
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def render(diagnosis: Diagnosis) -> str:
    d = diagnosis
    percent = round(100 * d.score / d.possible) if d.possible else 0
    lines = [f"# Informe de evaluación: {_code(d.file)}", "",
             f"**Puntuación: {number(d.score)} / {number(d.possible)}** ({percent} %)", ""]
    if not d.graded:
        lines += [f"> **No se ha podido evaluar tu entrega:** {_sentence(d.status)}", ">",
                  "> Por eso esta entrega tiene 0 puntos en todas las preguntas. Corrígelo y "
                  "vuelve a entregar.", ""]
    lines += _score_table(d) + _questions(d) + _cell_errors(d) + _notes(d) + _flags(d)
    lines += _output(d)
    return "\n".join(lines).rstrip() + "\n"


def _score_table(d):
    lines = ["| Pregunta | Puntos | Pruebas públicas superadas | Pruebas ocultas superadas |",
             "|---|---:|---:|---:|"]
    for q in d.questions:
        if d.graded:
            public, hidden = (f"{q.public[0]} de {q.public[1]}", f"{q.hidden[0]} de {q.hidden[1]}")
        else:
            public = hidden = "—"
        lines.append(f"| {_code(q.name)} | {number(q.score)} / {number(q.possible)} "
                     f"| {public} | {hidden} |")
    return lines + [""]


def _questions(d):
    if not d.graded:
        return []
    lines = ["## Pregunta a pregunta", ""]
    for q in d.questions:
        lines.append(f"### {_code(q.name)}: {number(q.score)} / {number(q.possible)}")
        lines.append("")
        if q.everything_passed:
            # Said only when the hidden cases passed too: never the "all passed" of issue #138.
            lines += ["Todas sus pruebas, públicas y ocultas, han pasado.", ""]
            continue
        if q.public[0] == q.public[1] and q.public[1]:
            lines += ["Las pruebas públicas pasan, pero las ocultas no: las públicas solo "
                      "comprueban propiedades, no la respuesta.", ""]
        for failure in q.failures:
            if failure.hidden:
                lines.append(f"- Prueba oculta:\n{_indent(failure.message, '  ')}")
            else:
                lines.append(f"- Prueba pública {_code(failure.test)}:\n"
                             f"{_indent(failure.message, '  ')}")
                if failure.hint:
                    lines.append(f"  Pista: {failure.hint}")
        lines.append("")
    return lines


def _cell_errors(d):
    if not d.cell_errors:
        return []
    lines = ["## Errores al ejecutar tu cuaderno", "",
             "El cuaderno se ejecuta entero, de arriba abajo, como con *Kernel → Restart & Run "
             "All*. Estas celdas lanzaron un error:", ""]
    for error in d.cell_errors:
        where = f", línea {error['line']}" if error.get("line") else ""
        lines.append(f"- Celda {error['cell']} (empieza por {_code(error['first_line'])}){where}: "
                     f"{_code(error['error'] + ': ' + error['message'])}")
    return lines + [""]


def _notes(d):
    if not d.notes:
        return []
    return ["## Avisos", ""] + [f"- {_sentence(note)}" for note in d.notes] + [""]


def _flags(d):
    if not d.flags:
        return []
    return (["## Marcado para revisión", "",
             "Una persona revisará estos puntos; por sí solos no cambian tu nota:", ""]
            + [f"- {flag}" for flag in d.flags] + [""])


def _output(d):
    text = d.output[:MAX_SHOWN_OUTPUT_CHARS]
    if not text.strip():
        return []
    fence = _fence(text)
    lines = ["## Lo que imprimió tu cuaderno", ""]
    if d.output_chars > len(text):
        lines += [f"(Recortado: se muestran los primeros {thousands(len(text))} caracteres de "
                  f"{thousands(d.output_chars)}.)", ""]
    return lines + [fence + "text", text.rstrip("\n"), fence, ""]
