"""A graded function's failing cases explained together: each diagnosis said once.

The lesson's judge explains each hidden case on its own: beside the symptoms (a wrong shape,
wrong values, an error), a failure of kind misconception, explanation, finding or hint. What
the student reads is per function: the symptoms case by case, then each diagnosis once, with
the cases it explains (``Record.diagnoses``). A lesson may explain the cases together
(``lesson.summarize``: one mistake that explains every failing case); without it, each
distinct per-case diagnosis is said once here (``grouped``).
"""

from dataclasses import dataclass

from .outcome import Outcome
from .record import Diagnosis

DIAGNOSIS_KINDS = ("misconception", "explanation", "finding", "hint")
# How a diagnosis counts on each case it explains (the class report reads Verdict.kinds).
VERDICT_KIND = {"misconception": "misconception", "ambiguous": "finding", "finding": "finding",
                "explanation": "explanation", "hint": "hint"}


@dataclass
class Judged:
    """One hidden case as judged: its inputs, the student's outcome and the failures."""

    case: str
    description: str
    inputs: dict
    outcome: Outcome
    failures: list


def symptoms(failures):
    """What is wrong on the case, not why: shapes, values, errors, broken properties."""
    return [f for f in failures if f.details.get("kind") not in DIAGNOSIS_KINDS]


def case_diagnoses(failures):
    return [f for f in failures if f.details.get("kind") in DIAGNOSIS_KINDS]


def grouped(judged):
    """Each distinct per-case diagnosis once, with the cases it explains, in case order."""
    found = {}
    for item in judged:
        for failure in case_diagnoses(item.failures):
            key = (failure.details["kind"], failure.details.get("id"), failure.message)
            cases = found.setdefault(key, [])
            if item.case not in cases:
                cases.append(item.case)
    return [Diagnosis(kind, message, cases, [finding_id] if finding_id else [])
            for (kind, finding_id, message), cases in found.items()]


def annotate(verdicts, diagnoses):
    """Each case's verdict carries the kinds and ids of the diagnoses that explain it."""
    for verdict in verdicts:
        for diagnosis in diagnoses:
            if verdict.case not in diagnosis.cases or verdict.passed:
                continue
            kind = VERDICT_KIND.get(diagnosis.kind, "finding")
            if kind not in verdict.kinds:
                verdict.kinds.append(kind)
            ids = verdict.misconceptions if kind == "misconception" else verdict.findings
            ids += [i for i in diagnosis.ids if i not in ids]


# Diagnoses that say what the mistake is for the cases they cover; a located departure is said
# instead of anything else only when, between them, they leave a failing case unexplained.
EXPLAINING = ("misconception", "ambiguous", "finding")


def explained_everywhere(diagnoses, failing_cases):
    """True when naming diagnoses (catalogued mistakes, their candidates, findings) cover
    every failing case between them: nothing is left for a located departure to add."""
    covered = {case for d in diagnoses if d.kind in EXPLAINING for case in d.cases}
    return set(failing_cases) <= covered


def located(locate, function, failing, call, locate_raised=None):
    """The lesson's ``locate`` on every failing case that returned an answer (``Judged``), as
    one finding when every such case departs at the same place, else None: a place that
    explains one case only would be a guess for the others. Cases that raised are located only
    by ``locate_raised``, the lesson's probes that need no answer on the case itself (a count
    measured on inputs of its own); otherwise their errors explain them.
    ``call(function, probe_inputs)`` runs the student's function and returns its parts, or
    None when it raised.

    ``locate`` returns a place, ``(finding id, Spanish message)``, or a list of places from
    the most precise to the most general (a small case may show only the general one): the
    most precise place every case shares is said."""
    answered = [j for j in failing if j.outcome.parts is not None]
    raised = [j for j in failing if j.outcome.parts is None]
    by_answer = _shared_place(locate, function, answered, call)
    by_error = _shared_place(locate_raised, function, raised, call)
    if by_answer and by_error:
        both = [p for p in by_answer if p in by_error]
        if both:
            return _finding(both[0], answered + raised)
    if by_answer:
        return _finding(by_answer[0], answered)
    if by_error and not answered:
        return _finding(by_error[0], raised)
    return None


def _shared_place(locate, function, judged, call):
    """The places every one of ``judged`` departs at, most precise first, or None."""
    if locate is None or not judged:
        return None
    shared = None
    for one in judged:
        places = _places(locate(function, one.inputs, lambda probe: call(function, probe)))
        shared = places if shared is None else [p for p in shared if p in places]
        if not shared:
            return None
    return shared


def _finding(place, judged):
    finding_id, message = place
    return Diagnosis("finding", message, [j.case for j in judged], [finding_id], located=True)


def _places(found):
    """A lesson's answer as a list of places, most precise first."""
    if not found:
        return []
    return [tuple(found)] if isinstance(found[0], str) else [tuple(place) for place in found]


def with_located(diagnoses, found):
    """``found`` in place of every diagnosis about the cases it covers; what explains only
    the other cases (those that raised) stays."""
    covered = set(found.cases)
    return [found] + [d for d in diagnoses if not set(d.cases) & covered]
