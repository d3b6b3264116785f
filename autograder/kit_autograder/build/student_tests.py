"""``dist/student/tests/``: the notebook's public tests as files, for ``otter check``.

``otter check notebook_student.ipynb`` reads ``./tests``; the notebook keeps its tests in its
metadata (``tests: files: false``), where ``grader.check`` finds them, so the student folder
gets them as files too. The files are exactly the tests the student notebook already
carries, which Otter Assign wrote without the hidden ones, with one change: the kit's public
tests are worth 0 points (a question's points are all in its hidden tests), and ``otter
check`` divides by the points possible. Here each file is worth 1 point, split evenly among
its tests. Nothing grades these files.
"""

import re

# Otter 7.0.0 writes a test file's points on one line, and each test's in its decorator.
FILE_POINTS = re.compile(r"^points = .*$", re.M)
CASE_POINTS = re.compile(r"^@test_case\(points=[^,]*,", re.M)


def student_tests(notebook) -> dict:
    """{file name: source} of the public tests in a student notebook's Otter metadata."""
    tests = notebook.metadata.get("otter", {}).get("tests", {})
    files = {}
    for question, source in tests.items():
        if "hidden=True" in source:
            raise ValueError(f"the student notebook carries a hidden test of {question}")
        source, file_points = FILE_POINTS.subn("points = None", source)
        source = CASE_POINTS.sub("@test_case(points=None,", source)
        if file_points != 1:
            raise ValueError(f"the test file of {question} does not read as Otter 7.0.0 writes "
                             "it: one `points = ...` line")
        files[f"{question}.py"] = source
    return files
