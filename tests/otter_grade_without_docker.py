"""``otter grade`` as Otter runs it, with Docker replaced by otter_paths (issue 10).

    python otter_grade_without_docker.py --venv VENV --work DIR -- <otter grade arguments>

Run by the Python of the image's venv, which holds Otter and not the kit, as the instructor's
own Python might: Otter's own ``otter grade`` builds the image's context (the zip, with its
config overrides), starts one container per submission, copies the submission in and
``results.pkl`` out, unpickles it and writes ``final_grades.csv``. Only python_on_whales'
``docker`` is replaced: an image is the tree the Dockerfile describes (otter_paths.ImageBuilder)
and a container runs ``/autograder/run_autograder`` on a copy of it in a mount namespace.
"""

import argparse
import itertools
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from otter_paths import ImageBuilder, MOUNT_POINT, run_autograder  # noqa: E402


class FakeContainer:
    ids = itertools.count(1)

    def __init__(self, root, command, logs):
        self.id = f"{next(self.ids):012d}"
        self.root, self.command, self.logs = root, command, logs
        self.exit, self.output, self.submission = None, "", None

    def path(self, inside):
        return self.root / Path(inside).relative_to(MOUNT_POINT)

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


class FakeContainers:
    def __init__(self, docker):
        self.docker = docker

    def create(self, image, command, networks=()):
        root = Path(tempfile.mkdtemp(dir=self.docker.work, prefix="container-"))
        shutil.copytree(self.docker.images[image], root, dirs_exist_ok=True)
        return FakeContainer(root, command, self.docker.work / "logs")

    def copy(self, source, destination):
        if isinstance(destination, tuple):
            container, inside = destination
            if Path(inside).parent == MOUNT_POINT / "submission":
                container.submission = Path(inside).name
            shutil.copy(source, container.path(inside))
        else:
            container, inside = source
            shutil.copy(container.path(inside), destination)

    def start(self, container):
        if container.command != [str(MOUNT_POINT / "run_autograder")]:
            raise ValueError(f"unexpected container command {container.command}")
        done = run_autograder(container.root, self.docker.venv)
        container.exit, container.output = done.returncode, done.stdout + done.stderr
        container.logs.mkdir(exist_ok=True)
        (container.logs / f"{container.submission}.log").write_text(container.output, "utf-8")

    def wait(self, container):
        return container.exit

    def logs(self, container):
        return container.output

    def kill(self, container):
        raise RuntimeError("a container was killed: grading took longer than --timeout")


class FakeDocker:
    """What otter grade uses of python_on_whales' ``docker``."""

    def __init__(self, venv, work):
        self.venv, self.work, self.images = venv, Path(work), {}
        self.container = FakeContainers(self)

    def build(self, context, build_args=None, tags=(), file=None, load=True):
        image = Path(tempfile.mkdtemp(dir=self.work, prefix="image-"))
        tree = ImageBuilder(file).build(context, image)
        for tag in tags:
            self.images[tag] = tree


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--venv", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("otter_grade", nargs=argparse.REMAINDER)
    args = parser.parse_args()

    from otter.cli import cli
    from otter.grade import containers

    containers.docker = FakeDocker(args.venv, args.work)
    arguments = args.otter_grade[1:] if args.otter_grade[:1] == ["--"] else args.otter_grade
    cli(["grade", *arguments])


if __name__ == "__main__":
    main()
