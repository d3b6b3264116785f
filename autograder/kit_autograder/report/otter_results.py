"""Otter's own formats, from a record: ``GradingResults``, ``results.json`` and the CSV.

Points, visibility and the question structure come from the zip's test files; each test
case's verdict comes from the record. Scores and the Gradescope dictionary are then computed
by Otter's ``TestFile``/``GradingResults`` and the CSV by ``merge_scores_to_df``: the same
code ``otter grade`` and Gradescope run, so every path shows the same numbers.

What the student reads in results.json is the kit's, not Otter's: Otter writes each
question's box as its own English summary («attention results: All test cases passed!», «…
- 2 result:» and the messages indented four spaces, which Markdown shows as code). So
``with_boxes`` puts in each box that question's section of the feedback (feedback.py), and in
the page's own output the feedback's header and the rest; ``make grade`` calls it on Otter's
dictionary, and on Otter's doors ``install_boxes`` has Otter's own ``to_gradescope_dict``
call it, with the sections the plugin left in the results. Every output the kit wrote is
escaped Markdown (markup.py) and marked ``md``; any other is marked ``text``, so Gradescope
never renders a text the kit did not escape as Markdown or HTML.
"""

from ..grading import hidden_test_name
from . import feedback

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


def gradescope(record, results, config, sections) -> dict:
    """The results.json Gradescope would show for ``record``, whose feedback is ``sections``."""
    if not record.graded:
        # The zip's run_otter.py writes this very dictionary when the kit refuses an upload,
        # in place of Otter's English "Autograder Error" (which never reaches a student).
        return refusal_results(feedback.join(sections))
    results.set_output(overview(sections))
    data = results.to_gradescope_dict(config)
    return with_output_format(with_boxes(data, boxes(sections)))


def boxes(sections) -> dict:
    """{question: the Markdown of its box}: its section's body."""
    return {s.question: s.body for s in sections if s.kind == feedback.QUESTION and s.question}


def overview(sections) -> str:
    """The page's own output: the feedback without its questions, which have their boxes."""
    return feedback.join([s for s in sections if s.kind != feedback.QUESTION])


NOT_GRADED_BOX = ("No se ha podido evaluar tu entrega, así que esta pregunta tiene 0 puntos: "
                  "el informe de arriba dice por qué.")


def with_boxes(data, question_boxes) -> dict:
    """Otter's results.json with each question's box replaced by the kit's: its section, or,
    for a submission that could not be graded, one sentence pointing to the reason."""
    for test in data.get("tests", []):
        if "score" not in test:
            continue  # not a question: Otter's own error entries keep their text (as text)
        test["output"] = question_boxes.get(test.get("name"), NOT_GRADED_BOX)
        test["output_format"] = "md"
    if data.get("output") is not None:  # the kit's overview (results.set_output)
        data.setdefault("output_format", "md")
    return data


def install_boxes():
    """Have Otter's ``GradingResults.to_gradescope_dict`` fill the boxes with the sections the
    kit's plugin left in the results (``set_plugin_data``): Otter writes results.json itself
    on Gradescope, ``otter grade`` and ``otter run``, with no event in between. The results
    keep only plain data, so Otter's own pickle of them still loads without the kit."""
    from otter.test_files import GradingResults

    from ..bundle import PLUGIN

    original = GradingResults.to_gradescope_dict
    if getattr(original, "kit_boxes", False):
        return

    def to_gradescope_dict(self, ag_config):
        data = original(self, ag_config)
        kit = self.get_plugin_data(PLUGIN, None)
        if isinstance(kit, dict) and isinstance(kit.get("boxes"), dict):
            with_boxes(data, kit["boxes"])
        return data

    to_gradescope_dict.kit_boxes = True
    GradingResults.to_gradescope_dict = to_gradescope_dict


def refusal_results(feedback_markdown) -> dict:
    """results.json for an upload that could not be graded: 0 points and the Spanish reason."""
    return {"score": 0, "output": feedback_markdown, "output_format": "md",
            "stdout_visibility": "hidden", "tests": []}


def with_output_format(data):
    """How Gradescope should show each output: the kit's Markdown (marked ``md`` where it was
    written) as Markdown, anything else as plain text, never read as markup."""
    for part in [data, *data.get("tests", [])]:
        if "output" in part and "output_format" not in part:
            part["output_format"] = "text"
    return data


def final_grades(all_results, flags=None):
    """``final_grades.csv`` as a DataFrame: Otter's format, plus a ``flags`` column."""
    from otter.grade.utils import merge_scores_to_df

    frame = merge_scores_to_df(all_results)
    if flags is not None:
        frame[FLAGS_COLUMN] = [" | ".join(flags.get(name, [])) for name in frame["file"]]
    return frame
