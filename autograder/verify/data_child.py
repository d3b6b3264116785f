"""The data-question child: run a question's tests on the values the kernel exported.

A question such as ``student_extension`` is graded on a variable (``resultado``), and its
tests run ``lab.py``, which runs the student's functions. So they cannot run in the grader,
and the kernel, where the student's code already ran, cannot be trusted with them. This
child runs them instead: a fresh confined process (see ``sandbox``) whose working folder holds
the question's test file, the kit modules it imports, ``lab.py`` and the submitted notebook,
and nothing of the reference or the hidden cases.

Otter is not imported (it takes over a second to load): a stand-in ``otter.test_files``
records each ``@test_case``, and the grader words the verdicts as Otter would.

Protocol: ``argv[1]`` the jail spec; stdin an 8-byte length and a JSON request
``{"tests": {question: path}, "data": {variable: value}}``; stdout an 8-byte length and
``{"verdicts": {question: [{"function", "passed", "type", "message", "line"}]}, "jail": …}``.
"""

import copy
import inspect
import json
import os
import struct
import sys
import types

if __name__ != "__main__":  # pragma: no cover - as a program, jail.py's source precedes this
    from .jail import enter

MAX_MESSAGE_CHARS = 10_000


class _TestCase:
    """Stand-in for ``otter.test_files.test_case``: keeps the decorated function."""

    def __init__(self, name=None, points=None, hidden=False, success_message=None,
                 failure_message=None):
        self.test_func = None

    def __call__(self, test_func):
        self.test_func = test_func
        return self


def _install_otter_stand_in():
    otter = types.ModuleType("otter")
    test_files = types.ModuleType("otter.test_files")
    test_files.test_case = _TestCase
    otter.test_files = test_files
    sys.modules["otter"], sys.modules["otter.test_files"] = otter, test_files


def _line_in(path, exc):
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _run_file(path, data):
    namespace = {"__name__": "prueba"}
    with open(path, encoding="utf-8") as f:
        exec(compile(f.read(), path, "exec"), namespace)
    verdicts = []
    for case in [value for value in namespace.values() if isinstance(value, _TestCase)]:
        function = case.test_func
        names = list(inspect.signature(function).parameters)
        arguments = {name: copy.deepcopy(data) if name == "env" else copy.deepcopy(data.get(name))
                     for name in names}
        verdict = {"function": function.__name__, "passed": True}
        try:
            function(**arguments)
        except Exception as exc:  # a failed test, as Otter's ExceptionTestFile.run sees it
            verdict.update(passed=False, type=type(exc).__name__,
                           message=str(exc)[:MAX_MESSAGE_CHARS], line=_line_in(path, exc))
        verdicts.append(verdict)
    return verdicts


def main():
    spec = json.loads(sys.argv[1])
    devnull = os.open(os.devnull, os.O_RDWR)  # before the jail, which may hide /dev/null
    reply_fd = os.dup(1)
    stdin = os.fdopen(os.dup(0), "rb")
    applied = enter(spec)
    size = struct.unpack(">Q", stdin.read(8))[0]
    request = json.loads(stdin.read(size).decode("utf-8"))
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    _install_otter_stand_in()
    sys.path.insert(0, os.getcwd())
    verdicts = {}
    for question, path in request["tests"].items():
        try:
            verdicts[question] = _run_file(os.path.abspath(path), request["data"])
        except Exception as exc:  # a test file that does not even load fails every case
            verdicts[question] = {"error": f"{type(exc).__name__}: {exc}"[:MAX_MESSAGE_CHARS]}
    payload = json.dumps({"verdicts": verdicts, "jail": applied}).encode("utf-8")
    view = memoryview(struct.pack(">Q", len(payload)) + payload)
    while view:
        view = view[os.write(reply_fd, view):]
    os._exit(0)


if __name__ == "__main__":
    main()
