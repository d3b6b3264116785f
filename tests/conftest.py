"""Shared fixtures: one build of the assignment per test session, in a temporary folder."""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The kit, its engine, and the lessons' packages.
for folder in (ROOT, ROOT / "autograder", ROOT / "assignments"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


# One salt for the whole session, so that tests can compute a submission's hidden inputs.
TEST_SALT = "dGhlIGtpdCdzIHRlc3Qgc2FsdCwgbm90IGEgc2VjcmV0IQ=="


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory):
    """A fresh `make assign` output, built once per session with the tests' salt.

    Otter's own solution self-check is skipped here because the Otter-path tests grade the
    solution explicitly; the build is otherwise the one `make assign` runs.
    """
    from autograder.assign import build

    previous = os.environ.get("KIT_GRADING_SALT")
    os.environ["KIT_GRADING_SALT"] = TEST_SALT
    try:
        return build(tmp_path_factory.mktemp("dist"), run_tests=False)
    finally:
        if previous is None:
            del os.environ["KIT_GRADING_SALT"]
        else:
            os.environ["KIT_GRADING_SALT"] = previous


@pytest.fixture(scope="session")
def autograder_zip(built_dist):
    from autograder.assign import find_autograder_zip

    path = find_autograder_zip(built_dist)
    assert path is not None, "make assign must produce exactly one autograder zip"
    return path
