"""The feedback's Spanish agrees with what it names (issue 21): one function or several."""

from kit_autograder.report import feedback
from kit_autograder.verdicts.record import Record, Verdict


def record_with_failing(blamed):
    verdicts = [Verdict(name, "caso", "un caso", False, ["falla"]) for name in blamed]
    verdicts.append(Verdict("transformer_block", "caso", "un caso", False, ["falla"]))
    verdicts.append(Verdict("transformer_block", "test_forma", "forma", False, ["no encaja"],
                            public=True))
    scores = {name: [0.0, 1.0] for name in [*blamed, "transformer_block"]}
    return Record(file="a.ipynb", stem="a", verdicts=verdicts, scores=scores)


def test_one_blamed_function_is_named_in_the_singular():
    text = feedback.render(record_with_failing(["attention"]),
                           depends={"transformer_block": ("attention",)})
    assert "usa tu propia `attention`, que también falla: corrígela primero" in text


def test_several_blamed_functions_are_named_in_the_plural():
    text = feedback.render(record_with_failing(["attention", "multihead"]),
                           depends={"transformer_block": ("attention", "multihead")})
    assert "usa tus propias `attention` y `multihead`, que también fallan: corrígelas" in text
