"""``OUT/written_scores.csv``: the points and comment a person gave each written answer.

One row per submission, keyed by ``file`` (the same key as ``final_grades.csv``'s rows), with
``student_name`` and ``student_id`` to read it by, then ``<question>`` (points) and
``<question>_comment`` for each written question of the rubric. A blank points cell means «not
graded yet». The review page writes it on every change; an instructor may fill it in a
spreadsheet instead, which may save it with semicolons and decimal commas: both are read, and
kept when the page writes it again. Rows the kit does not know (an older class) are kept too:
nothing an instructor typed is ever dropped.

Keys are compared exactly as written (a file name may begin with a space or a no-break space),
and every text cell goes through ``csv_cells``: a student's name that begins with ``=`` is
stored as ``'=…`` so that a spreadsheet shows it instead of running it, and read back as typed.
A cell the kit cannot use (two rows for one file, points out of range) never stops the class:
two rows are merged into one, a bad cell counts as not graded, and ``problems`` names the cell.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..csv_cells import original, safe
from ..lms.worksheet import Worksheet, WorksheetError

SCORES = "written_scores.csv"
TEMPLATE = "written_scores.template.csv"  # in OUT/written/, for the spreadsheet route
KEY, NAME, ID = "file", "student_name", "student_id"
MAX_COMMENT_CHARS = 5_000


class ScoresError(Exception):
    """The scores file cannot be used as it is; the message names the cell."""


def comment_column(question):
    return f"{question}_comment"


def header(questions):
    columns = [KEY, NAME, ID]
    for question in questions:
        columns += [question.name, comment_column(question.name)]
    return columns


@dataclass
class Mark:
    question: object  # questions.WrittenQuestion
    points: Optional[float]  # None: not graded yet
    comment: str = ""

    @property
    def level(self):
        return None if self.points is None else self.question.level_of(self.points)


@dataclass
class StudentMarks:
    file: str
    marks: list  # Mark, in the rubric's order

    @property
    def complete(self):
        return all(mark.points is not None for mark in self.marks)

    @property
    def earned(self):
        return sum(mark.points for mark in self.marks if mark.points is not None)

    @property
    def possible(self):
        return sum(mark.question.points for mark in self.marks)

    @property
    def graded(self):
        return sum(mark.points is not None for mark in self.marks)


class ScoreSheet:
    """The scores file, read and checked, with every row and column it had."""

    def __init__(self, path: Path, questions, sheet: Worksheet):
        self.path, self.questions, self.sheet = Path(path), list(questions), sheet
        self._index = {}
        for name in header(questions):
            index = sheet.column((name,))
            if index is None:
                index = len(sheet.header)
                sheet.header.append(name)  # a question added to the rubric later
            self._index[name] = index
        self._rows, self.problems, first_line, kept = {}, [], {}, []
        for number, row in enumerate(sheet.rows, start=2):
            key = original(sheet.cell(row, self._index[KEY]))
            if not key.strip():
                kept.append(row)
                continue
            if key in self._rows:
                _merge(self._rows[key], row)
                self.problems.append(f"{self.path.name}, line {number}: «{key}» already has "
                                     f"line {first_line[key]}; merged into it (its filled "
                                     "cells kept)")
                continue
            self._rows[key], first_line[key] = row, number
            kept.append(row)
        sheet.rows = kept
        for key, row in self._rows.items():
            for question in self.questions:
                self._points(row, question, first_line[key])  # every cell checked, at once

    @classmethod
    def read(cls, path, questions):
        path = Path(path)
        try:
            sheet = Worksheet(path) if path.is_file() else Worksheet.new(path, header(questions))
        except WorksheetError as exc:
            raise ScoresError(str(exc)) from None
        return cls(path, questions, sheet)

    def _points(self, row, question, line=None):
        text = self.sheet.cell(row, self._index[question.name]).strip()
        if not text:
            return None
        value = Worksheet.number(text)
        if value is None or not 0 <= value <= question.points:
            if line:
                self.problems.append(f"{self.path.name}, line {line}, column {question.name}: "
                                     f"«{text}» is not a number of points from 0 to "
                                     f"{question.points:g}; counted as not graded")
            return None
        return value

    def files(self):
        return list(self._rows)

    def marks_for(self, file) -> Optional[StudentMarks]:
        row = self._rows.get(file)
        if row is None:
            return None
        return StudentMarks(file, [
            Mark(q, self._points(row, q),
                 original(self.sheet.cell(row, self._index[comment_column(q.name)])).strip())
            for q in self.questions])

    def ensure(self, roster):
        """A row for each ``(file, student_name, student_id)`` of the class, in its order, before
        any row the class no longer has; names and ids refreshed from the roster."""
        known = []
        for file, name, student_id in roster:
            row = self._rows.get(file)
            if row is None:
                row = self._rows[file] = [""] * len(self.sheet.header)
                Worksheet.set(row, self._index[KEY], safe(file))
            Worksheet.set(row, self._index[NAME], safe(name or ""))
            Worksheet.set(row, self._index[ID], safe(student_id or ""))
            known.append(row)
        kept = {id(row) for row in known}
        others = [row for row in self._rows.values() if id(row) not in kept]
        self.sheet.rows = known + others

    def set(self, file, question_name, points, comment):
        """Set one answer's points (None: not graded) and comment; the caller has checked
        ``file`` and ``question_name``."""
        question = next(q for q in self.questions if q.name == question_name)
        row = self._rows[file]
        if points is not None and not 0 <= points <= question.points:
            raise ScoresError(f"{points:g} is not a number of points from 0 to "
                              f"{question.points:g}")
        separator = self.sheet.decimal_separator(self._index[question.name]) \
            if self.sheet.rows else "."
        text = "" if points is None else f"{points:g}".replace(".", separator)
        Worksheet.set(row, self._index[question.name], text)
        Worksheet.set(row, self._index[comment_column(question.name)],
                      safe(str(comment or "")[:MAX_COMMENT_CHARS]))

    def write(self):
        self.sheet.write(self.path)


def _merge(first, second):
    """``second``'s filled cells into ``first``: a second row for one file is the same
    student's, typed twice (a spreadsheet's copy, an older kit's save)."""
    for index, cell in enumerate(second):
        if cell.strip():
            Worksheet.set(first, index, cell)


def load(out, questions) -> Optional[ScoreSheet]:
    """OUT's scores, or None before anyone graded a written answer."""
    path = Path(out) / SCORES
    return ScoreSheet.read(path, questions) if path.is_file() else None


def write_template(out, questions, roster):
    """``OUT/written/written_scores.template.csv``: every row, no score, for a spreadsheet;
    saved as ``OUT/written_scores.csv`` it is the scores file."""
    path = Path(out) / "written" / TEMPLATE
    sheet = ScoreSheet(path, questions, Worksheet.new(path, header(questions)))
    sheet.ensure(roster)
    sheet.path.parent.mkdir(parents=True, exist_ok=True)
    sheet.write()
