"""One submission's verdicts as plain data: the single source of every report.

``final_grades.csv``, ``results/<stem>.json``, ``feedback/<stem>.md`` and ``report.html`` are
all rendered from these records (saved as ``records/<stem>.json``), so no number is counted
twice and ``make report`` can rebuild the class report without regrading.
"""

import json
from dataclasses import asdict, dataclass, field
from typing import Optional

FORMAT = 2  # 2: diagnoses per function


@dataclass
class Verdict:
    """One hidden case of a graded function, or one criterion of a data question."""

    question: str
    case: str  # the case's name, or the criterion's id
    description: str  # Spanish: the kind of input, or the criterion's title
    passed: bool
    messages: list = field(default_factory=list)  # Spanish, for the student
    kinds: list = field(default_factory=list)  # failure kinds: shape, values, error, hint...
    # The catalogued mistakes and the other findings of the function's diagnoses
    # (Record.diagnoses) that explain this case.
    misconceptions: list = field(default_factory=list)
    unverified: Optional[str] = None  # why no answer came: time, memory, died...
    public: bool = False  # a public (0-point) test rather than a hidden case
    findings: list = field(default_factory=list)
    # A failing public test: the graded functions that, each replaced alone by the reference,
    # make it pass (blame by measurement); empty when none does or it was not measured.
    blamed: list = field(default_factory=list)


@dataclass
class Diagnosis:
    """What explains some failing cases of one graded function, said once for all of them."""

    kind: str  # misconception, ambiguous, finding, explanation, hint
    message: str  # Spanish, for the student
    cases: list = field(default_factory=list)  # the names of the cases it explains
    ids: list = field(default_factory=list)  # the catalogued mistakes or findings it names
    located: bool = False  # found by the lesson's locate: a place, not a catalogued mistake


@dataclass
class Flag:
    """Something a person should look at. It never changes a score."""

    kind: str  # límite, ejecución, revisar, entorno
    message: str  # Spanish

    def text(self):
        return f"{self.kind}: {self.message}"


@dataclass
class Record:
    file: str
    stem: str
    graded: bool = True  # False: rejected before running (the reason says why)
    reason: Optional[str] = None  # Spanish; the CSV's grading_status when not graded
    otter_error: Optional[str] = None  # Otter's own wording for the same rejection
    verdicts: list = field(default_factory=list)  # Verdict
    diagnoses: dict = field(default_factory=dict)  # graded function -> [Diagnosis]
    scores: dict = field(default_factory=dict)  # question -> [earned, possible]
    cell_errors: list = field(default_factory=list)
    output: str = ""
    output_chars: int = 0
    notes: list = field(default_factory=list)  # Spanish remarks for the student
    flags: list = field(default_factory=list)  # Flag
    sandbox: dict = field(default_factory=dict)  # mode, ending, peak_mb, cpu_seconds...
    # The student's own words that a person grades (the challenge's texts), by field.
    texts: dict = field(default_factory=dict)
    # The written answers (numbered from 1) the notebook left empty: its feedback says so.
    empty_answers: list = field(default_factory=list)

    @property
    def earned(self):
        return sum(earned for earned, _ in self.scores.values())

    @property
    def possible(self):
        return sum(possible for _, possible in self.scores.values())

    def to_json(self):
        return json.dumps({"format": FORMAT, **asdict(self)}, ensure_ascii=False, indent=1)

    @classmethod
    def from_json(cls, text):
        data = json.loads(text)
        data.pop("format", None)
        data["verdicts"] = [Verdict(**v) for v in data.get("verdicts", [])]
        data["flags"] = [Flag(**f) for f in data.get("flags", [])]
        data["diagnoses"] = {question: [Diagnosis(**d) for d in found]
                             for question, found in data.get("diagnoses", {}).items()}
        return cls(**data)
