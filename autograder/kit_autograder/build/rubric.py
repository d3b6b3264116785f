"""Read points from ``rubrics/<lesson>.yaml``, the single source of every point value of a lesson.

A rubric has ``questions:`` (graded automatically: a function's total, or a challenge's
``criteria`` with points each) and may have ``written:`` (questions a person grades with the
levels given there). Either section may be absent.
"""

from pathlib import Path

import yaml


class RubricError(ValueError):
    """The rubric file cannot give the points asked for; the message says which and where."""


def load_rubric(path):
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as f:
            rubric = yaml.safe_load(f) or {}
    except FileNotFoundError:
        raise RubricError(f"no rubric at {path}: a lesson's points live in rubrics/<lesson>.yaml") \
            from None
    if not isinstance(rubric, dict):
        raise RubricError(f"{path} must be a mapping with questions: and written:")
    rubric.setdefault("questions", {})
    rubric.setdefault("written", {})
    rubric["_source"] = path.name
    return rubric


def question_points(rubric, name):
    """The Otter ``points`` value of a question: a total, or a list with one entry per test case.

    A question with ``criteria`` (the extension) is graded one hidden test per criterion, so its
    points are the list of the criteria's points, in order.
    """
    entry = rubric["questions"].get(name) or rubric["written"].get(name)
    if entry is None:
        raise RubricError(f"question {name!r} has no entry in {rubric.get('_source', 'the rubric')}")
    if "criteria" in entry:
        return [criterion["points"] for criterion in entry["criteria"]]
    return entry["points"]


def manual_points(rubric):
    """The points a person grades by hand (the written questions)."""
    return sum(entry["points"] for entry in rubric["written"].values())


def points_table(rubric):
    """A Spanish Markdown table of every point value, appended to the students' guide.

    Students get their own copy of the points this way without a second source to keep in sync.
    """
    rows = ["## Puntos", "",
            f"Esta tabla se genera desde `rubrics/{rubric.get('_source', '')}` al construir tu carpeta.",
            "", "| Parte | Qué se evalúa | Puntos |", "|---|---|---|"]
    for name, entry in rubric["questions"].items():
        if "criteria" in entry:
            rows += [f"| Reto (`{name}`) | `{c['id']}` | {c['points']} |" for c in entry["criteria"]]
        else:
            rows.append(f"| Función | `{name}` | {entry['points']} |")
    rows += [f"| Pregunta escrita | {name} | {entry['points']} |"
             for name, entry in rubric["written"].items()]
    total = sum(sum(p) if isinstance(p, list) else p
                for p in (question_points(rubric, n)
                          for n in list(rubric["questions"]) + list(rubric["written"])))
    rows.append(f"| **Total** | | **{total}** |")
    return "\n".join(rows) + "\n"
