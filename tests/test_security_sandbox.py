"""The verification child, the replay of its results, and the doors closed in Otter.

The child runs one graded function on its hidden cases in a fresh process: as another user
when the tests run as root, behind Landlock where the kernel has it, never able to read the
reference, fork, or return anything but float arrays. Its results, replayed through the zip's
own hidden tests, read exactly like the in-kernel test's.
"""

import inspect
import io
import os
import pickle
import shutil
import textwrap
from pathlib import Path

import nbformat
import numpy as np
import pytest

import reference
from autograder import checks
from attention.cases import cases_for
from autograder.verify import jail, otter_hardening, privileges, sandbox, verifier, views
from autograder.verify.plugin import load_tests

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_FILE = ROOT / "reference" / "transformer.py"
LIMITS = sandbox.Limits(cpu_seconds=3, wall_seconds=10, memory_mb=1024)

# The reference's own source, run as if a student had written it.
CORRECT_PE = textwrap.dedent(inspect.getsource(reference.positional_encoding))


def notebook(*cells):
    return nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import numpy as np")]
        + [nbformat.v4.new_code_cell(cell) for cell in cells])


@pytest.fixture(scope="module")
def identity():
    """The verification user when the tests run as root, as the grader would use it."""
    found = privileges.identity(privileges.VERIFY_USER)
    if found is not None:
        privileges.make_traversable(sandbox.python_paths())
    return found


@pytest.fixture(scope="module")
def tests(autograder_zip, tmp_path_factory):
    import zipfile

    folder = tmp_path_factory.mktemp("zip")
    zipfile.ZipFile(autograder_zip).extractall(folder)
    return load_tests(folder / "tests")


def run(source, identity, function="positional_encoding"):
    chunks = verifier.extraction.student_chunks(notebook(source), function)
    request = sandbox.build_request(function, len(checks.RETURN_PARTS[function]), chunks,
                                    verifier.extraction.reference_dependencies(function),
                                    [(c.name, c.inputs()) for c in cases_for(function)])
    return sandbox.run_function_child(request, identity, LIMITS)


def test_a_correct_function_comes_back_as_plain_float_arrays(identity):
    child = run(CORRECT_PE, identity)
    assert child.problem is None, child.stderr
    assert set(child.records) == {c.name for c in cases_for("positional_encoding")}
    arrays = [child.arrays[item["a"]] for record in child.records.values()
              for item in record["items"]]
    assert arrays and all(type(a) is np.ndarray and a.dtype == np.float64 for a in arrays)


def test_the_child_runs_as_the_verification_user_behind_landlock(identity):
    child = run(CORRECT_PE, identity)
    if identity is not None:
        assert child.confinement["uid"] == identity.uid != 0
    assert child.confinement["landlock_abi"] == jail.landlock_abi()


PROBES = {
    "read the reference": f"open({str(REFERENCE_FILE)!r}).read()",
    "import the reference": "__import__('reference')",
    "import the checks": "__import__('autograder.checks')",
    "fork": "__import__('os').fork()",
    "start a thread": "__import__('threading').Thread(target=print).start()",
    "write a file": "open('/tmp/kit-verify-probe', 'w').write('x')",
}


@pytest.mark.parametrize("what", PROBES)
def test_student_code_in_the_child_cannot(identity, what):
    source = f"def positional_encoding(n_positions, d_model):\n    {PROBES[what]}\n" \
             "    return np.zeros((n_positions, d_model)), np.zeros(1)"
    child = run(source, identity)
    raised = {record.get("raised") for record in child.records.values()}
    assert child.problem is None and raised - {None}, (what, child.records)
    assert not Path("/tmp/kit-verify-probe").exists()


def test_an_infinite_loop_is_stopped_by_the_limits(identity):
    child = run("def positional_encoding(n_positions, d_model):\n    while True:\n        pass",
                identity)
    assert child.limit == "time"


def test_a_forged_reply_is_refused_not_believed(identity):
    forge = ("def positional_encoding(n_positions, d_model):\n    import os\n"
             "    for fd in range(3, 20):\n        try:\n"
             "            os.write(fd, b'\\x00' * 8 + b'garbage')\n        except OSError:\n"
             "            pass\n    os._exit(0)")
    child = run(forge, identity)
    assert child.problem and not child.records


def test_replayed_results_read_exactly_like_the_in_kernel_test(tests, identity):
    wrong = CORRECT_PE.replace("np.cos(pos * omega[: d_model // 2])",
                               "np.cos(pos * omega[: d_model // 2] + 0.1)")
    child = run(wrong, identity)
    verified = verifier.verify_function("positional_encoding", tests["positional_encoding"], child)
    namespace = {"np": np}
    exec(wrong, namespace)
    in_kernel = tests["positional_encoding"]
    in_kernel.run({"positional_encoding": namespace["positional_encoding"]})
    hidden = [r.message for r in in_kernel.test_case_results if r.test_case.hidden]
    assert [r.message for r in verified.test_case_results] == hidden
    assert verified.score == in_kernel.score == 0


def test_otters_results_pickle_may_only_rebuild_otters_result_classes(tests):
    from otter.test_files import GradingResults

    results = GradingResults([tests["attention"]])
    assert isinstance(otter_hardening._SafePickle.loads(pickle.dumps(results)), GradingResults)

    class Payload:
        def __reduce__(self):
            return (os.system, ("true",))

    with pytest.raises(pickle.UnpicklingError):
        otter_hardening._SafePickle.loads(pickle.dumps(Payload()))


def test_otters_log_server_only_unpickles_plain_data():
    import otter.execute.logging as otter_logging

    otter_hardening.install()
    handler = otter_logging.LogRecordStreamHandler.__new__(otter_logging.LogRecordStreamHandler)
    assert handler.unpickle(pickle.dumps({"msg": "hola", "args": None})) == {"msg": "hola",
                                                                          "args": None}
    with pytest.raises(pickle.UnpicklingError):
        handler.unpickle(pickle.dumps(io.StringIO()))


def test_the_kernel_view_keeps_public_tests_and_never_the_answers(autograder_zip, tmp_path):
    import zipfile

    source = tmp_path / "zip"
    zipfile.ZipFile(autograder_zip).extractall(source)
    submission = tmp_path / "submission"
    shutil.copytree(source / "files", submission)
    shutil.copytree(source / "tests", submission / "tests")
    view = tmp_path / "view"
    view.mkdir()
    summary = views.kernel_view(submission, view,
                                list(checks.GRADED_FUNCTIONS) + ["student_extension"])
    copied = {p.relative_to(view).as_posix() for p in view.rglob("*") if p.is_file()}
    assert not any(p.startswith("reference/") for p in copied)
    for secret in ("checks", "cases", "diagnose", "misconceptions", "mutants"):
        assert f"autograder/{secret}.py" not in copied
    # lab.py, which the notebook runs, needs notebook_code; no test is left that needs more.
    assert "lab.py" in copied and "autograder/notebook_code.py" in copied
    attention = (view / "tests" / "attention.py").read_text()
    assert "hidden=False" in attention and "hidden=True" not in attention
    assert "check(" not in attention
    assert summary["stripped_tests"]
