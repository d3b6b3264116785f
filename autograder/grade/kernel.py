"""What one forked child does with one submission: run it as Otter's kernel would.

Otter (``otter.execute.grade_notebook``) transforms the notebook with its
``GradingPreprocessor`` (an init cell that enters grading mode, a final cell that runs every
test file not yet checked and pickles Otter's ``GradingResults``), then nbclient runs it cell
by cell in an ipykernel, carrying on after errors. Here the same preprocessor transforms the
notebook and the cells run, in the same order and with the same error handling, in the IPython
shell the warm parent built before forking. So the tests that decide the score are the zip's
own, run by Otter's own ``Checker`` in the student's namespace, exactly as in the kernel.

Five things differ from `otter run`'s kernel; none changes what an honest submission scores:

* Every notebook runs as python3, whatever kernel it names, as on Gradescope; `otter run`
  stops at a kernel name it does not know.
* Otter's init cell ships the kernel's log records to a socket in the grader; here they stay
  in the child (the records only feed Otter's debug log).
* Figures are not rendered to PNG: ``plt.show()`` and the end of each cell close them, as the
  inline backend does, but nothing is drawn.
* Printed output is not copied into IPython's history (``engine.warm``), only into a bounded
  buffer for the feedback.
* The zip's support files always replace any folder of the same name that a student's zip
  brings; Otter keeps the student's, which would let it replace the checks.

The child reports to the parent through a JSON file, never a pickle, so nothing the student's
code writes can execute in the grader.
"""

import io
import json
import os
import re
import shutil
import sys
from glob import glob
from pathlib import Path

# Imported before any fork: a child forgets the grader's `autograder` package (isolate_imports).
from autograder.verify.kernel_data import export_cell, read_export

from .confine import enter_confined_view, isolate_signals

OTTER_LOG_HOST, OTTER_LOG_PORT = "127.0.0.1", 9
SEND_LOGS_CALL = f'logging.send_logs("{OTTER_LOG_HOST}", {OTTER_LOG_PORT})'

# The lines of the cells that only drive Otter (its init cell, `grader.check(...)`, the export
# cell). Their output would show what the hidden tests printed through the student's
# functions, and their errors are the grader's business, so neither reaches the feedback.
_GRADER_LINE = re.compile(r"^\s*(import otter|(\w+\s*=\s*)?(otter\.Notebook|\w+\.(check|check_all|export))"
                          r"\(.*\))\s*$")

MAX_MESSAGE_CHARS = 10_000
KEPT_OUTPUT_CHARS = 20_000


class BoundedOutput(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` for student code: keeps the first characters, counts the rest.

    A notebook that prints 100 MB costs the time to print it and no memory.
    """

    def __init__(self, keep=KEPT_OUTPUT_CHARS):
        self.keep = keep
        self.parts, self.kept, self.total = [], 0, 0
        self.recording = True

    def write(self, text):
        text = str(text)
        if self.recording:
            self.total += len(text)
            room = self.keep - self.kept
            if room > 0:
                piece = text[:room]
                self.parts.append(piece)
                self.kept += len(piece)
        return len(text)

    def writable(self):
        return True

    def isatty(self):
        return False

    @property
    def encoding(self):
        return "utf-8"

    def text(self):
        return "".join(self.parts)


def prepare_submission_folder(folder: Path, submission, bundle):
    """The layout Otter builds in ``/autograder/submission`` (see ``prepare_files``)."""
    folder.mkdir(parents=True)
    for name, data in submission.extra_files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (folder / submission.notebook_name).write_bytes(submission.notebook_bytes)
    if bundle.files.is_dir():
        for item in bundle.files.iterdir():
            target = folder / item.name
            if target.is_dir():
                shutil.rmtree(target)
            if item.is_dir():
                shutil.copytree(item, target)
            else:
                shutil.copy(item, target)
    shutil.rmtree(folder / "tests", ignore_errors=True)
    shutil.copytree(bundle.source / "tests", folder / "tests")
    (folder / "__init__.py").touch()


def shadowed_modules(bundle):
    """The top-level modules of the zip's ``files/``, read before a confined child loses
    access to the bundle."""
    return {path.stem if path.suffix == ".py" else path.name
            for path in bundle.files.iterdir()} if bundle.files.is_dir() else set()


def isolate_imports(folder: Path, shadowed, grader_paths):
    """Make ``import autograder`` and friends find the zip's copies beside the notebook.

    The warm parent imported the grader's own ``autograder`` package; the child must forget it
    and every other module of the zip's ``files/`` (``shadowed``), and drop the grader's folders
    from ``sys.path``, so that the tests run the zip's code as they do in Otter's kernel.
    """
    for name in list(sys.modules):
        if name.split(".")[0] in shadowed:
            del sys.modules[name]
    dropped = {os.path.realpath(p) for p in grader_paths}
    kept = [p for p in sys.path if p and os.path.realpath(p) not in dropped]
    # An ipykernel's sys.path holds its working folder ('') between the standard library and
    # site-packages; Otter's init cell appends the folder again at the end.
    first_site = next((i for i, p in enumerate(kept) if "-packages" in p), len(kept))
    sys.path[:] = kept[:first_site] + [str(folder)] + kept[first_site:]
    import importlib

    importlib.invalidate_caches()


def otter_notebook(submission, folder: Path, bundle, results_path: Path):
    """The notebook as Otter's ``grade_notebook`` would hand it to nbclient, and where each cell
    came from: ``origin[id(cell)]`` is its 1-based position in the student's notebook."""
    import nbformat
    from otter.execute.preprocessor import GradingPreprocessor
    from traitlets.config import Config

    nb = nbformat.reads(submission.notebook_bytes.decode("utf-8"), as_version=4)
    origin = {id(cell): index for index, cell in enumerate(nb.cells, start=1)}
    config = bundle.config
    c = Config()
    c.GradingPreprocessor.cwd = str(folder)
    c.GradingPreprocessor.test_dir = "./tests"
    c.GradingPreprocessor.tests_glob = sorted(glob("./tests/*.py"))
    c.GradingPreprocessor.results_path = str(results_path)
    c.GradingPreprocessor.seed = config.seed
    c.GradingPreprocessor.seed_variable = config.seed_variable
    c.GradingPreprocessor.otter_log = None
    c.GradingPreprocessor.variables = config.serialized_variables
    c.GradingPreprocessor.logging_server_host = OTTER_LOG_HOST
    c.GradingPreprocessor.logging_server_port = OTTER_LOG_PORT
    c.GradingPreprocessor.force_python3_kernel = True
    preprocessor = GradingPreprocessor(config=c)
    nb, _ = preprocessor.preprocess(nb)
    init = nb.cells[0]
    if SEND_LOGS_CALL not in init.source:
        raise RuntimeError("Otter's init cell changed: review kernel.otter_notebook")
    init.source = init.source.replace(SEND_LOGS_CALL, "pass  # log records stay in the child")
    return nb, origin


def is_grader_cell(source):
    lines = [line for line in source.splitlines()
             if line.strip() and not line.strip().startswith("#")]
    return bool(lines) and all(_GRADER_LINE.match(line) for line in lines)


def _cell_line(exc):
    """The line of the student's cell where ``exc`` surfaced, if it did in the cell itself."""
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<ipython-input-"):
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError):
        line = exc.lineno
    return line


def _first_line(source):
    for line in source.splitlines():
        if line.strip():
            return line.strip()[:80]
    return ""


def _short(text, limit=300):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "…"


def execute(shell, nb, origin, output: BoundedOutput, progress):
    """Run the code cells like nbclient with ``allow_errors``; the errors of the student's cells."""
    errors = []
    for cell in nb.cells:
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        if "skip-execution" in cell.metadata.get("tags", []):
            continue
        number = origin.get(id(cell))  # None for the cells Otter adds
        progress(number)
        grader = number is None or is_grader_cell(cell.source)
        output.recording = not grader
        result = shell.run_cell(cell.source, store_history=True)
        error = result.error_before_exec or result.error_in_exec
        if error is not None and number is not None:
            errors.append({"cell": number, "first_line": _first_line(cell.source),
                           "error": type(error).__name__, "message": _short(error),
                           "line": _cell_line(error), "grader_cell": grader})
    output.recording = False
    return errors


def collect_verdicts(results_path: Path):
    """Each test case's verdict from the ``GradingResults`` the final cell pickled, as plain data.

    Returns ``(verdicts, catastrophic)``: Otter's order of test files with their cases'
    ``(name, passed, message)``, or ``None`` and the reason Otter would give for no results.
    """
    import pickle

    from otter.test_files import GradingResults

    try:
        with open(results_path, "rb") as f:
            results = pickle.load(f)
        if not isinstance(results, GradingResults):
            raise TypeError("Results deserialized from grading notebook were not a "
                            "GradingResults instance")
    except Exception as exc:  # Otter turns any failure here into GradingResults.without_results
        return None, f"{type(exc).__name__}: {_short(exc)}"
    verdicts = [[name, [[str(tcr.test_case.name), bool(tcr.passed),
                         _short(tcr.message or "", MAX_MESSAGE_CHARS)]
                        for tcr in test_file.test_case_results]]
                for name, test_file in results.results.items()]
    return verdicts, None


def grade_in_child(submission, bundle, workdir: Path, grader_paths, progress, identity=None,
                   data_names=()):
    """Everything the child does between the fork and its report. Returns the report.

    ``identity``: the unprivileged user to become (``confine``), or None to stay as is.
    ``data_names``: notebook variables that data questions are graded on; their values are
    reported as plain JSON for the verifier, which grades those questions outside the child.
    """
    from IPython.core.interactiveshell import InteractiveShell

    folder = workdir / "submission"
    prepare_submission_folder(folder, submission, bundle)
    shadowed = shadowed_modules(bundle)
    if identity is not None:
        folder = enter_confined_view(folder, workdir, identity)
    else:
        isolate_signals()
    os.chdir(folder)
    isolate_imports(folder, shadowed, grader_paths)
    results_path = workdir / "results.pkl"
    nb, origin = otter_notebook(submission, folder, bundle, results_path)

    output = BoundedOutput()
    sys.stdout = sys.stderr = output
    shell = InteractiveShell.instance()
    cell_errors = execute(shell, nb, origin, output, progress)
    progress("done")
    verdicts, catastrophic = collect_verdicts(results_path)
    return {"verdicts": verdicts, "catastrophic": catastrophic, "cell_errors": cell_errors,
            "output": output.text(), "output_chars": output.total,
            "confined": identity is not None,
            "data": export_data(shell, data_names, workdir / "data.json")}


def export_data(shell, names, path: Path):
    """The data variables as plain JSON values, through the same cell the Otter plugin appends.

    Run as a cell of the student's own namespace, after everything else; the grader reads the
    result as untrusted data (``kernel_data.read_export``).
    """
    if not names:
        return None
    shell.run_cell(export_cell(names, path).source, store_history=False)
    return read_export(path)


def write_report(path: Path, report):
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(report), encoding="utf-8")
    os.replace(tmp, path)
