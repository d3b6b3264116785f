"""The plain data a graded call leaves behind, and the failures found in it."""

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class Outcome:
    """What one call of a student's function produced, as the grader may know it.

    Exactly one of the three is set: ``parts`` (float64 arrays, one per returned part),
    ``error`` (a checked report: ``kind``, maybe ``exception``, ``numbers``, ``shapes``,
    ``name``; never the exception's message), or ``unverified`` (why the sandbox gave no
    answer: time, memory, disk, died, protocol, internal).
    """

    parts: Optional[list] = None
    error: Optional[dict] = None
    unverified: Optional[str] = None
    # Side effects of a call that answered: the parameters whose arrays it changed, and
    # whether it changed what the function had returned before (sandbox/inside/calls.py).
    mutated: tuple = ()
    aliased: bool = False


@dataclass
class Failure:
    """One thing wrong with an outcome, in Spanish, for the student."""

    message: str
    part: Optional[str] = None
    details: dict = field(default_factory=dict)  # kind, ids: for diagnosis and the report
