"""Turn a lesson's text master (jupytext) into the notebook that Otter Assign expects.

The master holds only what a student reads: the graded functions appear as stubs and the
given helpers as placeholders. Everything that must exist in one place only is filled in
here, at build time, from the lesson:

* the given helpers (``# <reference: NAME>`` cells) and the solution bodies come from the
  lesson's reference;
* the kit's own cells (``# <kit: NAME>``: the grader's init and export, the lab and the
  validator) come from ``cells/NAME.py``, the same for every lesson;
* the points of each question come from ``rubrics/`` (a practice exercise's are 0);
* one hidden test per hidden case and one per criterion of a data question, each a one-line
  call into ``kit_autograder.incell``;
* the kit plugin's settings in ``plugins:`` (the lesson, the salt of the hidden inputs and the
  points graded by hand) and ``autograder_files``, what the build lays out beside the master.
"""

import ast
import inspect
import re
import string
import textwrap
from pathlib import Path

import jupytext
import nbformat
import yaml

from ..lesson import questions as lesson_questions
from .master_error import MasterError
from .notebooks import graded_cells
from .rubric import manual_points, question_points

PLACEHOLDER = re.compile(r"^# <reference: (\w+)>\s*$")
KIT_CELL = re.compile(r"^# <kit: (\w+)>\s*$")
KIT_CELLS = Path(__file__).with_name("cells")
QUESTION_HEADER = "# BEGIN QUESTION"
CONFIG_HEADER = "# ASSIGNMENT CONFIG"
PLUGIN = "kit_autograder.otter_plugin.VerificationPlugin"


def load_master(path):
    """The text master as a notebook, without jupytext's own metadata.

    ``metadata.jupytext`` says "this .ipynb is paired with a .py". Every notebook the build
    writes starts here, and none has that pair: jupytext's contents manager, which Otter
    installs beside any JupyterLab or Notebook 7, would refuse to open them ("Unable to read
    paired notebook").
    """
    nb = jupytext.read(path, fmt="py:percent")
    nb.metadata.pop("jupytext", None)
    return nb


def _without_docstring(fn):
    """Source lines of a reference function with its (English, maintainer-facing) docstring cut."""
    source = textwrap.dedent(inspect.getsource(fn))
    lines = source.splitlines()
    tree = ast.parse(source).body[0]
    first = tree.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
            first.value.value, str):
        del lines[first.lineno - 1:first.end_lineno]
    return lines


def _fill_reference_helpers(nb, lesson):
    for cell in nb.cells:
        match = PLACEHOLDER.match(cell.source) if cell.cell_type == "code" else None
        if match:
            helper = getattr(lesson.REFERENCE, match.group(1), None)
            if helper is None:
                raise MasterError(f"asks for the reference's helper {match.group(1)}, which "
                                  f"{lesson.REFERENCE.__name__} does not define; define it "
                                  "there or correct the name", cell.source)
            cell.source = "\n".join(_without_docstring(helper))


def assignment_name(nb):
    """The Otter assignment name of a master, from its ASSIGNMENT CONFIG."""
    for cell in nb.cells:
        config = _raw_config(cell, CONFIG_HEADER)
        if config is not None:
            if not config.get("name"):
                raise MasterError("its ASSIGNMENT CONFIG has no name; add `name:`, the "
                                  "assignment's Otter name", CONFIG_HEADER)
            return str(config["name"])
    raise MasterError(NO_CONFIG)


NO_CONFIG = ("has no ASSIGNMENT CONFIG raw cell; start the master with one "
             "(docs/lesson-authors.md)")


def _fill_kit_cells(nb, lesson):
    """Each ``# <kit: NAME>`` cell becomes the shared cell ``cells/NAME.py``, filled in with the
    assignment's name and, for the lab, the lesson's seed, and tagged ``graded-only``."""
    lab = getattr(lesson, "LAB", None)
    values = {"assignment": assignment_name(nb),
              "seed": lab.LAB.default_seed if lab is not None else ""}
    for cell in nb.cells:
        match = KIT_CELL.match(cell.source) if cell.cell_type == "code" else None
        if match:
            template = KIT_CELLS / f"{match.group(1)}.py"
            if not template.is_file():
                raise MasterError(f"asks for the kit cell {match.group(1)!r}, which the kit does "
                                  "not have; use one of "
                                  f"{', '.join(sorted(p.stem for p in KIT_CELLS.glob('*.py')))}",
                                  cell.source)
            if match.group(1) in ("lab", "validate") and lab is None:
                raise MasterError(f"has a {match.group(1)!r} kit cell, but lesson "
                                  f"{lesson.NAME} has no LAB; remove the cell, or give the "
                                  "lesson a lab (docs/lesson-authors.md)", cell.source)
            cell.source = string.Template(template.read_text("utf-8")).substitute(values).rstrip()
            # Every kit cell talks to the notebook's `grader`, which only the graded notebook
            # has: the tour leaves them out without the author having to tag them.
            tags = cell.metadata.setdefault("tags", [])
            if "graded-only" not in tags:
                tags.append("graded-only")


def _graded_name(cell, lesson):
    if cell.cell_type != "code":
        return None
    match = re.match(r"def (\w+)\(", cell.source)
    return match.group(1) if match and match.group(1) in lesson.FUNCTIONS else None


def _signature_line(source):
    return source.splitlines()[0]


def _solution_cell_source(stub_source, name, lesson):
    """Keep the stub's Spanish docstring and prompt; put the reference body in a solution block."""
    reference_lines = _without_docstring(getattr(lesson.REFERENCE, name))
    if _signature_line(stub_source) != reference_lines[0]:
        raise MasterError(f"the stub «{_signature_line(stub_source)}» differs from the "
                          f"reference's «{reference_lines[0]}»; give the stub the reference's "
                          "signature", _signature_line(stub_source))
    stub = ast.parse(stub_source).body[0]
    prompt = stub.body[-1]
    if not isinstance(prompt, ast.Raise):
        raise MasterError(f"the stub of {name} does not end with `raise "
                          "NotImplementedError(...)`, the prompt students see; end it so",
                          _signature_line(stub_source))
    lines = stub_source.splitlines()
    head, prompt_lines = lines[:prompt.lineno - 1], lines[prompt.lineno - 1:prompt.end_lineno]
    return "\n".join(
        head
        + ["    # BEGIN SOLUTION NO PROMPT"]
        + reference_lines[1:]
        + ["    # END SOLUTION", '    """ # BEGIN PROMPT']
        + prompt_lines
        + ['    """ # END PROMPT']
    )


def _fill_solutions(nb, lesson):
    """Solution cells must sit between raw SOLUTION markers for Otter to strip them."""
    cells = []
    for cell in nb.cells:
        name = _graded_name(cell, lesson)
        if name:
            cell.source = _solution_cell_source(cell.source, name, lesson)
            cells += [nbformat.v4.new_raw_cell("# BEGIN SOLUTION"), cell,
                      nbformat.v4.new_raw_cell("# END SOLUTION")]
        else:
            cells.append(cell)
    nb.cells = cells


def _raw_config(cell, header):
    if cell.cell_type != "raw" or not cell.source.startswith(header):
        return None
    return yaml.safe_load(cell.source[len(header):]) or {}


def question_configs(nb) -> list:
    """The master's questions, in its order: each ``BEGIN QUESTION`` cell's settings."""
    configs = (_raw_config(cell, QUESTION_HEADER) for cell in nb.cells)
    return [config for config in configs if isinstance(config, dict) and "name" in config]


def manual_questions(nb) -> list:
    """The names of the master's written questions (``manual: true``), in its order."""
    return [config["name"] for config in question_configs(nb) if config.get("manual")]


def practice_questions(nb, automatic) -> list:
    """The names of the master's practice exercises, in its order: its questions that are
    neither written (``manual``) nor graded automatically (``automatic``: the lesson's
    functions and data questions). Their tests are all public and worth 0."""
    return [config["name"] for config in question_configs(nb)
            if not config.get("manual") and config["name"] not in automatic]


def check_questions(nb, lesson, practice=()):
    """The master's questions are the lesson's: each one it does not mark ``manual`` is a
    function or data question of the lesson, or a practice exercise the rubric lists
    (``practice``), and each graded one has its question. A name only the master has would
    build a question no door grades."""
    graded = lesson_questions(lesson)
    named = [config["name"] for config in question_configs(nb) if not config.get("manual")]
    for name in named:
        if name not in graded and name not in practice:
            raise MasterError(f"question {name} is not one lesson {lesson.NAME} grades (it "
                              f"has: {', '.join(graded)}); correct the name, add "
                              "`manual: true` if a person grades it, or list it under "
                              "practice: in the rubric with `points: 0` if it is an exercise "
                              "no door grades", f"name: {name}")
    missing = [name for name in graded if name not in named]
    if missing:
        raise MasterError(f"has no question for {', '.join(missing)} of lesson {lesson.NAME}; "
                          "put its stub and tests between BEGIN QUESTION (`name: "
                          f"{missing[0]}`) and END QUESTION raw cells")


def _public_test_counts(nb):
    """Question name -> how many public test cells the master gives it."""
    counts, question, in_tests = {}, None, False
    for cell in nb.cells:
        config = _raw_config(cell, QUESTION_HEADER)
        if config is not None:
            question, counts[config["name"]] = config["name"], 0
        elif cell.cell_type == "raw" and cell.source.strip() in ("# BEGIN TESTS", "# END TESTS"):
            in_tests = cell.source.strip() == "# BEGIN TESTS"
        elif in_tests and cell.cell_type == "code":
            counts[question] += 1
    return counts


def _fill_points(nb, rubric):
    public = _public_test_counts(nb)
    for cell in nb.cells:
        config = _raw_config(cell, QUESTION_HEADER)
        if config is None:
            continue
        if "points" in config:
            raise MasterError(f"question {config['name']} sets points; delete its `points:` "
                              f"line: a lesson's points come from {rubric.get('_source')} "
                              "alone", f"name: {config['name']}")
        points = question_points(rubric, config["name"])
        if isinstance(points, list):
            # A list gives each test case its points in file order, public tests first; those
            # are worth 0 (they check form, never the answer).
            points = [0] * public[config["name"]] + points
        config["points"] = points
        cell.source = QUESTION_HEADER + "\n" + yaml.safe_dump(config, sort_keys=False,
                                                              allow_unicode=True)


def _hidden_test(test_name, parameters, call):
    return "\n".join([
        '""" # BEGIN TEST CONFIG',
        "hidden: true",
        '""" # END TEST CONFIG',
        f"def test_{test_name}({', '.join(parameters)}):",
        "    from kit_autograder import incell",
        f"    {call}",
    ])


def hidden_tests_for(question, lesson):
    """The hidden test sources of a question: one per hidden case, or one per criterion.
    Their names are what grading.hidden_test_name expects."""
    if question in lesson.FUNCTIONS:
        return [_hidden_test(f"{question}_{case.name}", [question],
                             f"incell.check({lesson.NAME!r}, {question!r}, {question}, "
                             f"{case.name!r})")
                for case in lesson.cases_for(question)]
    data = lesson.DATA_QUESTIONS[question]
    parameters = list(data.variables) + list(lesson.FUNCTIONS)
    values = "{" + ", ".join(f"{v!r}: {v}" for v in data.variables) + "}"
    functions = "{" + ", ".join(f"{f!r}: {f}" for f in lesson.FUNCTIONS) + "}"
    return [_hidden_test(f"{question}_{criterion}", parameters,
                         f"incell.check_data({lesson.NAME!r}, {question!r}, {criterion!r}, "
                         f"{values}, {functions})")
            for criterion, _ in data.criteria]


def _add_hidden_tests(nb, lesson):
    """Insert each graded question's hidden tests just before its END TESTS (a practice
    exercise has none: its checks are its public tests)."""
    cells, question = [], None
    graded = set(lesson.FUNCTIONS) | set(lesson.DATA_QUESTIONS)
    for cell in nb.cells:
        config = _raw_config(cell, QUESTION_HEADER)
        if config is not None:
            question = config["name"]
        if cell.cell_type == "raw" and cell.source.strip() == "# END TESTS" and question in graded:
            cells += [nbformat.v4.new_code_cell(source)
                      for source in hidden_tests_for(question, lesson)]
        cells.append(cell)
    nb.cells = cells


# Otter writes each question's check cell as `grader.check("q")`. Run before the notebook's
# first cell (after a kernel restart, say), it stopped with Python's English NameError; with
# this guard it says what to do in Spanish, and otherwise calls Otter's check as before.
NO_GRADER_YET = ("Todavía no se puede comprobar: ejecuta primero la primera celda del cuaderno, la "
                 "que prepara grader.check(...). Tras reiniciar el kernel, vuelve a ejecutarla "
                 "antes que ninguna otra.")
_CHECK_CELL = re.compile(r'^grader\.check\("[^"\n]+"\)$')


def spanish_check_cells(nb):
    """Every check cell of Otter's form, guarded for a kernel where the first cell has not run."""
    for cell in nb.cells:
        if cell.cell_type == "code" and _CHECK_CELL.match(cell.source.strip()):
            cell.source = (f'{cell.source.strip()} if "grader" in globals() else print(\n'
                           f'    "{NO_GRADER_YET}")')
    return nb


def number_cells(nb):
    """Stable cell ids, so that building twice gives byte-identical notebooks."""
    for index, cell in enumerate(nb.cells):
        cell.id = f"cell-{index:03d}"
        cell.metadata.pop("lines_to_next_cell", None)
    return nb


def _fill_plugin_settings(nb, lesson, rubric, salt, autograder_files):
    """The master names the kit's plugin; its settings, and the files the build lays out
    beside the master for the zip, are filled in here."""
    for cell in nb.cells:
        config = _raw_config(cell, CONFIG_HEADER)
        if config is None:
            continue
        # The practice exercises' checks are the student's alone: the grader neither runs nor
        # reports them (bundle.Bundle.question_names).
        settings = {"lesson": lesson.NAME, "salt": salt,
                    "manual_points": manual_points(rubric),
                    "practice": list(rubric.get("practice") or {})}
        plugins = config.get("plugins") or []
        if PLUGIN not in [p if isinstance(p, str) else next(iter(p)) for p in plugins]:
            raise MasterError(f"its ASSIGNMENT CONFIG does not list the kit's plugin; add "
                              f"`plugins: [{PLUGIN}]`", CONFIG_HEADER)
        config["plugins"] = [{PLUGIN: settings} if (p == PLUGIN or (isinstance(p, dict) and
                                                                     PLUGIN in p)) else p
                             for p in plugins]
        config["autograder_files"] = list(autograder_files)
        cell.source = CONFIG_HEADER + "\n" + yaml.safe_dump(config, sort_keys=False,
                                                            allow_unicode=True)
        return
    raise MasterError(NO_CONFIG)


def lesson_notebook(master_path, lesson):
    """The master with its given helpers and the kit's cells filled in, and no solution: the
    tour and the explained solution start here."""
    nb = load_master(master_path)
    _fill_reference_helpers(nb, lesson)
    _fill_kit_cells(nb, lesson)
    return nb


def build_otter_master(master_path, rubric, lesson, salt, autograder_files):
    """The Otter Assign notebook for ``master_path``, with every single-source fact filled in."""
    nb = graded_cells(lesson_notebook(master_path, lesson))
    _fill_solutions(nb, lesson)
    _fill_points(nb, rubric)
    _add_hidden_tests(nb, lesson)
    _fill_plugin_settings(nb, lesson, rubric, salt, autograder_files)
    return number_cells(nb)
