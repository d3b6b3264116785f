"""The autograder zip, opened once per batch: its config, its test files and its support files.

Every score `make grade` gives comes from this zip, the same file Gradescope, `otter run` and
`otter grade` use: its tests judge the submission and its ``otter_config.json`` shapes the
Gradescope results.
"""

import json
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from otter.run import AutograderConfig
from otter.test_files import create_test_file
from otter.nbmeta_config import NBMetadataConfig
from otter.utils import OTTER_CONFIG_FILENAME


class BundleError(Exception):
    """The autograder zip cannot be used at all, so no submission can be graded."""


@dataclass
class AutograderBundle:
    zip_path: Path
    source: Path  # the unzipped zip, as Gradescope's /autograder/source
    config: AutograderConfig
    test_paths: list = field(default_factory=list)  # the zip's tests/*.py, sorted as Otter globs them
    _points: dict = field(default=None, repr=False)

    @classmethod
    def open(cls, zip_path, workdir: Path):
        zip_path = Path(zip_path)
        source = Path(workdir) / "source"
        try:
            with zipfile.ZipFile(zip_path) as zf:
                zf.extractall(source)
        except (OSError, zipfile.BadZipFile) as exc:
            raise BundleError(f"cannot open the autograder zip {zip_path}: {exc}") from exc
        config_path = source / OTTER_CONFIG_FILENAME
        config = json.loads(config_path.read_text("utf-8")) if config_path.exists() else {}
        tests = sorted((source / "tests").glob("*.py"))
        if not tests:
            raise BundleError(f"{zip_path} holds no tests/*.py: is it an Otter autograder zip?")
        return cls(zip_path, source, AutograderConfig(config), tests)

    @property
    def assignment_name(self):
        return self.config.assignment_name

    @property
    def files(self) -> Path:
        """The zip's ``autograder_files``, copied beside every submission as Otter does."""
        return self.source / "files"

    def load_test_file(self, name):
        """A fresh, unrun Otter test file of the zip: points, visibility and messages as shipped."""
        path = self.source / "tests" / f"{name}.py"
        if not path.is_file():
            return None
        return create_test_file(str(path), NBMetadataConfig())

    def question_names(self):
        return [path.stem for path in self.test_paths]

    def points_per_question(self):
        """``{question: points possible}``, in the zip's order."""
        if self._points is None:
            self._points = {name: self.load_test_file(name).possible
                            for name in self.question_names()}
        return self._points


def open_bundle(zip_path):
    """The bundle unzipped in a temporary folder, and a callback that removes the folder."""
    workdir = Path(tempfile.mkdtemp(prefix="make-grade-"))
    try:
        return AutograderBundle.open(zip_path, workdir), lambda: shutil.rmtree(workdir, True)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
