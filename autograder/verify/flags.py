"""Flags: reasons for a human to look at a submission. None of them changes a score.

Kinds (Spanish, as students and instructors read them):

* ``política``: the static policy found something in the code (policy.py);
* ``discrepancia``: the kernel's verdicts differ from the independent verification;
* ``límite``: a time, memory or output limit stopped the kernel or a verification child;
* ``ejecución``: the notebook did not run to its end, or its results never arrived.
"""

from dataclasses import asdict, dataclass
from typing import Optional


@dataclass(frozen=True)
class Flag:
    kind: str
    message: str  # Spanish, tuteo: the student reads it in the feedback
    cell: Optional[int] = None

    def text(self):
        where = f"celda {self.cell}: " if self.cell else ""
        return f"[{self.kind}] {where}{self.message}"

    def to_dict(self):
        return asdict(self)


def unique(flags):
    seen, kept = set(), []
    for flag in flags:
        if flag not in seen:
            seen.add(flag)
            kept.append(flag)
    return kept


def csv_text(flags) -> str:
    """The ``flags`` column of final_grades.csv: empty when there is nothing to review."""
    return " | ".join(flag.text() for flag in flags)


def feedback_markdown(flags, notes=()) -> str:
    """The Spanish section for the feedback file and the Gradescope output."""
    lines = []
    if flags:
        lines += ["## Revisión manual", "",
                  "Tu entrega queda marcada para que la revise una persona. Una marca no cambia "
                  "tu nota: la nota de las funciones sale de comprobarlas fuera de tu cuaderno, "
                  "y quien revise decidirá si algo de esto es un problema.", ""]
        lines += [f"- {flag.text()}" for flag in flags]
        lines.append("")
    if notes:
        lines += ["## Cómo se ha corregido", ""] + [f"- {note}" for note in notes] + [""]
    return "\n".join(lines)
