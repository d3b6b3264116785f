"""Combine the independent verification with what the kernel reported.

The one place where a submission's final results are decided, for every grading path (the
Otter plugin, ``make grade``):

* code questions: the verification's results, always;
* data questions (``student_extension``): the data child's verdicts on the exported values;
  only if that cannot run, the kernel's verdicts, mapped onto the zip's own test cases so a
  kernel cannot forge points or scores;
* a question the kernel never reported: every case failed, with the reason, never
  "All test cases passed" (Otter issue #138);
* flags: the verification's, plus ``discrepancia`` wherever the kernel's verdicts on a code
  question differ from the verification's.

Under privilege separation the kernel cannot run the hidden tests of code questions (it
cannot read them), so there is nothing to compare and no ``discrepancia`` is raised for it.
"""

import copy
from dataclasses import dataclass, field
from typing import Optional

from otter.test_files.abstract_test import TestCaseResult

from . import privileges, verifier
from .flags import Flag, unique

MAX_KERNEL_MESSAGE_CHARS = 10_000


@dataclass
class Decision:
    test_files: dict = field(default_factory=dict)  # question -> TestFile, in the zip's order
    flags: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # Spanish, for the student: how this was graded
    verification: Optional[verifier.Verification] = None


def unreported(test_file, reason):
    results = [TestCaseResult(test_case, f"❌ {reason}", False)
               for test_case in test_file.test_cases]
    return verifier.with_results(test_file, results)


def _from_kernel(test_file, verdicts):
    """The kernel's verdicts, on the zip's own test cases (their points, their visibility)."""
    by_name = {name: (passed, message) for name, passed, message in verdicts}
    results = []
    for test_case in test_file.test_cases:
        if test_case.name not in by_name:
            results.append(TestCaseResult(test_case, "❌ tu cuaderno no informó de esta prueba",
                                          False))
            continue
        passed, message = by_name[test_case.name]
        results.append(TestCaseResult(test_case, str(message or "")[:MAX_KERNEL_MESSAGE_CHARS],
                                      bool(passed)))
    return verifier.with_results(test_file, results)


def _public_results(test_file, verdicts):
    public = {test_case.name: test_case for test_case in test_file.test_cases
              if not test_case.hidden}
    return {name: TestCaseResult(public[name], str(message or "")[:MAX_KERNEL_MESSAGE_CHARS],
                                 bool(passed))
            for name, passed, message in verdicts if name in public}


def decide(notebook, tests: dict, kernel_verdicts: Optional[dict], *, confined: bool,
           identity=None, limits=None, given=(), problems=(), data=None,
           files=None) -> Decision:
    """The final results of one submission.

    ``tests``: {question: unrun TestFile} from the zip, in order. ``kernel_verdicts``:
    {question: [(test case name, passed, message)]} from the kernel, or None when its results
    never arrived. ``confined``: whether the kernel ran under privilege separation.
    ``problems``: flags the caller already knows of (the kernel hit its deadline…).
    ``data``: the variables the kernel exported for data questions; ``files``: the zip's
    ``files/`` folder, which the data child needs (without it, data questions keep the
    kernel's verdicts).
    """
    reported = kernel_verdicts or {}
    public = {name: _public_results(test_file, reported[name])
              for name, test_file in tests.items() if name in reported}
    verification = verifier.verify_submission(
        notebook, tests, identity=identity, limits=limits or verifier.sandbox.Limits(),
        kernel_public=public, given=given, data=data, files=files)
    decision = Decision(verification=verification)
    for name, test_file in tests.items():
        if name in verification.test_files:
            decision.test_files[name] = verification.test_files[name]
        elif name in reported:
            decision.test_files[name] = _from_kernel(test_file, reported[name])
        else:
            decision.test_files[name] = unreported(
                test_file, "esta pregunta no tiene resultado: tu cuaderno no llegó a "
                           "informar de sus pruebas")
    flags = list(problems) + verification.flags
    if kernel_verdicts is None:
        if not confined:
            flags.append(Flag("ejecución", "los resultados de las pruebas dentro de tu cuaderno "
                                           "no llegaron al corrector"))
    elif not confined:
        hidden = {name: {case: passed for case, passed, _ in verdicts}
                  for name, verdicts in reported.items()}
        flags += verifier.discrepancies(verification.test_files, hidden)
    decision.flags = unique(flags)
    variables = [f"`{variable}`" for name in verification.test_files
                 if name not in verifier.GRADED_FUNCTIONS
                 for variable in verifier.data_variables(tests[name])]
    decision.notes = _notes(confined, variables)
    return decision


def _notes(confined, variables):
    checked = "tus funciones, con las entradas ocultas"
    if variables:
        checked += f", y {', '.join(variables)} tal como quedó al final del cuaderno"
    notes = [f"Las pruebas ocultas se han repetido fuera de tu cuaderno, en procesos aislados, "
             f"y tu nota sale de esa comprobación: {checked}."]
    if confined:
        notes.append("Tu cuaderno se ejecutó con un usuario sin privilegios, que no puede leer "
                     "la solución ni las pruebas ocultas.")
    elif privileges.is_root():
        notes.append("Tu cuaderno no se ejecutó con un usuario aparte: solo la comprobación de "
                     "tus funciones se hizo en un proceso aislado y sin privilegios.")
    else:
        notes.append("El corrector no se ejecutaba como administrador, así que tu cuaderno no "
                     "se aisló con otro usuario: solo la comprobación de tus funciones se hizo "
                     "en un proceso aislado.")
    return notes
