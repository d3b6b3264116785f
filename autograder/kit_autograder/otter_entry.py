"""What the zip's run_otter.py does around Otter's own call, so that a student on Gradescope
waits about a second, not nine.

Gradescope and ``otter grade``'s image start grading with the kit's run_otter.py (``otter run``
never does, and keeps Otter's whole run). Measured there, one upload cost about 3.9 s of CPU:
about 1 s to import Otter (nbconvert and pandas), the kit's sandbox warming up (numpy,
matplotlib, IPython) and running the notebook, and about 1.5 s for Otter's own kernel, started
only to run Otter's tests on the emptied notebook the plugin hands it, whose results the plugin
then replaces whole (otter_plugin.after_grading). Two things change, and nothing Otter writes:

* the sandbox starts before Otter is imported, and warms up in its zygote's own process
  while Otter is imported here (``start_sandbox``; the plugin takes it in ``before_grading``);
* Otter's kernel is not started (``without_otters_kernel``): Otter's ``grade_notebook`` is
  replaced, for this process, by one that runs the same plugin events on the same notebook
  with no kernel between them. Every field of results.json comes from the plugin's
  ``after_grading``, so results.json and results.pkl are what Otter's run writes
  (tests/test_otter_paths.py compares Gradescope's with ``otter run``'s, which keeps the kernel).
"""

from pathlib import Path

_started = None  # the sandbox start_sandbox started, until the plugin takes it


def start_sandbox(autograder_dir):
    """Start the one-job sandbox the plugin will grade in, with the zip's limits, without
    waiting for it to be warm: its zygote imports in its own process while Otter is imported
    here, and the plugin's first job waits for it."""
    global _started
    from .bundle import from_source
    from .sandbox.client import Sandbox

    limits = limits_of(from_source(Path(autograder_dir) / "source").settings)
    _started = Sandbox(limits, jobs=1, wait=False)


def limits_of(settings):
    """The sandbox's limits from the plugin's settings in otter_config.json."""
    from .sandbox.client import Limits

    return Limits(notebook_seconds=float(settings.get("timeout", Limits.notebook_seconds)),
                  memory_mb=int(settings.get("memory_mb", Limits.memory_mb)))


def take_sandbox():
    """The sandbox start_sandbox started, or None if none was; it is the caller's to close."""
    global _started
    started, _started = _started, None
    return started


def close_untaken_sandbox():
    """Otter stopped before the plugin graded: the sandbox started for it stops too."""
    sandbox = take_sandbox()
    if sandbox is not None:
        sandbox.close()


def without_otters_kernel():
    """Otter's grading, for this process, with the plugin's events but no kernel between
    them: the kernel would only run Otter's tests on the notebook the plugin empties."""
    from otter.run.run_autograder.runners import python_runner

    python_runner.grade_notebook = _grade_with_plugins_only


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
