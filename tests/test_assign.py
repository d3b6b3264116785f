"""`make assign` gives students one clean notebook and graders one zip."""

import inspect
import re
import zipfile

import nbformat
import pytest

from reference import attention as reference
from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME, TOUR_NAME, build, engine_wheel_name
from lesson055 import MASTER, RUBRIC, ZIP_NAME
from notebook_code import assignment_name
from attention.cases import cases_for
from attention.functions import FUNCTIONS

GRADED_FUNCTIONS = tuple(FUNCTIONS)
from kit_autograder.build.otter_master import QUESTION_HEADER, _raw_config, _without_docstring, build_otter_master
from kit_autograder.build.rubric import load_rubric, question_points


def student_text(built_dist):
    """Every byte a student receives, decoded, file by file."""
    return {path.name: path.read_text(encoding="utf-8", errors="replace")
            for path in (built_dist / "student").rglob("*") if path.is_file()}


def reference_body_lines(name):
    """The distinctive lines of a reference solution (skipping trivial ones like `return x`)."""
    lines = [line.strip() for line in _without_docstring(getattr(reference, name))[1:]]
    return [line for line in lines if len(line) > 25 and not line.startswith("#")]


def test_student_folder_holds_the_graded_notebook_and_the_tour_and_only_one_is_graded(built_dist):
    notebooks = sorted((built_dist / "student").rglob("*.ipynb"))
    assert [p.name for p in notebooks] == [TOUR_NAME, NOTEBOOK_NAME]
    # lab.py and the notebook's grader tell them apart by the assignment in the metadata.
    assert [p.name for p in notebooks if assignment_name(p)] == [NOTEBOOK_NAME]


def test_autograder_folder_holds_the_zip_and_the_engines_wheel_and_the_solution_its_own_folder(
        built_dist):
    assert sorted(p.name for p in (built_dist / "autograder").iterdir()) == sorted(
        [ZIP_NAME, engine_wheel_name()])
    # The solution runs from its own folder: the student's files lie beside it, no other notebook.
    solution = sorted(p.name for p in (built_dist / "solution").iterdir())
    assert [name for name in solution if name.endswith(".ipynb")] == [SOLUTION_NAME]
    student = {p.name for p in (built_dist / "student").iterdir() if p.is_file()}
    assert set(solution) - {SOLUTION_NAME} == student - {NOTEBOOK_NAME, TOUR_NAME, "explorer.html",
                                                         "requirements.txt"}


@pytest.mark.parametrize("name", GRADED_FUNCTIONS)
def test_student_files_contain_no_reference_solution(built_dist, name):
    texts = student_text(built_dist)
    for line in reference_body_lines(name):
        for filename, text in texts.items():
            assert line not in text, f"{filename} leaks the reference line {line!r}"


def test_student_files_contain_no_hidden_test_or_solution_marker(built_dist):
    from conftest import TEST_SALT

    forbidden = ["BEGIN SOLUTION", "hidden: true", "hidden=True", "incell", "from reference",
                 "import reference", TEST_SALT, "kit_autograder.otter_plugin"]
    forbidden += [case.name for function in GRADED_FUNCTIONS for case in cases_for(function)
                  if len(case.name) > 6]
    for filename, text in student_text(built_dist).items():
        for marker in forbidden:
            assert marker not in text, f"{filename} contains {marker!r}"


@pytest.mark.parametrize("name", GRADED_FUNCTIONS)
def test_each_graded_function_is_alone_in_a_stub_cell_with_the_reference_signature(built_dist, name):
    nb = nbformat.read(built_dist / "student" / NOTEBOOK_NAME, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code" and re.match(rf"def {name}\(", c.source)]
    assert len(cells) == 1
    namespace = {}
    exec(cells[0].source, namespace)
    function = namespace[name]
    assert inspect.signature(function) == inspect.signature(getattr(reference, name))
    assert set(namespace) == {"__builtins__", name}, "the cell must define only the function"
    with pytest.raises(NotImplementedError, match=r"(?i)implementa"):
        function(*[None] * len(inspect.signature(function).parameters))


def zip_test_file(autograder_zip, question):
    with zipfile.ZipFile(autograder_zip) as zf:
        return zf.read(f"tests/{question}.py").decode()


@pytest.mark.parametrize("name", GRADED_FUNCTIONS)
def test_zip_points_come_from_the_rubric(autograder_zip, name):
    source = zip_test_file(autograder_zip, name)
    assert re.search(r"^points = (.+)$", source, re.M).group(1) == str(
        question_points(load_rubric(RUBRIC), name))
    hidden = re.findall(r"hidden=True", source)
    assert len(hidden) == len(cases_for(name))


def test_every_notebook_question_takes_its_points_from_the_rubric():
    from attention import lesson

    rubric = load_rubric(RUBRIC)
    nb = build_otter_master(MASTER, rubric, lesson, "c2FsdA==", [])
    configs = [c for c in (_raw_config(cell, QUESTION_HEADER) for cell in nb.cells) if c]
    # A per-test list starts with a 0 for each public test (student_extension has one).
    # The written entries that read the challenge's texts (texto:) are no notebook question.
    notebook_written = [name for name, entry in rubric["written"].items() if not entry.get("texto")]
    expected = {name: question_points(rubric, name)
                for name in list(rubric["questions"]) + notebook_written + list(rubric["practice"])}
    expected["student_extension"] = [0] + expected["student_extension"]
    assert {c["name"]: c["points"] for c in configs} == expected


def test_extension_question_awards_each_criterion_its_rubric_points(autograder_zip):
    # The public form test comes first and is worth 0; each hidden criterion keeps its points.
    source = zip_test_file(autograder_zip, "student_extension")
    expected = question_points(load_rubric(RUBRIC), "student_extension")
    public = len(re.findall(r"hidden=False", source))
    assert public == 1
    assert re.search(r"^points = (.+)$", source, re.M).group(1) == str([0] * public + expected)
    assert len(re.findall(r"hidden=True", source)) == len(expected)


def test_zip_ships_the_reference_only_as_autograder_files(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as zf:
        names = zf.namelist()
    assert "files/reference/attention/transformer.py" in names
    assert not [n for n in names if "reference" in n and not n.startswith("files/")]


def test_student_assessment_lists_every_criterion_with_its_rubric_points(built_dist):
    text = (built_dist / "student" / "assessment.md").read_text(encoding="utf-8")
    for criterion in load_rubric(RUBRIC)["questions"]["student_extension"]["criteria"]:
        assert f"| `{criterion['id']}` | {criterion['points']} |" in text


def test_the_zip_carries_the_salt_and_a_rebuild_keeps_it(built_dist, autograder_zip):
    import json

    from conftest import TEST_SALT

    with zipfile.ZipFile(autograder_zip) as zf:
        config = json.loads(zf.read("otter_config.json"))
    (settings,) = [entry["kit_autograder.otter_plugin.VerificationPlugin"]
                   for entry in config["plugins"] if isinstance(entry, dict)]
    assert settings["salt"] == TEST_SALT and settings["lesson"] == "attention"
    kept = (built_dist / "otter" / NOTEBOOK_NAME).read_text("utf-8")
    assert TEST_SALT in kept  # the kept Otter master reproduces the same zip


def test_building_twice_gives_the_same_notebooks(built_dist, tmp_path):
    # The tour's figures and the solution's outputs are made at build time; they too are the
    # same bytes each time.
    again = build("attention", tmp_path / "again", run_tests=False)
    for notebook in (f"student/{NOTEBOOK_NAME}", f"student/{TOUR_NAME}", f"solution/{SOLUTION_NAME}"):
        assert (built_dist / notebook).read_bytes() == (again / notebook).read_bytes(), notebook


def otter_test_cases(path):
    from otter.nbmeta_config import NBMetadataConfig
    from otter.test_files import create_test_file

    return create_test_file(str(path), NBMetadataConfig()).test_cases


def test_the_student_tests_folder_holds_each_questions_public_tests_and_no_hidden_one(
        built_dist, autograder_zip, tmp_path):
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(tmp_path, [n for n in zf.namelist() if n.startswith("tests/")])
    shipped = sorted((built_dist / "student" / "tests").iterdir())
    assert [p.name for p in shipped] == sorted(p.name for p in (tmp_path / "tests").iterdir())
    for path in shipped:
        public = [c.name for c in otter_test_cases(tmp_path / "tests" / path.name) if not c.hidden]
        cases = otter_test_cases(path)
        assert [c.name for c in cases] == public and not any(c.hidden for c in cases), path.name
        # otter check divides by the points possible: a file worth 0 would crash it.
        assert sum(c.points for c in cases) == pytest.approx(1), path.name


def test_the_zips_run_otter_py_is_the_kits_own_rendered_by_otter(autograder_zip):
    from otter.generate import JINJA_ENV

    from kit_autograder.build.otter_templates import KIT_TEMPLATE

    with zipfile.ZipFile(autograder_zip) as zf:
        shipped = zf.read("run_otter.py").decode("utf-8")
    expected = JINJA_ENV.from_string(KIT_TEMPLATE.read_text("utf-8")).render(
        autograder_dir="/autograder")
    assert shipped == expected and 'AUTOGRADER_DIR = "/autograder"' in shipped


def test_the_kits_template_is_otters_only_between_assign_and_generate(monkeypatch):
    import otter
    from otter.generate import JINJA_ENV

    from kit_autograder.build import otter_templates

    otters = JINJA_ENV.get_template("common/run_otter.py").render(autograder_dir="/x")
    otter_templates.use_kit_run_otter()
    try:
        assert "kit_autograder" in JINJA_ENV.get_template("common/run_otter.py").render(
            autograder_dir="/x")
        assert JINJA_ENV.get_template("common/run_autograder") is not None
    finally:
        assert otter_templates.restore_otters_templates()
    assert JINJA_ENV.get_template("common/run_otter.py").render(autograder_dir="/x") == otters
    assert not otter_templates.restore_otters_templates()
    monkeypatch.setattr(otter, "__version__", "7.1.0")
    with pytest.raises(otter_templates.UnsupportedOtter, match="otter-grader==7.0.0"):
        otter_templates.use_kit_run_otter()


def test_otter_generate_without_otter_assign_is_refused_before_writing_a_zip():
    from kit_autograder.otter_plugin import VerificationPlugin

    with pytest.raises(RuntimeError, match="otter assign"):
        VerificationPlugin(None, {}, {}).during_generate({"plugins": []}, None)


def _rendered_run_otter(autograder_dir):
    """The zip's run_otter.py, rendered for ``autograder_dir`` and loaded as a module."""
    import types

    from otter.generate import JINJA_ENV

    from kit_autograder.build.otter_templates import KIT_TEMPLATE

    source = JINJA_ENV.from_string(KIT_TEMPLATE.read_text("utf-8")).render(
        autograder_dir=str(autograder_dir))
    module = types.ModuleType("run_otter_under_test")
    exec(compile(source, "run_otter.py", "exec"), module.__dict__)
    return module


def test_run_otter_keeps_real_scores_when_otter_fails_after_writing_them(tmp_path):
    import json

    results = tmp_path / "results"
    results.mkdir()
    run_otter = _rendered_run_otter(tmp_path)
    # The kit's boxes come marked as its Markdown; an output nobody marked is shown as text.
    scored = {"score": 5.0, "tests": [{"name": "attention", "score": 5.0, "max_score": 5.0,
                                       "output": "bien", "output_format": "md"},
                                      {"name": "Otter", "output": "<b>Otter's</b>"}]}
    (results / "results.json").write_text(json.dumps(scored), encoding="utf-8")
    run_otter.answer_anyway(RuntimeError("summary printing failed"))
    kept = json.loads((results / "results.json").read_text(encoding="utf-8"))
    assert [(t["name"], t.get("score")) for t in kept["tests"]] == [("attention", 5.0),
                                                                    ("Otter", None)]
    assert kept["score"] == 5.0
    assert [t["output_format"] for t in kept["tests"]] == ["md", "text"]

    # Control: Otter's own error answer (no scored test) is replaced by the Spanish refusal.
    otters = {"score": 0, "output": "Autograder Error", "tests": []}
    (results / "results.json").write_text(json.dumps(otters), encoding="utf-8")
    run_otter.answer_anyway(RuntimeError("Autograder Error"))
    replaced = json.loads((results / "results.json").read_text(encoding="utf-8"))
    assert replaced["score"] == 0 and "Autograder Error" not in replaced["output"]
    assert "entrega" in replaced["output"]


def test_a_figure_the_building_process_already_had_open_is_not_the_notebooks(tmp_path):
    """Building inside a process that left a figure open (a test, an instructor's session)
    must not put that figure in the tour's first cell: two builds would differ."""
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    from kit_autograder.build.execute import CellRunner

    theirs = plt.figure()
    try:
        with CellRunner(tmp_path) as runner:
            assert runner.run("x = 1") == []
            drawn = runner.run("import matplotlib.pyplot as plt\nplt.figure()\nplt.plot([1, 2])\nplt.show()")
        assert [out.output_type for out in drawn] == ["display_data"]  # control: its own shows
        assert plt.fignum_exists(theirs.number)  # and the caller's is left open
    finally:
        plt.close(theirs)


def test_a_demo_cell_is_not_blamed_for_garbage_it_did_not_make(tmp_path):
    # A ResourceWarning raised from elsewhere while the cell runs (the garbage collector
    # freeing a socket of an earlier kernel client) is not the cell's; its own warnings are.
    import sys
    import types

    from kit_autograder.build.execute import CellRunner, DemoError

    elsewhere = types.ModuleType("elsewhere")
    exec(compile("import warnings\ndef freed():\n    warnings.warn('Unclosed socket', ResourceWarning)\n",
                 "/somewhere/zmq/socket.py", "exec"), elsewhere.__dict__)
    sys.modules["elsewhere"] = elsewhere
    try:
        with CellRunner(tmp_path) as runner:
            assert runner.run("import elsewhere\nelsewhere.freed()\nx = 1") == []
            with pytest.raises(DemoError, match="ResourceWarning"):  # the control: its own
                runner.run("import warnings\nwarnings.warn('mine', ResourceWarning)")
            with pytest.raises(DemoError, match="UserWarning"):
                runner.run("import elsewhere, warnings\nwarnings.warn('a real one')")
    finally:
        del sys.modules["elsewhere"]
