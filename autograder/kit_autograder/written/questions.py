"""The written questions of a lesson, as its rubric (``rubrics/<lesson>.yaml``, ``written:``)
states them: the question, its points and its levels, from the full answer down to 0."""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..build.course import LessonSources
from ..build.rubric import load_rubric


@dataclass(frozen=True)
class Level:
    points: float
    description: str  # Spanish, the rubric's


@dataclass(frozen=True)
class WrittenQuestion:
    name: str  # q1, as in the master's Otter question and every CSV column
    prompt: str  # Spanish, the rubric's «pregunta»
    points: float
    levels: tuple  # Level, highest first
    # The rubric's «texto»: the field of the challenge's texts this question reads (the
    # record's ``texts``), or None for a question answered in the notebook's own cells.
    text_field: Optional[str] = None

    def level_of(self, points):
        """The rubric level worth exactly ``points``, or None (a spreadsheet's 1,5)."""
        return next((level for level in self.levels if level.points == points), None)


def rubric_path(lesson: str) -> Path:
    return LessonSources(lesson).rubric


def written_questions(rubric_file) -> list:
    """The rubric's written questions in its order (the notebook's order too)."""
    rubric = load_rubric(rubric_file)
    questions = []
    for name, entry in (rubric.get("written") or {}).items():
        levels = tuple(Level(float(level["puntos"]), str(level["descripcion"]))
                       for level in entry.get("niveles", []))
        questions.append(WrittenQuestion(str(name), str(entry.get("pregunta", "")),
                                         float(entry["points"]),
                                         tuple(sorted(levels, key=lambda l: -l.points)),
                                         entry.get("texto")))
    return questions


def lesson_questions(lesson: str):
    """The lesson's written questions, or ``[]`` when its rubric is not in this checkout (an
    engine installed without the kit's repository)."""
    path = rubric_path(lesson)
    return written_questions(path) if path.is_file() else []
