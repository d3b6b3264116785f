"""Each function's diagnoses are said once in the feedback, after its cases' symptoms, with
the cases they explain when they do not explain them all; Gradescope's box of each case shows
the diagnoses of that case (each box is read alone). Hand-made records: no sandbox."""

from kit_autograder.report import feedback
from kit_autograder.report.otter_results import _message
from kit_autograder.verdicts.record import Diagnosis, Record, Verdict
from kit_autograder.verdicts.summary import annotate


def record(diagnoses):
    verdicts = [Verdict("attention", c, f"caso {c}", False, [f"los pesos: valores distintos ({c})"],
                        ["values"]) for c in "abc"]
    verdicts.append(Verdict("attention", "d", "caso d", True))
    annotate(verdicts, diagnoses)
    return Record(file="x.ipynb", stem="x", verdicts=verdicts,
                  scores={"attention": [1.25, 5.0]}, diagnoses={"attention": diagnoses})


def test_a_diagnosis_of_every_failing_case_is_said_once_without_a_scope():
    named = Diagnosis("misconception", "error típico reconocido, que explica los 3 casos que "
                      "fallan: Algo.\nPista: el paso 3.", ["a", "b", "c"], ["attention.x"])
    text = feedback.render(record([named]))
    assert text.count("**Diagnóstico**") == 1
    assert "- **Diagnóstico**: error típico reconocido, que explica" in text
    assert "\n  Pista: el paso 3." in text
    assert all(f"los pesos: valores distintos ({c})" in text for c in "abc")


def test_a_diagnosis_of_some_cases_names_them():
    some = Diagnosis("hint", "revisa la escala", ["a", "c"])
    other = Diagnosis("finding", "otra cosa", ["b"], ["attention.y"])
    text = feedback.render(record([some, other]))
    assert "- **Diagnóstico** en «caso a» y «caso c» (2 de los 3 casos que fallan): revisa" in text
    assert "- **Diagnóstico** en «caso b» (1 de los 3 casos que fallan): otra cosa" in text


def test_each_gradescope_box_shows_the_diagnoses_of_its_case():
    some = Diagnosis("hint", "revisa la escala", ["a", "c"])
    graded = record([some])
    boxes = {v.case: _message(v, graded.diagnoses["attention"]) for v in graded.verdicts}
    assert "revisa la escala" in boxes["a"] and "revisa la escala" in boxes["c"]
    assert "revisa la escala" not in boxes["b"]
    assert boxes["d"] == "✅ Superada"


def test_the_record_keeps_the_diagnoses_through_json():
    named = Diagnosis("misconception", "m", ["a"], ["attention.x"])
    again = Record.from_json(record([named]).to_json())
    assert again.diagnoses == {"attention": [named]}
    assert again.verdicts[0].misconceptions == ["attention.x"]
    assert "misconception" in again.verdicts[0].kinds and again.verdicts[1].kinds == ["values"]
