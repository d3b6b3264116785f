"""Read points from rubrics/, the single source of every point value in the kit."""

from pathlib import Path

import yaml

RUBRIC_PATH = Path(__file__).resolve().parent.parent / "rubrics" / "rubric.yaml"


def load_rubric(path=RUBRIC_PATH):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def question_points(rubric, name):
    """The Otter ``points`` value of a question: a total, or a list with one entry per test case.

    A question with ``criteria`` (the extension) is graded one hidden test per criterion, so its
    points are the list of the criteria's points, in order.
    """
    entry = rubric.get("questions", {}).get(name) or rubric.get("written", {}).get(name)
    if entry is None:
        raise KeyError(f"question {name!r} has no entry in {RUBRIC_PATH.name}")
    if "criteria" in entry:
        return [criterion["points"] for criterion in entry["criteria"]]
    return entry["points"]
