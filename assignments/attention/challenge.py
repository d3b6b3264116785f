"""The verifiable challenge, graded from trusted code: seed 003's five acceptance criteria.

The student's notebook leaves ``resultado`` behind (the lab's JSON extended with
``student_extension``); the sandbox hands it over as JSON text, and the grader parses it. The
criteria that need a fresh lab run get one computed *here*: the lab's experiments (lab.py)
run in the grader, and only the student's four functions run in the sandbox, answering with
arrays. Whatever the student's code prints, or however it exits, decides nothing.
"""

from . import extension, lab

CRITERIA = tuple((criterion.id, criterion.title) for criterion in extension.CRITERIA)
SEED_RANGE = (0, 2**32 - 1)


class StudentFunctionFailed(Exception):
    """A graded function failed in the sandbox; the message is the grader's Spanish."""


def trusted_lab_run(seed, functions):
    """What `python lab.py --seed SEED` would print with the student's functions, computed by
    the kit's own lab code, as an ``extension.LabRun``."""
    command = f"python lab.py --seed {seed}"
    try:
        report = lab.run_lab(functions, seed)
    except lab.LabError as exc:
        return extension.LabRun(command, 1, "", f"lab.py terminó con código 1: {exc}")
    return extension.LabRun(command, 0, lab.to_json(report))


def grade_student_extension(data, functions):
    """[(criterion id, passed, Spanish message)] in rubric order."""
    if data is None:
        reason = ("no encuentro en tu cuaderno la variable `resultado` con el resultado del "
                  "laboratorio y tu student_extension (o no se puede leer como JSON)")
        return [(criterion, False, reason) for criterion, _ in CRITERIA]
    try:
        extension.check_usable(data)
    except extension.UnusableInput as exc:
        return [(criterion, False, str(exc)) for criterion, _ in CRITERIA]
    seed = data.get("seed")
    if type(seed) is int and SEED_RANGE[0] <= seed <= SEED_RANGE[1]:
        run = trusted_lab_run(seed, functions)
    elif seed is None:  # the notebook's own lab run failed, so its result never came back
        run = extension.LabRun("python lab.py", None, "",
                               "tu `resultado` no trae la semilla («seed») de lab.py: lab.py no "
                               "llegó a terminar en tu cuaderno. Mira la salida de la celda del "
                               "reto, que dice por qué.")
    else:
        run = extension.LabRun("python lab.py", None, "",
                               "la semilla de tu resultado («seed») no es un número entero válido.")
    results = extension.validate(data, lab_run=run)
    return [(result.id, result.passed, result.message) for result in results]
