"""The Otter plugin: the kit's grading, wherever Otter grades the zip.

Listed in ``otter_config.json``, so Gradescope, ``otter grade`` and ``otter run`` all load it:
the first two from the zip's ``files/``, which the zip's own run_otter.py puts on ``sys.path``,
``otter run`` from the ``kit-autograder`` wheel installed beside the instructor's Otter. Its
events:

* ``during_assign`` and ``during_generate`` (``otter assign``): write the kit's own
  ``run_otter.py`` into the zip (build/otter_templates.py), and store the fingerprints of the
  statements students receive, which the reviewer's hints exempt (policy.py);
* ``before_grading``: grade the submission, start to end, in the kit's sandbox
  (grading.Grader): the notebook runs once there, and every verdict is decided outside it.
  Then the upload's files leave Otter's working folder (otter_workdir.py), where Otter would
  unpickle its log and start its kernel;
* ``before_execution``: hand Otter a notebook without the student's cells (and remove the
  file Otter has just read if Python could import it), so that Otter's own kernel neither runs
  student code nor imports a file of the upload (the sandbox is the only place that does);
* ``after_grading``: replace Otter's results with the kit's, the visible output with the
  student's Spanish feedback, and each question's box with that question's section of it;
* ``generate_report``: what happened, for the instructor's log (never shown to students:
  the zip sets ``show_stdout: false``).

Fail closed: if the kit's grading fails for any reason, every question scores 0 with a
Spanish reason, and the log says why.
"""

import os
import traceback
from pathlib import Path

from otter.plugins import AbstractOtterPlugin

from . import otter_entry, otter_workdir, policy
from .bundle import PLUGIN, from_source
from .verdicts.record import Flag

NOT_GRADED = ("no se pudo evaluar tu entrega por un error interno del corrector (no es culpa "
              "tuya); una persona la revisará")


class VerificationPlugin(AbstractOtterPlugin):
    def __init__(self, submission_path, submission_metadata, plugin_config):
        super().__init__(submission_path, submission_metadata, plugin_config)
        self.record, self.grader, self.report = None, None, []

    # --- otter assign -------------------------------------------------------------------

    def during_assign(self, assignment):
        from .build import otter_templates

        # Otter instantiates its plugins just before Otter Generate: the kit's run_otter.py is
        # handed over here, and taken back in during_generate.
        otter_templates.use_kit_run_otter()

    def during_generate(self, otter_config, assignment):
        import nbformat

        from .build import otter_templates
        from .build.otter_master import spanish_check_cells
        from .similarity import parts as similarity_parts

        # Otter Generate has fetched its templates by now, so Otter's own are back for
        # whatever else this process builds.
        if not otter_templates.restore_otters_templates():
            raise RuntimeError(
                "kit_autograder's zip is built with `otter assign`, whose run writes the kit's "
                "run_otter.py; `otter generate` alone would write Otter's, which cannot find "
                "the kit in files/.")
        path = Path(assignment.get_stu_path(assignment.master.name))
        if not path.is_absolute():  # relative to the master's folder; Otter has moved on since
            path = Path(assignment.master).parent / path
        # The notebook as students get it: the build guards Otter's check cells.
        student = spanish_check_cells(nbformat.read(str(path), as_version=4))
        cells = [cell.source for cell in student.cells if cell.cell_type == "code"]
        for entry in otter_config.get("plugins", []):
            if isinstance(entry, dict) and PLUGIN in entry:
                entry[PLUGIN] = {**(entry[PLUGIN] or {}),
                                 "given": policy.given_fingerprints(cells),
                                 similarity_parts.SETTING:
                                     similarity_parts.shared_material(student.cells)}

    # --- grading ------------------------------------------------------------------------

    def before_grading(self, config):
        from .grading import Grader
        from .sandbox.client import Sandbox

        # Never resolved: an upload's symlink must not move Otter's folders elsewhere.
        submission = Path(os.path.abspath(self.submission_path))
        root = submission.parent.parent
        source = root / "source"
        try:
            if os.geteuid() == 0:
                # Otter's folders hold the reference (beside the submission too); where a job
                # runs as a user of its own without Landlock, only permissions keep it out.
                os.chmod(root, 0o700)
            # The zip's run_otter.py started the sandbox before Otter was imported, and the
            # upload's notebook in it if it is this file; otter run started neither.
            early = otter_entry.take_started()
            if early is not None and early.path == submission:
                self.grader, sandbox = early.grader, early.sandbox
                with sandbox:
                    self.record = early.finish()
            else:
                bundle = from_source(source)
                self.grader = Grader(bundle)
                if early is not None:
                    early.abandon()
                sandbox = (early.sandbox if early is not None
                           else Sandbox(otter_entry.limits_of(bundle.settings), jobs=1))
                with sandbox:
                    self.record = self.grader.grade_file(sandbox, submission, submission.stem)
            self.report.append(f"sandbox: {sandbox.description}")
        except Exception:  # fail closed: Otter's kernel never decides a score
            self.report.append("kit grading failed:\n" + traceback.format_exc())
            self.record = None
        finally:
            otter_workdir.clear_upload(submission.parent, keep=submission.name,
                                       refill=otter_entry.otters_kernel_runs())

    def before_execution(self, submission):
        # Otter has read the file it grades: its kernel starts in this folder next.
        otter_workdir.drop_if_importable(self.submission_path)
        if hasattr(submission, "cells"):
            submission.cells = []  # Otter's kernel runs Otter's own cells, no student code
            # The student's metadata may hold anything (a kernelspec that is a string, say):
            # Otter's kernel gets a kernelspec of its own.
            from nbformat import NotebookNode

            if not isinstance(submission.get("metadata"), dict):
                submission["metadata"] = NotebookNode()
            submission["metadata"]["kernelspec"] = NotebookNode(
                name="python3", display_name="Python 3", language="python")
        return submission

    def after_grading(self, results):
        from .report import feedback, otter_results

        record = self.record
        if record is None:
            if self.grader is not None:
                record = self.grader.rejected(Path(self.submission_path).name, "entrega",
                                              NOT_GRADED)
                record.flags.append(Flag("ejecución", NOT_GRADED))
        if record is None:
            results.results = {}
            results._catastrophic_error = RuntimeError(NOT_GRADED)
            return
        tests = {q: self.grader.bundle.test_file(q) for q in self.grader.tests}
        ours = otter_results.grading_results(record, tests)
        sections = feedback.sections_for(self.grader, record)
        results.results = ours.results if record.graded else {
            q: _zeroed(test_file, record.reason) for q, test_file in tests.items() if test_file}
        results._catastrophic_error = None
        results.all_hidden = False
        # Otter writes results.json itself: its boxes are the feedback's questions (and the
        # page's output the rest), as make grade writes them.
        results.set_output(otter_results.overview(sections) if record.graded
                           else feedback.join(sections))
        results.set_plugin_data(PLUGIN, {"flags": [flag.text() for flag in record.flags],
                                         "scores": record.scores,
                                         "boxes": otter_results.boxes(sections)})
        otter_results.install_boxes()
        self.report += [f"{record.file}: {record.earned:g}/{record.possible:g}",
                        *(f"flag: {flag.text()}" for flag in record.flags)]

    def generate_report(self):
        return "\n".join(self.report) or None


def refused_upload(autograder_dir):
    """``(reason, feedback)`` for the upload in ``autograder_dir``/submission if the kit
    refuses it (not JSON, empty, another format...), as ``make grade`` words them; else None.

    For the zip's run_otter.py: Otter reads the notebook before any plugin runs, so an upload
    it cannot read stops Otter with no results, and the student would never learn why.
    """
    from .grading import Grader
    from .report import feedback
    from .submission import Rejected, find_submissions, load

    root = Path(autograder_dir)
    uploads = find_submissions(root / "submission")
    if len(uploads) != 1:
        return None
    grader = Grader(from_source(root / "source"))
    try:
        load(uploads[0], grader.bundle.assignment_name)
    except Rejected as rejected:
        record = grader.rejected(uploads[0].name, uploads[0].stem, rejected.reason,
                                 rejected.otter_error)
        return record.reason, feedback.render_for(grader, record)
    return None


def _zeroed(test_file, reason):
    from otter.test_files import TestCaseResult

    test_file.test_case_results = [TestCaseResult(test_case=case, passed=False,
                                                  message=f"❌ {reason}")
                                   for case in test_file.test_cases if case.hidden]
    return test_file
