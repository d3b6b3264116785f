"""What the zip's run_otter.py does around Otter's own call, so that a student on Gradescope
waits about a second, not nine.

Gradescope and ``otter grade``'s image start grading with the kit's run_otter.py (``otter run``
never does, and keeps Otter's whole run). Measured there, one upload cost about 3.9 s of CPU:
about 1 s to import Otter (nbconvert and pandas), the kit's sandbox warming up (numpy,
matplotlib, IPython) and running the notebook, and about 1.5 s for Otter's own kernel, started
only to run Otter's tests on the emptied notebook the plugin hands it, whose results the plugin
then replaces whole (otter_plugin.after_grading). Three things change, and nothing Otter writes:

* the sandbox starts before Otter is imported, and warms up in its zygote's own process
  while Otter is imported here (``start_grading``);
* the upload's notebook starts running in it before Otter is imported too, when it is the
  file Otter will grade (the one notebook of the upload): importing Otter, the longest step
  of this process, no longer delays it. The plugin takes the grading in ``before_grading``
  and finishes it there, or, if Otter grades another file, closes it and grades that one;
* Otter's kernel is not started (``without_otters_kernel``): Otter's ``grade_notebook`` is
  replaced, for this process, by one that runs the same plugin events on the same notebook
  with no kernel between them. Every field of results.json comes from the plugin's
  ``after_grading``, so results.json and results.pkl are what Otter's run writes
  (tests/test_otter_paths.py compares Gradescope's with ``otter run``'s, which keeps the kernel).
"""

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

_started = None  # what start_grading started, until the plugin takes it
_kernel_replaced = False  # by without_otters_kernel


@dataclass
class Early:
    """The sandbox started for this run, and the upload's grading if it started early."""

    sandbox: object
    grader: object = None
    path: Path = None  # the notebook whose run started, as Otter will name it
    _thread: threading.Thread = None
    _result: dict = field(default_factory=dict)

    def finish(self):
        """The started upload graded: its record (the grading's own error re-raised)."""
        self._thread.join()
        if "error" in self._result:
            raise self._result["error"]
        return self.grader.finish(self._result["started"])

    def abandon(self):
        """The started job ended unheard: Otter grades another file."""
        if self._thread is not None:
            self._thread.join()
            started = self._result.get("started")
            if started is not None:
                started.job.close(kill=True)


def start_grading(autograder_dir):
    """Start the one-job sandbox the plugin will grade in, with the zip's limits, without
    waiting for it to be warm (its zygote imports in its own process while Otter is imported
    here), and, if the upload is one notebook, hand it to a job as soon as the zygote is warm.
    The job waits in a thread of its own: this one goes on to import Otter meanwhile."""
    global _started
    from .bundle import from_source
    from .sandbox.client import Sandbox

    root = Path(autograder_dir)
    if os.geteuid() == 0:
        # Before any job runs: Otter's folders hold the reference (beside the submission too);
        # where a job runs as a user of its own without Landlock, only permissions keep it out.
        os.chmod(root, 0o700)
    bundle = from_source(root / "source")
    _started = Early(Sandbox(limits_of(bundle.settings), jobs=1, wait=False))
    # Imported here, once the zygote has started: numpy among them.
    from .grading import Grader
    from .submission import Rejected, load

    upload = the_notebook_otter_grades(root / "submission", bundle.config)
    if upload is None:
        return
    try:
        loaded = load(upload, bundle.assignment_name)
    except Rejected:  # the plugin says why, as it always has
        return
    _started.grader, _started.path = Grader(bundle), upload

    def start(early=_started):
        try:
            early._result["started"] = early.grader.start(early.sandbox, loaded, upload.stem)
        except BaseException as exc:  # the plugin's own handling, once it finishes it
            early._result["error"] = exc

    # Not the zygote's parent: bubblewrap dies with the thread that started it, not with this
    # one, which only waits for it to be warm and writes the notebook to its job.
    _started._thread = threading.Thread(target=start, daemon=True)
    _started._thread.start()


def the_notebook_otter_grades(folder, config):
    """The file Otter's Python runner will grade, if it is the upload's one notebook: Otter
    takes the only ``*.ipynb`` of the submission folder (unzipping first, with ``zips``)."""
    if config.get("zips"):
        return None
    try:
        notebooks = [path for path in Path(folder).iterdir()
                     if path.name.endswith(".ipynb") and not path.name.startswith(".")]
    except OSError:
        return None
    if len(notebooks) != 1 or not notebooks[0].is_file():
        return None
    return Path(os.path.abspath(notebooks[0]))


def limits_of(settings):
    """The sandbox's limits from the plugin's settings in otter_config.json."""
    from .sandbox.client import Limits

    return Limits(notebook_seconds=float(settings.get("timeout", Limits.notebook_seconds)),
                  call_seconds=float(settings.get("call_timeout", Limits.call_seconds)),
                  memory_mb=int(settings.get("memory_mb", Limits.memory_mb)))


def take_started():
    """What start_grading started (an ``Early``), or None; it is the caller's to close."""
    global _started
    started, _started = _started, None
    return started


def close_untaken_sandbox():
    """Otter stopped before the plugin graded: what was started for it stops too."""
    started = take_started()
    if started is not None:
        started.sandbox.close()  # its job with it; a thread still waiting for it gives up


def without_otters_kernel():
    """Otter's grading, for this process, with the plugin's events but no kernel between
    them: the kernel would only run Otter's tests on the notebook the plugin empties."""
    global _kernel_replaced
    from otter.run.run_autograder.runners import python_runner

    python_runner.grade_notebook = _grade_with_plugins_only
    _kernel_replaced = True


def otters_kernel_runs():
    """Whether Otter starts its kernel in this process after the plugin's before_grading."""
    return not _kernel_replaced


def _grade_with_plugins_only(submission_path, *, plugin_collection=None, script=False, **_):
    import nbformat
    from otter.test_files import GradingResults
    from otter.utils import NBFORMAT_VERSION

    # As Otter's grade_notebook reads it, before the same two events.
    if script:
        with open(submission_path, encoding="utf-8") as f:
            notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f.read())])
    else:
        notebook = nbformat.read(submission_path, as_version=NBFORMAT_VERSION)
    if plugin_collection is not None:
        notebook = plugin_collection.before_execution(notebook)
    results = GradingResults([], notebook=notebook)
    if plugin_collection is not None:
        plugin_collection.run("after_grading", results)
    return results
