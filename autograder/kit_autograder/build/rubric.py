"""Read points from rubrics/, the single source of every point value in the kit."""

from pathlib import Path

import yaml

RUBRIC_PATH = Path(__file__).resolve().parents[3] / "rubrics" / "attention.yaml"


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


def manual_points(rubric):
    """The points a person grades by hand (the written questions)."""
    return sum(entry["points"] for entry in rubric.get("written", {}).values())


def points_table(rubric):
    """A Spanish Markdown table of every point value, appended to the students' assessment.md.

    Students get their own copy of the points this way without a second source to keep in sync.
    """
    rows = ["## Puntos", "", "Esta tabla se genera desde `rubrics/attention.yaml` al construir tu carpeta.",
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
