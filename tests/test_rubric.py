"""rubrics/attention.yaml, assessment.md and the validator tell one story.

Points live only in the rubric; assessment.md names each criterion's check; the validator
implements exactly those checks, in rubric order.
"""

import re
from pathlib import Path

import pytest

from extension import CRITERIA, CRITERION_IDS, FIELD_ALIASES
from kit_autograder.build.otter_master import hidden_tests_for
from kit_autograder.build.rubric import RubricError, load_rubric, question_points

ROOT = Path(__file__).resolve().parent.parent
ASSESSMENT = (ROOT / "assessment.md").read_text(encoding="utf-8")
WRITTEN = ("q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9")


def section(title: str) -> str:
    """The text of an assessment.md section, up to the next heading of the same or a higher level."""
    level = re.search(rf"^(#+) {re.escape(title)}$", ASSESSMENT, re.M)
    assert level, f"assessment.md has no section {title!r}"
    rest = ASSESSMENT[level.end():]
    end = re.search(rf"^#{{1,{len(level.group(1))}}} ", rest, re.M)
    return rest[:end.start()] if end else rest


def criterion_rows():
    """The rows of the acceptance-criteria table, as lists of cells."""
    rows = [line for line in section("Criterios de aceptación").splitlines() if re.match(r"^\| \d+ \|", line)]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


@pytest.fixture(scope="module")
def rubric():
    from lesson055 import RUBRIC

    return load_rubric(RUBRIC)


def test_every_criterion_in_assessment_names_exactly_one_validator_check():
    rows = criterion_rows()
    named = [re.findall(r"`(\w+)`", row[2]) for row in rows]
    assert all(len(ids) == 1 for ids in named), named
    assert [ids[0] for ids in named] == list(CRITERION_IDS)


def test_assessment_states_each_criterion_in_the_seed_words_the_validator_uses():
    assert [row[1] for row in criterion_rows()] == [criterion.title for criterion in CRITERIA]


def test_rubric_criteria_are_the_validator_checks_in_order_with_positive_points(rubric):
    criteria = rubric["questions"]["student_extension"]["criteria"]
    assert [c["id"] for c in criteria] == list(CRITERION_IDS)
    assert all(isinstance(c["points"], (int, float)) and c["points"] > 0 for c in criteria)
    assert all(c["descripcion"].strip() for c in criteria)
    assert question_points(rubric, "student_extension") == [c["points"] for c in criteria]


def test_assessment_holds_no_point_values():
    # Points live in rubrics/; a number here would drift from it.
    assert not re.search(r"\d+(?:[.,]\d+)?\s*(?:puntos?|pts?)\b", ASSESSMENT, re.I)


def test_assessment_documents_every_student_extension_key_and_alias():
    keys = section("Las claves de `student_extension`")
    for aliases in FIELD_ALIASES.values():
        for name in aliases:
            assert f"`{name}`" in keys, name


@pytest.mark.parametrize("name", WRITTEN)
def test_written_question_levels_go_from_its_points_down_to_zero(rubric, name):
    entry = rubric["written"][name]
    levels = [level["puntos"] for level in entry["niveles"]]
    assert levels[0] == entry["points"] == question_points(rubric, name)
    assert levels[-1] == 0
    assert levels == sorted(set(levels), reverse=True)
    assert all(level["descripcion"].strip() for level in entry["niveles"])


@pytest.mark.parametrize("name", WRITTEN)
def test_written_question_in_rubric_is_the_one_assessment_asks(rubric, name):
    assert f"**{name}.** {rubric['written'][name]['pregunta']}" in section("Preguntas")


def test_assessment_gives_one_path_for_the_challenge_and_the_terminal_commands_as_a_look():
    # The notebook writes resultado.json; editing it by hand was a second, ungraded path.
    howto = section("Cómo hacer el reto: un solo camino, el cuaderno")
    assert "No edites `resultado.json` a mano" in howto
    assert "python lab.py --seed 55" in howto and "python extension.py resultado.json" in howto
    assert "> resultado.json" not in howto


def test_build_grades_student_extension_with_one_hidden_test_per_criterion_in_rubric_order(rubric):
    from attention import lesson

    sources = hidden_tests_for("student_extension", lesson)
    assert [re.findall(r"check_data\('attention', 'student_extension', '(\w+)'", source)
            for source in sources] == [[criterion] for criterion in CRITERION_IDS]
    assert [c["id"] for c in rubric["questions"]["student_extension"]["criteria"]] == \
        list(CRITERION_IDS)
    assert all("hidden: true" in source and "points" not in source for source in sources)


def test_the_practice_exercises_are_the_masters_and_worth_nothing(rubric):
    """rubrics/attention.yaml lists under practice: exactly the master's questions that are
    neither graded nor written, each worth 0, so no door grades them and no point is lost."""
    from attention import lesson
    from kit_autograder import lesson as lesson_module
    from kit_autograder.build import otter_master
    from kit_autograder.build.rubric import check_matches
    from lesson055 import MASTER

    master = otter_master.load_master(MASTER)
    automatic = lesson_module.questions(lesson)
    practice = otter_master.practice_questions(master, automatic)

    def manual_questions(_):
        return otter_master.manual_questions(master)

    assert practice == ["cruzada", "relleno", "cabezas", "cache_kv", "coste"]
    assert list(rubric["practice"]) == practice
    assert all(question_points(rubric, name) == 0 for name in practice)
    check_matches(rubric, automatic, manual_questions(MASTER), "attention", practice)
    # The controls: an exercise the rubric does not list, or one it lists that the master lacks.
    with pytest.raises(RubricError, match="does not list the master's exercise otra"):
        check_matches(rubric, automatic, manual_questions(MASTER), "attention", practice + ["otra"])
    with pytest.raises(RubricError, match="lists under practice: coste, which lesson attention"):
        check_matches(rubric, automatic, manual_questions(MASTER), "attention", practice[:-1])


def test_a_practice_exercise_with_points_is_refused(tmp_path):
    path = tmp_path / "leccion.yaml"
    path.write_text("questions: {}\npractice:\n  coste:\n    points: 1\n    ejercicio: x\n", "utf-8")
    with pytest.raises(RubricError, match="gives points under practice: to coste"):
        load_rubric(path)
    path.write_text("questions: {}\npractice:\n  coste:\n    points: 0\n    ejercicio: x\n", "utf-8")
    assert question_points(load_rubric(path), "coste") == 0  # the control


def test_the_students_guide_shows_every_written_level_the_grader_uses(rubric):
    """Issue 48.6: the levels a person grades each written question by reach the students, from
    the rubric itself, as the challenge texts' already did."""
    from kit_autograder.build.rubric import points_table

    guide = points_table(rubric)
    assert "## Cómo se corrigen las preguntas" in guide and "## Cómo se corrigen los textos del reto" in guide
    for name, entry in rubric["written"].items():
        for level in entry["niveles"]:
            points = f"{float(level['puntos']):g}".replace(".", ",")  # 2, 0,5
            assert f"- {points}: {level['descripcion']}" in guide, (name, level)
    for name in WRITTEN:
        assert f"**{name}. {rubric['written'][name]['pregunta']}** (2 puntos)" in guide


def test_the_points_table_shows_each_practice_exercise_at_zero(rubric):
    from kit_autograder.build.rubric import points_table

    table = points_table(rubric)
    for name, entry in rubric["practice"].items():
        assert f"| Ejercicio sin nota | `{name}`: {entry['ejercicio']} | 0 |" in table


def student_text():
    """What students read of the master (no model answer, no solution note) and assessment.md."""
    from kit_autograder.build.otter_master import load_master
    from lesson055 import MASTER

    kept, in_solution = [], False
    for cell in load_master(MASTER).cells:
        if cell.cell_type == "raw" and cell.source.strip() in ("# BEGIN SOLUTION", "# END SOLUTION"):
            in_solution = cell.source.strip() == "# BEGIN SOLUTION"
        elif not in_solution and "solution-note" not in cell.metadata.get("tags", []):
            kept.append(cell.source)
    return "\n".join(kept) + "\n" + ASSESSMENT


# The terms a written question's top level requires the answer to use by name (issue 33 found
# q2's «equivariante», which the notebook never taught): each must be one students have read.
NAMED_AT_THE_TOP = {"q2": ("equivariante",),
                    "q9": ("sin_escala_raiz_dk", "d_k = 64")}


@pytest.mark.parametrize("name", sorted(NAMED_AT_THE_TOP))
def test_a_term_a_top_level_requires_is_one_the_notebook_teaches(rubric, name):
    top = rubric["written"][name]["niveles"][0]["descripcion"]
    for term in NAMED_AT_THE_TOP[name]:
        assert term in top, (name, term)  # the rubric still asks for it
        assert term in student_text(), f"{name}'s top level expects «{term}», which no student reads"


def test_the_criteria_descriptions_say_what_the_validator_checks(rubric):
    """Criterion 4 is a number of the lab's beside a word of its measurement, in one sentence
    (issue 30.3), from result.ablacion too: the rubric and assessment.md say so."""
    (cites,) = [c for c in rubric["questions"]["student_extension"]["criteria"]
                if c["id"] == "cites_lab_numbers"]
    assert "dos palabras de su medición en la misma frase" in cites["descripcion"]
    assert "result.ablacion" in cites["descripcion"]
    (row,) = [row for row in criterion_rows() if "cites_lab_numbers" in row[2]]
    assert "en la misma frase" in row[3] and "dos palabras" in row[3] and "result.ablacion" in row[3]
