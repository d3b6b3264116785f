"""The step between execution and writing where an out-of-kernel verifier plugs in (issue 6):
it may change scores and add flags; flags become a column after Otter's; a verifier that
crashes flags the submission and never stops the batch."""

import nbformat
import pytest

from autograder.grade.bundle import open_bundle
from autograder.grade.engine import Execution
from autograder.grade.results import FLAGS_COLUMN, build_results, failed_results, final_grades
from autograder.grade.verify import VERIFIER_FAILED_FLAG, verify


@pytest.fixture(scope="module")
def bundle(autograder_zip):
    bundle, cleanup = open_bundle(autograder_zip)
    yield bundle
    cleanup()


def all_passed(bundle, file_name):
    """Otter results as if the kernel had reported every case passed."""
    verdicts = [[name, [[case.name, True, "✅ Test case passed"]
                        for case in bundle.load_test_file(name).test_cases]]
                for name in bundle.question_names()]
    return build_results(bundle, file_name, Execution(verdicts=verdicts))


def test_kernel_verdicts_are_scored_by_the_zips_own_test_files(bundle):
    results = all_passed(bundle, "a.ipynb")
    assert results.total == results.possible == sum(bundle.points_per_question().values())


def test_a_verifier_can_lower_a_score_and_flag_it(bundle):
    def verifier(notebook, results, **_):
        results.update_score("attention", 0)
        return results, ["attention: la verificación fuera del kernel no coincide"]

    checked = verify(verifier, nbformat.v4.new_notebook(), all_passed(bundle, "a.ipynb"))
    assert checked.results.get_score("attention") == 0
    assert checked.flags == ["attention: la verificación fuera del kernel no coincide"]


def test_a_crashing_verifier_flags_the_submission_and_keeps_the_kernel_results(bundle):
    def verifier(notebook, results, **_):
        raise RuntimeError("boom")

    results = all_passed(bundle, "a.ipynb")
    checked = verify(verifier, nbformat.v4.new_notebook(), results)
    assert checked.results is results
    assert checked.flags[0].startswith(VERIFIER_FAILED_FLAG)


def test_no_verifier_keeps_otters_exact_columns_and_a_verifier_appends_flags(bundle):
    results = [all_passed(bundle, "a.ipynb"), failed_results("b.ipynb", "el archivo está vacío")]
    plain = final_grades(results)
    assert FLAGS_COLUMN not in plain.columns
    flagged = final_grades(results, {"a.ipynb": ["exec en attention"], "b.ipynb": []})
    assert list(flagged.columns) == list(plain.columns) + [FLAGS_COLUMN]
    assert dict(zip(flagged["file"], flagged[FLAGS_COLUMN])) == {
        "points-per-question": "", "a.ipynb": "exec en attention", "b.ipynb": ""}
