"""Close the doors through which a kernel reaches into Otter's grading process.

Otter 7.0.0 trusts its kernel in three places, each patched here, in the grading process only:

1. It unpickles the kernel's results file (``otter.execute.grade_notebook``). A pickle can run
   any code on load, in the grader, before any plugin sees the results. Now only Otter's own
   result classes may be rebuilt from it.
2. Its log server unpickles whatever arrives on a local TCP port, from any local process.
   Now only plain data may.
3. A kernel that dies (``os._exit``), or a cell that never ends, raises out of
   ``grade_notebook`` and no results are written at all (Otter issue #723). Now the run ends
   with empty in-kernel results and the ``after_grading`` plugins still run, so the
   verification still decides the scores, and the flags say what happened.

While a notebook runs, nbclient also keeps at most ``KernelLimits.output_mb`` of cell outputs
and stops any cell at the kernel's deadline.
"""

import io
import pickle
from contextlib import contextmanager, nullcontext

_RESULT_CLASSES = {
    ("otter.test_files", "GradingResults"),
    ("otter.test_files.abstract_test", "TestCase"),
    ("otter.test_files.abstract_test", "TestCaseResult"),
    ("otter.test_files.exception_test", "ExceptionTestFile"),
    ("otter.test_files.exception_test", "test_case"),
}
EXECUTION_ERROR_KEY = "kit-verify-execution-error"

# A context manager to hold around the next notebook execution only (see around_next_execution).
_around_next = None


class _ResultsUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _RESULT_CLASSES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a kernel's results")


class _PlainDataUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a log record")


class _SafePickle:
    """Stands in for the ``pickle`` module inside ``otter.execute``, which only loads."""

    UnpicklingError = pickle.UnpicklingError

    @staticmethod
    def load(file):
        return _ResultsUnpickler(file).load()

    @staticmethod
    def loads(data):
        return _ResultsUnpickler(io.BytesIO(data)).load()


def around_next_execution(context_manager):
    """Hold ``context_manager`` around the next ``grade_notebook`` call, and that one only."""
    global _around_next
    _around_next = context_manager


def _tolerant(grade_notebook):
    def grade_notebook_or_empty(*args, **kwargs):
        global _around_next
        from otter.test_files import GradingResults

        around, _around_next = _around_next, None
        with around or nullcontext():
            try:
                return grade_notebook(*args, **kwargs)
            except Exception as exc:  # the kernel died or a cell timed out: keep grading
                results = GradingResults.without_results(exc)
                results.set_plugin_data(EXECUTION_ERROR_KEY, f"{type(exc).__name__}: {exc}"[:500])
                plugins = kwargs.get("plugin_collection")
                if plugins is not None:
                    plugins.run("after_grading", results)
                return results

    grade_notebook_or_empty.kit_verify_tolerant = True
    return grade_notebook_or_empty


def install():
    """Apply the three patches; idempotent."""
    import otter.execute
    import otter.execute.logging as otter_logging
    from otter.run.run_autograder.runners import python_runner

    otter.execute.pickle = _SafePickle
    otter_logging.LogRecordStreamHandler.unpickle = (
        lambda self, data: _PlainDataUnpickler(io.BytesIO(data)).load())
    if not getattr(python_runner.grade_notebook, "kit_verify_tolerant", False):
        python_runner.grade_notebook = _tolerant(python_runner.grade_notebook)


@contextmanager
def bounded_execution(max_output_bytes, cell_timeout):
    """While active, the ExecutePreprocessor that ``grade_notebook`` creates keeps at most
    ``max_output_bytes`` of outputs and gives each cell ``cell_timeout`` seconds."""
    import nbconvert.preprocessors as preprocessors
    import nbformat

    original = preprocessors.ExecutePreprocessor

    class BoundedExecutePreprocessor(original):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.timeout = cell_timeout
            self.kit_output_bytes = 0
            self.kit_truncated = False

        def output(self, outs, msg, display_id, cell_index):
            self.kit_output_bytes += len(str(msg.get("content", "")))
            if self.kit_output_bytes <= max_output_bytes:
                return super().output(outs, msg, display_id, cell_index)
            if not self.kit_truncated:
                self.kit_truncated = True
                outs.append(nbformat.v4.new_output(
                    "stream", name="stderr",
                    text=f"[salida truncada: más de {max_output_bytes // 2**20} MB]\n"))
            return None

    preprocessors.ExecutePreprocessor = BoundedExecutePreprocessor
    try:
        yield
    finally:
        preprocessors.ExecutePreprocessor = original
