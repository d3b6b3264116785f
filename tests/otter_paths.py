"""The places Otter runs a zip, rebuilt without Docker or Gradescope (issue 10).

* ``build_venv``: a fresh venv holding only what a requirement list names, no path to the repo;
* ``ImageBuilder``: the tree ``otter grade``'s image holds, made by reading the installed Otter's
  own ``grade/Dockerfile``: its ``ADD`` lines copy zip members, its ``RUN`` lines make folders,
  ``touch`` the metadata file and ``chmod`` the entry point; ``setup.sh`` (conda, from the
  internet) is replaced by a venv made from the zip's ``environment.yml``;
* ``run_autograder``: the zip's own ``/autograder/run_autograder`` on such a tree, bind-mounted
  at ``/autograder`` in a private mount namespace, with a stand-in ``mamba`` whose ``activate``
  puts that venv first on ``PATH``;
* ``gradescope_root``: the tree Gradescope gives a submission: the whole zip in ``source/``, the
  upload (unzipped, as Gradescope does) in ``submission/``, its JSON metadata.

Standard library only: ``otter_grade_without_docker.py`` imports this inside the test venv.
"""

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# One BLAS thread in every process the tests start, as the sandbox's jobs have
# (sandbox/client.py). The lesson's matrices are tiny: a second OpenBLAS thread only spins, and
# on 2 cores shared by 2 xdist workers it took CPU from the other (ablacion.py: 8.7 s of CPU for
# 4.3 s with one thread, the same wall time and the same bytes). conftest.py sets it for the
# workers themselves.
BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

MOUNT_POINT = Path("/autograder")
BASE_PATH = "/usr/bin:/bin"
# What a Gradescope submission's metadata looks like (abridged): JSON, unlike otter grade's.
GRADESCOPE_METADATA = {"id": 1, "created_at": "2026-11-30T12:00:00.000000-08:00",
                       "assignment": {"title": "055 — Atención y arquitectura Transformer"},
                       "users": [{"name": "Estudiante", "email": "estudiante@example.com"}]}


# --- environments ---------------------------------------------------------------------------


# What the venvs' Pythons import in the tests (Otter's doors, the student's kernel and lab):
# compiled once when a venv is built, see build_venv. A name a venv lacks is skipped.
WARM_MODULES = ("otter.api", "otter.run.run_autograder", "otter.check.notebook", "otter.assign",
                "otter.grade", "nbconvert", "nbclient", "ipykernel.kernelapp", "jupyter_client",
                "numpy", "matplotlib.pyplot", "nbformat", "jsonschema", "yaml", "pandas",
                "jupyterlab", "jupyter_server.serverapp")


def build_venv(home, requirements, pip):
    """A venv at ``home`` with REQUIREMENTS installed into it, and nothing else.

    The installer is uv where the session has it (requirements.txt pins it): the same pinned
    packages, resolved the same way, in seconds instead of a minute per venv. Without uv,
    ``pip`` is the command of a recent pip (``python -m pip``), run with ``--python``: the
    same install as the venv's own bundled pip would do, several times faster against this
    machine's index, which pip queries once per package.
    """
    home = Path(home)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home)], check=True)
    python = str(home / "bin" / "python")
    if importlib.util.find_spec("uv") is not None:
        command = [sys.executable, "-m", "uv", "pip", "install", "--python", python]
    else:
        command = pip + ["--python", python, "install"]
    done = subprocess.run(command + ["--quiet", *requirements],
                          capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"installing {' '.join(requirements)} failed:\n{done.stderr[-3000:]}")
    warm(python)
    return home


def warm(python):
    """Compile what the tests import in this venv, by importing it once with bytecode on.

    The venvs run with PYTHONDONTWRITEBYTECODE, so without .pyc files every Otter run would
    compile its imports again; compiling every installed package instead (uv's
    --compile-bytecode) took 26 s of CPU per venv, most of it for modules no test imports.
    """
    code = ("import importlib\n"
            f"for name in {WARM_MODULES!r}:\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "    except Exception:\n"
            "        pass\n")
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    subprocess.run([python, "-c", code], env={**environment, "MPLBACKEND": "Agg"},
                   capture_output=True, timeout=600, check=True)


def image_requirements(autograder_zip):
    """The pip lines of the zip's environment.yml: what setup.sh installs in the image."""
    import yaml  # the test session's; the image's own Python never calls this

    with zipfile.ZipFile(autograder_zip) as zf:
        environment = yaml.safe_load(zf.read("environment.yml"))
    (pip,) = [item["pip"] for item in environment["dependencies"]
              if isinstance(item, dict) and "pip" in item]
    return pip


def readme_install_line(readme):
    """The guide's one install line for instructors who bring their own Otter, as arguments."""
    lines = [line.strip() for line in Path(readme).read_text("utf-8").splitlines()
             if line.strip().startswith("pip install") and "kit_autograder-" in line]
    if len(lines) != 1:
        raise ValueError(f"{Path(readme).name} gives {len(lines)} install lines for the engine's wheel")
    return shlex.split(lines[0])[2:]


def clean_environment(home, bin_dirs=()):
    """A process environment with no trace of the repo or of the test session."""
    environment = {"PATH": os.pathsep.join([*map(str, bin_dirs), BASE_PATH]),
                   "LANG": "C.UTF-8", "HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1",
                   **BLAS_THREADS}
    if "KIT_SANDBOX_LABEL" in os.environ:
        environment["KIT_SANDBOX_LABEL"] = os.environ["KIT_SANDBOX_LABEL"]
    return environment


# --- otter grade's image ----------------------------------------------------------------------


class ImageBuilder:
    """The image's /autograder tree from a build context, as the Dockerfile's lines make it."""

    ADD = re.compile(r"^ADD\s+(.+)$")
    RUN = re.compile(r"^RUN\s+(.+)$")

    def __init__(self, dockerfile):
        text = Path(dockerfile).read_text("utf-8").replace("\\\n", " ")
        self.lines = [line.strip() for line in text.splitlines()]

    def build(self, context, image):
        """``image`` holds what the Dockerfile puts under /autograder; returns its path."""
        context, image = Path(context), Path(image)
        for line in self.lines:
            if match := self.ADD.match(line):
                *sources, destination = shlex.split(match.group(1))
                for pattern in sources:
                    # Docker skips a pattern that matches nothing (Otter's zips have no
                    # requirements.* at the root).
                    for path in sorted(context.glob(pattern)):
                        self._add(path, self._inside(image, destination),
                                  destination.endswith("/"))
            elif match := self.RUN.match(line):
                self._run(match.group(1), image)
        return image / "autograder"

    @staticmethod
    def _inside(image, path):
        return image / path.lstrip("/")

    @staticmethod
    def _add(source, destination, into_folder):
        # ADD copies a folder's contents, not the folder; a destination ending in "/" is a
        # folder that receives a file under its own name.
        if source.is_dir():
            shutil.copytree(source, destination, dirs_exist_ok=True)
        elif into_folder:
            destination.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, destination / source.name)
        else:
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, destination)

    def _run(self, command, image):
        """The RUN steps that shape /autograder; the rest (apt-get, dos2unix, setup.sh) install
        software, which the test venv stands in for."""
        for step in command.split("&&"):
            words = shlex.split(step)
            if words[:2] == ["mkdir", "-p"]:
                for path in words[2:]:
                    self._inside(image, path).mkdir(parents=True, exist_ok=True)
            elif words[:1] == ["touch"]:
                for path in words[1:]:
                    self._inside(image, path).touch()
            elif words[:2] == ["chmod", "+x"]:
                for path in words[2:]:
                    target = self._inside(image, path)
                    target.chmod(target.stat().st_mode | 0o111)


# --- running a zip's run_autograder -----------------------------------------------------------


def mamba_stand_in(folder, venv):
    """A ``mamba`` whose ``shell hook`` defines a shell function that, on ``activate``, puts the
    venv's bin first on PATH: what Otter's run_autograder needs of Miniforge's."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "mamba"
    hook = f'mamba() {{ if [ "$1" = activate ]; then export PATH="{venv}/bin:$PATH"; fi; }}'
    script.write_text("#!/bin/sh\n"
                      'if [ "$1 $2" = "shell hook" ]; then\n'
                      f"  echo {shlex.quote(hook)}\n"
                      "  exit 0\n"
                      "fi\n"
                      'echo "stand-in mamba: unexpected arguments: $*" >&2\n'
                      "exit 1\n")
    script.chmod(0o755)
    return folder


def run_autograder(root, venv, workdir="/", timeout=600, prefix=()):
    """``/autograder/run_autograder`` with ``root`` mounted at /autograder, for this process
    only (a private mount namespace: concurrent runs each see their own root). ``prefix``
    wraps it once mounted (tests/docker_like.py: Docker's default profile)."""
    MOUNT_POINT.mkdir(exist_ok=True)  # an empty mount point, left for the next run
    with tempfile.TemporaryDirectory(prefix="otter-path-") as scratch:
        stand_in = mamba_stand_in(Path(scratch) / "bin", venv)
        wrapper = " ".join(shlex.quote(str(part)) for part in prefix)
        script = (f"mount --bind {shlex.quote(str(root))} {MOUNT_POINT} && "
                  f"cd {shlex.quote(workdir)} && exec {wrapper} {MOUNT_POINT}/run_autograder")
        return subprocess.run(["unshare", "--mount", "--propagation", "private",
                               "sh", "-c", script],
                              env=clean_environment(scratch, [stand_in]),
                              capture_output=True, text=True, timeout=timeout)


def gradescope_root(autograder_zip, upload_name, data):
    """A submission's /autograder on Gradescope: the zip unpacked in source/, the upload in
    submission/ (a zip's contents, since Gradescope unpacks uploaded archives)."""
    root = Path(tempfile.mkdtemp(prefix="gradescope-"))
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(root / "source")
    for folder in ("submission", "results"):
        (root / folder).mkdir()
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    upload = root / "submission" / upload_name
    upload.write_bytes(data)
    if upload.suffix == ".zip" and zipfile.is_zipfile(upload):
        with zipfile.ZipFile(upload) as zf:
            zf.extractall(root / "submission")
        upload.unlink()
    (root / "submission_metadata.json").write_text(json.dumps(GRADESCOPE_METADATA), "utf-8")
    return root


def otter_run(venv, autograder_zip, submission, out, timeout=600):
    """``otter run -a ZIP -o OUT SUBMISSION`` in ``venv``, from a folder of its own."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="otter-run-") as home:
        return subprocess.run([str(Path(venv) / "bin" / "otter"), "run", "-a", str(autograder_zip),
                               "-o", str(out), str(submission)],
                              env=clean_environment(home, [Path(venv) / "bin"]), cwd=home,
                              capture_output=True, text=True, timeout=timeout)
