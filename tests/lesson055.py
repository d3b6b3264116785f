"""Where the tests find lesson 055's sources: the course layout's own answer, never a path of
their own (kit_autograder/build/course.py)."""

from kit_autograder.build.course import LessonSources, zip_name

SOURCES = LessonSources("attention")
MASTER = SOURCES.master
RUBRIC = SOURCES.rubric
ZIP_NAME = zip_name(SOURCES.name)


def student_files():
    """``[(source, name)]`` of the files that ship beside lesson 055's notebook."""
    from autograder.assign import load_lesson, student_files as files

    return files(SOURCES, load_lesson(SOURCES))
