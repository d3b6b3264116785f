"""Otter's own result objects for every submission, and the CSV and results.json made from them.

The kernel reports only each test case's verdict (passed, message). Points, visibility and the
question structure come from the zip's test files, loaded here in the grader, and the scores
are computed by Otter's ``TestFile``/``GradingResults``. ``final_grades.csv`` is Otter's
``merge_scores_to_df`` and ``results.json`` is ``GradingResults.to_gradescope_dict`` with the
zip's ``otter_config.json``: the same code `otter grade` and Gradescope run.
"""

from otter.grade.utils import merge_scores_to_df
from otter.test_files import GradingResults, TestCaseResult

FLAGS_COLUMN = "flags"


class GradingFailure(Exception):
    """Why a submission has no results. Its text is the CSV's ``grading_status``, in Spanish."""


def failed_results(file_name, reason) -> GradingResults:
    """Zero points, the way Otter records a submission it could not grade."""
    results = GradingResults.without_results(GradingFailure(reason))
    results.file = file_name
    return results


def build_results(bundle, file_name, execution) -> GradingResults:
    """The kernel's verdicts scored by the zip's test files, in the order the kernel ran them."""
    if execution.catastrophic is not None:
        return failed_results(file_name, "no se pudieron leer los resultados de las pruebas: "
                                         "la última celda de evaluación falló "
                                         f"({execution.catastrophic})")
    test_files = []
    for name, cases in execution.verdicts:
        test_file = bundle.load_test_file(name)
        if test_file is None:  # the kernel named a test the zip does not have: ignore it
            continue
        verdicts = {case: (bool(passed), str(message)) for case, passed, message in cases}
        test_file.test_case_results = [
            TestCaseResult(test_case=case, passed=verdicts[case.name][0],
                           message=verdicts[case.name][1])
            if case.name in verdicts else
            TestCaseResult(test_case=case, passed=False, message="❌ Test case not run")
            for case in test_file.test_cases
        ]
        test_files.append(test_file)
    results = GradingResults(test_files)
    results.file = file_name
    return results


def gradescope_results(results: GradingResults, config, otter_error=None) -> dict:
    """The results.json Gradescope would show for these results under the zip's config."""
    if otter_error is not None:
        # What otter.run.run_autograder.main writes when it refuses a submission.
        return {"score": 0, "stdout_visibility": "hidden",
                "tests": [{"name": "Autograder Error",
                           "output": "Otter encountered an error when grading this "
                                     f"submission:\n\n{otter_error}"}]}
    return results.to_gradescope_dict(config)


def final_grades(all_results, flags=None):
    """``final_grades.csv`` as a DataFrame: Otter's format, plus a ``flags`` column when a
    verifier ran (``flags`` maps a file name to its list of flags)."""
    df = merge_scores_to_df(all_results)
    if flags is not None:
        df[FLAGS_COLUMN] = [";".join(flags.get(name, [])) for name in df["file"]]
    return df
