"""The class report (issue 14): the page `make grade` writes, read in Chromium as an instructor.

One batch with known content (the demo plus a handful of mutants, tests/report_batch.py) is
graded once per session by `make grade`'s command line. Each test reads the numbers the page
shows, as text, and compares them with what the batch was built to contain and with the other
two outputs of the same batch: `final_grades.csv` and the students' feedback. The last tests
need no sandbox: they feed hand-made records to the report.
"""

import csv
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from attention import lesson as attention_lesson
from explorer_helpers import CHROMIUM, chromium
from kit_autograder.report import class_report
from kit_autograder.verdicts.record import Flag, Record, Verdict
from report_batch import EXPECTED, grade, write_batch

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts" / "report"
SECTIONS = ("resumen", "preguntas", "errores", "revision", "reto")
CATALOG = attention_lesson.misconception_catalog()
QUESTIONS = list(attention_lesson.FUNCTIONS) + list(attention_lesson.DATA_QUESTIONS)


# --- the batch, its CSV and its feedback --------------------------------------------------------


@pytest.fixture(scope="session")
def graded_batch(autograder_zip, tmp_path_factory):
    """The known batch through `make grade`'s command line: the OUT folder."""
    folder = write_batch(tmp_path_factory.mktemp("report-batch"))
    out = tmp_path_factory.mktemp("report-out")
    completed = grade(folder, out, autograder_zip)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def csv_table(graded_batch):
    """``{file: row}`` of final_grades.csv, with its points-per-question row."""
    with open(graded_batch / "final_grades.csv", newline="", encoding="utf-8") as f:
        return {row["file"]: row for row in csv.DictReader(f)}


@pytest.fixture(scope="session")
def csv_rows(csv_table):
    return {file: row for file, row in csv_table.items() if file != "points-per-question"}


@pytest.fixture(scope="session")
def completed_rows(csv_rows):
    return {file: row for file, row in csv_rows.items() if row["grading_status"] == "Completed"}


@pytest.fixture(scope="session")
def feedback(graded_batch, csv_rows):
    """What each student's feedback says failed: ``{file: FeedbackFailures}``."""
    stems = {path.stem: path for path in (graded_batch / "feedback").glob("*.md")}
    return {file: failures_in_feedback(stems[Path(file).stem].read_text("utf-8"))
            for file in csv_rows}


class FeedbackFailures:
    """The failed hidden cases a feedback lists, by question, with what it said of each."""

    def __init__(self):
        self.failed = []  # (question, description)
        self.named = []  # (question, description, mistake name)
        self.unanswered = []  # (question, description)


def failures_in_feedback(text):
    found = FeedbackFailures()
    question, cases = None, []
    for line in text.splitlines():
        if line.startswith("## "):
            question = None
        heading = re.match(r"### `(\w+)`:", line)
        if heading:
            question = heading.group(1)
        # One case ("- «x»:"), or several that failed the same way ("- 3 casos … («x», «y»):").
        failed = re.match(r"- (?:\d+ casos con el mismo fallo \()?(«.*»)\)?:$", line)
        if question and failed:
            cases = re.findall(r"«([^»]*)»", failed.group(1))
            found.failed += [(question, case) for case in cases]
        elif question and line.startswith("- **Diagnóstico**"):
            # "- **Diagnóstico**: …" for every failing case of the question, or
            # "- **Diagnóstico** en «x» y «y» (2 de los 3 casos que fallan): …" for those.
            scope, text = re.match(r"- \*\*Diagnóstico\*\*(.*?): (.*)$", line).groups()
            explained = re.findall(r"«([^»]*)»", scope) or [
                case for q, case in found.failed if q == question]
            if "error típico" in text or "errores típicos reconocidos" in text:
                for entry in CATALOG.values():
                    lowered = entry.name[:1].lower() + entry.name[1:]
                    if f": {entry.name}." in text or f", y además {lowered}." in text \
                            or f": {entry.name}, y además" in text:
                        found.named += [(question, case, entry.name) for case in explained]
        elif question and line.startswith("  - no se pudo comprobar"):
            found.unanswered += [(question, case) for case in cases]
    return found


# --- the page in Chromium -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    # Only the tests that read the page need it: the others still run without Chromium.
    if not CHROMIUM.exists():
        pytest.skip("Chromium no encontrado: instala el paquete Debian chromium; .ci/run lo "
                    "instala")
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def page(browser, graded_batch):
    """The report of the batch, loaded once: every test only reads it."""
    tab = browser.new_page(viewport={"width": 1100, "height": 900})
    tab.goto((graded_batch / "report.html").as_uri())
    yield tab
    tab.close()


def number(text):
    """A number as the page writes it: "11,67" is 11.67, "—" is None."""
    text = text.strip()
    return None if text == "—" else float(text.replace("\u00a0", "").replace(",", "."))


def stat(page, key):
    return number(page.text_content(f'[data-stat="{key}"]'))


def shown_counts(page, key):
    """A histogram's table of counts: ``{points: students}``."""
    cells = page.eval_on_selector_all(f'figure[data-key="{key}"] td[data-points]',
                                      "cells => cells.map(c => [c.dataset.points, c.textContent])")
    assert cells, f"no histogram {key} on the page"
    return {float(points): int(count) for points, count in cells}


def csv_counts(rows, column):
    counts = {}
    for row in rows.values():
        value = round(float(row[column]), 2)
        counts[value] = counts.get(value, 0) + 1
    return counts


def case_rows(page):
    """Every hidden case and criterion row: ``{(question, description): (passed, failed)}``."""
    rows = page.eval_on_selector_all(
        "tr[data-case]", """rows => rows.map(r => [r.dataset.question,
            r.cells[0].textContent, r.querySelector('.passed').textContent,
            r.querySelector('.failed').textContent])""")
    return {(q, description.strip("«»")): (int(passed), int(failed))
            for q, description, passed, failed in rows}


def mistakes_shown(page):
    """``[(id, name, count, [files])]`` in the page's order."""
    return page.eval_on_selector_all(
        "li[data-mistake]", """items => items.map(li => [li.dataset.mistake,
            li.querySelector('.name').textContent, Number(li.querySelector('.count').textContent),
            [...li.querySelectorAll('ul.students a')].map(a => a.textContent)])""")


# --- self-contained -----------------------------------------------------------------------------


def test_page_loads_no_network_resource(browser, graded_batch):
    url = (graded_batch / "report.html").as_uri()
    tab = browser.new_page()
    requests = []

    def refuse_network(route):
        requests.append(route.request.url)
        if route.request.url == url:
            route.continue_()
        else:
            route.abort()

    tab.route("**/*", refuse_network)
    tab.goto(url)
    resources = tab.evaluate("performance.getEntriesByType('resource').length")
    tab.close()
    assert requests == [url]
    assert resources == 0


def test_page_has_no_script_and_no_external_reference(graded_batch):
    text = (graded_batch / "report.html").read_text("utf-8")
    assert "<script" not in text
    # Namespaces in the SVGs are names, not requests; anything else with a scheme would be one.
    schemes = re.findall(r'(?:src|href)="([a-z]+:)', text)
    assert schemes == []


# --- summary ------------------------------------------------------------------------------------


def test_summary_counts_match_the_batch_and_the_csv(page, csv_rows, completed_rows):
    assert stat(page, "submissions") == EXPECTED["submissions"] == len(csv_rows)
    ungradable = {file for file in csv_rows if file not in completed_rows}
    assert ungradable == EXPECTED["ungradable"]
    assert stat(page, "graded") == len(completed_rows)
    assert stat(page, "ungradable") == len(ungradable)
    flagged = {file for file, row in csv_rows.items() if row["flags"]}
    assert flagged >= EXPECTED["flagged_at_least"]
    assert stat(page, "flagged") == len(flagged)


def test_mean_and_median_are_those_of_the_graded_rows_of_the_csv(page, completed_rows):
    totals = [float(row["total_points_earned"]) for row in completed_rows.values()]
    # Shown with two decimals at most: off by half a hundredth.
    assert stat(page, "mean") == pytest.approx(statistics.fmean(totals), abs=0.005)
    assert stat(page, "median") == pytest.approx(statistics.median(totals), abs=0.005)


def test_histogram_of_totals_counts_the_csv_totals(page, completed_rows):
    assert shown_counts(page, "total") == csv_counts(completed_rows, "total_points_earned")


# --- per question -------------------------------------------------------------------------------


def test_each_question_histogram_counts_its_csv_column(page, completed_rows):
    for question in QUESTIONS:
        assert shown_counts(page, f"q-{question}") == csv_counts(completed_rows, question), \
            question


def test_overview_mean_full_and_zero_marks_match_the_csv(page, csv_table, completed_rows):
    for question in QUESTIONS:
        possible = float(csv_table["points-per-question"][question])
        column = [float(row[question]) for row in completed_rows.values()]
        row = f'table.overview tr[data-question="{question}"]'
        mean, shown_possible = page.text_content(f"{row} .mean").split("/")
        assert number(mean) == pytest.approx(statistics.fmean(column), abs=0.005)
        assert number(shown_possible) == possible
        assert int(page.text_content(f"{row} .full")) == sum(p == possible for p in column)
        assert int(page.text_content(f"{row} .zero")) == sum(p == 0 for p in column)


def test_each_hidden_case_and_criterion_pass_count_matches_the_feedback(page, feedback,
                                                                        completed_rows):
    shown = case_rows(page)
    failed = {}
    for file in completed_rows:
        for key in feedback[file].failed:
            failed[key] = failed.get(key, 0) + 1
    graded = len(completed_rows)
    # Every case of every graded function and every criterion has a row, in both tables.
    cases = {(function, case.description) for function in attention_lesson.FUNCTIONS
             for case in attention_lesson.cases_for(function)}
    criteria = {(question, title) for question, data in attention_lesson.DATA_QUESTIONS.items()
                for _, title in data.criteria}
    assert set(shown) == cases | criteria
    for key, (passed, failing) in shown.items():
        assert failing == failed.get(key, 0), key
        assert passed + failing == graded, key


def test_challenge_lists_the_five_criteria_in_rubric_order(page):
    titles = page.eval_on_selector_all("#reto tr[data-case]",
                                       "rows => rows.map(r => r.cells[0].textContent)")
    (data,) = attention_lesson.DATA_QUESTIONS.values()
    assert [t.strip("«»") for t in titles] == [title for _, title in data.criteria]
    assert len(titles) == 5


# --- common mistakes ----------------------------------------------------------------------------


def test_named_mistakes_are_exactly_the_injected_ones_with_their_students(page):
    shown = {mistake_id: set(files) for mistake_id, _, _, files in mistakes_shown(page)}
    assert shown == EXPECTED["mistakes"]


def test_mistakes_are_ranked_by_students_and_counted_once_each(page):
    shown = mistakes_shown(page)
    counts = [count for _, _, count, _ in shown]
    assert counts == sorted(counts, reverse=True)
    for mistake_id, _, count, files in shown:
        assert count == len(files) == len(set(files)), mistake_id


def test_mistakes_shown_are_those_the_feedback_named(page, feedback):
    by_name = {}
    for file, failures in feedback.items():
        for _, _, name in failures.named:
            by_name.setdefault(name, set()).add(file)
    shown = {name: set(files) for _, name, _, files in mistakes_shown(page)}
    assert shown == by_name


def test_each_mistake_carries_its_explanation_and_notebook_step(page):
    for mistake_id, name, _, _ in mistakes_shown(page):
        entry = CATALOG[mistake_id]
        item = page.locator(f'li[data-mistake="{mistake_id}"]')
        assert name == entry.name
        assert entry.explanation in item.text_content()
        assert entry.step in item.locator(".meta").text_content()
        assert entry.step == attention_lesson.FUNCTIONS[entry.question].step


def test_student_links_open_their_feedback(page, graded_batch):
    hrefs = page.eval_on_selector_all("li[data-mistake] ul.students a",
                                      "links => links.map(a => a.href)")
    assert hrefs
    for href in hrefs:
        path = Path(href.removeprefix("file://"))
        assert path.is_file() and path.parent == graded_batch / "feedback", href


def test_blind_spot_counts_every_failed_case_once(page, feedback, completed_rows):
    for function in attention_lesson.FUNCTIONS:
        row = f'table.diagnoses tr[data-function="{function}"]'
        cells = {key: int(page.text_content(f'{row} [data-diagnosis="{key}"]'))
                 for key in class_report.DIAGNOSES}
        failed = sum(q == function for f in completed_rows for q, _ in feedback[f].failed)
        named = sum(q == function for f in completed_rows for q, _, _ in feedback[f].named)
        unanswered = sum(q == function for f in completed_rows
                         for q, _ in feedback[f].unanswered)
        assert int(page.text_content(f"{row} .total")) == sum(cells.values()) == failed
        assert cells["named"] == named, function
        assert cells["unanswered"] == unanswered, function


def test_blind_spot_includes_the_uncatalogued_mistake(page, feedback):
    """escala_rara's attention is wrong in a way no catalogued mistake reproduces."""
    (file,) = EXPECTED["blind_spot"]
    uncatalogued = [key for key in feedback[file].failed if key[0] == "attention"]
    assert uncatalogued and not feedback[file].named
    row = 'table.diagnoses tr[data-function="attention"]'
    # Outside the catalogue: located by measurement (issue 31.5), or only a hint.
    outside = sum(int(page.text_content(f'{row} [data-diagnosis="{key}"]'))
                  for key in ("located", "hint"))
    assert outside >= len(uncatalogued)
    assert stat(page, "located") == int(page.text_content('tr.sum [data-diagnosis="located"]'))
    wrong = sum(int(page.text_content(f'tr.sum [data-diagnosis="{key}"]'))
                for key in class_report.WRONG_ANSWERS)
    hint_only = int(page.text_content('tr.sum [data-diagnosis="hint"]'))
    assert stat(page, "wrong-answers") == wrong
    assert stat(page, "hint-only") == hint_only
    assert page.text_content('[data-stat="hint-share"]') == class_report.percent(hint_only, wrong)


# --- needs a human ------------------------------------------------------------------------------


def test_flagged_submissions_show_the_csv_flags(page, csv_rows):
    shown = dict(page.eval_on_selector_all(
        "#revision tr[data-file]:has(ul)",
        "rows => rows.map(r => [r.dataset.file, [...r.querySelectorAll('li')].map(li => "
        "li.textContent)])"))
    expected = {file: row["flags"].split(" | ") for file, row in csv_rows.items() if row["flags"]}
    assert shown == expected


def test_ungradable_files_show_the_csv_reason(page, csv_rows, completed_rows):
    shown = dict(page.eval_on_selector_all(
        "#revision tr[data-file]:has(td.reason)",
        "rows => rows.map(r => [r.dataset.file, r.querySelector('.reason').textContent])"))
    assert shown == {file: row["grading_status"] for file, row in csv_rows.items()
                     if file not in completed_rows}


def test_timeouts_and_memory_kills_are_listed_with_their_limit(page):
    shown = dict(page.eval_on_selector_all(
        "#revision tr[data-file]:has(td.limit)",
        "rows => rows.map(r => [r.dataset.file, r.querySelector('.limit').textContent])"))
    assert shown == EXPECTED["limits"]


# --- screenshots, and rebuilding --------------------------------------------------------------


@pytest.mark.parametrize("section", SECTIONS)
def test_screenshot_of_each_section_is_saved(page, section):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{SECTIONS.index(section) + 1}_{section}.png"
    page.locator(f"#{section}").screenshot(path=str(path))
    assert path.stat().st_size > 20_000, "a rendered section, not an empty box"


def test_make_report_rebuilds_the_same_page_from_the_records_alone(graded_batch, autograder_zip,
                                                                  tmp_path):
    # No CSV, no feedback: the records, and the parts kept for the similarity section.
    shutil.copytree(graded_batch / "records", tmp_path / "records")
    shutil.copytree(graded_batch / "similarity", tmp_path / "similarity")
    completed = subprocess.run(
        [sys.executable, "-m", "kit_autograder.report.class_report", "--out", str(tmp_path),
         "--autograder", str(autograder_zip)], cwd=ROOT, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    assert ((tmp_path / "report.html").read_bytes()
            == (graded_batch / "report.html").read_bytes())


def test_make_report_without_records_says_so(autograder_zip, tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "kit_autograder.report.class_report", "--out", str(tmp_path),
         "--autograder", str(autograder_zip)], cwd=ROOT, capture_output=True, text=True)
    assert completed.returncode == 2
    assert "no records" in completed.stderr
    assert not (tmp_path / "report.html").exists()


# --- scale --------------------------------------------------------------------------------------

CLASS_SIZE = 500
# Well below the tens of thousands of elements at which a page takes a second to lay out.
MAX_ELEMENTS = 10_000


@pytest.fixture(scope="module")
def large_class(graded_batch, tmp_path_factory):
    """500 records made from the batch's own, renamed: the report reads nothing else."""
    out = tmp_path_factory.mktemp("large-class")
    (out / "records").mkdir()
    records = sorted((graded_batch / "records").glob("*.json"))
    for index in range(CLASS_SIZE):
        record = Record.from_json(records[index % len(records)].read_text("utf-8"))
        record.stem = f"estudiante_{index:03d}_{record.stem}"
        record.file = f"{record.stem}{Path(record.file).suffix}"
        (out / "records" / f"{record.stem}.json").write_text(record.to_json(), "utf-8")
    started = time.perf_counter()
    class_report.write(out, lesson=attention_lesson, title="055-atencion-transformer")
    print(f"\nreport of {CLASS_SIZE} records written in {time.perf_counter() - started:.2f} s")
    return out


def test_500_submissions_stay_under_1_mb(large_class):
    size = (large_class / "report.html").stat().st_size
    print(f"\nreport of {CLASS_SIZE} submissions: {size / 1024:.0f} KiB")
    assert size < 1_000_000


def test_500_submissions_make_a_page_of_bounded_size(browser, large_class):
    # Not a timing (speed targets live in make bench): the page's element count, which is
    # what a browser's layout time follows, must stay far below what renders in a second.
    # Folded student lists keep it to a few elements per student. The load time is printed.
    tab = browser.new_page(viewport={"width": 1100, "height": 900})
    tab.goto((large_class / "report.html").as_uri())
    elements = tab.evaluate("document.getElementsByTagName('*').length")
    loaded_ms = tab.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
    shown = stat(tab, "submissions")
    tab.close()
    print(f"\nreport of {CLASS_SIZE} submissions: {elements} elements, loaded in "
          f"{loaded_ms:.0f} ms")
    assert shown == CLASS_SIZE
    assert elements < MAX_ELEMENTS


# --- hand-made records: no sandbox, no browser --------------------------------------------------

TINY_LESSON = SimpleNamespace(
    FUNCTIONS={"f": SimpleNamespace(step="paso 1")},
    DATA_QUESTIONS={},
    misconception_catalog=lambda: {},
)


def _record(stem, verdicts=(), graded=True, **fields):
    verdicts = list(verdicts)
    passed = sum(v.passed for v in verdicts)
    return Record(file=f"{stem}.ipynb", stem=stem, graded=graded, verdicts=verdicts,
                  scores={"f": [float(passed), 2.0]}, **fields)


def _fails(case, *kinds, mistakes=(), unverified=None):
    return Verdict("f", case, f"caso {case}", False, [], list(kinds), list(mistakes), unverified)


def test_a_student_counts_once_per_mistake_however_many_cases_show_it():
    counted = class_report.ClassTally(TINY_LESSON)
    counted.add(_record("ana", [_fails("a", "values", "misconception", mistakes=["f.x"]),
                                _fails("b", "values", "misconception", mistakes=["f.x"])]))
    counted.add(_record("luis", [_fails("a", "values", "misconception", mistakes=["f.x"]),
                                 Verdict("f", "b", "caso b", True)]))
    assert counted.mistakes["f.x"].students == {"ana": "ana.ipynb", "luis": "luis.ipynb"}
    assert counted.diagnoses["f"]["named"] == 3
    assert (counted.cases[("f", "b")].passed, counted.cases[("f", "b")].total) == (1, 2)


def test_the_functions_summary_names_each_mistake_once_for_its_cases():
    """What the grader writes: the cases' symptoms, and one diagnosis for the function that
    explains them all; the report counts it from that summary, once for the student."""
    from kit_autograder.verdicts.record import Diagnosis
    from kit_autograder.verdicts.summary import annotate

    verdicts = [Verdict("f", c, f"caso {c}", False, ["valores distintos"], ["values"])
                for c in "abc"]
    diagnoses = [Diagnosis("misconception", "error típico reconocido: …", ["a", "b", "c"],
                           ["f.x"])]
    annotate(verdicts, diagnoses)
    hinted = [Verdict("f", "a", "caso a", False, ["valores distintos"], ["values"])]
    hint = [Diagnosis("hint", "revisa la escala", ["a"])]
    annotate(hinted, hint)
    counted = class_report.ClassTally(TINY_LESSON)
    counted.add(_record("ana", verdicts, diagnoses={"f": diagnoses}))
    counted.add(_record("luis", hinted, diagnoses={"f": hint}))
    assert list(counted.mistakes) == ["f.x"]
    assert counted.mistakes["f.x"].students == {"ana": "ana.ipynb"}
    assert list(counted.mistakes["f.x"].cases) == ["caso a", "caso b", "caso c"]
    assert counted.diagnoses["f"]["named"] == 3 and counted.diagnoses["f"]["hint"] == 1
    assert counted.hints == {"revisa la escala": {"luis": "luis.ipynb"}}


def test_each_failure_gets_exactly_one_diagnosis():
    counted = class_report.ClassTally(TINY_LESSON)
    counted.add(_record("uno", [_fails("a", "error", "misconception", mistakes=["f.x"]),
                                _fails("b", "values", "hint")]))
    counted.add(_record("dos", [_fails("a", "error"), _fails("b", "values")]))
    counted.add(_record("tres", [_fails("a", "unverified", unverified="memory"),
                                 _fails("b", "unverified", unverified="died")]))
    counted.add(_record("cuatro", [_fails("a", "values", "finding"),
                                   _fails("b", "values", "hint", "finding", "located")]))
    assert counted.diagnoses["f"] == {"named": 1, "found": 1, "located": 1, "hint": 1,
                                      "undiagnosed": 1, "error": 1, "unanswered": 2}


def test_limits_come_from_the_ending_the_cases_or_a_stopped_cell():
    ending = _record("a", sandbox={"ending": "memory"})
    unanswered = _record("b", [_fails("a", "unverified", unverified="time")])
    stopped_cell = _record("c", cell_errors=[{"kind": "time", "cell": 3}])
    died = _record("d", [_fails("a", "unverified", unverified="died")], sandbox={"ending": None})
    assert [class_report.limit_reached(r) for r in (ending, unanswered, stopped_cell, died)] \
        == ["memory", "time", "time", None]


def test_a_class_with_nothing_graded_still_gets_a_page(tmp_path):
    (tmp_path / "records").mkdir()
    record = _record("rota", graded=False, reason="no es JSON",
                     flags=[Flag("ejecución", "error interno")])
    (tmp_path / "records" / "rota.json").write_text(record.to_json(), "utf-8")
    page = class_report.write(tmp_path, lesson=TINY_LESSON).read_text("utf-8")
    assert 'data-stat="graded">0<' in page
    assert 'data-stat="mean">—<' in page
    assert "no es JSON" in page and "ejecución: error interno" in page


# --- accessibility: WCAG 2.1 AA, as axe-core reads it (issue 25) ---------------------------------


def test_the_report_passes_axe_cores_wcag_a_and_aa_rules(page):
    from accessibility import wcag_violations

    count, report = wcag_violations(page)
    assert count == 0, report


def test_control_a_plot_without_its_text_alternative_is_a_violation(browser, graded_batch):
    # The report as it once was: SVG plots with role="img" and no name.
    from accessibility import violated_rules

    tab = browser.new_page()
    tab.goto((graded_batch / "report.html").as_uri())
    tab.evaluate("""() => document.querySelectorAll('svg.plot').forEach(svg => {
        svg.removeAttribute('aria-label'); svg.querySelector('title')?.remove(); })""")
    assert "svg-img-alt" in violated_rules(tab)
    tab.close()


def test_each_plot_says_what_it_shows_with_the_csv_s_numbers(page, completed_rows):
    labels = page.eval_on_selector_all("svg.plot", "plots => plots.map(p => p.getAttribute('aria-label'))")
    assert labels and all(label.startswith("Distribución de ") for label in labels)
    total = next(label for label in labels if label.startswith("Distribución de puntuación automática,"))
    assert f"{len(completed_rows)} estudiantes" in total, total
    assert "Media " in total and "mediana " in total


LONG_NAME = ("garcíalópezmaríajosédelassantísimatrinidad_LATE_1234567_987654321_"
             "notebook_student_final_final_version_de_verdad.ipynb")
WRAP_RULE = "td, th, ul.students li, code { overflow-wrap: anywhere; }"


def _widest_overflow(tab):
    """How far, in pixels, the widest element juts out of its section."""
    return tab.evaluate("""() => Math.max(0, ...[...document.querySelectorAll('section *')]
        .map(e => e.getBoundingClientRect().right - e.closest('section')
                  .getBoundingClientRect().right))""")


def test_a_long_file_name_stays_inside_its_table_at_1280_px(browser, tmp_path):
    """Issue 47.9: Canvas names a file as one long word, and a table of the page ran out of it."""
    (tmp_path / "records").mkdir()
    record = _record("larga", graded=False, reason=f"«{LONG_NAME}» no es JSON",
                     flags=[Flag("ejecución", LONG_NAME)])
    record.file = LONG_NAME
    (tmp_path / "records" / "larga.json").write_text(record.to_json(), "utf-8")
    page = class_report.write(tmp_path, lesson=TINY_LESSON).read_text("utf-8")
    assert WRAP_RULE in page
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        tab.set_content(page)
        assert _widest_overflow(tab) <= 1
        # Positive control: without the rule, the same page runs out of its section.
        tab.set_content(page.replace(WRAP_RULE, ""))
        assert _widest_overflow(tab) > 100
    finally:
        tab.close()


# --- similar submissions (issue 50) ------------------------------------------------------------

SIMILAR_SECTION = "similitud"


@pytest.fixture(scope="module")
def similar_page(built_dist, autograder_zip, tmp_path_factory):
    """A planted class's parts kept as make grade keeps them, beside hand-made records: the
    report with its section on similar submissions, without grading anything."""
    import nbformat

    import similarity_class

    student = nbformat.read(built_dist / "student" / "notebook_student.ipynb", as_version=4)
    klass = similarity_class.build(student, n_independent=30, seed=50)
    out = tmp_path_factory.mktemp("similar")
    similarity_class.keep(klass, out, autograder_zip)
    (out / "records").mkdir()
    for name in klass.files:
        record = _record(Path(name).stem)
        (out / "records" / f"{record.stem}.json").write_text(record.to_json(), "utf-8")
    page = class_report.write(out, lesson=TINY_LESSON, title="055-atencion-transformer")
    copies = {tuple(sorted((c, s))) for c, (s, _) in klass.planted.items()}
    return page, copies


@pytest.fixture
def similar_tab(browser, similar_page):
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    tab.goto(similar_page[0].as_uri())
    yield tab
    tab.close()


def test_similar_pairs_are_listed_with_their_parts_side_by_side_and_shared_passages_marked(
        similar_tab, similar_page):
    listed = similar_tab.eval_on_selector_all(
        f"#{SIMILAR_SECTION} li[data-pair]", "items => items.map(li => li.dataset.pair)")
    pairs = [tuple(sorted(pair.split("|"))) for pair in listed]
    assert pairs and pairs[0] in similar_page[1]  # the strongest is a planted copy
    assert len(set(pairs) & similar_page[1]) >= 5, pairs
    first = similar_tab.locator(f"#{SIMILAR_SECTION} li[data-pair]").first
    assert first.locator("details").get_attribute("open") is not None  # the strongest, open
    finding = first.locator(".finding").first
    assert finding.locator("figure").count() == 2
    assert all(finding.locator("figure").nth(i).locator("mark").count() > 0 for i in (0, 1))
    assert "que más comparte en esta parte" in finding.text_content()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"{len(SECTIONS) + 1}_{SIMILAR_SECTION}.png"
    first.screenshot(path=str(shot))
    assert shot.stat().st_size > 20_000


def test_similar_pairs_open_and_their_texts_scroll_from_the_keyboard(similar_tab):
    summaries = similar_tab.locator(f"#{SIMILAR_SECTION} summary")
    second = summaries.nth(1)
    assert second.locator("xpath=..").get_attribute("open") is None
    second.focus()
    similar_tab.keyboard.press("Enter")
    assert second.locator("xpath=..").get_attribute("open") is not None
    # Tab moves from the summary into the pair's texts, each a stop of its own to scroll.
    stops = []
    for _ in range(4):
        similar_tab.keyboard.press("Tab")
        stops.append(similar_tab.evaluate(
            "() => [document.activeElement.tagName, document.activeElement.getAttribute"
            "('aria-label') || '', !!document.activeElement.closest('details[open]')]"))
    assert stops[0][2] and stops[0][0] in ("PRE", "DIV") and stops[0][1], stops
    assert [s[1] for s in stops[:2]] != [stops[0][1]] * 2, "each text is its own stop"


def test_the_similar_pairs_section_passes_axe_cores_wcag_a_and_aa_rules(similar_tab):
    from accessibility import violated_rules, wcag_violations

    similar_tab.evaluate("() => document.querySelectorAll('#similitud details')"
                         ".forEach(d => d.open = true)")
    count, report = wcag_violations(similar_tab)
    assert count == 0, report
    # Positive control: a text that scrolls without taking the keyboard's focus is a violation.
    similar_tab.evaluate("""() => document.querySelectorAll('#similitud [tabindex]').forEach(e => {
        e.removeAttribute('tabindex'); e.style.maxHeight = '40px'; })""")
    assert "scrollable-region-focusable" in violated_rules(similar_tab)
