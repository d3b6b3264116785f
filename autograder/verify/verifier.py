"""Step 3 of grading: verify the graded functions outside the kernel, and decide the scores.

For each code question, a confined child (``sandbox``) runs the submission's definition on
the hidden inputs. Back in the grader, each hidden test of the zip runs unchanged, except that
the function it receives *replays* what the child returned: ``checks.check`` then compares
plain float arrays with the reference, and Otter's own ``TestFile.run`` words the result, so
the messages are the ones the in-kernel test would have given.

Questions graded on a variable rather than a function (``student_extension``) run their
tests in a data child (data_child.py) on the values the kernel exported as JSON: the tests
run ``lab.py``, hence student code, so they may run neither in the grader nor in the kernel.

The in-kernel verdicts, when there are any, only serve to raise a ``discrepancia`` flag.
"""

import builtins
import copy
import inspect
import os
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from otter.test_files.abstract_test import TestCaseResult

from attention.cases import cases_for
from ..checks import GRADED_FUNCTIONS, RETURN_PARTS
from . import extraction, policy, sandbox, views
from .flags import Flag


@dataclass
class Verification:
    """What the grader decided, independently of the kernel."""

    test_files: dict = field(default_factory=dict)  # question -> Otter TestFile with results
    flags: list = field(default_factory=list)  # Flag
    children: dict = field(default_factory=dict)  # function -> sandbox.ChildResult


def hidden_test_name(function, case_name):
    """The hidden test function of a case, as ``master.hidden_test_source`` names it (Otter
    names the test *case* "attention - 4"; the function keeps this name)."""
    return f"test_{function}_{case_name}"


# --- replaying a child's results ------------------------------------------------------------


def _exception(type_name, message):
    """An exception that reads like the student's: same type name, same message."""
    name = type_name if str(type_name).isidentifier() else "Exception"
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type) and issubclass(builtin, Exception):
        try:
            return builtin(message)
        except TypeError:  # a builtin with a stricter constructor (UnicodeDecodeError…)
            pass
    return type(name, (Exception,), {})(message)


class _Unconvertible:
    """Stands for a returned value the child could not turn into floats, failing the same way."""

    def __init__(self, type_name, message):
        self.error = (type_name, message)

    def __array__(self, dtype=None, copy=None):
        raise _exception(*self.error)


class Replay:
    """A stand-in for the student's function: returns (or raises) what the child recorded."""

    def __init__(self, record, arrays, problem=None):
        self.record, self.arrays, self.problem = record, arrays, problem

    def _item(self, item):
        if "a" in item:
            return self.arrays[item["a"]].copy()
        if "too_large" in item:
            return _Unconvertible("ValueError", f"devuelve {item['too_large']} números, "
                                                "demasiados para este caso")
        return _Unconvertible(item.get("unconvertible", "TypeError"), item.get("message", ""))

    def __call__(self, **_inputs):
        record = self.record
        if record is None:
            raise self.problem
        if "raised" in record:
            if record.get("not_implemented"):
                raise NotImplementedError(record.get("message", ""))
            raise _exception(record["raised"], record.get("message", ""))
        container = record.get("container")
        items = [self._item(item) for item in record.get("items", [])]
        if container is None:
            return items[0]
        if "items" not in record:
            items = [None] * int(record.get("length", 0))
        return tuple(items) if container == "tuple" else list(items)


def _problem_exception(child: sandbox.ChildResult):
    kind = {"time": TimeoutError, "memory": MemoryError}.get(child.limit, RuntimeError)
    return kind(f"al verificarla fuera del cuaderno, {child.problem}")


# --- running tests in the grader ------------------------------------------------------------


def _run_one(test_file, test_case, environment):
    """Otter's own ``run`` on a one-case copy of ``test_file``: same verdict, same wording."""
    single = copy.copy(test_file)
    single.test_cases = [test_case]
    single.run(environment)
    return single.test_case_results[0]


def with_results(test_file, results):
    verified = copy.copy(test_file)
    verified.test_case_results = results
    verified._score = None
    return verified


def _function_environment(function, test_case, child, case_names):
    """What a hidden test of ``function`` receives under the function's name."""
    case = case_names.get(test_case.body.test_func.__name__)
    if child is None or case is None:
        return {function: None}
    record = child.records.get(case)
    if record is not None and record.get("missing"):
        return {function: None}
    problem = None if record is not None else _problem_exception(child)
    return {function: Replay(record, child.arrays, problem)}


def verify_function(function, test_file, child, kernel_public=None):
    """The question's TestFile: hidden cases judged on the child's outputs; public cases (worth
    0 points) carried over from the kernel when it reported them, otherwise left out."""
    case_names = {hidden_test_name(function, case.name): case.name for case in cases_for(function)}
    results = []
    for test_case in test_file.test_cases:
        if not test_case.hidden:
            if kernel_public and test_case.name in kernel_public:
                results.append(kernel_public[test_case.name])
            continue
        environment = _function_environment(function, test_case, child, case_names)
        results.append(_run_one(test_file, test_case, environment))
    return with_results(test_file, results)


# --- data questions -------------------------------------------------------------------------


def data_variables(test_file):
    """The notebook variables a data question's tests take, by parameter name."""
    names = []
    for test_case in test_file.test_cases:
        for name in inspect.signature(test_case.body.test_func).parameters:
            if name not in names:
                names.append(name)
    return names


def otter_failure_message(test_file, verdict):
    """A failed case worded as ``ExceptionTestFile.run`` words it (``_generate_error_message``)."""
    line = verdict.get("line") or 1
    lines = test_file.source.split("\n")
    shown = textwrap.indent(lines[line - 1] if line <= len(lines) else "", "  ")
    message = str(verdict.get("message", "")).strip("'")
    return (f"❌ Test case failed\nError at line {line} in test {test_file.name}:\n{shown}\n"
            f"{verdict.get('type', 'Exception')}: {message}")


def verify_data(test_file, child, question):
    """A data question's TestFile, from the data child's verdicts on the exported values."""
    verdicts = child.records.get(question) if child is not None and not child.problem else None
    if not isinstance(verdicts, list):
        reason = (verdicts or {}).get("error") if isinstance(verdicts, dict) else None
        reason = reason or (f"al verificarla fuera del cuaderno, {child.problem}"
                            if child is not None and child.problem else "no se pudo verificar")
        return with_results(test_file, [TestCaseResult(tc, f"❌ {reason}", False)
                                        for tc in test_file.test_cases])
    by_function = {v.get("function"): v for v in verdicts if isinstance(v, dict)}
    results = []
    for test_case in test_file.test_cases:
        verdict = by_function.get(test_case.body.test_func.__name__)
        if verdict is None:
            results.append(TestCaseResult(test_case, "❌ esta prueba no se ejecutó", False))
        elif verdict.get("passed") is True:
            results.append(TestCaseResult(test_case, "✅ Test case passed", True))
        else:
            results.append(TestCaseResult(test_case, otter_failure_message(test_file, verdict),
                                          False))
    return with_results(test_file, results)


def _data_request(notebook, test_files, data, files):
    """The data child's request, and its folder's contents built in a temporary folder."""
    tests = {name: test_file.source for name, test_file in test_files.items()}
    values = {variable: (data or {}).get(variable)
              for test_file in test_files.values() for variable in data_variables(test_file)}
    request = sandbox.data_request({name: views.data_test_path(name) for name in tests}, values)
    folder = Path(tempfile.mkdtemp(prefix="kit-verify-data-"))
    views.data_folder(files, folder, notebook, tests)
    return request, folder


# --- the whole submission -------------------------------------------------------------------


def _function_request(notebook, function):
    """A function child's request and the policy's word on its imports; (None, []) when the
    notebook does not define ``function``."""
    chunks = extraction.student_chunks(notebook, function)
    if chunks is None:
        return None, []
    request = sandbox.build_request(
        function, len(RETURN_PARTS[function]), chunks,
        extraction.reference_dependencies(function),
        [(case.name, case.inputs()) for case in cases_for(function)])
    return request, policy.graded_import_violations(function, chunks)


def _limit_flags(subject, child):
    if child is None:
        return []
    flags = []
    if child.problem:
        kind = "límite" if child.limit else "ejecución"
        flags.append(Flag(kind, f"la verificación de `{subject}` {child.problem}"))
    raised = {record.get("raised") for record in child.records.values()
              if isinstance(record, dict)}
    if "MemoryError" in raised:
        flags.append(Flag("límite", f"`{subject}` agotó la memoria disponible en la "
                                    "verificación"))
    return flags


def verify_submission(notebook, test_files: dict, *, identity=None,
                      limits: sandbox.Limits = sandbox.Limits(),
                      kernel_public: Optional[dict] = None, given=(), data=None,
                      files=None) -> Verification:
    """Verify the questions of ``test_files`` ({name: unrun Otter TestFile}).

    Graded functions run in one function child each; the other questions' tests run in one
    data child on ``data`` (the kernel's exported variables), with the zip's ``files``
    folder (``lab.py``, the kit modules). Without ``files`` those questions are left out.
    ``kernel_public`` maps question -> {public test name: the kernel's TestCaseResult};
    ``given`` are the fingerprints of the statements students received (see policy.py).
    """
    verification = Verification()
    functions = [name for name in test_files if name in GRADED_FUNCTIONS]
    data_tests = {name: test_file for name, test_file in test_files.items()
                  if name not in GRADED_FUNCTIONS} if files is not None else {}
    # Everything that parses code happens here, in this thread: CPython 3.11's ast module is
    # not safe to use from several threads at once. The threads only wait on children.
    requests = {name: _function_request(notebook, name) for name in functions}
    data_request, data_folder = (_data_request(notebook, data_tests, data, files)
                                 if data_tests else (None, None))
    with ThreadPoolExecutor(max_workers=min(len(functions) + 1, os.cpu_count() or 1)) as pool:
        jobs = {name: pool.submit(sandbox.run_function_child, request, identity, limits)
                for name, (request, _) in requests.items() if request is not None}
        data_job = (pool.submit(sandbox.run_data_child, data_request, identity, limits,
                                data_folder) if data_tests else None)
        children = {name: (jobs[name].result() if name in jobs else None, requests[name][1])
                    for name in functions}
        data_child = data_job.result() if data_job else None
    for name in functions:
        child, violations = children[name]
        verification.children[name] = child
        verification.test_files[name] = verify_function(
            name, test_files[name], child, (kernel_public or {}).get(name))
        verification.flags += [Flag("política", v.message, v.cell) for v in violations]
        verification.flags += _limit_flags(name, child)
    for name, test_file in data_tests.items():
        verification.children[name] = data_child
        verification.test_files[name] = verify_data(test_file, data_child, name)
    if data_tests:
        verification.flags += _limit_flags(", ".join(data_tests), data_child)
    verification.flags += [Flag("política", v.message, v.cell)
                           for v in policy.notebook_violations(notebook, given)]
    return verification


def discrepancies(verified: dict, kernel: dict) -> list:
    """Flags for every question whose kernel verdicts on hidden tests differ from the verified
    ones. ``kernel`` maps question -> {test case name: passed}, from the in-kernel run."""
    flags = []
    for name, test_file in verified.items():
        reported = kernel.get(name)
        judged = {r.test_case.name: r.passed for r in test_file.test_case_results
                  if r.test_case.hidden}
        if reported is None:
            flags.append(Flag("discrepancia", f"`{name}`: tu cuaderno no informó de ningún "
                                              "resultado, pero sí se pudo verificar"))
            continue
        if any(case in reported and reported[case] != passed for case, passed in judged.items()):
            in_kernel = sum(bool(reported.get(case)) for case in judged)
            flags.append(Flag(
                "discrepancia",
                f"`{name}`: dentro de tu cuaderno pasaron {in_kernel} de {len(judged)} pruebas "
                f"ocultas; en la verificación independiente, {sum(judged.values())}"))
    return flags
