"""What an LMS gives becomes one entry per student: the newest notebook or export, who it is, a
late marker and notes; a plain folder stays exactly what make grade graded before."""

import io
import json
import zipfile
from pathlib import Path

import pytest

import lms_fixtures as fx
from kit_autograder import lms
from kit_autograder.lms.tree import Tree
from kit_autograder.submission import find_submissions

NOTEBOOK = fx.demo("sin_hacer.ipynb")


def entries_of(source):
    with lms.ingest(source) as ingested:
        return ingested.layout, list(ingested.entries), list(ingested.absent), {
            e.file: (e.path.read_bytes() if e.path else None) for e in ingested.entries}


def entries_of_zip(tmp_path, data, name="descarga.zip"):
    path = tmp_path / name
    path.write_bytes(data)
    return entries_of(path)


def by_id(entries):
    return {e.student_id: e for e in entries}


def test_moodle_zip_in_folders_gives_each_participant_their_newest_file(tmp_path):
    layout, entries, absent, data = entries_of_zip(tmp_path, fx.moodle_download())
    assert layout == "moodle"
    people = by_id(entries)
    assert sorted(people) == ["1234567", "2000001", "3000001", "3000002", "5000001", "6000001",
                              "8000001"]
    assert people["1234567"].student_name == "María José García López"
    assert people["1234567"].file == ("María José García López_1234567_assignsubmission_file/"
                                      "notebook_student.ipynb")
    # Two uploads: the export of the 19th is newer than the notebook of the 18th.
    jose = people["2000001"]
    assert jose.file.endswith("entrega/exportada.zip")
    assert jose.not_graded == ["José Pérez_2000001_assignsubmission_file/notebook_student.ipynb"]
    assert any("se ha evaluado «exportada.zip», el más reciente (Moodle pone los archivos de "
               "cada estudiante del más antiguo al más reciente)" in note for note in jose.notes)
    assert zipfile.is_zipfile(io.BytesIO(data[jose.file]))
    # Two students with one name stay two students.
    assert people["3000001"].student_name == people["3000002"].student_name == "Ana Martín"
    assert people["3000001"].name_hint != people["3000002"].name_hint
    # Another script, and an online text beside the file: graded, with a note.
    assert people["5000001"].student_name == "王小明"
    assert any("texto en línea" in note for note in people["5000001"].notes)
    # Online text only: nobody to grade, said why.
    assert [(a.student_id, a.student_name) for a in absent] == [("4000001", "Lucía Fernández")]
    assert "texto en línea" in absent[0].reason
    # The bytes graded are the ones the student uploaded.
    assert json.loads(data[people["3000001"].file])["cells"]


def test_moodle_older_layouts_folders_with_trailing_underscore_and_flat_files(tmp_path):
    folders = tmp_path / "carpetas"
    (folders / "Íñigo Ruiz_42_assignsubmission_file_").mkdir(parents=True)
    (folders / "Íñigo Ruiz_42_assignsubmission_file_" / "tarea.ipynb").write_bytes(NOTEBOOK)
    layout, entries, _, _ = entries_of(folders)
    assert layout == "moodle"
    assert [(e.student_name, e.student_id, e.origin) for e in entries] == [
        ("Íñigo Ruiz", "42", "Íñigo Ruiz_42_assignsubmission_file_")]
    flat = tmp_path / "plana"
    flat.mkdir()
    (flat / "Íñigo Ruiz_42_assignsubmission_file_tarea.ipynb").write_bytes(NOTEBOOK)
    (flat / "Íñigo Ruiz_42_assignsubmission_onlinetext_onlinetext.html").write_text("<p>x</p>")
    (flat / "Participante_43_assignsubmission_file_mi cuaderno.ipynb").write_bytes(NOTEBOOK)
    layout, entries, _, _ = entries_of(flat)
    assert layout == "moodle"
    people = by_id(entries)
    assert people["42"].origin == "Íñigo Ruiz_42_assignsubmission_file_"
    assert any("texto en línea" in note for note in people["42"].notes)
    # Blind marking names nobody: the id is all the worksheet needs.
    assert people["43"].student_name is None


def test_a_moodle_zip_whose_names_are_utf8_without_the_flag_keeps_its_accents(tmp_path):
    name = "María Núñez_7_assignsubmission_file/notebook_student.ipynb"
    path = tmp_path / "descarga.zip"
    path.write_bytes(fx.zip_bytes({name: NOTEBOOK}, utf8_flag=False))
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() != [name], "the fixture must reproduce the missing flag"
    _, entries, _, _ = entries_of(path)
    assert [(e.student_name, e.file) for e in entries] == [("María Núñez", name)]


def test_zip_members_outside_the_download_are_never_read(tmp_path):
    path = tmp_path / "descarga.zip"
    path.write_bytes(fx.zip_bytes({
        "../../fuera_7_assignsubmission_file/x.ipynb": NOTEBOOK,
        "/abs_8_assignsubmission_file/x.ipynb": NOTEBOOK,
        "Ana_9_assignsubmission_file/notebook.ipynb": NOTEBOOK}))
    tree = Tree.of(path)
    try:
        assert [item.path for item in tree.items] == ["Ana_9_assignsubmission_file/notebook.ipynb"]
    finally:
        tree.close()


def test_a_file_over_a_submissions_size_is_refused_with_a_reason_not_extracted(tmp_path,
                                                                             monkeypatch):
    from kit_autograder.lms import tree as tree_module

    monkeypatch.setitem(tree_module.MAX_GRADED_BYTES, ".ipynb", 1000)
    _, entries, _, _ = entries_of_zip(
        tmp_path, fx.zip_bytes({"Ana_9_assignsubmission_file/nb.ipynb": NOTEBOOK}))
    (entry,) = entries
    assert entry.path is None and "demasiado" in entry.refusal


def test_canvas_flat_download_reads_names_ids_late_and_the_newest_upload(tmp_path):
    layout, entries, absent, _ = entries_of_zip(tmp_path, fx.canvas_download(), "submissions.zip")
    assert layout == "canvas"
    people = by_id(entries)
    assert sorted(people) == ["101", "102", "103", "104", "106", "999"]
    assert people["101"].student_name == "garcíalópezmaríajosé"
    assert people["102"].late and not people["101"].late
    # File id 9010 is the later upload, whatever the names say.
    assert people["103"].file == "martínana_103_9010_notebook_student-1.ipynb"
    assert any("«notebook_student.ipynb»" in note for note in people["103"].notes), \
        "the note names files as the student named them"
    assert people["103"].student_name == people["104"].student_name
    assert people["106"].file.endswith(".zip")
    assert [(a.student_id, "texto en línea" in a.reason) for a in absent] == [("105", True)]


def test_canvas_anonymous_grading_files_are_graded_without_a_name(tmp_path):
    folder = tmp_path / "anon"
    folder.mkdir()
    (folder / "anon_Xy12_5001_notebook_student.ipynb").write_bytes(NOTEBOOK)
    (folder / "LATE_anon_Zz99_5002_notebook_student.ipynb").write_bytes(NOTEBOOK)
    layout, entries, _, _ = entries_of(folder)
    assert layout == "canvas"
    assert sorted((e.student_name, e.student_id, e.late) for e in entries) == [
        (None, None, False), (None, None, True)]


def test_gradescope_export_reads_submitters_from_its_yaml_ruby_tags_and_all(tmp_path):
    metadata = """\
submission_111:
  :submitters:
  - :name: Carmen Ruiz
    :sid: A-0001
    :email: cruiz@example.org
  :created_at: 2026-11-20 10:00:00.000000000 +01:00
  :score: !ruby/object:BigDecimal 18:0.2e2
submission_222:
  :submitters:
  - :name: Óscar Gil
    :sid: A-0002
    :email: ogil@example.org
"""
    path = tmp_path / "export.zip"
    path.write_bytes(fx.zip_bytes({
        "assignment_9_export/submission_metadata.yml": metadata.encode(),
        "assignment_9_export/submission_111/notebook_student.ipynb": NOTEBOOK,
        "assignment_9_export/submission_222/exportada.zip": fx.demo("exportada.zip")}))
    layout, entries, _, _ = entries_of(path)
    assert layout == "gradescope"
    assert [(e.student_name, e.student_id, e.file) for e in entries] == [
        ("Carmen Ruiz", "A-0001", "submission_111/notebook_student.ipynb"),
        ("Óscar Gil", "A-0002", "submission_222/exportada.zip")]


def test_a_plain_folder_grades_each_file_in_it_and_accounts_for_the_rest_without_walking(
        tmp_path, monkeypatch):
    def never(*args):
        raise AssertionError("a plain folder's subfolders are not read")

    monkeypatch.setattr(lms.Tree, "of", never)
    folder = tmp_path / "entregas"
    folder.mkdir()
    for name in ("b.ipynb", "a.zip", "notas.csv", ".oculto.ipynb", "x_1_2_y.txt"):
        (folder / name).write_bytes(NOTEBOOK)
    (folder / "sub").mkdir()
    (folder / "sub" / "dentro.ipynb").write_bytes(NOTEBOOK)
    with lms.ingest(folder) as ingested:
        assert ingested.layout == "folder" and not ingested.absent
        assert [(e.file, e.name_hint, e.student_name) for e in ingested.entries] == [
            (p.name, p.name, None) for p in find_submissions(folder)]
        # What is graded is a copy read once: a file swapped afterwards changes nothing.
        assert all(e.path.read_bytes() == NOTEBOOK and folder not in e.path.parents
                   for e in ingested.entries)
        rows = {row.file: row.action for row in ingested.files}
    assert rows == {"a.zip": "graded", "b.ipynb": "graded", "notas.csv": "not a submission",
                    "x_1_2_y.txt": "not a submission", "sub/": "ignored"}


def test_a_single_export_zip_is_one_submission_and_a_zipped_folder_is_many(tmp_path):
    one = tmp_path / "mi_entrega.zip"
    one.write_bytes(fx.demo("exportada.zip"))
    layout, entries, _, _ = entries_of(one)
    assert layout == "export" and [e.path for e in entries] == [one]
    many = tmp_path / "carpeta.zip"
    many.write_bytes(fx.zip_bytes({"entregas/a.ipynb": NOTEBOOK, "entregas/b.ipynb": NOTEBOOK}))
    layout, entries, _, _ = entries_of(many)
    assert layout == "folder" and [e.file for e in entries] == ["a.ipynb", "b.ipynb"]


def test_a_missing_source_is_a_clear_error(tmp_path):
    with pytest.raises(lms.IngestError, match="no such folder or zip"):
        lms.ingest(tmp_path / "no_existe")


def test_the_extracted_files_are_removed_after_grading(tmp_path):
    path = tmp_path / "descarga.zip"
    path.write_bytes(fx.moodle_download())
    with lms.ingest(path) as ingested:
        extracted = [e.path for e in ingested.entries]
        assert all(p.is_file() for p in extracted)
    assert not any(p.exists() for p in extracted)


def test_the_manifest_names_every_row_and_every_absent_student(tmp_path):
    path = tmp_path / "descarga.zip"
    path.write_bytes(fx.moodle_download())
    with lms.ingest(path) as ingested:
        stems = {e.name_hint: Path(e.name_hint).stem for e in ingested.entries}
        ingested.write_manifest(tmp_path, stems)
    manifest = lms.read_manifest(tmp_path)
    assert manifest["layout"] == "moodle"
    assert {e["student_id"] for e in manifest["entries"]} >= {"1234567", "3000001", "3000002"}
    assert [a["student_id"] for a in manifest["absent"]] == ["4000001"]
    assert all("path" not in e for e in manifest["entries"])
