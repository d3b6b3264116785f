"""The written scores joined to everything else OUT holds: ``final_grades.csv``, the feedback
and the class report (``make report`` rebuilds all three: report/outputs.py).

``final_grades.csv`` keeps Otter's columns as they are and adds, after them, ``student_name``
and ``student_id`` where the LMS gave them, then, once ``OUT/written_scores.csv`` exists, one
column per written question and ``final_points``: the automatic points plus the written ones,
out of both (blank until every written answer of that student is graded, so that no partial
total passes for a grade).
"""

from ..lms.entries import read_manifest
from . import answers, scores
from .questions import lesson_questions

FINAL_POINTS = "final_points"
POINTS_ROW = "points-per-question"


class Written:
    """A graded folder's written questions and scores (no scores: ``sheet`` is None; scores
    that cannot be read: ``error`` says which cell, and they are left out)."""

    def __init__(self, out, lesson_name):
        self.questions = lesson_questions(lesson_name)
        self.sheet, self.error = None, None
        try:
            self.sheet = scores.load(out, self.questions) if self.questions else None
        except scores.ScoresError as exc:
            self.error = str(exc)

    def marks_for(self, file):
        return self.sheet.marks_for(file) if self.sheet is not None else None


def roster(out):
    """``[(file, student_name, student_id)]`` of the class graded into ``out``, in
    ``final_grades.csv``'s order."""
    manifest = read_manifest(out)
    if manifest is not None:
        return [(e["file"], e.get("student_name"), e.get("student_id"))
                for e in manifest["entries"]]
    return [(file, None, None) for file in answers.load_all(out)]


def identities(manifest):
    """``{file: (student_name, student_id, group)}`` from OUT's manifest."""
    return {e["file"]: (e.get("student_name"), e.get("student_id"), e.get("group"))
            for e in (manifest or {}).get("entries", [])}


def extend_final_grades(frame, names, written):
    """``frame`` (Otter's final_grades, its first row the points per question when any
    submission was graded) with the identity and written columns."""
    files = list(frame["file"])
    has_points_row = bool(files) and files[0] == POINTS_ROW
    unknown = (None, None, None)
    if any(any(who) for who in names.values()):
        frame["student_name"] = [names.get(f, unknown)[0] or "" for f in files]
        frame["student_id"] = [names.get(f, unknown)[1] or "" for f in files]
    if any(len(who) > 2 and who[2] for who in names.values()):
        frame["group"] = [names.get(f, unknown)[2] or "" for f in files]
    if written is None or written.sheet is None:
        return frame
    columns = {q.name: [] for q in written.questions}
    finals = []
    for position, file in enumerate(files):
        if position == 0 and has_points_row:
            for question in written.questions:
                columns[question.name].append(question.points)
            finals.append(float(frame["total_points_earned"].iloc[0])
                          + sum(q.points for q in written.questions))
            continue
        marks = written.marks_for(file)
        for index, question in enumerate(written.questions):
            points = marks.marks[index].points if marks is not None else None
            columns[question.name].append("" if points is None else points)
        automatic = float(frame["total_points_earned"].iloc[position])
        finals.append(automatic + marks.earned if marks is not None and marks.complete else "")
    for name, values in columns.items():
        frame[name] = values
    frame[FINAL_POINTS] = finals
    return frame


def graded_counts(out, lesson_name, files=None):
    """``{file: (answers graded, questions)}`` for every submission of ``out`` (or ``files``),
    or None when the lesson has no written question. What a grade waits for: without a scores
    file, none is graded (make export withholds every grade, make report lists everyone)."""
    questions = lesson_questions(lesson_name)
    if not questions:
        return None
    sheet = scores.load(out, questions)
    counts = {}
    for file in files if files is not None else [row[0] for row in roster(out)]:
        marks = sheet.marks_for(file) if sheet is not None else None
        counts[file] = (marks.graded if marks is not None else 0, len(questions))
    return counts


def after_grading(out, lesson_name):
    """What make grade leaves for the written answers: the spreadsheet template."""
    questions = lesson_questions(lesson_name)
    if questions:
        scores.write_template(out, questions, roster(out))


def class_summary(out, lesson_name):
    """Per written question, what the class report shows, or None before any score:
    ``[{"number", "question", "points": [graded points], "graded", "total",
    "levels": [(Level, count)]}]``."""
    questions = lesson_questions(lesson_name)
    sheet = scores.load(out, questions) if questions else None
    if sheet is None:
        return None
    files = [file for file, _, _ in roster(out)] or sheet.files()
    summary = []
    for index, question in enumerate(questions):
        points = []
        for file in files:
            marks = sheet.marks_for(file)
            if marks is not None and marks.marks[index].points is not None:
                points.append(marks.marks[index].points)
        levels = [(level, sum(1 for p in points if p == level.points))
                  for level in question.levels]
        summary.append({"number": index + 1, "question": question, "points": points,
                        "graded": len(points), "total": len(files), "levels": levels})
    return summary
