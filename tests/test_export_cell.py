"""«Entrega» leaves one zip to upload: the notebook's earlier exports are removed, nothing else
(issue 29: each Run All wrote a new zip, so a student's folder held several)."""

import zipfile

import notebook_grader
from kit_autograder.lms.entries import export_stem


def export_zip(path, own_name=None):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("notebook_student.ipynb", "{}")
        zf.writestr("__zip_filename__", own_name or path.name)


def test_earlier_exports_of_the_notebook_go_and_nothing_else(tmp_path):
    older = [tmp_path / f"notebook_student_2026_11_2{d}T10_00_00.zip" for d in (1, 2)]
    for path in older:
        export_zip(path)
    new = tmp_path / "notebook_student_2026_11_23T10_00_00.zip"
    export_zip(new)
    # Named like an export, but not one: the student zipped something and named it so.
    theirs = tmp_path / "notebook_student_2026_11_20T09_00_00.zip"
    export_zip(theirs, own_name="mis_datos.zip")
    other = tmp_path / "notebook_otro_2026_11_21T10_00_00.zip"
    export_zip(other)
    # Positive control: the student's zip has an export's name, so the name alone would match.
    assert export_stem(theirs.name) == "notebook_student"
    assert notebook_grader._remove_older_exports(new, "notebook_student") == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [new.name, theirs.name, other.name])


def notebook_with_answers(*answers):
    cells = []
    for number, answer in enumerate(answers, start=1):
        cells += [{"cell_type": "markdown", "source": f"<!-- BEGIN QUESTION -->\n**Pregunta {number}**"},
                  {"cell_type": "markdown", "source": answer},
                  {"cell_type": "markdown", "source": "<!-- END QUESTION -->"}]
    return {"cells": cells}


def test_entrega_names_the_empty_answers_and_the_challenges_empty_texts():
    from notebook_code import ANSWER_PLACEHOLDER

    nb = notebook_with_answers(ANSWER_PLACEHOLDER, "La atención mezcla valores.", "  ")
    said = notebook_grader._unfinished(nb, {"student_extension": {"assumption": None,
                                                                  "risk": "Un riesgo."}})
    assert said == ("las respuestas escritas 1 y 3 están vacías; 1 de los 2 textos del reto "
                    "(student_extension) están vacíos")
    # Positive control: with everything written, nothing is said.
    full = notebook_with_answers("Una.", "Dos.", "Tres.")
    assert notebook_grader._unfinished(full, {"student_extension": {"risk": "Un riesgo."}}) == ""
