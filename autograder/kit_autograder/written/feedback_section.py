"""The written answers' part of a student's feedback: the points, the rubric level and the
instructor's comment for each question, as Markdown lines for report/feedback.py.

Everything here is shown as typed: an instructor's «d_k < d_v» or a leading «-» must not turn
into markup. The student's answers are not repeated (the student has them).
"""

from ..report import markup
from ..spanish_numbers import number as _number


def literal(text):
    """``text`` as Markdown lines that show exactly ``text``, line by line (report/markup.py)."""
    return [markup.text(line) for line in str(text).splitlines() or [""]]


def summary_lines(marks, automatic_earned, automatic_possible):
    """What replaces «a person will grade them» under the automatic score."""
    if marks.complete:
        total = automatic_earned + marks.earned
        possible = automatic_possible + marks.possible
        percent = round(100 * total / possible) if possible else 0
        return ["", f"**Respuestas escritas: {_number(marks.earned)} / "
                f"{_number(marks.possible)}**, corregidas por tu profesor o profesora con la "
                "rúbrica de la clase.", "",
                f"**Nota total: {_number(total)} / {_number(possible)}** ({percent} %)"]
    if marks.graded:
        return ["", f"**Respuestas escritas:** corregidas {marks.graded} de {len(marks.marks)} "
                f"preguntas, {_number(marks.earned)} puntos hasta ahora de "
                f"{_number(marks.possible)}. La nota total estará cuando estén todas."]
    return ["", f"Tus respuestas escritas valen {_number(marks.possible)} puntos más y todavía "
            "no están corregidas."]


def section_lines(marks):
    """The «Respuestas escritas» section: a table, then each question's level and comment."""
    lines = ["## Respuestas escritas", "", "| Pregunta | Puntos |", "|---|---:|"]
    for number, mark in enumerate(marks.marks, start=1):
        shown = ("sin corregir" if mark.points is None
                 else f"{_number(mark.points)} / {_number(mark.question.points)}")
        lines.append(f"| Pregunta {number} | {shown} |")
    lines.append("")
    for number, mark in enumerate(marks.marks, start=1):
        if mark.points is None:
            continue
        lines += [f"### Pregunta {number}: {_number(mark.points)} / "
                  f"{_number(mark.question.points)}", ""]
        if mark.question.prompt:
            lines += ["*" + " ".join(literal(mark.question.prompt)) + "*", ""]
        if mark.level is not None:
            lines += ["Nivel de la rúbrica: " + " ".join(literal(mark.level.description)), ""]
        if mark.comment:
            lines += ["Comentario de tu profesor o profesora:", ""]
            lines += ["> " + line if line else ">" for line in literal(mark.comment)]
            lines.append("")
    return lines
