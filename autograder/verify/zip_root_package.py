"""``autograder`` package shim, shipped as ``autograder/__init__.py`` at the zip's root.

Gradescope (and ``otter grade``) run ``python /autograder/source/run_otter.py``, so the
grading process imports from ``/autograder/source``, while ``autograder_files`` live in
``/autograder/source/files``. Otter imports the verification plugin in that process, before
any student code runs. This shim makes ``autograder.*`` load from ``files/autograder`` and
puts ``files/`` on ``sys.path`` for ``reference``, so the grader uses the zip's own copies and
never the ones beside the submission, which a student's zip could replace.
"""

import sys
from pathlib import Path

_FILES = Path(__file__).resolve().parent.parent / "files"
__path__ = [str(_FILES / "autograder")]
if str(_FILES) not in sys.path:
    sys.path.insert(0, str(_FILES))
