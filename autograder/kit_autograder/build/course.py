"""Where a lesson's parts live in a course checkout. A lesson is its own places, and nothing
else in the kit names it:

    assignments/<lesson>/    the lesson package: lesson.py (the contract, kit_autograder/lesson.py),
                             master.py, its cases, judge and catalog, and its optional parts
                             (lab.py, figures/, explorer/index.html, synthetic.py, assessment.md,
                             examples/: the demo submissions `make grade` grades by default)
    reference/<lesson>/      its hidden reference (or in its own folder: it never ships to students)
    rubrics/<lesson>.yaml    its points

Adding a lesson is adding those three; no tracked file changes.
"""

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_LESSON = "attention"  # the course's first lesson: what `make` builds without LESSON=
DEMO_FOLDER = "examples"  # assignments/<lesson>/examples/: the lesson's bundled demo, if it has one


@dataclass(frozen=True)
class LessonSources:
    name: str
    root: Path = ROOT

    @property
    def folder(self) -> Path:
        return self.root / "assignments" / self.name

    @property
    def master(self) -> Path:
        return self.folder / "master.py"

    @property
    def rubric(self) -> Path:
        return self.root / "rubrics" / f"{self.name}.yaml"

    @property
    def reference(self):
        """``reference/<lesson>/``, or None for a lesson that keeps its reference in its folder."""
        folder = self.root / "reference" / self.name
        return folder if folder.is_dir() else None

    @property
    def figures(self) -> Path:
        return self.folder / "figures"

    @property
    def examples(self) -> Path:
        """Its bundled demo submissions, what `make grade` grades without SUBMISSIONS= (the
        Makefile names this folder too); never built into the zip or the student folder."""
        return self.folder / DEMO_FOLDER

    @property
    def explorer(self):
        page = self.folder / "explorer" / "index.html"
        return page if page.is_file() else None

    def guide(self, lesson):
        """The student's guide (assessment.md): the lesson's ``STUDENT_GUIDE``, else its own
        ``assessment.md``, else None (the points table alone is then the guide)."""
        relative = getattr(lesson, "STUDENT_GUIDE", "assessment.md")
        path = (self.folder / relative).resolve()
        return path if path.is_file() else None

    def import_paths(self):
        """What goes first on sys.path to import the lesson: its package's parent, the course
        (for reference/), and the shared student-side modules (the lab runner and validator)."""
        return [self.root / "assignments", self.root, self.root / "autograder"]

    def check(self):
        """An instructor-facing error when the lesson's required places are missing: a
        ``LESSON=`` the course does not have, or a lesson not yet complete."""
        required = (self.folder, self.rubric) if not self.folder.is_dir() else (
            self.master, self.rubric)
        missing = [path.relative_to(self.root).as_posix() + ("/" if path == self.folder else "")
                   for path in required if not path.exists()]
        if missing:
            lessons = sorted(folder.name for folder in (self.root / "assignments").glob("*/")
                             if (folder / "master.py").is_file())
            raise FileNotFoundError(
                f"{', '.join(missing)}: not found; LESSON= is one of the course's lessons "
                f"({', '.join(lessons) or 'none yet'}), and each has its master.py and its "
                "rubric (docs/lesson-authors.md)")


def zip_name(lesson: str) -> str:
    """Otter stamps its zip's name with the time; every path uses this one instead."""
    return f"{lesson}-autograder.zip"
