"""make grade's children cannot reach the grader: no signals out, and as root no reference."""

import io
import os

import nbformat
import pytest

import reference as reference_package
from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME
from autograder.grade import grade_folder
from autograder.grade.engine import Limits

PROBE = """\
import os
try:
    os.kill(os.getppid(), 0)
    print("PROBE signal reached the grader")
except PermissionError:
    print("PROBE signal blocked")
print("PROBE uid", os.getuid())
try:
    open(REFERENCE).read()
    print("PROBE reference readable")
except OSError:
    print("PROBE reference blocked")
"""


@pytest.fixture(scope="module")
def probe_output(built_dist, autograder_zip, tmp_path_factory):
    folder = tmp_path_factory.mktemp("probe-in")
    nb = nbformat.read(built_dist / "solution" / SOLUTION_NAME, as_version=4)
    reference = reference_package.transformer.__file__  # the grader's own copy
    nb.cells.insert(1, nbformat.v4.new_code_cell(
        PROBE.replace("REFERENCE", repr(str(reference)))))
    nbformat.write(nb, str(folder / "probe.ipynb"))
    out = tmp_path_factory.mktemp("probe-out")
    grade_folder(folder, out, autograder_zip=autograder_zip, jobs=1,
                 limits=Limits(timeout=120, memory_mb=2048), log=io.StringIO())
    return (out / "feedback" / "probe.md").read_text(encoding="utf-8")


def test_a_child_cannot_signal_the_grader(probe_output):
    assert "PROBE signal blocked" in probe_output


@pytest.mark.skipif(os.geteuid() != 0, reason="privilege separation applies when grading as root")
def test_as_root_a_child_runs_unprivileged_and_cannot_read_the_reference(probe_output):
    assert "PROBE uid 0" not in probe_output and "PROBE uid" in probe_output
    assert "PROBE reference blocked" in probe_output
