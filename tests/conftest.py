"""Shared fixtures: one build of the assignment per test session, in a temporary folder."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "assignments"):  # the kit, and the lessons' packages
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory):
    """A fresh `make assign` output (student/ and autograder/), built once per session.

    Otter's own solution self-check is skipped here because `test_otter_run` grades the
    solution explicitly; the build is otherwise the one `make assign` runs.
    """
    from autograder.assign import build

    return build(tmp_path_factory.mktemp("dist"), run_tests=False)


@pytest.fixture(scope="session")
def autograder_zip(built_dist):
    from autograder.assign import find_autograder_zip

    path = find_autograder_zip(built_dist)
    assert path is not None, "make assign must produce exactly one autograder zip"
    return path
