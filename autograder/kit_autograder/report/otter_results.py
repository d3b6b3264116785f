"""Otter's own formats, from a record: ``GradingResults``, ``results.json`` and the CSV.

Points, visibility and the question structure come from the zip's test files; each test
case's verdict comes from the record. Scores and the Gradescope dictionary are then computed
by Otter's ``TestFile``/``GradingResults`` and the CSV by ``merge_scores_to_df``: the same
code ``otter grade`` and Gradescope run, so every path shows the same numbers.
"""

from ..grading import hidden_test_name

FLAGS_COLUMN = "flags"


class GradingFailure(Exception):
    """Why a submission has no results; its text is the CSV's ``grading_status``."""


def grading_results(record, tests):
    """Otter's ``GradingResults`` for ``record``; ``tests``: {question: unrun TestFile}."""
    from otter.test_files import GradingResults, TestCaseResult

    if not record.graded:
        results = GradingResults.without_results(GradingFailure(record.reason))
        results.file = record.file
        return results
    by_test = {}
    for verdict in record.verdicts:
        name = verdict.case if verdict.public else hidden_test_name(verdict.question, verdict.case)
        by_test[(verdict.question, name)] = verdict
    test_files = []
    for question, test_file in tests.items():
        if test_file is None:
            continue
        results = []
        for case in test_file.test_cases:
            verdict = by_test.get((question, case.body.test_func.__name__))
            if verdict is None:
                continue  # a public test that did not run (the job had already failed)
            results.append(TestCaseResult(test_case=case, passed=verdict.passed,
                                          message=_message(verdict, record.diagnoses.get(
                                              question, []))))
        test_file.test_case_results = results
        test_files.append(test_file)
    results = GradingResults(test_files)
    results.file = record.file
    return results


def _message(verdict, diagnoses=()):
    """A test case's box: what failed on it, and what explains it (each box is read alone)."""
    if verdict.passed:
        return "✅ Superada"
    lines = [f"❌ {verdict.description}:"] if not verdict.public else ["❌"]
    lines += [f"- {message}" for message in verdict.messages]
    lines += [f"- {d.message}" for d in diagnoses if verdict.case in d.cases]
    return "\n".join(lines)


def gradescope(record, results, config, feedback_markdown=None) -> dict:
    """The results.json Gradescope would show for ``record``."""
    if not record.graded:
        # The zip's run_otter.py writes this very dictionary when the kit refuses an upload,
        # in place of Otter's English "Autograder Error" (which never reaches a student).
        return refusal_results(feedback_markdown or record.reason)
    if feedback_markdown is not None:
        results.set_output(feedback_markdown)
    data = results.to_gradescope_dict(config)
    return with_output_format(data)


def refusal_results(feedback_markdown) -> dict:
    """results.json for an upload that could not be graded: 0 points and the Spanish reason."""
    return {"score": 0, "output": feedback_markdown, "output_format": "md",
            "stdout_visibility": "hidden", "tests": []}


def with_output_format(data):
    """Gradescope renders ``output`` as plain text unless told: the kit writes Markdown."""
    if "output" in data:
        data["output_format"] = "md"
    for test in data.get("tests", []):
        if "output" in test:
            test["output_format"] = "md"
    return data


def final_grades(all_results, flags=None):
    """``final_grades.csv`` as a DataFrame: Otter's format, plus a ``flags`` column."""
    from otter.grade.utils import merge_scores_to_df

    frame = merge_scores_to_df(all_results)
    if flags is not None:
        frame[FLAGS_COLUMN] = [" | ".join(flags.get(name, [])) for name in frame["file"]]
    return frame
