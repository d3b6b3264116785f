"""A team is what the LMS's membership says it is (issues 47.8 and 51.5): from the download
Moodle or Canvas writes for a team or group assignment, through make grade's ingest and the
manifest, to the file make export writes. Every member listed in a group gets its grade; a
student's own name never makes their file a group's; groups whose names Moodle writes alike are
told apart or refused; a student claimed by two files gets neither grade.

The grading itself is not run here (tests/test_lms_end_to_end.py runs it): each file's points
are those of the demo notebook it holds, 20 for the correct one and 0 for the stub, with every
written answer graded full or 0 alike."""

import csv
import io
import json

import pytest

import lms_fixtures as fx
from kit_autograder import lms
from kit_autograder.lms import export as export_module
from kit_autograder.written import scores
from kit_autograder.written.questions import lesson_questions

GOOD = fx.with_answers(fx.demo("correcta.ipynb"), fx.ANSWERS["buena"])
STUB = fx.demo("sin_hacer.ipynb")
QUESTIONS = lesson_questions("attention")
WRITTEN = sum(q.points for q in QUESTIONS)


def graded(tmp_path, download: bytes, roster=None, name="descarga.zip"):
    """OUT as make grade and a finished make review leave it, for ``download``."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / name
    path.write_bytes(download)
    out = tmp_path / "notas"
    (out / "feedback").mkdir(parents=True)
    with lms.ingest(path, roster=lms.read_roster(roster) if roster else None) as ingested:
        stems = {e.name_hint: f"s{n}" for n, e in enumerate(ingested.entries)}
        ingested.write_manifest(out, stems)
        points = {e.file: 20.0 if e.path.read_bytes() == GOOD else 0.0
                  for e in ingested.entries}
        notices = list(ingested.notices)
    sheet = scores.ScoreSheet.read(out / scores.SCORES, QUESTIONS)
    sheet.ensure([(file, "", "") for file in points])
    rows = [["file", "total_points_earned", "final_points"],
            ["points-per-question", 20, 20 + WRITTEN]]
    for file, automatic in points.items():
        for question in QUESTIONS:
            sheet.set(file, question.name, question.points if automatic else 0, "")
        rows.append([file, automatic, automatic + (WRITTEN if automatic else 0)])
        (out / "feedback" / f"{stems_of(out)[file]}.md").write_text(f"# {file}\n", "utf-8")
    sheet.write()
    with open(out / "final_grades.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return out, notices


def stems_of(out):
    manifest = json.loads((out / "submissions.json").read_text("utf-8"))
    return {e["file"]: e["stem"] for e in manifest["entries"]}


def exported(out, lms_name, worksheet: bytes, name="hoja.csv", **kwargs):
    """``({student id: grade cell}, report)`` of make export with ``worksheet``."""
    path = out.parent / name
    path.write_bytes(worksheet)
    report = export_module.export(out, lms_name, path, lesson="attention", log=io.StringIO(),
                                  **kwargs)
    text = (out / "export" / name).read_bytes().decode("utf-8")
    delimiter = ";" if lms_name == "moodle" else ","
    table = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    if lms_name == "moodle":
        column = table[0].index("Calificación")
        return {row[0].removeprefix("Participante"): row[column] for row in table[1:]}, report
    column = table[0].index(fx.CANVAS_COLUMN)
    return {row[1]: row[column] for row in table[2:]}, report


def written_to(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --- Moodle: membership is the worksheet's «Grupo» (issue 47.8) --------------------------------

TEAMS = [("11", "Ana Roja", "Equipo Rojo"), ("12", "Beto Rojo", "Equipo Rojo"),
         ("13", "Carla Azul", "Equipo Azul"), ("14", "Dani Azul", "Equipo Azul")]


@pytest.mark.parametrize("without_group", [False, True],
                         ids=["every-member-in-a-group", "with-grupo-predeterminado"])
def test_a_team_download_graded_without_roster_gives_every_member_the_grade_at_export(
        tmp_path, without_group):
    people = TEAMS + ([("15", "Sola Sin Grupo", "")] if without_group else [])
    download = fx.moodle_team_download([("Equipo Rojo", "501", GOOD), ("Equipo Azul", "502", STUB)],
                                       without_group=STUB if without_group else None)
    out, _ = graded(tmp_path, download)  # no ROSTER=: make grade knows no member
    grades, report = exported(out, "moodle", fx.moodle_worksheet(people))
    expected = {"11": "10,00", "12": "10,00", "13": "0,00", "14": "0,00"}
    assert grades == {**expected, **({"15": "0,00"} if without_group else {})}, report
    assert "group «Equipo Rojo»" in report and report.splitlines()[-1].startswith(
        f"result: {len(people)} of the worksheet's {len(people)} students got a grade")
    # Positive control: the same worksheet without its «Grupo» column names no member, and
    # nobody gets a grade (this was every export of a team download graded without ROSTER=).
    (out / "export").rename(out.parent / "first-export")
    grades, report = exported(out, "moodle", fx.moodle_worksheet(people, groups=False))
    assert set(grades.values()) == {""}, report


# --- issue 51.5: teams hijacked or lost --------------------------------------------------------


def individual_class(attacker_name):
    """Ana and Beto, of «Grupo A», hand in the correct notebook; participant 13, named
    ``attacker_name``, the stub. The worksheet names everyone's group."""
    download = fx.zip_bytes({
        "Ana Roja_11_assignsubmission_file/notebook_student.ipynb": GOOD,
        "Beto Rojo_12_assignsubmission_file/notebook_student.ipynb": GOOD,
        f"{attacker_name}_13_assignsubmission_file/notebook_student.ipynb": STUB})
    worksheet = fx.moodle_worksheet([("11", "Ana Roja", "Grupo A"), ("12", "Beto Rojo", "Grupo A"),
                                     ("13", attacker_name, "Grupo B")])
    return download, worksheet


@pytest.mark.parametrize("with_roster", [True, False], ids=["roster-at-grade", "export-only"])
def test_a_student_named_as_a_group_never_takes_its_grade(tmp_path, with_roster):
    download, worksheet = individual_class("Grupo A")
    roster = written_to(tmp_path, "roster.csv", worksheet)
    # Positive control: «Grupo A» is a group of the worksheet, with both real members in it.
    assert [p.student_id for p in lms.read_roster(roster).team("Grupo A")[0]] == ["11", "12"]
    out, notices = graded(tmp_path, download, roster if with_roster else None)
    grades, report = exported(out, "moodle", worksheet)
    assert grades == {"11": "10,00", "12": "10,00", "13": "0,00"}, report
    if with_roster:
        (notice,) = [n for n in notices if n.kind == "identity"]
        assert "«Grupo A» (13) has the name of a group" in notice.en
    # The control the issue names: a plain name, and the members have their 10,00 as well.
    download, worksheet = individual_class("Carla Verde")
    roster = written_to(tmp_path, "control.csv", worksheet)
    out, _ = graded(tmp_path / "control", download, roster if with_roster else None)
    grades, _ = exported(out, "moodle", worksheet)
    assert grades == {"11": "10,00", "12": "10,00", "13": "0,00"}


def test_groups_moodle_writes_alike_are_told_apart_by_case(tmp_path):
    people = [("11", "Ana", "Equipo 1"), ("12", "Beto", "Equipo 1"),
              ("13", "Carla", "EQUIPO_1"), ("14", "Dani", "EQUIPO_1")]
    download = fx.moodle_team_download([("Equipo 1", "601", GOOD), ("EQUIPO_1", "602", STUB)])
    roster = written_to(tmp_path, "roster.csv", fx.moodle_worksheet(people))
    # Positive control: compared as names are (case and «_» aside), the two groups are one,
    # which gave everyone the last row's grade.
    from kit_autograder.lms.roster import download_name
    assert download_name("Equipo 1") == download_name("EQUIPO_1")
    for given in (roster, None):
        out, _ = graded(tmp_path / str(bool(given)), download, given)
        grades, report = exported(out, "moodle", fx.moodle_worksheet(people))
        assert grades == {"11": "10,00", "12": "10,00", "13": "0,00", "14": "0,00"}, report


def test_groups_the_download_cannot_tell_apart_are_refused_with_a_notice(tmp_path):
    people = [("11", "Ana", "Equipo 1"), ("12", "Beto", "Equipo 1"),
              ("13", "Carla", "Equipo_1"), ("14", "Dani", "Equipo_1")]
    download = fx.moodle_team_download([("Equipo 1", "601", GOOD), ("Equipo_1", "602", STUB)])
    roster = written_to(tmp_path, "roster.csv", fx.moodle_worksheet(people))
    out, notices = graded(tmp_path, download, roster)
    assert sum(n.kind == "team" and "writes alike" in n.en for n in notices) == 2
    grades, report = exported(out, "moodle", fx.moodle_worksheet(people))
    assert set(grades.values()) == {""}, report
    assert "whose group the download cannot tell apart (2)" in report


def test_a_student_claimed_by_two_submissions_gets_neither_grade(tmp_path):
    # A group renamed in Moodle between the two downloads: both folders are «Equipo Rojo».
    download = fx.moodle_team_download([("Equipo Rojo", "501", GOOD), ("EQUIPO ROJO", "502", STUB)])
    people = TEAMS[:2]
    out, _ = graded(tmp_path, download)
    grades, report = exported(out, "moodle", fx.moodle_worksheet(people))
    assert grades == {"11": "", "12": ""}, report
    assert "withheld, claimed by two submissions (2):" in report
    # Positive control: with one folder, both members get its grade.
    out, _ = graded(tmp_path / "one", fx.moodle_team_download([("Equipo Rojo", "501", GOOD)]))
    grades, _ = exported(out, "moodle", fx.moodle_worksheet(people))
    assert grades == {"11": "10,00", "12": "10,00"}


# --- Canvas: the group's file carries one member's id (issue 51.5) ----------------------------

CANVAS_PEOPLE = [("Roja, Ana", "1001"), ("Rojo, Beto", "1002"), ("Azul, Carla", "1003"),
                 ("Azul, Dani", "1004")]
GROUPS = [("Ana Roja", "1001", "Equipo 1"), ("Beto Rojo", "1002", "Equipo 1"),
          ("Carla Azul", "1003", "Equipo 2"), ("Dani Azul", "1004", "Equipo 2")]


@pytest.mark.parametrize("when", ["grade", "export"])
def test_every_member_of_a_canvas_group_gets_its_grade(tmp_path, when):
    download = fx.canvas_group_download([("Equipo 1", "1001", 9001, GOOD),
                                         ("Equipo 2", "1004", 9002, STUB)])
    groups = written_to(tmp_path, "grupos.csv", fx.canvas_groups_csv(GROUPS))
    out, _ = graded(tmp_path, download, groups if when == "grade" else None)
    grades, report = exported(out, "canvas", fx.canvas_gradebook_of(CANVAS_PEOPLE),
                              roster=groups if when == "export" else None)
    assert grades == {"1001": "10.00", "1002": "10.00", "1003": "0.00", "1004": "0.00"}, report
    assert "without a submission (0)" in report


def test_without_membership_a_canvas_groups_file_is_withheld_and_the_export_says_why(tmp_path):
    download = fx.canvas_group_download([("Equipo 1", "1001", 9001, GOOD)])
    out, _ = graded(tmp_path, download)
    grades, report = exported(out, "canvas", fx.canvas_gradebook_of(CANVAS_PEOPLE[:2]))
    # Not the representative's alone, nor given silently: the grade is the group's.
    assert grades == {"1001": "", "1002": ""}, report
    assert "ID 1001 Roja, Ana: worksheet «Roja, Ana», download «equipo1»" in report
    assert "give make export ROSTER=<the group set's CSV>" in report


def test_a_canvas_group_file_named_after_its_member_goes_to_every_member(tmp_path):
    """Where the file carries the member's own name, as a student's file does."""
    download = fx.zip_bytes({"rojaana_1001_9001_notebook_student.ipynb": GOOD})
    groups = written_to(tmp_path, "grupos.csv", fx.canvas_groups_csv(GROUPS[:2]))
    out, _ = graded(tmp_path, download, groups)
    grades, report = exported(out, "canvas", fx.canvas_gradebook_of(CANVAS_PEOPLE[:2]))
    assert grades == {"1001": "10.00", "1002": "10.00"}, report
    # Positive control: without the groups, only the member named in the file gets it.
    out, _ = graded(tmp_path / "sin", download)
    grades, _ = exported(out, "canvas", fx.canvas_gradebook_of(CANVAS_PEOPLE[:2]))
    assert grades == {"1001": "10.00", "1002": ""}


def test_in_an_individual_assignment_each_member_of_a_canvas_group_keeps_their_own_grade(
        tmp_path):
    """The group set's CSV given for an assignment that is not a group one: both members of
    «Equipo 1» handed in their own file, named after themselves."""
    download = fx.zip_bytes({"rojaana_1001_9001_notebook_student.ipynb": GOOD,
                             "rojobeto_1002_9002_notebook_student.ipynb": STUB})
    groups = written_to(tmp_path, "grupos.csv", fx.canvas_groups_csv(GROUPS[:2]))
    out, _ = graded(tmp_path, download, groups)
    grades, report = exported(out, "canvas", fx.canvas_gradebook_of(CANVAS_PEOPLE[:2]))
    assert grades == {"1001": "10.00", "1002": "0.00"}, report
    assert "team grades" not in report
