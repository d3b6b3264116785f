"""A public test's closing guess («…: ¿usas la base 10000?») is shown only while the diagnosis
names no cause (issue 31.3): once a catalogued mistake or a finding is named, the guess would
send the student elsewhere, and only the fact the test measured stays."""

from kit_autograder.grading import _without_guesses
from kit_autograder.verdicts.record import Diagnosis, Verdict
from grading_harness import Notebooks, grade_here, read_records, write_folder

GUESSING = ("Con d_model = 4, ω_i = 1 / 10000^(2i/d_model) da ω = (1; 0,01), y tu omega es "
            "[1.0, 100.0]: ¿usas la base 10000?")


def public(message):
    return Verdict("positional_encoding", "test_x", "x", False, [message], ["public"], public=True)


def test_the_guess_goes_when_a_cause_is_named_and_stays_when_only_hints_are_said():
    named = public(GUESSING)
    _without_guesses([named], {"positional_encoding": [
        Diagnosis("misconception", "…", ["d_par"], ["positional_encoding.frequency_not_inverted"])]})
    assert named.messages == ["Con d_model = 4, ω_i = 1 / 10000^(2i/d_model) da ω = (1; 0,01), "
                              "y tu omega es [1.0, 100.0]."]
    # The control: with only a hint (or nothing) the test's own question is all there is.
    hinted = public(GUESSING)
    _without_guesses([hinted], {"positional_encoding": [Diagnosis("hint", "revisa…", ["d_par"])]})
    assert hinted.messages == [GUESSING]
    # A message that is only a question, or has none, is kept whole.
    only = public("¿sumas la entrada x a la salida de cada subcapa?")
    plain = public("Cada fila de pesos debe sumar 1.")
    _without_guesses([only, plain], {"positional_encoding": [Diagnosis("finding", "…", [], ["x"])]})
    assert only.messages == ["¿sumas la entrada x a la salida de cada subcapa?"]
    assert plain.messages == ["Cada fila de pesos debe sumar 1."]


def test_make_grade_cuts_the_base_question_when_the_frequency_is_named(built_dist,
                                                                      autograder_zip, tmp_path):
    notebooks = Notebooks(built_dist)
    not_inverted = (
        "def positional_encoding(n_positions, d_model):\n"
        "    omega = 10000 ** (np.arange(0, d_model, 2) / d_model)\n"
        "    pos = np.arange(n_positions)[:, None]\n"
        "    pe = np.zeros((n_positions, d_model))\n"
        "    pe[:, 0::2] = np.sin(pos * omega)\n"
        "    pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])\n"
        "    return pe, omega\n")
    files = {"frecuencia.ipynb": notebooks.with_function("correct", "positional_encoding",
                                                          not_inverted)}
    out = tmp_path / "out"
    grade_here(write_folder(tmp_path / "in", files), out, autograder_zip)
    record = read_records(out)["frecuencia.ipynb"]
    assert any(d.kind == "misconception" for d in record.diagnoses["positional_encoding"])
    failed_public = [v for v in record.verdicts if v.public and not v.passed
                     and v.question == "positional_encoding"]
    assert failed_public  # the public omega test fails for this mistake
    text = (out / "feedback" / "frecuencia.md").read_text("utf-8")
    assert "tu omega es" in text and "¿usas la base 10000?" not in text

