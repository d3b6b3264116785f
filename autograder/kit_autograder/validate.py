"""`make validate`: a student's lab result extended with ``student_extension``, checked against
the kit's own lab run on the student's notebook, in the kit's sandbox.

    python -m kit_autograder.validate --autograder ZIP FILE.json [--notebook NB] [--unconfined-ok]

The validator that ships to students (``extension.py``) runs ``lab.py`` as a command, the
``lab.py`` beside the notebook first, and the lab runs the notebook's cells in a plain IPython
shell: right for students on their own notebook, wrong for an instructor on a student's, whose
files would run as the instructor. Here the notebook runs in a sandbox job, as ``make grade``
runs it; the lab is the kit's own (the zip's lesson), run in this process on the student's
functions as the job answers them, as the grader's challenge is; the result file is only read,
as JSON. Nothing beside the notebook is read, and no file the student wrote runs outside the
sandbox.

Exit codes as ``extension.py``'s: 0 when every criterion holds, 1 when some fails (one Spanish
line each, the student's wording), 2 when nothing can be checked (one ``error:`` line).
"""

import argparse
import sys
from pathlib import Path

import extension

from . import challenge, error_lines
from .bundle import BundleError, OpenedZip
from .grading import Grader
from .sandbox.client import Limits, Sandbox, SandboxError
from .submission import Rejected, load


class ValidateError(Exception):
    """Nothing can be checked; the message is the instructor's ``error:`` line."""


def challenge_question(lesson):
    """The lesson's data question that reads a lab result (challenge.py), or ValidateError."""
    for name, question in lesson.DATA_QUESTIONS.items():
        if tuple(question.variables) == (challenge.RESULT_VARIABLE,):
            return name
    raise ValidateError(f"lesson {lesson.NAME} has no challenge (student_extension) to validate")


def validate(autograder_zip, result, notebook=None, limits=Limits(), unconfined_ok=False):
    """The challenge's verdicts for the result file ``result`` on ``notebook`` (default: the
    one notebook beside it), graded in the sandbox; ValidateError when none can be."""
    from .batch import UNCONFINED, unconfined

    notebook = Path(notebook) if notebook else extension.find_notebook_beside(result)
    if notebook is None:
        raise ValidateError(f"{result}: no single notebook beside it to run the lab on; give "
                            "NOTEBOOK= the student's notebook or export zip")
    try:
        data = extension.load_result(result)
    except extension.UnusableInput as exc:
        raise ValidateError(f"{result}: {exc}") from exc
    try:
        with OpenedZip(autograder_zip) as bundle:
            grader = Grader(bundle)
            question = challenge_question(grader.lesson)
            try:
                loaded = load(notebook, bundle.assignment_name)
            except Rejected as rejected:
                raise ValidateError(f"{notebook}: {rejected.reason}") from None
            with Sandbox(limits, jobs=1) as sandbox:
                if not unconfined_ok and unconfined(sandbox.description):
                    raise ValidateError(UNCONFINED)
                verdicts = grader.data_question_on(sandbox, loaded, question,
                                                   {challenge.RESULT_VARIABLE: data})
                mode = sandbox.description.get("mode")
    except (BundleError, SandboxError) as exc:
        raise ValidateError(str(exc)) from exc
    return verdicts, mode


def main(argv=None):
    parser = argparse.ArgumentParser(description="Check a student's lab result extended with "
                                                 "student_extension, running their notebook "
                                                 "in the kit's sandbox.")
    parser.add_argument("result", type=Path, help="the lab result (resultado.json)")
    parser.add_argument("--notebook", type=Path, help="the student's notebook or export zip "
                                                      "(default: the one beside the result)")
    parser.add_argument("--autograder", type=Path, required=True, help="the autograder zip")
    parser.add_argument("--unconfined-ok", action="store_true",
                        help="check even where the notebook could write the grader's files")
    args = parser.parse_args(argv)
    try:
        verdicts, mode = validate(args.autograder, args.result, args.notebook,
                                  unconfined_ok=args.unconfined_ok)
    except ValidateError as exc:
        return error_lines.report(exc)
    print(f"the notebook ran in the kit's sandbox ({mode}); the lab is the kit's own",
          file=sys.stderr)
    for number, verdict in enumerate(verdicts, start=1):
        print(extension.CriterionResult(verdict.case, number, verdict.description,
                                        verdict.passed, " ".join(verdict.messages)).line())
    passed = sum(verdict.passed for verdict in verdicts)
    print(f"{passed} de {len(verdicts)} criterios se cumplen.")
    return 0 if passed == len(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
