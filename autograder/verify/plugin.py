"""The Otter plugin: out-of-kernel verification in every Otter grading of the zip.

Listed in the master's ASSIGNMENT CONFIG (``plugins:``), so it ships in ``otter_config.json``
and runs wherever the zip runs: Gradescope, ``otter grade``, ``otter run``. Its events:

* ``during_generate`` (``make assign``): store the fingerprints of the statements students
  receive, for the policy's given-code exemption;
* ``before_grading``: harden Otter (otter_hardening), read the zip's tests before any student
  code runs, and prepare the kernel: as root, a private grading folder, the kernel's own user
  and view (privileges, kernel_view, kernel);
* ``before_execution``: keep the notebook as submitted; always use the ``python3`` kernel;
* ``after_grading``: decide the results (decide.py), write the flags and the notes;
* ``generate_report``: what happened, for the instructor's log.
"""

import copy
import hashlib
import shutil
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path

from otter.plugins import AbstractOtterPlugin

from ..checks import GRADED_FUNCTIONS
from . import otter_hardening, privileges, views
from .decide import decide, unreported
from .flags import Flag, csv_text, feedback_markdown
from .kernel import KernelLimits, KernelSession
from .kernel_data import export_cell, read_export
from .sandbox import Limits, python_paths
from .verifier import data_variables

PLUGIN_NAME = "autograder.verify.plugin.VerificationPlugin"


@dataclass(frozen=True)
class Settings:
    """The plugin's configuration keys, with their defaults (see the master's config)."""

    kernel_seconds: int = KernelLimits.seconds
    kernel_memory_mb: int = KernelLimits.memory_mb
    kernel_output_mb: int = KernelLimits.output_mb
    child_cpu_seconds: int = Limits.cpu_seconds
    child_wall_seconds: float = Limits.wall_seconds
    child_memory_mb: int = Limits.memory_mb

    @classmethod
    def from_config(cls, config):
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in (config or {}).items() if key in known})

    def kernel_limits(self):
        return KernelLimits(seconds=self.kernel_seconds, memory_mb=self.kernel_memory_mb,
                            output_mb=self.kernel_output_mb)

    def child_limits(self):
        return Limits(cpu_seconds=self.child_cpu_seconds, wall_seconds=self.child_wall_seconds,
                      memory_mb=self.child_memory_mb)


def load_tests(folder: Path) -> dict:
    """The zip's test files, unrun, by question name, in Otter's order."""
    from otter.nbmeta_config import NBMetadataConfig
    from otter.test_files import create_test_file

    return {path.stem: create_test_file(str(path), NBMetadataConfig())
            for path in sorted(Path(folder).glob("*.py"))}


def kernel_verdicts(results):
    """{question: [(test case name, passed, message)]} from Otter's (untrusted) results."""
    if results.catastrophic_error is not None:
        return None
    return {name: [(str(r.test_case.name), bool(r.passed), r.message)
                   for r in test_file.test_case_results]
            for name, test_file in results.results.items()}


def kernel_problems(status: dict, execution_error, settings: Settings, notebook) -> list:
    """Flags for a kernel that did not run to its end, or ran out of memory on the way."""
    flags = []
    if status.get("deadline"):
        flags.append(Flag("límite", f"tu cuaderno no terminó de ejecutarse en "
                                    f"{settings.kernel_seconds} s y se detuvo"))
    elif status.get("signal") == "SIGXCPU":
        flags.append(Flag("límite", f"tu cuaderno superó {settings.kernel_seconds} s de CPU"))
    if execution_error and not flags:
        flags.append(Flag("ejecución", f"la ejecución de tu cuaderno se interrumpió "
                                        f"({execution_error.split(':')[0]})"))
    for number, cell in enumerate(getattr(notebook, "cells", []) or [], start=1):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            if output.get("output_type") == "error" and output.get("ename") == "MemoryError":
                flags.append(Flag("límite", "una celda de tu cuaderno agotó la memoria "
                                            "(MemoryError)"))
                return flags
    return flags


def _tree_digest(folder: Path) -> dict:
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file() and "__pycache__" not in
            path.parts}


def restore_support_folders(files: Path, submission: Path) -> list:
    """Put the zip's own support folders back beside the notebook; return the replaced names.

    Otter copies ``files/autograder`` beside the submission only if no folder of that name is
    there yet, so a student's zip with its own ``autograder/`` would feed the kernel its own
    checks. Files are always overwritten by Otter; folders are the gap.
    """
    replaced = []
    for ours in sorted(files.iterdir()) if files.is_dir() else []:
        theirs = submission / ours.name
        if ours.is_dir() and theirs.exists() and (not theirs.is_dir() or theirs.is_symlink()
                                                  or _tree_digest(theirs) != _tree_digest(ours)):
            if theirs.is_dir() and not theirs.is_symlink():
                shutil.rmtree(theirs)
            else:
                theirs.unlink()
            shutil.copytree(ours, theirs)
            replaced.append(ours.name)
    return replaced


class VerificationPlugin(AbstractOtterPlugin):
    """Out-of-kernel verification of the graded functions, with privilege separation."""

    def __init__(self, submission_path, submission_metadata, plugin_config):
        super().__init__(submission_path, submission_metadata, plugin_config)
        self.settings = Settings.from_config(plugin_config)
        self.given = list((plugin_config or {}).get("given", []))
        self.session = None
        self.notebook = None
        self.tests = {}
        self.files = {}  # the zip's files/, read before the notebook runs (views.snapshot)
        self.confined = False
        self.verify_identity = None
        self.report_lines = []
        self.problems = []  # flags found before the notebook runs
        self.done = False

    # --- make assign -----------------------------------------------------------------------

    def during_generate(self, otter_config, assignment):
        import nbformat

        from .policy import given_fingerprints

        if assignment is None:
            return
        path = Path(assignment.get_stu_path(assignment.master.name))
        if not path.is_absolute():  # relative to the master's folder; Otter has moved on since
            path = Path(assignment.master).parent / path
        student = nbformat.read(str(path), as_version=4)
        given = given_fingerprints(student)
        entries = otter_config.setdefault("plugins", [])
        for index, entry in enumerate(entries):
            if entry == PLUGIN_NAME:
                entries[index] = {PLUGIN_NAME: {"given": given}}
            elif isinstance(entry, dict) and PLUGIN_NAME in entry:
                entry[PLUGIN_NAME] = {**(entry[PLUGIN_NAME] or {}), "given": given}

    # --- grading ---------------------------------------------------------------------------

    def before_grading(self, config):
        otter_hardening.install()
        submission = Path(self.submission_path).resolve().parent
        root = submission.parent
        source_tests = root / "source" / "tests"
        self.tests = load_tests(source_tests if source_tests.is_dir() else submission / "tests")
        for name in restore_support_folders(root / "source" / "files", submission):
            self.problems.append(Flag("política", f"tu entrega traía su propia carpeta `{name}/`, "
                                                  "que se ha sustituido por la del corrector"))
        kernel_identity = privileges.identity(privileges.KERNEL_USER)
        self.verify_identity = privileges.identity(privileges.VERIFY_USER)
        self.confined = kernel_identity is not None
        if self.confined:
            if privileges.make_private(root):
                self.report_lines.append(f"grading folder {root} made private to root")
            changed = privileges.make_traversable(python_paths())
            if changed:
                self.report_lines.append(f"made traversable for the sandbox users: {changed}")
        self.files = views.snapshot(root / "source" / "files")
        self.session = KernelSession(kernel_identity, self.settings.kernel_limits(), submission,
                                     list(self.tests))
        otter_hardening.around_next_execution(
            _executing(self.session, self.settings.kernel_limits()))

    def before_execution(self, submission):
        if hasattr(submission, "cells"):
            self.notebook = copy.deepcopy(submission)
            # Gradescope forces python3; `otter run` would start whatever kernel was named.
            submission.setdefault("metadata", {}).setdefault("kernelspec", {})["name"] = "python3"
            variables = [variable for name, test_file in self.tests.items()
                         if name not in GRADED_FUNCTIONS
                         for variable in data_variables(test_file)]
            if variables and self.session is not None:
                submission.cells.append(export_cell(variables, self.session.export_path))
        return submission

    def after_grading(self, results):
        if self.done:  # the tolerant runner may call us again after a failure of ours
            return
        self.done = True
        try:
            self._decide(results)
        except Exception:  # fail closed: the kernel's word alone never scores a code question
            self.report_lines.append("verification failed:\n" + traceback.format_exc())
            self._fail_closed(results)

    def _decide(self, results):
        status = self.session.status() if self.session else {}
        execution_error = results.get_plugin_data(otter_hardening.EXECUTION_ERROR_KEY)
        notebook = self.notebook
        if notebook is None:
            import nbformat

            notebook = nbformat.v4.new_notebook()
        problems = self.problems + kernel_problems(status, execution_error, self.settings,
                                                   results.notebook)
        data = read_export(self.session.export_path) if self.session else None
        with views.materialized(self.files) as files:
            decision = decide(notebook, self.tests, kernel_verdicts(results),
                              confined=self.confined, identity=self.verify_identity,
                              limits=self.settings.child_limits(), given=self.given,
                              problems=problems, data=data, files=files if self.files else None)
        self._write(results, decision.test_files, decision.flags, decision.notes)
        separation = "on" if self.confined else "OFF (not root)"
        self.report_lines.append(f"privilege separation: {separation}")
        self.report_lines.append(f"kernel: {status}")
        for name, child in decision.verification.children.items():
            if child is not None:
                self.report_lines.append(
                    f"verified {name} in {child.seconds:.2f} s as {child.confinement}"
                    + (f"; problem: {child.problem}; stderr: {child.stderr[-300:]}"
                       if child.problem else ""))

    def _fail_closed(self, results):
        flag = Flag("ejecución", "la verificación independiente falló; una persona revisará "
                                 "tu entrega")
        files = {name: unreported(test_file, "no se pudo verificar tu función")
                 for name, test_file in self.tests.items()}
        self._write(results, files, [flag], [])

    def _write(self, results, test_files, flags, notes):
        record_decision(results, test_files, flags, notes, self.confined)

    def generate_report(self):
        return "\n".join(self.report_lines) or None


@contextmanager
def _executing(session, limits: KernelLimits):
    """Around Otter's execution, ``after_grading`` included: the kernel through our launcher,
    outputs and cells bounded; the session's folder goes when Otter is done with it."""
    try:
        with session.running(), otter_hardening.bounded_execution(limits.output_mb * 2**20,
                                                                  limits.seconds):
            yield
    finally:
        session.close()


def record_decision(results, test_files, flags, notes, confined):
    """Write a decision into Otter's results, the same way on every grading path, so that
    Gradescope, `otter run` and `make grade` show the same results.json."""
    results.results = dict(test_files)
    results._catastrophic_error = None
    results.all_hidden = False
    results._plugin_data = {}
    results.set_plugin_data(PLUGIN_NAME, {
        "flags": [flag.to_dict() for flag in flags],
        "flags_text": csv_text(flags),
        "notes": list(notes),
        "privilege_separation": confined,
    })
    results.set_output(feedback_markdown(flags, notes) or None)


def flags_of(results) -> str:
    """The ``flags`` column for ``final_grades.csv``, from results this plugin decided."""
    data = results.get_plugin_data(PLUGIN_NAME) or {}
    return data.get("flags_text", "")
