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
``source/files``, by Otter's own ``prepare_files``). What stays is what no import can load and
Otter still needs: the file Otter grades, which Otter reads (as JSON) before
``before_execution``, and a zip at the top, which ``otter grade`` copies back out of its
container once grading ends (an error there fails the submission). A file Otter grades that
Python could import (a ``.py`` script, which Otter grades when there is no notebook) is removed
in ``before_execution``, once Otter has read it and before the kernel starts. The rule is the
folder's, not a list of dangerous names: nothing of the upload is left for an import to find.
"""

import importlib.machinery
import os
import shutil
from pathlib import Path


def clear_upload(submission_dir, keep):
    """Everything the upload brought into ``submission_dir`` is removed, but ``keep`` (the
    name of the file Otter is about to read) and the zips at its top; Otter's own files are
    put back as Otter puts them."""
    folder = Path(submission_dir)
    for entry in folder.iterdir():
        kept_zip = entry.suffix.lower() == ".zip" and entry.is_file() and not entry.is_symlink()
        if entry.name != keep and not kept_zip:
            remove(entry)
    _otters_own_files(folder.parent)


def drop_if_importable(path):
    """``path`` removed if Python could import it from its folder (``.py``, ``.pyc``, ...)."""
    path = Path(path)
    if path.suffix in importlib.machinery.all_suffixes():
        remove(path)


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
