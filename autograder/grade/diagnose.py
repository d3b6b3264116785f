"""Step 4: diagnose a graded submission: per question, what failed and why, in Spanish.

The diagnosis is what the feedback shows, so it is also where the rules about what a student
may see are applied:

* a test's message is kept without the line of test source Otter quotes before it;
* printed output is kept only from the student's own cells, never from cells that run the
  tests, where a student's ``print`` could echo a hidden input;
* "everything passed" is said of a question only when its hidden cases passed too (Otter
  issue #138 reports public tests alone as "All test cases passed!").
"""

import re
from dataclasses import dataclass, field
from typing import Optional

MAX_CELL_ERRORS = 10
_EXCEPTION_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*): ?(?P<message>.*)$", re.DOTALL)


@dataclass
class Failure:
    """One failed test case, as the student may see it."""

    test: str
    hidden: bool
    message: str
    hint: Optional[str] = None  # the test's own failure_message, if it has one


@dataclass
class QuestionReport:
    name: str
    score: float
    possible: float
    public: tuple = (0, 0)  # (passed, total)
    hidden: tuple = (0, 0)
    failures: list = field(default_factory=list)  # one Failure per failed case

    @property
    def everything_passed(self):
        return self.public[0] == self.public[1] and self.hidden[0] == self.hidden[1]


@dataclass
class Diagnosis:
    file: str
    graded: bool
    status: str  # "Completed", or the reason there is no grade
    score: float
    possible: float
    questions: list = field(default_factory=list)
    cell_errors: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    flags: list = field(default_factory=list)
    output: str = ""
    output_chars: int = 0
    seconds: Optional[float] = None


def thousands(count):
    """12.345.678, as Spanish readers group digits."""
    return f"{count:,}".replace(",", ".")


def test_message(message, hidden):
    """A test case's Otter message without its header or the quoted line of test source."""
    lines = (message or "").strip().splitlines()
    if lines and lines[0].startswith("❌"):
        lines = lines[1:]
    if lines and lines[0].startswith("Error at line "):
        lines = lines[2:]  # the header and the one line of test source Otter quotes
    text = "\n".join(lines).strip()
    match = _EXCEPTION_LINE.match(text)
    if match and match.group("type") == "AssertionError":
        text = match.group("message").strip()
    if hidden and not text:
        text = "falló sin mensaje"
    return text


def question_report(test_file) -> QuestionReport:
    public = [r for r in test_file.test_case_results if not r.test_case.hidden]
    hidden = [r for r in test_file.test_case_results if r.test_case.hidden]
    failures = [Failure(result.test_case.name, result.test_case.hidden,
                        test_message(result.message, result.test_case.hidden),
                        result.test_case.failure_message)
                for result in test_file.test_case_results if not result.passed]
    return QuestionReport(
        name=test_file.name, score=test_file.score, possible=test_file.possible,
        public=(sum(r.passed for r in public), len(public)),
        hidden=(sum(r.passed for r in hidden), len(hidden)),
        failures=failures)


def diagnose(file_name, results, *, bundle, execution=None, submission=None, flags=()):
    """Everything the feedback says about one submission."""
    notes = list(submission.notes) if submission is not None else []
    if results.has_catastrophic_failure():
        possible = bundle.points_per_question()
        diagnosis = Diagnosis(
            file=file_name, graded=False, status=str(results.catastrophic_error), score=0,
            possible=sum(possible.values()),
            questions=[QuestionReport(name, 0, points) for name, points in possible.items()],
            notes=notes, flags=list(flags))
    else:
        diagnosis = Diagnosis(
            file=file_name, graded=True, status="Completed", score=results.total,
            possible=results.possible,
            questions=[question_report(test_file) for test_file in results.results.values()],
            notes=notes, flags=list(flags))
    if execution is not None:
        diagnosis.seconds = execution.seconds
        own = [error for error in execution.cell_errors if not error.get("grader_cell")]
        diagnosis.cell_errors = own[:MAX_CELL_ERRORS]
        diagnosis.notes += _renamed_notebook(execution.cell_errors, submission)
        diagnosis.output, diagnosis.output_chars = execution.output, execution.output_chars
        if execution.output_chars > len(execution.output):
            diagnosis.notes.append(
                f"tu cuaderno imprimió {thousands(execution.output_chars)} caracteres, así que su "
                "salida aparece recortada al final de este informe")
        diagnosis.notes += _unusable_definitions(diagnosis)
    return diagnosis


def _renamed_notebook(cell_errors, submission):
    """Otter's init cell opens the notebook by the name it was handed out with (Otter #433)."""
    for error in cell_errors:
        if error.get("grader_cell") and error["error"] == "FileNotFoundError":
            name = submission.notebook_name if submission is not None else "otro nombre"
            return [f"la celda de Otter del principio busca el cuaderno con su nombre original y "
                    f"el tuyo se llama «{name}»; no pasa nada: las pruebas se ejecutan igualmente "
                    "al final"]
    return []


def _unusable_definitions(diagnosis):
    """Tie a failing question to the error that kept its function from being defined."""
    notes = []
    for question in diagnosis.questions:
        if question.score == question.possible:
            continue
        for error in diagnosis.cell_errors:
            if error["first_line"].startswith(f"def {question.name}("):
                notes.append(f"la celda {error['cell']}, donde defines `{question.name}`, lanzó "
                             f"{error['error']}: mientras no se ejecute sin errores, "
                             f"`{question.name}` no existe (o queda una versión anterior)")
    return notes
