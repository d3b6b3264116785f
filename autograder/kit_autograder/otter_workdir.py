"""Otter's working folder holds none of the upload's files once the kit has graded it.

On every Otter door (Gradescope, ``otter run``, ``otter grade``'s image) the upload is unpacked
into ``submission/``, and Otter works there after the plugin's ``before_grading``:

* it unpickles ``.OTTER_LOG`` from there with dill, in the grader's own process;
* it starts its kernel there as ``python -m ipykernel_launcher``, and ``-m`` puts the working
  folder first on the kernel's ``sys.path``: an upload's ``ipykernel_launcher.py``, ``otter.py``
  or any other module the kernel imports would run instead, as the grader's user (root on
  Gradescope), outside the kit's sandbox;
* its kernel appends that folder to ``sys.path`` again, for the support files.

By ``before_grading``'s end the kit has read the upload (the sandbox ran it), so the folder is
emptied of it and refilled with what Otter itself puts there (``source/tests`` and
``source/files``, by Otter's own ``prepare_files``). Only the file Otter grades stays, because
Otter reads it (as JSON, or as text for a script) before ``before_execution``, which removes it
before the kernel starts. The rule is the folder's, not a list of dangerous names: nothing of
the upload is left for any import to find.
"""

import os
import shutil
from pathlib import Path


def clear_upload(submission_dir, keep):
    """Everything the upload brought into ``submission_dir`` is removed, but ``keep`` (the
    name of the file Otter is about to read); Otter's own files are put back as Otter puts
    them."""
    folder = Path(submission_dir)
    for entry in folder.iterdir():
        if entry.name != keep:
            remove(entry)
    _otters_own_files(folder.parent)


def remove(path):
    """``path`` gone, whatever it is: a symlink (to a folder too) is unlinked, never followed."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _otters_own_files(autograder_dir):
    """``source/files`` and ``source/tests`` copied into ``submission/`` by Otter's own code,
    which runs with the autograder folder as its working folder."""
    from otter.run.run_autograder.runners.abstract_runner import AbstractLanguageRunner

    here = os.getcwd()
    os.chdir(autograder_dir)
    try:
        # prepare_files reads nothing of the runner: only relative paths under this folder.
        AbstractLanguageRunner.prepare_files(None)
    finally:
        os.chdir(here)
