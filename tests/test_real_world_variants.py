"""Submissions in the styles of public code keep full marks when right and are named when
wrong: in this process on many draws, and a few of them through the real sandbox.

The sandbox runs every cell of the notebook, so classes, methods attached later with a
decorator and constants computed at module level exist when the grader calls the function;
``test_d2l_style_notebook_keeps_full_marks_in_the_sandbox`` is the proof.
"""

import json

import nbformat
import pytest

from draws import GRADED_FUNCTIONS, assert_named, grade
from kit_autograder.verdicts.record import Record
from real_world_variants import (ATTENTION_D2L, ATTENTION_EINSUM_FLOAT32, ATTENTION_LOOPS,
                                 ATTENTION_MASK_INVERTED_D2L, BLOCK_ANNOTATED,
                                 BLOCK_FLOAT32_EINSUM, BLOCK_LARGE_EPS, BLOCK_PRE_LN_GELU, BUGGY,
                                 CORRECT, MULTIHEAD_D2L, MULTIHEAD_D2L_HEAD_SIZE,
                                 MULTIHEAD_ONE_HEAD_REUSED, MULTIHEAD_STACKED_EINSUM,
                                 PE_BASE_1000, PE_EXP_LOG, PE_ODD_BROADCAST, PE_STACK_RESHAPE)


@pytest.mark.parametrize("variant", CORRECT, ids=[v.name for v in CORRECT])
def test_correct_real_world_variant_keeps_full_marks_on_every_draw(variant):
    failed = {key: [f.message for f in failures]
              for key, failures in grade(variant.function, variant.define()).items() if failures}
    assert not failed


@pytest.mark.parametrize("variant", BUGGY, ids=[v.name for v in BUGGY])
def test_buggy_real_world_variant_is_caught_and_named_on_every_draw(variant):
    assert_named(variant.function, variant.define(), *variant.names,
                 cases=variant.fails_on or None)


# --- through the sandbox ----------------------------------------------------------------------

NOTEBOOKS = {
    "d2l_style": [ATTENTION_D2L, MULTIHEAD_D2L, PE_EXP_LOG, BLOCK_ANNOTATED],
    "float32_einsum": [ATTENTION_EINSUM_FLOAT32, MULTIHEAD_STACKED_EINSUM, PE_STACK_RESHAPE,
                       BLOCK_FLOAT32_EINSUM],
    "wrong_values": [ATTENTION_MASK_INVERTED_D2L, MULTIHEAD_ONE_HEAD_REUSED, PE_BASE_1000,
                     BLOCK_PRE_LN_GELU],
    "wrong_shapes": [ATTENTION_LOOPS, MULTIHEAD_D2L_HEAD_SIZE, PE_ODD_BROADCAST,
                     BLOCK_LARGE_EPS],
}


def with_variants(student, variants):
    """The student notebook with each graded function's answer cell replaced by the cells of
    its variant, in place and in order."""
    notebook = nbformat.from_dict(student)
    for variant in variants:
        index = next(i for i, cell in enumerate(notebook.cells)
                     if cell.cell_type == "code"
                     and cell.source.startswith(f"def {variant.function}("))
        new = [nbformat.v4.new_code_cell(source) for source in variant.cells]
        for number, cell in enumerate(new):
            cell.id = f"{variant.name}-{number}"[:64]
        notebook.cells[index:index + 1] = new
    return notebook


@pytest.fixture(scope="module")
def sandbox_records(built_dist, autograder_zip, tmp_path_factory):
    """{notebook: Record}, every notebook graded in one batch by kit_autograder.batch."""
    from kit_autograder.batch import grade_folder

    student = nbformat.read(built_dist / "student" / "notebook_student.ipynb", as_version=4)
    folder = tmp_path_factory.mktemp("real-world-notebooks")
    for name, variants in NOTEBOOKS.items():
        assert sorted(v.function for v in variants) == sorted(GRADED_FUNCTIONS)
        nbformat.write(with_variants(student, variants), folder / f"{name}.ipynb")
    out = tmp_path_factory.mktemp("real-world-grades")
    grade_folder(folder, out, autograder_zip=autograder_zip, jobs=2)
    return {name: Record.from_json((out / "records" / f"{name}.json").read_text("utf-8"))
            for name in NOTEBOOKS}


def _hidden(record, function):
    return [v for v in record.verdicts if v.question == function and not v.public]


@pytest.mark.parametrize("notebook", ["d2l_style", "float32_einsum"])
def test_correct_notebook_keeps_full_marks_on_every_graded_function_in_the_sandbox(
        sandbox_records, notebook):
    record = sandbox_records[notebook]
    lost = {f: record.scores[f] for f in GRADED_FUNCTIONS
            if record.scores[f][0] != record.scores[f][1]}
    messages = {f: [m for v in _hidden(record, f) for m in v.messages] for f in lost}
    assert not lost, messages
    assert not record.cell_errors, record.cell_errors


def test_d2l_style_notebook_keeps_full_marks_in_the_sandbox(sandbox_records):
    """Methods attached by @add_to_class and module-level constants reach the grader."""
    record = sandbox_records["d2l_style"]
    for function in ("attention", "multihead"):
        assert all(v.passed for v in _hidden(record, function)), function
    assert "add_to_class" in "".join(MULTIHEAD_D2L.cells)


@pytest.mark.parametrize("notebook", ["wrong_values", "wrong_shapes"])
def test_buggy_notebook_loses_points_where_it_is_wrong_and_says_why(sandbox_records, notebook):
    record = sandbox_records[notebook]
    for variant in NOTEBOOKS[notebook]:
        earned, possible = record.scores[variant.function]
        verdicts = _hidden(record, variant.function)
        if variant.correct:
            assert earned == possible, [v.messages for v in verdicts]
            continue
        assert earned < possible, f"{variant.name} kept full marks"
        failing = [v for v in verdicts if not v.passed]
        # What the diagnosis named: catalogued mistakes, and what it found in the output.
        named = [v.misconceptions + v.findings for v in failing]
        said = {i for ids in named for i in ids}
        assert all(ids and set(ids) <= set(variant.names) for ids in named), json.dumps(named)
        assert said == set(variant.names), variant.name
