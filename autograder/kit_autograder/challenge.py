"""The course's verifiable challenge, graded from trusted code: seed 003's five acceptance criteria.

A lesson that has a lab (``lab.py`` in its folder, its ``LAB`` in lesson.py) gets the challenge
as a data question: ``DATA_QUESTIONS = {"student_extension": challenge.question(LAB)}``. The
student's notebook leaves ``resultado`` behind (the lab's JSON extended with
``student_extension``); the sandbox hands it over as JSON text, and the grader parses it. The
criteria that need a fresh lab run get one computed *here*: the lesson's experiments run in
the grader, and only the student's functions run in the sandbox, answering with arrays.
Whatever the student's code prints, or however it exits, decides nothing.
"""

import extension

from .lesson import DataQuestion

# The notebook variable holding the lab result extended with `student_extension`.
RESULT_VARIABLE = "resultado"
CRITERIA = tuple((criterion.id, criterion.title) for criterion in extension.CRITERIA)


# A text a person reads is kept whole up to this, and cut beyond.
MAX_TEXT_CHARS = 5_000


def question(lab_module) -> DataQuestion:
    """The challenge as a data question of the lesson whose lab is ``lab_module``."""
    return DataQuestion((RESULT_VARIABLE,), CRITERIA,
                        lambda values, functions: grade(lab_module, values.get(RESULT_VARIABLE),
                                                        functions),
                        texts=lambda values: texts(values.get(RESULT_VARIABLE)))


def texts(data) -> dict:
    """The five texts of ``student_extension``, by English field name (whichever name the
    student used), for the person who grades them; a field that is not text is left out."""
    written = data.get("student_extension") if isinstance(data, dict) else None
    if not isinstance(written, dict):
        return {}
    found = {}
    for field, aliases in extension.FIELD_ALIASES.items():
        value = next((written[name] for name in aliases if name in written), None)
        if isinstance(value, str):
            found[field] = value[:MAX_TEXT_CHARS]
    return found


def grade(lab_module, data, functions):
    """[(criterion id, passed, Spanish message)] in rubric order."""
    if data is None:
        reason = (f"no encuentro en tu cuaderno la variable `{RESULT_VARIABLE}` con el resultado "
                  "del laboratorio y tu student_extension (o no se puede leer como JSON)")
        return [(criterion, False, reason) for criterion, _ in CRITERIA]
    try:
        extension.check_usable(data)
    except extension.UnusableInput as exc:
        return [(criterion, False, str(exc)) for criterion, _ in CRITERIA]
    run = extension.lab_run_for(data, lab_module, functions)
    return [(result.id, result.passed, result.message)
            for result in extension.validate(
                data, lab_run=run, glosses=dict(getattr(lab_module.LAB, "glosses", {}) or {}),
                rerun=lambda: extension.lab_run_for(data, lab_module, functions))]
