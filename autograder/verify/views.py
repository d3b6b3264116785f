"""What a confined process may see: folders built from the submission and the zip's files.

* **The kernel's view** (under privilege separation): Otter's submission folder minus what
  could leak. The student's own files are copied as they are; ``tests/`` keeps only public
  tests of the questions verified outside the kernel (their hidden tests call the reference,
  or would be judged there anyway); ``autograder/`` keeps only the modules the remaining tests
  and the scripts beside the notebook (``lab.py``) import; ``reference/`` is never copied.
  Otter's final cell still finds every ``./tests/*.py`` it expects.
* **The data child's folder**: a data question's test file, the kit modules it needs,
  ``lab.py`` and the notebook as submitted.

Whatever a test imports, ``SECRET_MODULES`` never leave the grader.
"""

import ast
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import nbformat

# The answers and the means to rebuild them: the reference, the hidden inputs, the checks that
# import both, the mutants and diagnoses built on them, and the grader itself.
SECRET_MODULES = frozenset({"reference", "autograder.checks", "attention.cases",
                            "attention.diagnose", "attention.misconceptions",
                            "attention.mutants", "autograder.verify", "autograder.grade",
                            "autograder.assign", "autograder.master", "autograder.bench"})
GRADER_PACKAGES = ("autograder", "reference", "attention")
_LIST_POINTS = re.compile(r"^points\s*=\s*\[.*\]\s*$", re.MULTILINE)


def _is_hidden_test(node) -> bool:
    for decorator in getattr(node, "decorator_list", []):
        if isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg == "hidden" and isinstance(keyword.value, ast.Constant) \
                        and keyword.value.value is True:
                    return True
    return False


def public_tests_only(source: str) -> str:
    """An Otter test file without its hidden test cases. Lines above them keep their numbers,
    so public test messages point at the same lines as in the original file. A per-case list
    of points no longer matches the cases left, so it goes."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    for node in reversed(tree.body):
        if _is_hidden_test(node):
            first = min(d.lineno for d in node.decorator_list)
            del lines[first - 1:node.end_lineno]
    return _LIST_POINTS.sub("points = None", "".join(lines))


def _imported_modules(source: str) -> set:
    modules = set()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return modules
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
    return modules


def _is_secret(module: str) -> bool:
    return any(module == secret or module.startswith(secret + ".") for secret in SECRET_MODULES)


def _module_file(folder: Path, module: str):
    path = folder.joinpath(*module.split(".")).with_suffix(".py")
    package = folder.joinpath(*module.split("."), "__init__.py")
    return path if path.is_file() else package if package.is_file() else None


def support_modules(folder: Path, sources) -> set:
    """Modules of the grader's packages in ``folder`` that ``sources`` need, transitively."""
    needed, pending = set(), set()
    for source in sources:
        pending |= _imported_modules(source)
    while pending:
        module = pending.pop()
        if module in needed or module.split(".")[0] not in GRADER_PACKAGES or _is_secret(module):
            continue
        found = _module_file(folder, module)
        if found is None:
            continue
        needed.add(module)
        parts = module.split(".")
        pending.update(".".join(parts[:depth]) for depth in range(1, len(parts)))
        source = found.read_text("utf-8")
        pending |= _imported_modules(source)
        base = parts if found.name == "__init__.py" else parts[:-1]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.level:
                target = ".".join(base[:len(base) - node.level + 1]
                                  + ([node.module] if node.module else []))
                pending.add(target)
                pending.update(f"{target}.{alias.name}" for alias in node.names)
    return needed


def copy_support(folder: Path, target: Path, sources) -> list:
    """Copy into ``target`` the modules of ``folder`` that ``sources`` need, with the data
    files (a JSON schema) beside them. Returns the module names."""
    modules = sorted(support_modules(folder, sources))
    for module in modules:
        source = _module_file(folder, module)
        relative = source.relative_to(folder)
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / relative)
        for data in source.parent.iterdir():
            if data.is_file() and data.suffix not in (".py", ".pyc"):
                shutil.copy2(data, (target / relative).parent / data.name)
    return modules


def _top_level_scripts(folder: Path) -> list:
    return [path.read_text("utf-8", "replace") for path in sorted(folder.glob("*.py"))]


def kernel_view(submission: Path, view: Path, verified_questions) -> dict:
    """Fill ``view`` with what a confined kernel may see of Otter's ``submission`` folder."""
    submission, view = Path(submission), Path(view)
    for entry in submission.iterdir():
        if entry.name in GRADER_PACKAGES or entry.name == "tests" or entry.is_symlink():
            continue
        if entry.is_dir():
            shutil.copytree(entry, view / entry.name, symlinks=True)
        elif entry.is_file():
            shutil.copy2(entry, view / entry.name)
    (view / "tests").mkdir()
    sources, stripped = [], []
    for test in sorted((submission / "tests").glob("*.py")):
        source = test.read_text("utf-8")
        if test.stem in verified_questions:
            source = public_tests_only(source)
            stripped.append(test.stem)
        sources.append(source)
        (view / "tests" / test.name).write_text(source, "utf-8")
    modules = copy_support(submission, view, sources + _top_level_scripts(view))
    return {"stripped_tests": stripped, "support_modules": modules}


def data_test_path(question) -> str:
    """Where a data question's test file sits in the data child's folder."""
    return f"tests/{question}.py"


def data_folder(files: Path, target: Path, notebook, tests: dict):
    """Fill ``target`` for the data child: the zip's top-level files (``lab.py``), the
    notebook as submitted, each question's test file and the kit modules they import.

    ``tests``: {question: test file source}.
    """
    files, target = Path(files), Path(target)
    for entry in sorted(files.iterdir()) if files.is_dir() else []:
        if entry.is_file():
            shutil.copy2(entry, target / entry.name)
    nbformat.write(notebook, str(target / "entrega.ipynb"))
    (target / "tests").mkdir()
    for question, source in tests.items():
        (target / data_test_path(question)).write_text(source, "utf-8")
    copy_support(files, target, list(tests.values()) + _top_level_scripts(target))


def snapshot(folder: Path) -> dict:
    """The zip's ``files/`` in memory ({relative path: bytes}), the reference left out. Taken
    before any student code runs: a kernel of the grader's own user could rewrite the folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return {}
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts
            and path.relative_to(folder).parts[0] not in ("reference",)}


@contextmanager
def materialized(files: dict):
    """A private temporary folder holding a ``snapshot``; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="kit-verify-files-"))
    try:
        for relative, data in files.items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def give_to(folder: Path, uid: int, gid: int):
    """Hand a whole folder to a sandbox user."""
    for root, dirs, names in os.walk(folder):
        os.chown(root, uid, gid)
        for name in dirs + names:
            os.lchown(os.path.join(root, name), uid, gid)
