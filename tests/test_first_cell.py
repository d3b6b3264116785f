"""What the notebook's first cell says when it finds the notebook (notebook_grader.ready_message):
the file, and how many of its graded functions are still stubs in the saved file; and what a
practice exercise's check says instead of the hidden tests' note."""

import json
from pathlib import Path

import pytest

from notebook_grader import (HIDDEN_TESTS_NOTE, PRACTICE_NOTE, AllChecks, CheckReport, graded_stubs,
                             practice_questions, ready_message)

STUB = 'def {name}(x):\n    """Docstring."""\n    raise NotImplementedError("Implementa {name}")\n'
DONE = "def {name}(x):\n    return x\n"


def notebook(path, *cells, questions=("attention", "multihead", "student_extension")):
    """A notebook file whose Otter metadata names ``questions``, with these code cells."""
    nb = {"nbformat": 4, "nbformat_minor": 5,
          "metadata": {"otter": {"assignment_name": "a", "tests": dict.fromkeys(questions, "")}},
          "cells": [{"cell_type": "code", "source": source, "metadata": {}, "outputs": [],
                     "execution_count": None} for source in cells]}
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


@pytest.mark.parametrize("cells, said", [
    ((STUB.format(name="attention"), STUB.format(name="multihead")), "2 funciones por implementar."),
    ((DONE.format(name="attention"), STUB.format(name="multihead")), "1 de 2 funciones por implementar."),
    ((DONE.format(name="attention"), DONE.format(name="multihead")), "con sus 2 funciones implementadas."),
    ((STUB.format(name="attention"),), "1 función por implementar."),
    ((DONE.format(name="attention"),), "con su única función implementada."),
    (("x = 1",), None),
])
def test_the_first_cell_counts_the_graded_stubs_of_the_saved_notebook(tmp_path, cells, said):
    path = notebook(tmp_path / "mi cuaderno.ipynb", *cells)
    expected = "Listo: cuaderno «mi cuaderno.ipynb»" + (f", {said}" if said else ".")
    assert ready_message(path) == expected


def test_only_functions_named_after_a_question_count_and_the_last_definition_wins(tmp_path):
    path = notebook(tmp_path / "n.ipynb",
                    STUB.format(name="helper"),                 # not a question: a helper
                    STUB.format(name="attention"),
                    "%%time\n" + DONE.format(name="multihead"),  # a magic: not Python, skipped
                    DONE.format(name="attention"))              # redefined: the kernel keeps this
    with open(path, encoding="utf-8") as f:
        assert graded_stubs(json.load(f)) == (1, 0)


def test_a_raise_of_something_else_is_not_a_stub(tmp_path):
    body = "def attention(x):\n    if x is None:\n        raise ValueError('x')\n    return x\n"
    path = notebook(tmp_path / "n.ipynb", body)
    assert ready_message(path).endswith("con su única función implementada.")


def test_practice_exercises_are_the_rubrics_not_those_whose_test_file_says_zero_points(tmp_path):
    """Issue 48.7: Otter's student copy writes ``points = [0]`` for every question whose hidden
    tests it removed, the graded challenge's included, so the rubric's ``practice:`` list (in the
    notebook's ``kit`` metadata) is what tells a practice exercise apart."""
    tests = {"attention": "name = 'attention'\npoints = [0]\n",
             "coste": "name = 'coste'\npoints = [0]\n",
             "student_extension": "name = 'student_extension'\npoints = [0]\n"}
    path = notebook(tmp_path / "n.ipynb", STUB.format(name="attention"), STUB.format(name="coste"))
    nb = json.loads(path.read_text("utf-8"))
    nb["metadata"]["otter"]["tests"] = tests
    nb["metadata"]["kit"] = {"practice": ["coste"]}
    assert practice_questions(nb) == {"coste"}
    assert graded_stubs(nb) == (1, 1)
    del nb["metadata"]["kit"]  # the control: without the rubric's list, nothing is called practice
    assert practice_questions(nb) == set() and graded_stubs(nb) == (2, 2)


def test_the_built_notebook_calls_practice_exactly_the_rubrics_practice(built_dist):
    import yaml
    nb = json.loads((built_dist / "student" / "notebook_student.ipynb").read_text("utf-8"))
    rubric = yaml.safe_load((Path(__file__).parents[1] / "rubrics" / "attention.yaml").read_text("utf-8"))
    assert practice_questions(nb) == set(rubric["practice"])
    assert "student_extension" not in practice_questions(nb)


def test_a_practice_check_says_it_does_not_count_instead_of_the_hidden_tests_note():
    from types import SimpleNamespace

    case = SimpleNamespace(hidden=False, failure_message=None)
    failed = SimpleNamespace(test_case_results=[SimpleNamespace(
        test_case=case, passed=False,
        message="❌ Test case failed\nError at line 9 in test coste:\n  x\nAssertionError: "
                "Todavía no se puede comprobar: Escribe productos_escalares")])
    practice = repr(CheckReport("coste", failed, practice=True))
    assert "Todavía no se puede comprobar: Escribe productos_escalares" in practice
    assert PRACTICE_NOTE in practice and HIDDEN_TESTS_NOTE not in practice
    graded = repr(CheckReport("attention", failed))
    assert HIDDEN_TESTS_NOTE in graded and PRACTICE_NOTE not in graded
    both = repr(AllChecks([CheckReport("attention", failed), CheckReport("coste", failed, practice=True),
                           CheckReport("relleno", failed, practice=True)]))
    assert "Los ejercicios coste y relleno no cuentan para la nota" in both and HIDDEN_TESTS_NOTE in both


def test_a_check_cell_run_before_the_first_cell_says_so_in_spanish():
    """Issue 48.8: after a kernel restart, a check cell run first stopped with Python's English
    «NameError: name 'grader' is not defined». Guarded, it says what to do in Spanish; with the
    first cell run it calls the check as Otter wrote it (the control)."""
    import contextlib
    import io

    import nbformat

    from kit_autograder.build.otter_master import NO_GRADER_YET, spanish_check_cells

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('grader.check("attention")'),
                                         nbformat.v4.new_code_cell("x = 1  # grader.check(\"no\")")])
    with pytest.raises(NameError, match="grader"):  # Otter's cell as it was
        exec(nb.cells[0].source, {})
    (guarded, other) = (cell.source for cell in spanish_check_cells(nb).cells)
    assert guarded.startswith('grader.check("attention")') and other == 'x = 1  # grader.check("no")'
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert eval(compile(guarded, "<celda>", "eval"), {}) is None
    assert printed.getvalue() == NO_GRADER_YET + "\n" and "primera celda" in NO_GRADER_YET

    class Grader:
        def check(self, question):
            return f"comprobado {question}"

    assert eval(compile(guarded, "<celda>", "eval"), {"grader": Grader()}) == "comprobado attention"


@pytest.mark.slow
def test_every_check_cell_of_the_built_notebook_is_guarded(built_dist):
    import nbformat

    nb = nbformat.read(built_dist / "student" / "notebook_student.ipynb", as_version=4)
    checks = [c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith('grader.check("')]
    assert len(checks) == 10 and all('if "grader" in globals() else print(' in s for s in checks)
