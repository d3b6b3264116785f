"""Catalogued mistakes and correct variants, graded by Otter as real submissions.

A mutant replaces one graded cell of the built solution notebook (the other functions stay
correct) and the notebook goes through the built autograder zip: it must lose points on its
own function only among the four graded functions, and that question's feedback must name the
misconception. Each set of correct variants (one per function) must keep full marks on every
question Otter scores.

The lab-based ``student_extension`` question runs lab.py on the student's functions, so a
mutant can cost points there too (lab.py cannot run when a function raises, and the solution's
extension text cites the solution's lab numbers). That is the extension's contract, not this
catalog's; the summary reports it apart from the graded functions.

Otter costs 6-12 s per notebook here (a confined kernel, the plots, the out-of-kernel
verification and the extension's runs of lab.py), so all 36 mutants would take several minutes.
By default this module grades a representative subset (``otter_subset``): the first mutant of
each graded function for each way of failing (raising or returning the wrong type, the wrong
shape, NaN, or wrong values), since those take different paths through the notebook's demo
cells, lab.py and the verifier. Every mutant goes through the same checks, and its rendered
cell is executed, in test_misconceptions.py. ``OTTER_ALL_MUTANTS=1`` grades all of them.
Run with ``-s`` to see the summary counts.
"""

import os

import nbformat
import numpy as np
import pytest

from attention import misconceptions
from attention.cases import cases_for
from autograder.checks import GRADED_FUNCTIONS, reference_parts
from attention.diagnose import mutant_outcome
from attention.misconceptions import render_source
from correct_variants import variant_sets
from grade_fixtures import inject
from otter_batch import grade_many

VARIANT_SETS = variant_sets()


def outcome_kind(entry):
    """How the mutant fails at its worst: "error" (raises or wrong type), "shape", "nonfinite"
    (NaN or infinities) or "values"."""
    kinds = set()
    for case in cases_for(entry.function):
        outcome = mutant_outcome(entry, case)
        if outcome.parts is None:
            kinds.add("error")
        elif [p.shape for p in outcome.parts] != [
                p.shape for p in reference_parts(entry.function, case)]:
            kinds.add("shape")
        elif not all(np.isfinite(part).all() for part in outcome.parts):
            kinds.add("nonfinite")
    return next((kind for kind in ("error", "shape", "nonfinite") if kind in kinds), "values")


def otter_subset():
    """The first catalog entry of each (function, outcome kind): one per path through Otter."""
    chosen = {}
    for entry in misconceptions.CATALOG:
        chosen.setdefault((entry.function, outcome_kind(entry)), entry)
    return list(chosen.values())


OTTER_ENTRIES = (list(misconceptions.CATALOG) if os.environ.get("OTTER_ALL_MUTANTS") == "1"
                 else otter_subset())
OTTER_IDS = [entry.id for entry in OTTER_ENTRIES]


@pytest.fixture(scope="module")
def graded(built_dist, autograder_zip, tmp_path_factory):
    """Otter's results for every chosen mutant notebook and every variant-set notebook."""
    solution = nbformat.read(built_dist / "solution" / "notebook_solution.ipynb", as_version=4)
    folder = tmp_path_factory.mktemp("mutant-notebooks")
    paths = []
    for entry in OTTER_ENTRIES:
        paths.append(folder / f"mutant-{entry.id}.ipynb")
        nbformat.write(inject(solution, entry.function, entry.source()), paths[-1])
    for index, variants in enumerate(VARIANT_SETS):
        notebook = solution
        for function, variant in variants.items():
            notebook = inject(notebook, function, render_source(variant, function))
        paths.append(folder / f"variants-{index}.ipynb")
        nbformat.write(notebook, paths[-1])
    return grade_many(autograder_zip, paths, folder)


def _lost(results, questions):
    return {q: results[q]["possible"] - results[q]["score"] for q in questions}


def _last_messages(results, questions):
    """What Otter said last about each question, to explain a failed assertion."""
    return {q: (results[q]["messages"] or [""])[-1][-300:] for q in questions}


def _feedback_names(results, entry):
    return any(f"error típico reconocido: {entry.name}." in message
               for message in results[entry.function]["messages"])


@pytest.mark.parametrize("misconception_id", OTTER_IDS)
def test_mutant_notebook_loses_points_on_its_own_function_only(graded, misconception_id):
    entry = misconceptions.get(misconception_id)
    results = graded[f"mutant-{misconception_id}"]
    assert _lost(results, [entry.function])[entry.function] > 0, "kept full marks"
    others = _lost(results, [q for q in GRADED_FUNCTIONS if q != entry.function])
    hit = [q for q, points in others.items() if points]
    assert not hit, f"cost points on other functions: {others} {_last_messages(results, hit)}"


@pytest.mark.parametrize("misconception_id", OTTER_IDS)
def test_mutant_notebook_feedback_names_the_misconception(graded, misconception_id):
    entry = misconceptions.get(misconception_id)
    results = graded[f"mutant-{misconception_id}"]
    assert _feedback_names(results, entry), _last_messages(results, [entry.function])
    also = [other.id for other in misconceptions.for_function(entry.function)
            if other is not entry and _feedback_names(results, other)]
    assert not also, f"also named as {also}"


@pytest.mark.parametrize("index", range(len(VARIANT_SETS)),
                         ids=["+".join(v.__name__ for v in s.values()) for s in VARIANT_SETS])
def test_correct_variant_notebook_keeps_full_marks(graded, index):
    results = graded[f"variants-{index}"]
    lost = _lost(results, results)
    hit = [q for q, points in lost.items() if points]
    assert not hit, f"correct variants lost points: {lost} {_last_messages(results, hit)}"


def test_otter_summary(graded):
    """The numbers issue 4 asks for, as Otter grades them (printed with -s)."""
    caught = named = collateral = 0
    extension_lost, extension_hit = 0, []
    for entry in OTTER_ENTRIES:
        results = graded[f"mutant-{entry.id}"]
        caught += _lost(results, [entry.function])[entry.function] > 0
        named += _feedback_names(results, entry)
        collateral += sum(_lost(results, [q for q in GRADED_FUNCTIONS if q != entry.function])
                          .values())
        outside = sum(_lost(results, [q for q in results if q not in GRADED_FUNCTIONS]).values())
        extension_lost += outside
        extension_hit += [entry.id] if outside else []
    n_variants = sum(len(variant_set) for variant_set in VARIANT_SETS)
    falsely_failed = sum(
        _lost(graded[f"variants-{index}"], [function])[function] > 0
        for index, variant_set in enumerate(VARIANT_SETS) for function in variant_set)
    total = len(OTTER_ENTRIES)
    print(f"\n[otter] mutants caught {caught}/{total}, correctly named {named}/{total} "
          f"(of {len(misconceptions.CATALOG)} in the catalog); collateral points lost on the "
          f"other graded functions: {collateral:g}; correct variants falsely failed: "
          f"{falsely_failed}/{n_variants} (in {len(VARIANT_SETS)} notebooks)")
    print(f"[otter] outside the graded functions (student_extension, which runs lab.py): "
          f"{extension_lost:g} points lost in {len(extension_hit)}/{total} mutant notebooks "
          f"{extension_hit}")
    assert (caught, named, collateral, falsely_failed) == (total, total, 0, 0)
