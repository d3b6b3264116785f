"""Gradescope's run starts the upload's notebook before Otter is imported (otter_entry.py,
issue 52): it must start the very file Otter then grades, and hand back the variables Otter's
tests would ask for. Each is checked against Otter's own code, on the same inputs."""

import inspect
import os

import pytest
from otter.run.run_autograder.runners.python_runner import PythonRunner
from otter.run.run_autograder.utils import OtterRuntimeError

from kit_autograder.bundle import Bundle
from kit_autograder.otter_entry import the_notebook_otter_grades

TEST_FILE = '''from otter.test_files import test_case
import otter.test_files

OK_FORMAT = False
name = "q"
points = 3


def helper(not_a_variable):
    return not_a_variable


@test_case(points=1, hidden=False)
def test_plain(attention, datos):
    assert helper(attention) is not None


@otter.test_files.test_case(points=1, hidden=True)
def test_dotted(multihead, *args, extra=None, **kwargs):
    assert multihead


@test_case
def test_bare(resultado):
    assert resultado
'''


def test_the_variables_handed_back_are_the_parameters_otter_fills(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "q.py").write_text(TEST_FILE, "utf-8")
    bundle = Bundle(tmp_path, {}, {})
    otters = [name for case in bundle.test_file("q").test_cases
              for name in inspect.signature(case.body.test_func).parameters]
    assert bundle.test_parameters("q") == otters
    # Controls: a helper's parameters, and a bare decorator Otter never calls, are no test's.
    assert "not_a_variable" not in otters and "resultado" not in otters


def test_the_zips_tests_are_read_as_otter_reads_them(autograder_zip):
    from kit_autograder.bundle import OpenedZip

    with OpenedZip(autograder_zip) as bundle:
        for path in sorted((bundle.source / "tests").glob("*.py")):
            otters = [name for case in bundle.test_file(path.stem).test_cases
                      for name in inspect.signature(case.body.test_func).parameters]
            assert bundle.test_parameters(path.stem) == otters, path.name


def otters_choice(folder):
    """The file Otter's Python runner grades in ``folder``, or None where it refuses."""
    here = os.getcwd()
    os.chdir(folder)
    try:
        return folder / PythonRunner.resolve_submission_path(None)
    except OtterRuntimeError:
        return None
    finally:
        os.chdir(here)


@pytest.mark.parametrize("layout, early", [
    (["entrega.ipynb"], "entrega.ipynb"),
    (["entrega.ipynb", ".oculto.ipynb", "notas.txt", "lab.py"], "entrega.ipynb"),
    (["una.ipynb", "otra.ipynb"], None),  # Otter refuses: no early start either
    (["solo.py"], None),  # Otter grades a script: the plugin grades it, not the early start
    ([], None),
])
def test_the_notebook_started_early_is_the_one_otter_grades(tmp_path, layout, early):
    for name in layout:
        (tmp_path / name).write_text("{}", "utf-8")
    chosen = the_notebook_otter_grades(tmp_path, {})
    assert chosen == (tmp_path / early if early else None)
    if chosen is not None:
        assert otters_choice(tmp_path) == chosen


def test_nothing_starts_early_where_otter_unzips_first_or_finds_a_folder(tmp_path):
    (tmp_path / "entrega.ipynb").write_text("{}", "utf-8")
    assert the_notebook_otter_grades(tmp_path, {"zips": True}) is None
    (tmp_path / "entrega.ipynb").unlink()
    (tmp_path / "carpeta.ipynb").mkdir()
    assert the_notebook_otter_grades(tmp_path, {}) is None
