"""The autograder zip, opened once: its config, its tests, its lesson and its secret salt.

Every score comes from this zip, the same file Gradescope, ``otter run`` and ``otter grade``
use. Its ``otter_config.json`` names the kit's plugin with its settings (the lesson's package,
the salt that seeds each submission's hidden inputs); ``tests/`` carries the points and the
test names; ``files/`` carries the lesson, the reference and the student folder's support
files. A folder already laid out as Otter's ``/autograder/source`` opens the same way.
"""

import ast
import base64
import copy
import json
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from . import lesson as lesson_module
from .parsing import parse

PLUGIN = "kit_autograder.otter_plugin.VerificationPlugin"
STUDENT_FOLDER = "student"  # files/student/: what students get beside their notebook


class BundleError(Exception):
    """The autograder zip cannot be used at all, so no submission can be graded."""


@dataclass
class Bundle:
    source: Path  # laid out as /autograder/source
    config: dict
    settings: dict  # the plugin's entry in otter_config.json
    _tests: dict = field(default_factory=dict, repr=False)
    _lesson: object = field(default=None, repr=False)

    @property
    def assignment_name(self):
        return self.config.get("assignment_name")

    @property
    def files(self) -> Path:
        return self.source / "files"

    @property
    def salt(self) -> bytes:
        """The secret behind every submission's hidden inputs. Fail closed: without one, every
        submission would draw the same inputs, which a leaked table of answers would answer."""
        try:
            salt = base64.b64decode(str(self.settings.get("salt") or ""), validate=True)
        except (ValueError, TypeError):
            salt = b""
        if len(salt) < 16:
            raise BundleError("the zip's otter_config.json carries no usable salt for the hidden "
                              "inputs (at least 16 bytes, base64): rebuild it with `make assign`")
        return salt

    @property
    def lesson(self):
        if self._lesson is None:
            # The student folder's modules too: the lesson's lab imports notebook_code, which
            # sits beside lab.py only in that folder (the kit's own checkout has it elsewhere).
            self._lesson = lesson_module.load([self.files, self.files / STUDENT_FOLDER],
                                              self.settings["lesson"])
        return self._lesson

    def support_files(self) -> dict:
        """{name: bytes} of the student folder's files, placed beside the notebook to run."""
        folder = self.files / STUDENT_FOLDER
        return {path.name: path.read_bytes() for path in sorted(folder.iterdir())
                if path.is_file()} if folder.is_dir() else {}

    def question_names(self):
        """The zip's graded questions in the lesson's order (its functions, then its data
        questions), then any other test file the zip holds, by name: the order every output
        shows. The lesson's practice exercises (``practice`` in the plugin's settings, from the
        rubric) are left out: their checks are public, worth 0 and for the student alone, so
        grading neither runs nor reports them."""
        shipped = {path.stem for path in (self.source / "tests").glob("*.py")}
        shipped -= set(self.settings.get("practice") or ())
        ordered = [q for q in lesson_module.questions(self.lesson) if q in shipped]
        return ordered + sorted(shipped - set(ordered))

    def test_parameters(self, question):
        """The parameters of ``question``'s test cases, which Otter fills with the notebook's
        variables of the same names, read from the test file's text (every function decorated
        with Otter's ``test_case``). The notebook starts running before Otter is imported on
        Gradescope, and must be told already which variables to hand back (grading.Grader)."""
        path = self.source / "tests" / f"{question}.py"
        if not path.is_file():
            return []
        names = []
        for node in parse(path.read_bytes()).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    _is_test_case(decorator) for decorator in node.decorator_list):
                arguments = node.args
                names += [argument.arg for argument in (
                    arguments.posonlyargs + arguments.args + [arguments.vararg]
                    + arguments.kwonlyargs + [arguments.kwarg]) if argument is not None]
        return names

    def test_file(self, question):
        """A fresh, unrun Otter test file: points, visibility and messages as shipped.

        The file is read and executed once per batch; each caller gets a shallow copy, whose
        own ``test_case_results`` is all that results ever set (the cases are shared, unrun)."""
        from otter.nbmeta_config import NBMetadataConfig
        from otter.test_files import create_test_file

        if question not in self._tests:
            path = self.source / "tests" / f"{question}.py"
            self._tests[question] = (create_test_file(str(path), NBMetadataConfig())
                                     if path.is_file() else None)
        pristine = self._tests[question]
        return copy.copy(pristine) if pristine is not None else None

    def otter_config(self):
        from otter.run import AutograderConfig

        return AutograderConfig(self.config)


def _is_test_case(decorator):
    """``@test_case(...)`` or ``@<module>.test_case(...)``: what Otter registers as a case (a
    bare ``@test_case``, never called, registers nothing)."""
    if not isinstance(decorator, ast.Call):
        return False
    target = decorator.func
    return (isinstance(target, ast.Name) and target.id == "test_case"
            or isinstance(target, ast.Attribute) and target.attr == "test_case")


def settings_of(config: dict) -> dict:
    for entry in config.get("plugins", []) or []:
        if isinstance(entry, dict) and PLUGIN in entry:
            return dict(entry[PLUGIN] or {})
    raise BundleError(f"the zip's otter_config.json does not configure {PLUGIN}")


def from_source(source, shown=None) -> Bundle:
    """The autograder unzipped at ``source``; its errors name it ``shown`` (the zip)."""
    source = Path(source)
    shown = shown or source
    try:
        config = json.loads((source / "otter_config.json").read_text("utf-8"))
    except FileNotFoundError:
        raise BundleError(f"{shown}: holds no otter_config.json; {NOT_OURS}") from None
    except (OSError, ValueError) as exc:
        raise BundleError(f"{shown}: its otter_config.json cannot be read "
                          f"({type(exc).__name__}); {NOT_OURS}") from None
    if not list((source / "tests").glob("*.py")):
        raise BundleError(f"{shown}: holds no tests/*.py; {NOT_OURS}")
    return Bundle(source, config, settings_of(config))


NOT_OURS = "give the autograder zip that `make assign` builds, or build it again"


class OpenedZip:
    """``with OpenedZip(path) as bundle:`` the zip unzipped in a private temporary folder."""

    def __init__(self, zip_path):
        self.zip_path = Path(zip_path)
        self.workdir = None

    def __enter__(self) -> Bundle:
        self.workdir = Path(tempfile.mkdtemp(prefix="kit-bundle-"))
        source = self.workdir / "source"
        try:
            with zipfile.ZipFile(self.zip_path) as zf:
                zf.extractall(source)
        except (OSError, zipfile.BadZipFile) as exc:
            self.__exit__()
            raise BundleError(f"{self.zip_path}: cannot be opened as a zip ({exc}); "
                              f"{NOT_OURS}") from None
        try:
            return from_source(source, shown=self.zip_path)
        except BundleError:
            self.__exit__()
            raise

    def __exit__(self, *exc):
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
