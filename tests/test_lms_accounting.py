"""Every file of a download in, one row out, and nobody graded as somebody else (issues 29, 34).

Each attack test first shows, with a positive control, that the download really does what the
attack needs (a name that reads as another student, a link that resolves, dates that tie), so
that the defence is what makes the test pass."""

import csv
import io
from pathlib import Path

import pytest
import yaml

import lms_fixtures as fx
from kit_autograder import lms
from kit_autograder.batch import MAX_STEM_BYTES, output_stems
from kit_autograder.lms import canvas, gradescope, moodle
from kit_autograder.lms.tree import Tree

BLANK = fx.demo("sin_hacer.ipynb")
GOOD = fx.with_answers(fx.demo("correcta.ipynb"), fx.ANSWERS["buena"])
STAMP = "2026_11_20T10_{:02d}_00_123456"


def ingested(source, **kwargs):
    with lms.ingest(source, **kwargs) as result:
        bytes_of = {e.file: (e.path.read_bytes() if e.path else None) for e in result.entries}
        return result, bytes_of


def write_zip(tmp_path, members, name="descarga.zip"):
    path = tmp_path / name
    path.write_bytes(fx.zip_bytes(members))
    return path


def accounted(result, members):
    """Every file of the download has exactly one row of ingest.csv."""
    return sorted(row.file for row in result.files) == sorted(members)


# --- issue 29.1: a folder of grader.export() zips --------------------------------------------


def test_a_folder_of_export_zips_is_one_row_per_zip_and_the_repeats_are_a_notice(tmp_path):
    folder = tmp_path / "zips"
    folder.mkdir()
    names = [f"notebook_student_{STAMP.format(minute)}.zip" for minute in (1, 2, 3, 4)]
    for name in names:
        (folder / name).write_bytes(fx.demo("exportada.zip"))
    # Positive control: each name also reads as Canvas's «<name>_<user>_<file>_…» (the year
    # as a user id), which is how the folder was taken for one Canvas student.
    assert all(canvas.SPLIT.search(name) for name in names)
    result, _ = ingested(folder)
    assert result.layout == "folder"
    assert sorted(e.file for e in result.entries) == sorted(names)
    assert accounted(result, names)
    (notice,) = [n for n in result.notices if n.kind == "candidates"]
    assert "4 exportaciones de notebook_student.ipynb" in notice.es


# --- issue 29.2: Moodle's double upload -------------------------------------------------------


def moodle_double_upload(tmp_path):
    """Moodle's zip: both files dated with the download's time, the older one listed first and
    named to sort after the newer (so neither dates nor names give the order)."""
    who = "José Pérez_2000001_assignsubmission_file"
    members = {f"{who}/zz_primera_version.ipynb": BLANK, f"{who}/aa_final.ipynb": GOOD}
    return write_zip(tmp_path, members), f"{who}/aa_final.ipynb", f"{who}/zz_primera_version.ipynb"


def test_moodle_double_upload_grades_the_later_file_by_the_zips_order(tmp_path):
    path, newer, older = moodle_double_upload(tmp_path)
    with _tree(path) as tree:
        dates = {item.path: item.mtime for item in tree.items}
    # Positive control: the dates tie, and the newest-date-then-path rule picks the older file.
    assert dates[newer] == dates[older]
    assert max(dates, key=lambda p: (dates[p], p)) == older
    result, data = ingested(path)
    (entry,) = result.entries
    assert entry.file == newer and data[newer] == GOOD
    assert "oldest first" in entry.chosen_because
    # The control of what the student reads where nothing or the instructor decided.
    assert "se ha evaluado «aa_final.ipynb», el más reciente (Moodle pone" in entry.notes[0]
    rows = {row.file: row.action for row in result.files}
    assert rows == {newer: "graded", older: "superseded"}


class _tree:
    def __init__(self, path):
        self.tree = Tree.of(path)

    def __enter__(self):
        return self.tree

    def __exit__(self, *exc):
        self.tree.close()


def test_an_unzipped_moodle_download_says_it_cannot_tell_and_pick_decides(tmp_path):
    who = tmp_path / "descarga" / "José Pérez_2000001_assignsubmission_file"
    who.mkdir(parents=True)
    (who / "a.ipynb").write_bytes(BLANK)
    (who / "b.ipynb").write_bytes(GOOD)
    result, _ = ingested(tmp_path / "descarga")
    (notice,) = [n for n in result.notices if n.kind == "undecided"]
    assert "PICK=" in notice.es and "PICK=" in notice.en
    # The student reads what decided (issue 47.5): nothing did, so the last listed.
    (note,) = result.entries[0].notes
    assert "se ha evaluado «b.ipynb», el último de la lista" in note
    assert "«b.ipynb», el más reciente" not in note
    picked = "José Pérez_2000001_assignsubmission_file/a.ipynb"
    result, _ = ingested(tmp_path / "descarga", picks=[picked])
    assert [e.file for e in result.entries] == [picked]
    assert not [n for n in result.notices if n.kind == "undecided"]
    (note,) = result.entries[0].notes
    assert "se ha evaluado «a.ipynb», el que ha elegido tu profesor o profesora" in note
    assert "más reciente" not in note


# --- issue 29.3: teams ------------------------------------------------------------------------


def team_download(tmp_path):
    return write_zip(tmp_path, {
        "Equipo Rojo_501_assignsubmission_file/notebook_student.ipynb": GOOD,
        "Grupo predeterminado_assignsubmission_file/notebook_student.ipynb": BLANK})


def team_worksheet(tmp_path):
    lines = ['"Identificador";"Nombre completo";"Grupo";"Calificación";"Calificación máxima"',
             '"Participante501";"Impostora Casual";"Equipo Azul";"";"10,00"',
             '"Participante11";"Ana Roja";"Equipo Rojo";"";"10,00"',
             '"Participante12";"Beto Rojo";"Equipo Rojo";"";"10,00"',
             '"Participante13";"Sola Sin Grupo";"";"";"10,00"']
    path = tmp_path / "hoja.csv"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    return path


def test_a_moodle_team_download_is_graded_per_group_and_says_what_it_needs(tmp_path):
    result, _ = ingested(team_download(tmp_path))
    assert sorted((e.group, e.student_id, e.group_id) for e in result.entries) == [
        ("Equipo Rojo", None, "501"), ("Grupo predeterminado", None, None)]
    assert any(n.kind == "team" and "«Grupo» column" in n.en for n in result.notices)


def test_with_the_worksheet_every_member_gets_the_group_and_a_group_id_is_nobodys(tmp_path):
    roster = lms.read_roster(team_worksheet(tmp_path))
    # Positive control: the group's number is a real participant's, who is not in the group.
    assert roster.people["501"].name == "Impostora Casual"
    result, _ = ingested(team_download(tmp_path), roster=roster)
    teams = {e.group: sorted(m[1] for m in e.members) for e in result.entries}
    assert teams == {"Equipo Rojo": ["11", "12"], "Grupo predeterminado": ["13"]}
    assert all(e.student_id is None for e in result.entries)


# --- issue 34.1: a Canvas name that reads as another user ------------------------------------


def canvas_attack(tmp_path, with_victim=True):
    # The attacker (user 777) set their sortable name to «x_ 666 _1»: Canvas writes x_666_1.
    members = {"x_666_1_777_9100_notebook_student.ipynb": BLANK}
    if with_victim:
        members["victima_666_9001_notebook_student.ipynb"] = GOOD
    return write_zip(tmp_path, members, "submissions.zip")


def test_a_canvas_name_built_to_read_as_another_user_is_given_to_nobody(tmp_path):
    attack = "x_666_1_777_9100_notebook_student.ipynb"
    # Positive control: read left to right, the attacker's file is user 666's, and newer.
    first = canvas.readings(attack)[0]
    assert (first.user, first.who) == ("666", "x")
    result, data = ingested(canvas_attack(tmp_path))
    by_user = {e.student_id: e for e in result.entries}
    assert by_user["666"].file == "victima_666_9001_notebook_student.ipynb"
    assert data[by_user["666"].file] == GOOD
    assert by_user[None].file == attack
    assert any(n.kind == "identity" and attack in n.es for n in result.notices)


def test_without_the_victims_file_the_crafted_name_still_goes_to_nobody(tmp_path):
    result, _ = ingested(canvas_attack(tmp_path, with_victim=False))
    assert [e.student_id for e in result.entries] == [None]


def test_the_gradebook_gives_the_crafted_file_to_its_owner(tmp_path):
    gradebook = tmp_path / "gradebook.csv"
    gradebook.write_text("Student,ID,SIS User ID\nx_ 666 _1,777,\n\"Víctima, Ana\",666,\n")
    roster = lms.read_roster(gradebook)
    result, _ = ingested(canvas_attack(tmp_path), roster=roster)
    assert {e.student_id: e.file for e in result.entries}["777"].startswith("x_666_1_777_")


# --- issue 34.2 and 34.3: plain folders -------------------------------------------------------


def test_a_symlink_in_a_plain_folder_is_a_row_with_its_reason_never_read(tmp_path):
    secret = tmp_path / "solucion.ipynb"
    secret.write_bytes(GOOD)
    folder = tmp_path / "entregas"
    folder.mkdir()
    (folder / "ana.ipynb").write_bytes(BLANK)
    (folder / "atajo.ipynb").symlink_to(secret)
    # Positive control: the link resolves to the solution for anyone who follows it.
    assert (folder / "atajo.ipynb").read_bytes() == GOOD
    result, data = ingested(folder)
    link = next(e for e in result.entries if e.file == "atajo.ipynb")
    assert link.path is None and "enlace simbólico" in link.refusal
    assert GOOD not in data.values()


def test_one_file_named_like_moodle_does_not_make_a_folder_moodles(tmp_path):
    folder = tmp_path / "entregas"
    folder.mkdir()
    odd = "Ana_12_assignsubmission_file_tarea.ipynb"
    names = [odd, "beto.ipynb", "carla.ipynb"]
    for name in names:
        (folder / name).write_bytes(BLANK)
    assert moodle.fits(odd)  # positive control: the name alone is Moodle's
    result, _ = ingested(folder)
    assert result.layout == "folder" and sorted(e.file for e in result.entries) == sorted(names)
    assert any(n.kind == "layout" and "beto.ipynb" in n.en for n in result.notices)


# --- issue 34.4: a long name ------------------------------------------------------------------


def test_a_400_byte_name_becomes_a_short_stem_and_two_stay_apart():
    long_a, long_b = "ñ" * 200 + "a.ipynb", "ñ" * 200 + "b.ipynb"
    # Positive control: the name as it was would be over a file name's 255 bytes.
    assert len((Path(long_a).stem + ".json").encode()) > 255
    stems = output_stems([Path(long_a), Path(long_b)])
    assert all(len(stem.encode()) <= MAX_STEM_BYTES for stem in stems.values())
    assert len(set(stems.values())) == 2


# --- the instructor's account -----------------------------------------------------------------


def test_ingest_csv_has_one_row_per_file_online_text_included_and_no_formula(tmp_path):
    members = {"=HYPERLINK(1)_42_assignsubmission_file/tarea.ipynb": BLANK,
               "=HYPERLINK(1)_42_assignsubmission_file/notas.pdf": b"%PDF",
               "Bea_43_assignsubmission_onlinetext/onlinetext.html": b"<p>x</p>"}
    path = write_zip(tmp_path, members)
    with lms.ingest(path) as result:
        stems = {e.name_hint: Path(e.name_hint).stem for e in result.entries}
        result.write_manifest(tmp_path, stems)
    text = (tmp_path / "ingest.csv").read_text("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    # Every file, the online text too (issue 47.6).
    assert sorted(row["file"] for row in rows) == sorted(
        f"'{name}" if name.startswith("=") else name for name in members)
    online = next(row for row in rows if row["file"].startswith("Bea"))
    assert (online["action"], online["student_id"]) == ("not a submission", "43")
    assert "online text" in online["reason"]
    assert not any(cell.startswith("=") for row in rows for cell in row.values())


def test_gradescope_metadata_with_aliases_is_refused(tmp_path):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
    # Positive control: safe YAML expands the aliases.
    assert len(yaml.safe_load(bomb)["b"]) == 8
    path = write_zip(tmp_path, {gradescope.METADATA: bomb.encode(),
                                "submission_1/a.ipynb": BLANK})
    with pytest.raises(lms.IngestError, match="aliases"):
        lms.ingest(path)


# --- issue 34.9 and 34.10: a lone surrogate ---------------------------------------------------


def test_a_lone_surrogate_in_an_exported_value_is_a_replaced_character_not_a_crash():
    from kit_autograder.sandbox.inside.notebook import export

    value = {"conclusion": "atención \ud800 fin"}
    with pytest.raises(UnicodeEncodeError):  # positive control: UTF-8 cannot write it
        "\ud800".encode("utf-8")
    exported = export({"student_extension": value}, ["student_extension"], 10_000)
    text = exported["student_extension"]["json"]
    assert json_loads(text)["conclusion"] == "atención ? fin"


def json_loads(text):
    import json

    return json.loads(text)


def test_the_validators_output_with_a_lone_surrogate_prints_without_a_traceback(capfdbinary):
    from lab_runner import CliRun

    assert CliRun(1, "{\"x\": \"\ud800\"}\n", "aviso \ud800\n").emit() == 1
    captured = capfdbinary.readouterr()
    assert captured.out == b'{"x": "?"}\n' and captured.err == b"aviso ?\n"


def test_with_a_roster_everyone_without_a_row_is_named(tmp_path):
    path = tmp_path / "descarga.zip"
    path.write_bytes(fx.moodle_download())
    worksheet = tmp_path / "hoja.csv"
    worksheet.write_bytes(fx.moodle_worksheet_es())
    result, _ = ingested(path, roster=lms.read_roster(worksheet))
    (notice,) = [n for n in result.notices if n.kind == "absent"]
    # Pedro handed in nothing at all: not even a folder in the download.
    assert "Pedro Sin Entrega (7000001)" in notice.es and "1 de las 8" in notice.es
    # Positive control: without the roster nobody could know he exists.
    result, _ = ingested(path)
    assert not [n for n in result.notices if n.kind == "absent"]


# --- through make grade's door ----------------------------------------------------------------


def test_make_grade_reports_the_download_and_survives_a_400_byte_name(tmp_path, autograder_zip,
                                                                       capsys):
    from kit_autograder import batch

    long_name = "ñ" * 200 + ".ipynb"
    assert len(long_name.encode()) > 255  # positive control: no file can be named so
    source, newer, older = moodle_double_upload(tmp_path)
    download = tmp_path / "con_nombre_largo.zip"
    download.write_bytes(fx.zip_bytes({f"entregas/{long_name}": GOOD, "entregas/b.ipynb": BLANK}))
    for submissions, out in ((source, tmp_path / "moodle"), (download, tmp_path / "largo")):
        status = batch.main(["--submissions", str(submissions), "--out", str(out),
                             "--autograder", str(autograder_zip), "--jobs", "2"])
        assert status == 0
        with open(out / "final_grades.csv", encoding="utf-8") as f:
            rows = {row["file"]: row for row in csv.DictReader(f)}
        assert (out / "ingest.csv").is_file() and (out / "report.html").is_file()
        if out.name == "moodle":
            assert float(rows[newer]["total_points_earned"]) == 20
            report = (out / "report.html").read_text("utf-8")
            assert 'id="descarga"' in report and "zz_primera_version.ipynb" in report
        else:
            assert float(rows[long_name]["total_points_earned"]) == 20
    printed = capsys.readouterr().out
    assert "look at these before publishing grades" in printed and "candidates" in printed


# --- issue 47.3 and 51.7: ROSTER= read by its own columns, and refused in one line -------------


def test_a_canvas_gradebook_with_a_section_is_read_as_canvas_never_as_moodle(tmp_path, capsys):
    from kit_autograder.lms.roster import participant_column
    from kit_autograder.lms.worksheet import Worksheet

    gradebook = tmp_path / "gradebook.csv"
    gradebook.write_bytes(fx.canvas_gradebook())  # «Section» is «IA 2026» on every student
    sheet = Worksheet(gradebook)
    # Positive control: by the shape of its cells, «IA 2026» is a column of «word number», as
    # Moodle's «Participante 48211»: the guess alone takes the section for identifiers.
    assert participant_column(sheet) == sheet.header.index("Section")
    roster = lms.read_roster(gradebook)
    assert roster.kind == "canvas" and roster.people["101"].name == "García López, María José"
    result, _ = ingested(write_zip(tmp_path, {"pérezjosé_102_9002_notebook_student.ipynb": GOOD}),
                         roster=roster)
    (notice,) = [n for n in result.notices if n.kind == "absent"]
    assert "Sin Entrega, Pedro (107)" in notice.en and "(2026)" not in notice.en
    assert lms.roster_summary(roster) == ("roster: gradebook.csv read as Canvas's gradebook: "
                                          "8 people, no groups")


def test_a_worksheet_from_a_moodle_in_another_language_is_still_read_by_its_cells(tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text("Nom,Participant\nAna Roja,Participant 11\nBeto Rojo,Participant 12\n")
    roster = lms.read_roster(path)
    assert roster.kind == "moodle" and sorted(roster.people) == ["11", "12"]


def refusal(tmp_path, capsys, *args):
    """make grade's status and stderr lines; the autograder is never opened before these."""
    from kit_autograder import batch

    zip_path = tmp_path / "any.zip"
    zip_path.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    out = tmp_path / "out"
    status = batch.main(["--autograder", str(zip_path), "--out", str(out), *args])
    return status, capsys.readouterr().err.splitlines(), out


def test_a_roster_cell_over_128_kb_is_one_error_line_and_nothing_written(tmp_path, capsys):
    download = write_zip(tmp_path, {"pérezjosé_102_9002_notebook_student.ipynb": GOOD})
    big = tmp_path / "gradebook.csv"
    big.write_text('Student,ID\n"' + "a" * 200_000 + '",102\n', "utf-8")
    with pytest.raises(Exception, match="field larger than field limit"):  # positive control
        list(csv.reader(io.StringIO(big.read_text("utf-8"))))
    status, lines, out = refusal(tmp_path, capsys, "--submissions", str(download),
                                 "--roster", str(big))
    assert status == 2 and lines == [
        f"error: ROSTER={big}: gradebook.csv, line 2: a cell of more than 128 KB, which no LMS "
        "export holds; export the file again from the LMS; give ROSTER= the class list your "
        "LMS exports (docs/lms.md)"]
    assert not out.exists()


@pytest.mark.parametrize("build", [fx.moodle_download, fx.canvas_download])
def test_every_entry_of_an_lms_download_has_its_row_in_ingest_csv(tmp_path, build):
    path = write_zip(tmp_path, {}, "descarga.zip")
    path.write_bytes(build())
    with _tree(path) as tree:
        members = [item.path for item in tree.items]
    # Positive control: the download holds online text, which no graded row stands for.
    assert any("onlinetext" in m or m.endswith("_text.html") for m in members)
    result, _ = ingested(path)
    assert accounted(result, members)


def test_pick_naming_no_file_of_the_download_is_one_error_line_and_nothing_written(
        tmp_path, capsys):
    """Issue 51.7: a PICK= with a typo was ignored without a word, and the file it meant to
    replace was graded."""
    who = tmp_path / "descarga" / "José Pérez_2000001_assignsubmission_file"
    who.mkdir(parents=True)
    (who / "a.ipynb").write_bytes(BLANK)
    (who / "b.ipynb").write_bytes(GOOD)
    typo = "José Pérez_2000001_assignsubmission_file/a.ipynbb"
    status, lines, out = refusal(tmp_path, capsys, "--submissions", str(tmp_path / "descarga"),
                                 "--pick", typo)
    assert status == 2 and lines == [
        f'error: PICK="{typo}": no such file in descarga; name the file as the «file» column of '
        "ingest.csv does, its path inside the download (the undecided ones: José "
        "Pérez_2000001_assignsubmission_file/b.ipynb)"]
    assert not out.exists()
    # Positive control: the right name chooses, and a pick with nothing to choose is a notice.
    result, _ = ingested(tmp_path / "descarga", picks=[typo[:-1]])
    assert [e.file for e in result.entries] == [typo[:-1]]
    assert not [n for n in result.notices if n.kind == "pick"]
    lone = tmp_path / "sola" / "Ana_11_assignsubmission_file"
    lone.mkdir(parents=True)
    (lone / "a.ipynb").write_bytes(GOOD)
    result, _ = ingested(tmp_path / "sola", picks=["Ana_11_assignsubmission_file/a.ipynb"])
    (notice,) = [n for n in result.notices if n.kind == "pick"]
    assert "chose nothing: graded (the student's only file)" in notice.en


# --- issue 47.9: the smaller things an instructor sees ----------------------------------------


def test_make_grade_says_to_install_bubblewrap_where_it_is_not_the_sandbox(monkeypatch):
    from kit_autograder import batch

    plain = {"mode": "none", "namespaces": "userns", "landlock_abi": 7}
    monkeypatch.setattr(batch.shutil, "which", lambda name: None)
    assert batch.sandbox_lines(plain) == [
        "sandbox: none, namespaces userns, Landlock ABI 7", batch.BWRAP_HINT]
    assert "sudo apt install bubblewrap" in batch.BWRAP_HINT
    monkeypatch.setattr(batch.shutil, "which", lambda name: "/usr/bin/bwrap")
    assert batch.sandbox_lines(plain)[1] == batch.BWRAP_UNUSABLE
    # Positive control: under bubblewrap there is nothing to do.
    assert batch.sandbox_lines({**plain, "mode": "bubblewrap"}) == [
        "sandbox: bubblewrap, namespaces userns, Landlock ABI 7"]


def test_the_summary_cuts_reasons_between_words_and_rounds_points():
    from kit_autograder import batch

    reason = ("«notebook_student.ipynb» no es un cuaderno válido: su contenido no es JSON, "
              "probablemente porque se cortó al guardarlo o al subirlo")
    # Positive control: cut by characters, the reason ends mid-word («probablem»).
    assert reason[:85].endswith(" probablem")
    cut = batch._cut(reason, 85)
    assert cut == "«notebook_student.ipynb» no es un cuaderno válido: su contenido no es JSON…"
    assert batch._cut("corta", 90) == "corta"
    assert [batch._points(v) for v in (15.833333, 20.0, 6.5, 0)] == ["15.83", "20", "6.5", "0"]


def test_one_person_without_a_row_is_said_in_the_singular(tmp_path):
    path = write_zip(tmp_path, {"José Pérez_2000001_assignsubmission_file/a.ipynb": GOOD})
    worksheet = tmp_path / "hoja.csv"
    worksheet.write_text('"Identificador";"Nombre completo"\n"Participante2000001";"José Pérez"\n'
                         '"Participante7000001";"Pedro Sin Entrega"\n', "utf-8")
    result, _ = ingested(path, roster=lms.read_roster(worksheet))
    (notice,) = [n for n in result.notices if n.kind == "absent"]
    assert "1 de las 2 personas de hoja.csv no tiene nada en la descarga" in notice.es
    assert "1 of the 2 people of hoja.csv has nothing" in notice.en


def test_a_renamed_export_in_a_plain_folder_is_an_export_not_a_canvas_name(tmp_path):
    folder = tmp_path / "entregas"
    folder.mkdir()
    names = [f"notebook_student_{STAMP.format(1)} (1).zip",
             f"notebook_student_{STAMP.format(2)}-1.zip", "ana.ipynb"]
    for name in names[:2]:
        (folder / name).write_bytes(fx.demo("exportada.zip"))
    (folder / names[2]).write_bytes(BLANK)
    # Positive control: the renamed name reads as Canvas's, user 2026, file 11.
    split = canvas.SPLIT.search(names[0])
    assert (split["user"], split["file"]) == ("2026", "11")
    result, _ = ingested(folder)
    assert result.layout == "folder" and sorted(e.file for e in result.entries) == sorted(names)
    assert not [n for n in result.notices if n.kind == "layout"]
    from kit_autograder.lms.entries import export_time

    assert export_time(names[0]).minute == 1 and export_time(names[1]).minute == 2
