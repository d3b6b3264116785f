"""From download to submission, as a student: any file name, only Spanish, one path (issue 13).

Each test runs the built student folder the way a student does: the notebook executed by a
real kernel under the name a browser gave it, the lab and the validator from a terminal.
"""

import io
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from english import ENGLISH
from extension import validate
from attention.trained_model import WEIGHTS_FILE
from autograder.assign import EXPLORER_NAME, NOTEBOOK_NAME, SOLUTION_NAME, TOUR_NAME
from lesson055 import MASTER, student_files
from kit_autograder.build.otter_master import load_master
from notebook_code import assignment_name
from notebook_grader import HIDDEN_TESTS_NOTE, PRACTICE_NOTE
from public_checks import DATA_NAME as CHECKS_DATA, spec_text
from seed_lines import assert_matches_seed

PRACTICE = ("cruzada", "relleno", "cabezas", "cache_kv", "coste")

ROOT = Path(__file__).resolve().parent.parent



def student_folder(built_dist, tmp_path, notebook_source, name):
    """The student folder as downloaded, with ``notebook_source`` saved as ``name``."""
    folder = tmp_path / "descarga"
    shutil.copytree(built_dist / "student", folder)
    (folder / NOTEBOOK_NAME).unlink()
    shutil.copy(notebook_source, folder / name)
    return folder


def execute(folder, name, prelude=None):
    """Run every cell as Jupyter would, errors kept in the outputs; returns the notebook."""
    nb = nbformat.read(folder / name, as_version=4)
    if prelude:
        nb.cells.insert(0, nbformat.v4.new_code_cell(prelude))
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def cells_calling(nb, text):
    """Code cells whose own code (not a comment) starts a line with ``text``."""
    return [cell for cell in nb.cells if cell.cell_type == "code"
            and any(line.lstrip().startswith(text) or f"= {text}" in line for line in cell.source.splitlines())]


def errors(cells):
    return [f"{o.ename}: {o.evalue}" for cell in cells for o in cell.get("outputs", []) if o.output_type == "error"]


def shown(cells) -> str:
    """What the student reads under these cells: printed text and the plain-text displays."""
    parts = []
    for cell in cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            data = output.get("data", {})
            parts += [data.get("text/plain", ""), data.get("text/html", "")]
            parts.append(output.get("evalue", ""))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def renamed_student_run(built_dist, tmp_path_factory):
    """The untouched student notebook, downloaded as «notebook_student (1).ipynb»."""
    folder = student_folder(built_dist, tmp_path_factory.mktemp("alumno"),
                            built_dist / "student" / NOTEBOOK_NAME, "notebook_student (1).ipynb")
    return folder, execute(folder, "notebook_student (1).ipynb")


@pytest.fixture(scope="module")
def renamed_solution_run(built_dist, tmp_path_factory):
    """A finished notebook (the solution) saved as «attention (1).ipynb», beside the tour."""
    folder = student_folder(built_dist, tmp_path_factory.mktemp("terminado"),
                            built_dist / "solution" / SOLUTION_NAME, "attention (1).ipynb")
    return folder, execute(folder, "attention (1).ipynb")


# -- a renamed notebook ----------------------------------------------------------------------


def test_renamed_stub_notebook_runs_every_check_and_the_export(renamed_student_run):
    folder, nb = renamed_student_run
    assert shown(cells_calling(nb, "Grader(")).strip() == \
        "Listo: cuaderno «notebook_student (1).ipynb», 4 funciones por implementar."
    checks = cells_calling(nb, "grader.check(")
    assert len(checks) == 10 and not errors(checks)
    assert "no se cumplen 3 de 3 pruebas públicas" in shown(cells_calling(nb, 'grader.check("attention")'))
    # The practice exercises, still stubs: a reminder each, and no word of hidden tests.
    for question in PRACTICE:
        said = shown(cells_calling(nb, f'grader.check("{question}")'))
        assert "Todavía no se puede comprobar: Escribe " in said and PRACTICE_NOTE in said, said
        assert HIDDEN_TESTS_NOTE not in said
    assert not any("Escribe " in error for cell in nb.cells for error in errors([cell]))
    assert "sin rellenar" in shown(cells_calling(nb, 'grader.check("student_extension")'))
    (export,) = cells_calling(nb, "grader.export()")
    assert not errors([export]) and "Listo:" in shown([export])
    (made,) = folder.glob("*.zip")
    with zipfile.ZipFile(made) as zf:
        assert "notebook_student (1).ipynb" in zf.namelist()


def test_renamed_finished_notebook_passes_its_checks_the_challenge_and_exports(renamed_solution_run):
    folder, nb = renamed_solution_run
    assert not errors(nb.cells)
    assert shown(cells_calling(nb, "Grader(")).strip() == \
        "Listo: cuaderno «attention (1).ipynb», con sus 4 funciones implementadas."
    for cell in cells_calling(nb, "grader.check("):
        assert re.search(r"se cumplen? (las \d+|la única) pruebas? públicas?\.", shown([cell])), shown([cell])
    assert "5 de 5 criterios se cumplen." in shown(nb.cells)
    # Issue 48.7: the graded challenge is not called a practice exercise.
    challenge = shown(cells_calling(nb, 'grader.check("student_extension")'))
    assert HIDDEN_TESTS_NOTE in challenge and PRACTICE_NOTE not in challenge, challenge
    (made,) = folder.glob("attention (1)_*.zip")
    with zipfile.ZipFile(made) as zf:
        (notebook,) = [n for n in zf.namelist() if n.endswith(".ipynb")]
        assert json.loads(zf.read(notebook))["metadata"]["otter"]["assignment_name"] == \
            assignment_name(folder / "attention (1).ipynb")


def test_two_copies_of_the_notebook_get_a_spanish_explanation(built_dist, tmp_path):
    folder = student_folder(built_dist, tmp_path, built_dist / "student" / NOTEBOOK_NAME, NOTEBOOK_NAME)
    shutil.copy(folder / NOTEBOOK_NAME, folder / "notebook_student (1).ipynb")
    nb = execute(folder, NOTEBOOK_NAME, prelude="import os; os.environ.pop('JPY_SESSION_NAME', None)")
    said = shown(cells_calling(nb, "Grader("))
    assert "Hay varios cuadernos de esta tarea" in said and "Deja solo uno" in said
    assert "--notebook" not in said  # a flag of lab.py, nothing this cell can take
    # What it says works meanwhile does: grader.check runs the public tests from tests/...
    assert "grader.check(...) funciona con las pruebas públicas de la carpeta tests/" in said
    assert "no se cumplen 3 de 3 pruebas públicas" in shown(cells_calling(nb, 'grader.check("attention")'))
    # ... and what it says does not work does not.
    assert "pero la entrega no" in said
    assert "no sé cuál es tu cuaderno" in shown(cells_calling(nb, "grader.export()"))


def test_what_the_notebook_shows_is_spanish(renamed_student_run, renamed_solution_run):
    for _, nb in (renamed_student_run, renamed_solution_run):
        text = shown(nb.cells)
        for english in ENGLISH:
            assert english not in text, english


# -- the challenge runs in the notebook's own process -----------------------------------------

# A stand-in for Otter whose Notebook accepts any call and returns None, as the new grading
# sandbox provides, and a guard that fails any attempt to start a process.
STAND_IN = '''
import subprocess, sys, types
class _Anything:
    def __init__(self, *args, **kwargs): pass
    def __getattr__(self, name): return lambda *args, **kwargs: None
sys.modules["otter"] = types.SimpleNamespace(Notebook=_Anything)
def _refuse(*args, **kwargs): raise RuntimeError("a cell started a process")
subprocess.Popen.__init__ = _refuse
'''


def test_under_a_stand_in_otter_every_cell_runs_and_no_process_starts(built_dist, tmp_path):
    folder = student_folder(built_dist, tmp_path, built_dist / "solution" / SOLUTION_NAME, "entrega.ipynb")
    nb = execute(folder, "entrega.ipynb", prelude=STAND_IN)
    assert not errors(nb.cells)
    assert "5 de 5 criterios se cumplen." in shown(nb.cells)
    assert not list(folder.glob("*.zip")), "a stand-in Otter exports nothing, and says nothing"


# -- the student folder ----------------------------------------------------------------------


def test_student_requirements_are_the_kit_s_own_pins(built_dist):
    pins = {line.split("==")[0]: line for line in (ROOT / "requirements.txt").read_text().splitlines()
            if "==" in line}
    lines = [line for line in (built_dist / "student" / "requirements.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    assert lines and all(pins[line.split("==")[0]] == line for line in lines)
    assert {"otter-grader", "numpy", "jsonschema"} <= {line.split("==")[0] for line in lines}


def test_the_built_init_cell_names_the_master_s_assignment(built_dist):
    config = load_master(MASTER).cells[0].source
    name = re.search(r"^name: (\S+)$", config, re.M).group(1)
    student = nbformat.read(built_dist / "student" / NOTEBOOK_NAME, as_version=4)
    (init,) = [c for c in student.cells if c.cell_type == "code" and "Grader(" in c.source]
    assert f'Grader(assignment="{name}")' in init.source
    assert assignment_name(built_dist / "student" / NOTEBOOK_NAME) == name


def test_every_explorer_link_of_the_notebooks_points_to_a_section_that_exists(built_dist):
    page = (built_dist / "student" / EXPLORER_NAME).read_text(encoding="utf-8")
    assert "<script src" not in page and "<link" not in page  # one self-contained file
    sections = set(re.findall(r'<section id="([^"]+)"', page))
    for name in (NOTEBOOK_NAME, TOUR_NAME):
        text = (built_dist / "student" / name).read_text(encoding="utf-8")
        links = re.findall(r"explorer\.html#([\w-]+)", text)
        assert links and set(links) <= sections, (name, set(links) - sections)
    student = (built_dist / "student" / NOTEBOOK_NAME).read_text(encoding="utf-8")
    assert {"qkv", "escala", "cabezas", "posiciones", "capital"} <= set(re.findall(r"explorer\.html#([\w-]+)", student))


def test_support_files_the_sandbox_lays_out_are_all_in_the_student_folder(built_dist):
    assert {name for _, name in student_files()} <= {p.name for p in (built_dist / "student").iterdir()}
    assert "notebook_grader.py" in {name for _, name in student_files()}


def test_no_english_of_otter_or_argparse_in_what_students_receive(built_dist):
    readable = [built_dist / "student" / name for name in (NOTEBOOK_NAME, TOUR_NAME, "assessment.md",
                                                            "requirements.txt", EXPLORER_NAME)]
    helps = [subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True,
                            cwd=built_dist / "student").stdout
             for script in ("lab.py", "extension.py", "ablacion.py")]
    for text in [p.read_text(encoding="utf-8") for p in readable] + helps:
        for english in ENGLISH:
            assert english not in text, english
    # Python files a student may open: no Otter scaffolding, and no argparse to print English.
    for _, name in student_files():
        text = (built_dist / "student" / name).read_text(encoding="utf-8")
        for english in ("Initialize Otter", "Please save before exporting", "import argparse", "ArgumentParser"):
            assert english not in text, (name, english)


# -- the guided tour and the explained solution -----------------------------------------------


# What seed 000 draws: the attention heatmaps of step 5 and the positional encoding of step 7,
# found by their titles (the tour's text alternative of each figure quotes them).
SEED_FIGURES = ("Autoatención (cada token ve todos los tokens)", "Codificación posicional sinusoidal")
DEMO_CAPTION = "*Demostración"


@pytest.fixture(scope="module")
def executed_tour(built_dist, tmp_path_factory):
    """The shipped tour and the same tour run by a kernel in the student folder, where it
    sits beside step 9's trained weights."""
    folder = tmp_path_factory.mktemp("recorrido")
    for name in (TOUR_NAME, WEIGHTS_FILE):
        shutil.copy(built_dist / "student" / name, folder / name)
    return nbformat.read(folder / TOUR_NAME, as_version=4), execute(folder, TOUR_NAME)


def tour_sections(nb):
    """{"Paso N": [cells]} for each step of a notebook, its heading cell first."""
    sections, current = {}, None
    for cell in nb.cells:
        heading = re.match(r"## (Paso \d+)", cell.source) if cell.cell_type == "markdown" else None
        if heading:
            current = sections.setdefault(heading.group(1), [])
        elif cell.cell_type == "markdown" and cell.source.startswith("## "):
            current = None
        if current is not None:
            current.append(cell)
    return sections


def printed_in_order(cells) -> str:
    """What the cells print, in order: code cells' streams and the demos' text blocks."""
    parts = []
    for cell in cells:
        if cell.cell_type == "code":
            parts += [o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream"]
        elif cell.source.startswith(DEMO_CAPTION):
            parts += re.findall(r"```text\n(.*?)\n```", cell.source, re.S)
    return "\n".join(parts)


def figures(cells):
    """[(text alternative or "", PNG bytes)] of every figure the cells show."""
    import base64

    found = []
    for cell in cells:
        for output in cell.get("outputs", []):
            if "image/png" in output.get("data", {}):
                found.append(("", base64.b64decode(output.data["image/png"])))
        for alt, name in re.findall(r"!\[([^\]]*)\]\(attachment:([^)]+)\)", cell.source):
            found.append((alt, base64.b64decode(cell.attachments[name]["image/png"])))
    return found


def test_guided_tour_has_no_graded_cell_and_runs_top_to_bottom(built_dist, executed_tour):
    tour, run = executed_tour
    assert "otter" not in tour.metadata
    code = "\n".join(cell.source for cell in tour.cells if cell.cell_type == "code")
    everything = "\n".join(cell.source for cell in tour.cells)
    text = "\n".join(cell.source for cell in tour.cells if cell.cell_type == "markdown")
    for graded in ("grader", "BEGIN", "student_extension", "import lab", "import extension"):
        assert graded not in code, graded
    # The demos shown as text show their code: never a graded function's.
    for graded in ("def attention(", "def multihead(", "def positional_encoding(", "def transformer_block("):
        assert graded not in everything, graded
    for exercise in ("**Ejercicio", "**Pregunta", "**Reto:", "## Entrega", "_Escribe aquí tu respuesta._"):
        assert exercise not in text, exercise
    assert all(cell.cell_type in ("markdown", "code") for cell in tour.cells)
    assert any("attachment:transformer_flow.png" in c.source and c.get("attachments") for c in tour.cells)
    assert not errors(run.cells)
    assert "Tras 60 tokens" in shown(run.cells)


def test_the_executed_tour_shows_every_step_s_output_and_seed_000_s_figures(executed_tour):
    from PIL import Image

    _, run = executed_tour
    sections = tour_sections(run)
    assert list(sections) == [f"Paso {n}" for n in range(1, 10)]
    for step, cells in sections.items():
        if step != "Paso 1":  # the imports print nothing, in seed 000 too
            assert printed_in_order(cells).strip() or figures(cells), f"{step} shows nothing"
    # Steps 2-8 print seed 000's own numbers, in its order, and step 9 its model's.
    assert_matches_seed(printed_in_order(run.cells))
    assert "El modelo acierta 1600 de 1600 dígitos (100,0 %)" in printed_in_order(sections["Paso 9"])
    artifacts = ROOT / "tests" / "artifacts" / "lesson"
    artifacts.mkdir(parents=True, exist_ok=True)
    for title, step in zip(SEED_FIGURES, ("Paso 5", "Paso 7")):
        (figure,) = [png for alt, png in figures(sections[step]) if title in alt]
        image = Image.open(io.BytesIO(figure))
        assert image.format == "PNG" and image.width > 600 and image.height > 300, image.size
        (artifacts / f"tour_{step.replace(' ', '_').lower()}.png").write_bytes(figure)
    # Step 9's heads, random and trained, with what each attends to.
    (heads,) = [png for alt, png in figures(sections["Paso 9"]) if "Cabeza 1, parámetros entrenados" in alt]
    (artifacts / "tour_paso_9.png").write_bytes(heads)


def test_the_tour_ships_what_a_kernel_prints(executed_tour):
    # Its code cells come with their outputs; a demo shown as text draws from the same rng at
    # build time, so a later code cell that drew from it too would print other numbers here.
    shipped, run = executed_tour
    for before, after in zip(shipped.cells, run.cells):
        if before.cell_type == "code":
            assert [o.get("text") for o in before.outputs] == [o.get("text") for o in after.outputs], \
                before.source.splitlines()[0]
            assert [o.output_type for o in before.outputs] == [o.output_type for o in after.outputs]


# A sentence that announces the cell after it; the tour must have that cell.
PROMISES = re.compile(r"(La celda siguiente|Comprobémoslo|lo comprueba|Cargamos|La probamos|Lo medimos|"
                      r"Construimos|Miramos|dibujamos)[^.]*:\s*$")


@pytest.mark.parametrize("name", [TOUR_NAME, NOTEBOOK_NAME])
def test_every_cell_the_text_announces_is_there(built_dist, name):
    nb = nbformat.read(built_dist / "student" / name, as_version=4)
    announced = 0
    for cell, after in zip(nb.cells, nb.cells[1:]):
        if cell.cell_type == "markdown" and PROMISES.search(cell.source):
            announced += 1
            assert after.cell_type == "code" or after.source.startswith(DEMO_CAPTION), cell.source[-120:]
    assert announced >= 8


def test_the_tour_does_not_speak_of_functions_the_reader_wrote(built_dist):
    tour = nbformat.read(built_dist / "student" / TOUR_NAME, as_version=4)
    text = "\n".join(cell.source for cell in tour.cells)
    assert "lo construimos pieza a pieza" not in tour.cells[0].source
    yours = re.compile(r"(?i)\btus? (?:propias? )?(?:`\w+`|\*\*|funci|código)|\*\*tus?\*\*|las tuyas|con tus")
    assert not yours.findall(text), yours.findall(text)
    # The control: the student notebook, which does speak of them, is caught.
    student = (built_dist / "student" / NOTEBOOK_NAME).read_text(encoding="utf-8")
    assert len(yours.findall(student)) >= 5


def test_explained_solution_explains_every_graded_answer_and_stays_out_of_the_student_folder(built_dist):
    solution = nbformat.read(built_dist / "solution" / SOLUTION_NAME, as_version=4)
    notes = [c.source for c in load_master(MASTER).cells if "solution-note" in c.metadata.get("tags", [])]
    assert len(notes) == 9  # the four functions', the challenge's, three practice exercises' and the header
    sources = [c.source for c in solution.cells]
    for note in notes:
        assert note in sources
    # Each note follows the solution it explains.
    for name in ("attention", "multihead", "positional_encoding", "transformer_block"):
        at = next(i for i, s in enumerate(sources) if s.startswith(f"def {name}("))
        assert sources[at + 1].startswith("> **Por qué así.**"), name
    student_texts = [p.read_text(encoding="utf-8", errors="replace") for p in (built_dist / "student").rglob("*") if p.is_file()]
    for note in notes:
        first_line = note.splitlines()[0]
        assert not any(first_line in text for text in student_texts)


# -- assessment.md ------------------------------------------------------------------------------


def test_assessment_example_earns_nothing_when_pasted(built_dist, tmp_path):
    text = (built_dist / "student" / "assessment.md").read_text(encoding="utf-8")
    example = re.search(r'```json\n("student_extension": \{.*?\n\})\n```', text, re.S).group(1)
    extension = json.loads("{" + example + "}")["student_extension"]
    folder = student_folder(built_dist, tmp_path, built_dist / "solution" / SOLUTION_NAME, NOTEBOOK_NAME)
    done = subprocess.run([sys.executable, "lab.py", "--seed", "55"], cwd=folder, capture_output=True,
                          text=True, check=True)
    data = {**json.loads(done.stdout), "student_extension": extension}
    failed = [r.id for r in validate(data, folder / NOTEBOOK_NAME, lab=folder / "lab.py") if not r.passed]
    assert "cites_lab_numbers" in failed and "declares_risk" in failed


# -- one dialect ----------------------------------------------------------------------------------

# The notebook says clave, puntuación, producto escalar and «la softmax»; the kit's notes speak
# to the student, not about the kit's own sources.
OTHER_DIALECT = re.compile(r"(?i)\b(llaves?|puntajes?|producto punto|(el|del|al) softmax|one-hot|el preset"
                           r"|que no tenemos|la página original)\b")


def test_everything_students_read_speaks_the_notebook_s_dialect(built_dist):
    # Step 9's weights are arrays, not text (tests/test_trained_model.py checks what they hold);
    # the public checks' data is read for the words grader.check says.
    for path in (p for p in (built_dist / "student").rglob("*") if p.is_file() and p.name != WEIGHTS_FILE):
        text = (spec_text(path) if path.name == CHECKS_DATA else
                path.read_text(encoding="utf-8"))
        found = OTHER_DIALECT.findall(text)
        assert not found, (path.name, found)


# -- check_all can no longer pass an empty challenge (issue 10) ---------------------------------


def test_check_all_reports_every_question_and_fails_an_empty_challenge(built_dist, tmp_path, monkeypatch):
    from notebook_code import restart_and_run_all
    from notebook_grader import Grader

    folder = student_folder(built_dist, tmp_path, built_dist / "solution" / SOLUTION_NAME, "mi cuaderno.ipynb")
    monkeypatch.chdir(folder)
    namespace = dict(restart_and_run_all(folder / "mi cuaderno.ipynb").namespace)
    namespace["grader"] = Grader(assignment=assignment_name(folder / "mi cuaderno.ipynb"))
    exec("finished = grader.check_all()", namespace)
    finished = repr(namespace["finished"])
    for question in ("attention", "multihead", "positional_encoding", "transformer_block", "student_extension",
                     *PRACTICE):
        assert f"{question}: se cumple" in finished, finished
    assert "Los ejercicios cruzada, relleno, cabezas, cache_kv y coste no cuentan para la nota" in finished
    namespace["student_extension"] = dict.fromkeys(namespace["student_extension"])  # the template's None
    exec("empty = grader.check_all()", namespace)
    assert "student_extension: no se cumple 1 de 1 prueba pública." in repr(namespace["empty"])


def test_with_two_copies_check_all_still_runs_every_question_from_the_tests_folder(
        built_dist, tmp_path, monkeypatch, capsys):
    from notebook_code import restart_and_run_all
    from notebook_grader import Grader

    folder = student_folder(built_dist, tmp_path, built_dist / "solution" / SOLUTION_NAME, "mi cuaderno.ipynb")
    shutil.copy(folder / "mi cuaderno.ipynb", folder / "mi cuaderno (1).ipynb")
    monkeypatch.chdir(folder)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    namespace = dict(restart_and_run_all(folder / "mi cuaderno.ipynb").namespace)
    namespace["grader"] = Grader(assignment=assignment_name(folder / "mi cuaderno.ipynb"))
    assert "Hay varios cuadernos de esta tarea" in capsys.readouterr().out
    exec("finished = grader.check_all()", namespace)
    finished = repr(namespace["finished"])
    for question in ("attention", "multihead", "positional_encoding", "transformer_block", "student_extension"):
        assert f"{question}: se cumple" in finished, finished
