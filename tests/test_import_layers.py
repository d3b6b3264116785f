"""The rooms call one way (STYLE.md, «Rooms that call one way»): no module of the engine or of
a lesson imports one that imports it back, however far round, and no room of the engine
imports a room of a higher layer. Read from the source with ``ast``, imports inside functions
included: a late import is still a dependency, and it is how a circle hides.

The positive controls build a tiny package with a circle through a late import, and one whose
lower room imports a higher one, in a temporary folder: the same checks name both.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "autograder"

# The engine's rooms (the first name under kit_autograder/), from the top: a module imports its
# own layer's rooms or lower ones, never a higher one. What two rooms both need moves below both.
LAYERS = (
    # the doors: make grade, Otter's paths (Gradescope, otter run, otter grade), make bench,
    # make validate
    ("batch", "otter_plugin", "otter_entry", "otter_workdir", "bench", "validate"),
    # what people read and hand in around the grades: the reports, the written answers, the LMS
    ("report", "written", "lms", "similarity"),
    # one submission graded, and what that needs: the lesson, its zip, its build, its inputs
    ("grading", "verdicts", "submission", "bundle", "lesson", "build", "hidden_inputs", "policy",
     "incell", "challenge", "csv_cells", "spanish_numbers", "error_lines", "notebook_causes",
     "parsing"),
    # the only code that starts student code
    ("sandbox",),
)


def is_package(folder: Path) -> bool:
    return (folder / "__init__.py").is_file()


MASTER = "master.py"


def modules(parent: Path, package: str) -> dict:
    """``{dotted name: file}`` of every module of the package ``parent/package``: the .py
    files of its folder and of its subfolders that are packages too (a folder without
    ``__init__.py``, such as build/cells/, holds templates, not modules)."""
    found = {}
    for path in sorted((parent / package).rglob("*.py")):
        if path.name == MASTER:  # a lesson's notebook as text, in Otter's syntax: not a module
            continue
        folders = path.relative_to(parent).parents
        if not all(is_package(parent / folder) for folder in folders if folder != Path(".")):
            continue
        parts = path.relative_to(parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known) -> dict:
    """``{module of the package it imports: line}``, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = {}

    def add(target, line):
        # The module itself, or the package that defines the imported name.
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.setdefault(target, line)

    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                add(f"{source}.{alias.name}", node.lineno)
    return found


def import_graph(parent: Path, package: str) -> dict:
    """``{module: {imported module: (file, line)}}`` within one package."""
    found = modules(parent, package)
    return {name: {target: (path, line) for target, line in imports(name, path, found).items()}
            for name, path in found.items()}


def circles(graph) -> list:
    """Each import circle, as ``a -> b -> … -> a`` with the file and line of every step: one
    circle for each group of modules that import one another (Tarjan's strongly connected
    components, then the shortest way round from the group's first module)."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    said = []
    for group in groups:
        start = min(group)
        paths, seen = [[start]], {start}
        while paths:
            path = paths.pop(0)
            targets = sorted(t for t in graph[path[-1]] if t in group)
            if start in targets:
                path.append(start)
                break
            for target in targets:
                if target not in seen:
                    seen.add(target)
                    paths.append(path + [target])
        steps = [f"{a} -> {b} ({graph[a][b][0].name}:{graph[a][b][1]})"
                 for a, b in zip(path, path[1:])]
        others = "" if len(group) == len(path) - 1 else (
            f" (one of {len(group)} modules that import one another: "
            f"{', '.join(sorted(group))})")
        said.append(" -> ".join(path) + ": " + "; ".join(steps) + others)
    return sorted(said)


def room(module: str, package: str):
    parts = module.split(".")
    return parts[1] if parts[0] == package and len(parts) > 1 else None


def layer_violations(graph, package: str, layers) -> list:
    """Every import of a room by a room of a lower layer; a room no layer lists is one too."""
    layer_of = {name: number for number, names in enumerate(layers) for name in names}
    problems = []
    for module in sorted(graph):
        own = room(module, package)
        if own is None:
            continue
        if own not in layer_of:
            problems.append(f"{module}: its room {own} is in no layer of LAYERS; place it")
            continue
        for target, (path, line) in sorted(graph[module].items()):
            theirs = room(target, package)
            if theirs in layer_of and layer_of[theirs] < layer_of[own]:
                problems.append(f"{module} imports {target} ({path.name}:{line}): {own} is "
                                f"below {theirs}")
    return problems


def lesson_packages():
    """Every lesson package of the course and of the test fixtures: ``(parent, name)``."""
    parents = [ROOT / "assignments"] + sorted(
        (ROOT / "tests" / "fixtures" / "lessons").glob("*/assignments"))
    return [(parent, folder.name) for parent in parents for folder in sorted(parent.iterdir())
            if is_package(folder)]


PACKAGES = [(ENGINE, "kit_autograder")] + lesson_packages()


@pytest.mark.parametrize("parent,package", PACKAGES,
                         ids=[str((p / n).relative_to(ROOT)) for p, n in PACKAGES])
def test_no_module_imports_one_that_imports_it_back(parent, package):
    graph = import_graph(parent, package)
    assert len(graph) > 3, "the package was read"
    assert circles(graph) == []


def test_no_room_of_the_engine_imports_a_higher_one():
    assert layer_violations(import_graph(ENGINE, "kit_autograder"), "kit_autograder",
                            LAYERS) == []


def test_the_lessons_are_all_read():
    names = [name for _, name in PACKAGES]
    assert "attention" in names and "rnn" in names


# --- positive controls: the same checks on a package built to break them ------------------------


def write_package(folder: Path, files: dict):
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def test_control_a_circle_through_a_late_import_is_named(tmp_path):
    write_package(tmp_path, {
        "toy/__init__.py": "",
        "toy/top.py": "from .low import helper\n",
        "toy/low/__init__.py": "",
        "toy/low/helper.py": "def f():\n    from ..top import x  # late\n    return x\n",
        "toy/templates/cell.py": "SEED = $seed\n",  # not a package: not read
    })
    graph = import_graph(tmp_path, "toy")
    assert "toy.templates.cell" not in graph
    assert circles(graph) == ["toy.low.helper -> toy.top -> toy.low.helper: "
                              "toy.low.helper -> toy.top (helper.py:2); "
                              "toy.top -> toy.low.helper (top.py:1)"]
    # Without the late import, the same package has no circle.
    (tmp_path / "toy/low/helper.py").write_text("def f():\n    return 1\n", "utf-8")
    assert circles(import_graph(tmp_path, "toy")) == []


def test_control_a_lower_room_importing_a_higher_one_is_named(tmp_path):
    write_package(tmp_path, {
        "toy/__init__.py": "",
        "toy/door.py": "from . import deep\n",
        "toy/deep.py": "import toy.door\n",
        "toy/stray.py": "",
    })
    graph = import_graph(tmp_path, "toy")
    assert layer_violations(graph, "toy", (("door",), ("deep",))) == [
        "toy.deep imports toy.door (deep.py:1): deep is below door",
        "toy.stray: its room stray is in no layer of LAYERS; place it"]
    assert layer_violations(graph, "toy", (("door", "deep", "stray"),)) == []


def test_the_engines_threads_build_syntax_trees_only_through_parsing_py():
    """CPython 3.11's ast breaks when two threads build trees at once (SystemError: AST
    constructor recursion depth mismatch: the similarity pass's parts, kept beside the grading
    threads, met the grader's own parse). Every module that runs in make grade's threads parses
    through kit_autograder.parsing, under its one lock. The build and the sandbox's inside run
    in processes of their own."""
    import re

    engine = ROOT / "autograder" / "kit_autograder"
    direct = re.compile(r"\bast\.parse\(|\bcompile\([^)]*PyCF_ONLY_AST")
    own_process = (engine / "build", engine / "sandbox")
    offenders = [f"{path.relative_to(engine)}:{number}"
                 for path in sorted(engine.rglob("*.py")) if path.name != "parsing.py"
                 and not any(folder in path.parents for folder in own_process)
                 for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
                 if direct.search(line.split("#")[0])]
    assert offenders == [], offenders
