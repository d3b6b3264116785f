"""Read points from ``rubrics/<lesson>.yaml``, the single source of every point value of a lesson.

A rubric has ``questions:`` (graded automatically: a function's total, or a challenge's
``criteria`` with points each) and may have ``written:`` (questions a person grades with the
levels given there) and ``practice:`` (exercises with public checks only, worth 0: Otter
questions whose tests are all public, so that ``grader.check`` and ``otter check`` work as
usual, and which no door grades). Any section may be absent.
"""

from pathlib import Path

import yaml


SECTIONS = ("questions", "written", "practice")


class RubricError(ValueError):
    """The rubric file cannot give the points asked for; the message says which and where."""


def load_rubric(path, shown=None):
    """The rubric at ``path``; its errors name it ``shown`` (the path as its author types it,
    ``rubrics/<lesson>.yaml``), or by its file name."""
    path = Path(path)
    shown = shown or path.name
    try:
        with open(path, encoding="utf-8") as f:
            rubric = yaml.safe_load(f) or {}
    except FileNotFoundError:
        raise RubricError(f"{shown}: no such file; a lesson's points live in "
                          "rubrics/<lesson>.yaml") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{shown}:{mark.line + 1}" if mark is not None else shown
        raise RubricError(f"{where}: not valid YAML ({getattr(exc, 'problem', None) or exc}); "
                          "fix the file's syntax") from None
    if not isinstance(rubric, dict):
        raise RubricError(f"{shown}: not a mapping; give it `questions:`, `written:` and, for "
                          "exercises worth nothing, `practice:`")
    for section in SECTIONS:
        rubric[section] = rubric.get(section) or {}
    worth = [name for name, entry in rubric["practice"].items()
             if not isinstance(entry, dict) or entry.get("points") != 0]
    if worth:
        raise RubricError(f"{shown}: gives points under practice: to {', '.join(worth)}; a "
                          "practice exercise has only public checks and no door grades it: write "
                          "`points: 0`, or make it a graded question under questions:")
    rubric["_source"] = shown
    return rubric


def question_points(rubric, name):
    """The Otter ``points`` value of a question: a total, or a list with one entry per test case.

    A question with ``criteria`` (the extension) is graded one hidden test per criterion, so its
    points are the list of the criteria's points, in order.
    """
    entry = next((rubric[section][name] for section in SECTIONS if name in rubric[section]), None)
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
            "Esta tabla se genera desde la rúbrica de la clase al construir tu carpeta: es la "
            "misma con la que se califica.",
            "", "| Parte | Qué se evalúa | Puntos |", "|---|---|---|"]
    for name, entry in rubric["questions"].items():
        if "criteria" in entry:
            rows += [f"| Reto (`{name}`) | `{c['id']}` | {c['points']} |" for c in entry["criteria"]]
        else:
            rows.append(f"| Función | `{name}` | {entry['points']} |")
    rows += [f"| Texto del reto (a mano) | `{entry['texto']}` | {_points(entry['points'])} |"
             if entry.get("texto") else f"| Pregunta escrita | {name} | {_points(entry['points'])} |"
             for name, entry in rubric["written"].items()]
    rows += [f"| Ejercicio sin nota | `{name}`: {entry['ejercicio']} | 0 |"
             for name, entry in rubric["practice"].items()]
    total = sum(sum(p) if isinstance(p, list) else p
                for p in (question_points(rubric, n)
                          for n in list(rubric["questions"]) + list(rubric["written"])))
    rows.append(f"| **Total** | | **{_points(total)}** |")
    return "\n".join(rows + text_rubric(rubric)) + "\n"


def text_rubric(rubric):
    """The levels a person grades by (every ``written:`` entry), as Spanish sections of the
    students' guide: the written questions', then the challenge texts' (``texto:``). The rubric
    itself, not a summary of it."""
    written = rubric["written"].items()
    return (_levels_section(
                "Cómo se corrigen las preguntas",
                "Cada pregunta escrita la corrige una persona con estos niveles, que vienen de la "
                "misma rúbrica:",
                [(f"{name}. {entry['pregunta']}", entry) for name, entry in written
                 if not entry.get("texto")], texto=False)
            + _levels_section(
                "Cómo se corrigen los textos del reto",
                "El validador solo comprueba que cada texto diga algo. Lo que dicen lo corrige una "
                "persona con estos niveles, que vienen de la misma rúbrica:",
                [(entry["pregunta"], entry) for _, entry in written if entry.get("texto")],
                texto=True))


def _levels_section(title, intro, entries, texto):
    """One section of levels: ``entries`` are (heading, rubric entry)."""
    if not entries:
        return []
    rows = ["", f"## {title}", "", intro, ""]
    for heading, entry in entries:
        which = f"`{entry['texto']}`, " if texto else ""
        rows += [f"**{heading}** ({which}{_points_word(entry['points'])})", ""]
        rows += _levels(entry) + [""]
    return rows[:-1]


def _levels(entry):
    return [f"- {_points(level['puntos'])}: {level['descripcion']}" for level in entry["niveles"]]


def _points_word(value):
    return f"{_points(value)} punto{'' if value == 1 else 's'}"


def _points(value):
    """A point value as a Spanish reader writes it: 2, 0,5."""
    return f"{float(value):g}".replace(".", ",")


WHAT_AN_ENTRY_HOLDS = {"questions": "its points", "written": "points, pregunta and niveles",
                       "practice": "`points: 0` and its `ejercicio:` title"}


def check_matches(rubric, lesson_questions, master_questions, lesson_name, practice_questions=()):
    """The rubric grades exactly the lesson's questions: the automatic ones
    (``lesson_questions``, the lesson's functions and data questions) under ``questions:``,
    the written ones the master marks as manual (``master_questions``) under ``written:``
    (besides those that read a challenge text, ``texto:``), and the master's other questions,
    its practice exercises (``practice_questions``), under ``practice:``.
    A question only the rubric has would add points no door grades; one it lacks has none."""
    source = rubric.get("_source", "the rubric")
    problems = []
    for section, wanted in (("questions", lesson_questions), ("written", master_questions),
                            ("practice", practice_questions)):
        # A written entry with `texto` reads one of the challenge's texts, not a master cell.
        listed = [name for name, entry in (rubric.get(section) or {}).items()
                  if section == "questions" or not (isinstance(entry, dict) and "texto" in entry)]
        extra = [name for name in listed if name not in wanted]
        missing = [name for name in wanted if name not in listed]
        if extra:
            problems.append(f"{source}: lists under {section}: {', '.join(extra)}, which lesson "
                            f"{lesson_name} does not have (it has: {', '.join(wanted) or 'none'}); "
                            "remove it or correct its name")
        if missing and section == "practice":
            problems.append(f"{source}: does not list the master's exercise "
                            f"{', '.join(missing)}, which no door grades; add "
                            f"{'it' if len(missing) == 1 else 'them'} under practice: with "
                            f"{WHAT_AN_ENTRY_HOLDS[section]}")
        elif missing:
            problems.append(f"{source}: gives no points to {', '.join(missing)} of lesson "
                            f"{lesson_name}; add {'it' if len(missing) == 1 else 'them'} under "
                            f"{section}: with {WHAT_AN_ENTRY_HOLDS[section]}")
    if problems:
        raise RubricError("\n".join(problems))
