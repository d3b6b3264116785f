"""The probe, as the measurement of issue 20: every notebook of tests/probe_notebooks.py graded
through ``make grade``'s engine (``kit_autograder.batch.grade_folder``), once, in one batch.
The notebooks are built from ``grading_harness.Notebooks``'s stub and solution, without step
4's gradient experiment, which no probe is about.

Per notebook:

* correct: every graded function keeps full marks (a loss is a *false fail*);
* buggy: the function with the bug loses points (else a *false pass*) and no other graded
  function does (else *collateral*); its feedback section holds the bug's phrases (*named
  right*) and the diagnosis names nothing outside the bug's ids (else *misnamed*);
* edge: what each case's table says.

The challenge (``student_extension``) is counted apart and not asserted: the notebook's own lab
run rebuilds the functions from the saved file, which is the lead's part of issue 20.

``pytest tests/test_probe.py -s`` prints the table of counts.
"""

from pathlib import Path

import pytest

from grading_harness import Notebooks
from probe_notebooks import (BUGS, GRADED, LAB_HABITS, PROBES, SHELL_HABITS, build,
                             check_table)

# Case notes that explain a shape error with the case's sizes: never a mistake's name.
CASE_NOTES = {"multihead.head_sizes", "positional_encoding.odd_d_model"}
NAMED_RIGHT_TARGET = 0.9


def section(feedback, question):
    """The feedback's part about ``question``: from its heading to the next heading."""
    lines = feedback.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith("#") and f"`{question}`" in line), None)
    if start is None:
        return ""
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].startswith("#")
                and len(lines[i]) - len(lines[i].lstrip("#")) <= level), len(lines))
    return "\n".join(lines[start:end])


def named_ids(record, function):
    """What the diagnosis named for ``function``: catalogued mistakes and findings."""
    ids = set()
    for verdict in record.verdicts:
        if verdict.question == function and not verdict.public and not verdict.passed:
            ids |= set(verdict.misconceptions) | set(verdict.findings)
    return ids - CASE_NOTES


@pytest.fixture(scope="module")
def probe(built_dist, autograder_zip, tmp_path_factory):
    """{probe name: (Probe, Record, feedback text)}."""
    from kit_autograder.batch import grade_folder
    from kit_autograder.sandbox.client import Limits
    from kit_autograder.verdicts.record import Record

    notebooks = Notebooks(built_dist)
    folder = tmp_path_factory.mktemp("sonda")
    for name, data in build(notebooks.student, notebooks._correct).items():
        (folder / name).write_bytes(data)
    out = tmp_path_factory.mktemp("sonda-notas")
    grade_folder(folder, out, autograder_zip=autograder_zip, jobs=2,
                 limits=Limits(notebook_seconds=60))
    internal = out / "internal-errors.log"
    if internal.exists():  # shown with any failure of this module: what a person would report
        print(internal.read_text("utf-8"))
    graded = {}
    for item in PROBES:
        record = Record.from_json((out / "records" / f"{item.name}.json").read_text("utf-8"))
        feedback = (out / "feedback" / f"{item.name}.md").read_text("utf-8")
        graded[item.name] = (item, record, feedback)
    return graded


def lost(record, question):
    earned, possible = record.scores[question]
    return earned < possible


def assess(item, record, feedback):
    """What this notebook shows, as counts: {problem: [details]}."""
    found = {}

    def note(problem, detail):
        found.setdefault(problem, []).append(detail)

    if item.kind == "correct":
        expect, phrases, ids = {}, {}, {}
    elif item.kind == "buggy":
        bugs = [BUGS[name] for name in item.all_bugs]
        expect = {bug.function: "loses" for bug in bugs}
        phrases = {bug.function: bug.phrases for bug in bugs}
        ids = {bug.function: bug.ids for bug in bugs}
    else:
        expect, phrases, ids = item.expect, item.phrases, item.ids
    for function in GRADED:
        if expect.get(function) == "loses":
            if not lost(record, function):
                note("false_pass", function)
                continue
            wrong = named_ids(record, function) - set(ids.get(function, ()))
            if wrong:
                note("misnamed", f"{function}: {sorted(wrong)}")
            text = section(feedback, function)
            missing = [p for p in phrases.get(function, ()) if p not in text]
            if missing:
                note("not_named", f"{function}: falta {missing}")
            elif not wrong:
                note("named_right", function)
        elif lost(record, function):
            note("false_fail" if item.kind != "buggy" else "collateral",
                 f"{function} {record.scores[function]}")
    if lost(record, "student_extension"):
        note("challenge", sorted(set(item.habits) & LAB_HABITS) or "lab")
    return found


@pytest.fixture(scope="module")
def assessed(probe):
    return {name: assess(*graded) for name, graded in probe.items()}


def test_the_probe_table_is_consistent():
    check_table()
    kinds = [item.kind for item in PROBES]
    assert len(PROBES) >= 100
    assert kinds.count("correct") >= 45 and kinds.count("buggy") >= 40


def test_every_refused_shell_escape_is_said_once_in_the_feedback(probe):
    """Each notebook with a pip line or another shell escape is told, once, which lines were
    skipped; no other notebook is."""
    wrong = {}
    for name, (item, record, feedback) in probe.items():
        told = feedback.count("no ejecuta órdenes del sistema")
        if told != (1 if set(item.habits) & SHELL_HABITS else 0):
            wrong[name] = told
    assert not wrong, wrong


def test_probe_counts(probe, assessed):
    """0 false fails, 0 false passes, 0 collateral, 0 misnamed, at least 90 % named right."""
    def of(problem, kind=None):
        return {name: found[problem] for name, found in assessed.items() if problem in found
                and (kind is None or probe[name][0].kind == kind)}

    buggy = [name for name in assessed if probe[name][0].kind == "buggy"]
    # Counted per buggy function: a notebook may hold one bug in each of several functions.
    named_right = sum(len(assessed[name].get("named_right", [])) for name in buggy)
    bugs = sum(len(probe[name][0].all_bugs) for name in buggy)
    kinds = {kind: sum(item.kind == kind for item in (p[0] for p in probe.values()))
             for kind in ("correct", "buggy", "edge")}
    rows = [("notebooks", len(probe)), *kinds.items(),
            ("false fails", len(of("false_fail"))), ("false passes", len(of("false_pass"))),
            ("collateral", len(of("collateral"))), ("misnamed", len(of("misnamed"))),
            ("named right", f"{named_right}/{bugs} = {100 * named_right / bugs:.0f} %"),
            ("edge cases not as expected", len({**of("false_fail", "edge"),
                                                **of("false_pass", "edge"),
                                                **of("misnamed", "edge"),
                                                **of("not_named", "edge")})),
            ("challenge points lost (lab: the lead's part)", len(of("challenge")))]
    print("\n[probe] " + "\n[probe] ".join(f"{label:46s} {value}" for label, value in rows))
    for problem in ("false_fail", "false_pass", "collateral", "misnamed", "not_named",
                    "challenge"):
        for name, details in of(problem).items():
            print(f"[probe] {problem}: {name}: {details}")
    assert not of("false_fail"), of("false_fail")
    assert not of("false_pass"), of("false_pass")
    assert not of("collateral"), of("collateral")
    assert not of("misnamed"), of("misnamed")
    assert not of("not_named", "edge"), of("not_named", "edge")
    assert named_right >= NAMED_RIGHT_TARGET * bugs, of("not_named")
