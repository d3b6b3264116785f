"""lab.py and autograder/notebook_code.py: evidence computed with the student's own functions.

The notebooks here are built from reference/ (allowed in tests only), plus cells a real
notebook has and the lab must never run: demo code, magics, a cell that does not parse.
``reference_notebook`` is also what tests/test_extension.py builds its notebooks with.
"""

import ast
import importlib.util
import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from reference import attention as reference
from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME
from extension import FIELD_ALIASES, schema_errors
import lab_runner
import notebook_code
from notebook_code import NotebookCodeError, restart_and_run_all

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "assignments" / "attention" / "lab.py"
NOTEBOOK_CODE = ROOT / "autograder" / "notebook_code.py"
LAB_RUNNER = ROOT / "autograder" / "lab_runner.py"
GRADED = ("attention", "multihead", "positional_encoding", "transformer_block")
GIVEN = ("softmax", "init_multihead", "layer_norm")

# Cells a student notebook holds besides the definitions; running any of them would fail.
NOISE_CELLS = [
    "%matplotlib inline\nimport numpy as np\nimport matplotlib.pyplot as plt",
    "raise RuntimeError('the lab must not run demo cells')",
    "!pip install nothing\nx = attention(np.eye(2), np.eye(2), np.eye(2))",
    "def broken(:\n    pass",
    "%%bash\necho not python",
]


def reference_notebook(path: Path, **sources) -> Path:
    """A notebook at ``path`` whose function cells are reference/'s, except those in ``sources``."""
    cells = [nbformat.v4.new_code_cell(NOISE_CELLS[0])]
    for name in ("softmax", "attention", "init_multihead", "multihead", "positional_encoding",
                 "layer_norm", "transformer_block"):
        cells.append(nbformat.v4.new_code_cell(sources.get(name) or inspect.getsource(getattr(reference, name))))
        cells.append(nbformat.v4.new_markdown_cell(f"Texto sobre `{name}`."))
    cells += [nbformat.v4.new_code_cell(source) for source in NOISE_CELLS[1:]]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def stub(name: str) -> str:
    signature = inspect.getsource(getattr(reference, name)).splitlines()[0]
    return f'{signature}\n    """Docstring."""\n    raise NotImplementedError("Implementa {name}.")\n'


def run_lab(*args, lab=LAB, cwd=None):
    return subprocess.run([sys.executable, str(lab), *map(str, args)], capture_output=True,
                          cwd=cwd, timeout=120)


def import_lab():
    spec = importlib.util.spec_from_file_location("lab_under_test", LAB)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lab_report(notebook, seed=55):
    return json.loads(run_lab("--seed", seed, "--notebook", notebook).stdout)


def fact(report, fact_id):
    (item,) = [item for item in report["evidence"] if item["id"] == fact_id]
    return item


@pytest.fixture(scope="module")
def good_notebook(tmp_path_factory):
    return reference_notebook(tmp_path_factory.mktemp("good") / "notebook_student.ipynb")


@pytest.fixture(scope="module")
def good_run(good_notebook):
    done = run_lab("--notebook", good_notebook)
    assert done.returncode == 0, done.stderr.decode()
    return done


@pytest.fixture(scope="module")
def good_report(good_run):
    return json.loads(good_run.stdout)


# -- notebook_code: the functions Restart & Run All defines ---------------------------------


def run_all(cells):
    return restart_and_run_all(nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in cells]))


def test_the_saved_notebook_runs_top_to_bottom_and_its_functions_work(good_notebook):
    ran = restart_and_run_all(good_notebook)
    output, weights = ran.namespace["attention"](np.eye(2), np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert np.allclose(weights, [[0.6698, 0.3302], [0.3302, 0.6698]], atol=1e-4)
    # The demo cells ran too, as in the kernel, and their failures were kept apart.
    assert ran.namespace["x"] is not None
    kinds = [error.split(":")[0] for _, error in ran.errors]
    assert kinds == ["RuntimeError", "SyntaxError"], ran.errors
    assert ran.errors[0][0] == "raise RuntimeError('the lab must not run demo cells')"


@pytest.mark.parametrize("cells, name, expected", [
    (["%%time\ndef f():\n    return 3"], "f", 3),
    (["%%capture\ndef f():\n    return 3"], "f", 3),
    (["from numpy import *\ndef f():\n    return float(sqrt(9.0))"], "f", 3.0),
    (["%pip install -q numpy matplotlib\nimport numpy as np\ndef f():\n    return int(np.sum([1, 2]))"], "f", 3),
    (["!pip install numpy\ndef f():\n    return 3"], "f", 3),
    (["def f():\n    return helper()", "def helper():\n    return 3"], "f", 3),
    (["from dataclasses import dataclass\n@dataclass\nclass C:\n    k: int = 3\n"
      "def f():\n    return C().k"], "f", 3),
    (["def make(k):\n    def inner():\n        return k\n    return inner\nf = make(3)"], "f", 3),
    (["def f():\n    return 1", "LIMIT = 3\ndef f():\n    return LIMIT"], "f", 3),
    (["raise ValueError('una demo que falla')", "def f():\n    return 3"], "f", 3),
    (['def f(x=0.5):\n    return ("%.2f"\n            % x)'], "f", "0.50"),
], ids=["cell_time_magic", "cell_capture_magic", "star_import", "pip_magic_first_line",
        "shell_pip", "helper_after", "dataclass", "closure", "later_definition_wins",
        "failing_demo_cell", "percent_continuation"])
def test_notebook_habits_define_what_the_kernel_defines(cells, name, expected):
    assert run_all(cells).namespace[name]() == expected


def test_shell_escapes_start_no_program_while_python_in_the_cell_does(tmp_path):
    # The control: the same cell's os.system does run, so the notebook's code runs for real.
    ran = run_all([f"!touch {tmp_path / 'escape'}\nimport os\nos.system('touch {tmp_path / 'python'}')",
                   f"%%bash\ntouch {tmp_path / 'bash'}"])
    assert (tmp_path / "python").exists()
    assert not (tmp_path / "escape").exists() and not (tmp_path / "bash").exists()
    assert len(ran.skipped) == 2 and all("no instala paquetes" in note for note in ran.skipped)


def test_a_cell_that_fails_before_its_def_says_why_its_function_is_missing():
    ran = run_all(["import no_existe\ndef attention(Q, K, V, mask=None):\n    pass"])
    assert "attention" not in ran.namespace
    assert ran.failed_cell_defining("attention") == "ModuleNotFoundError: No module named 'no_existe'"


def test_the_kit_cells_are_quiet_while_a_notebook_is_loaded(tmp_path):
    ran = run_all(["import notebook_code\ninside = notebook_code.running_a_notebook()",
                   "import otter\nexported = otter.Notebook('x.ipynb').export()"])
    assert ran.namespace["inside"] is True and ran.namespace["exported"] is None
    assert not notebook_code.running_a_notebook()


def test_unreadable_notebook_is_a_spanish_error(tmp_path):
    bad = tmp_path / "roto.ipynb"
    bad.write_text("{ no es json")
    with pytest.raises(NotebookCodeError, match="No puedo leer"):
        restart_and_run_all(bad)


# -- the JSON contract ---------------------------------------------------------------------


def test_lab_prints_the_contract_with_the_default_seed(good_report):
    assert good_report["kind"] == "attention"
    assert good_report["seed"] == 55
    assert {"inputs", "result", "evidence", "limitations"} <= set(good_report)
    assert all(isinstance(item["holds"], bool) and item["values"] for item in good_report["evidence"])


def test_lab_output_plus_an_extension_satisfies_the_schema(good_report):
    extension = {name: "texto" for name in FIELD_ALIASES}
    assert schema_errors({**good_report, "student_extension": extension}) == []


def test_same_seed_prints_byte_identical_json(good_notebook, good_run):
    again = run_lab("--seed", 55, "--notebook", good_notebook)
    assert again.returncode == 0
    assert again.stdout == good_run.stdout


def test_another_seed_changes_the_random_evidence_but_not_the_worked_example(good_notebook, good_report):
    other = json.loads(run_lab("--seed", 7, "--notebook", good_notebook).stdout)
    assert other["seed"] == 7
    assert fact(other, "softmax_saturation")["values"] != fact(good_report, "softmax_saturation")["values"]
    assert other["result"]["worked_example"] == good_report["result"]["worked_example"]


def test_evidence_covers_every_fact_the_issue_asks_for(good_report):
    assert fact(good_report, "rows_sum_to_one")["values"]["max_abs_row_sum_error"] < 1e-12
    assert fact(good_report, "causal_mask_future_weight")["values"]["total_future_weight"] == 0
    saturation = fact(good_report, "softmax_saturation")["values"]
    assert saturation["d_k"] == [4, 64, 512]
    assert saturation["max_weight_unscaled"][-1] > saturation["max_weight_scaled"][-1]
    assert fact(good_report, "pe_rotation")["values"]["max_rotation_error"] < 1e-12
    assert fact(good_report, "permutation_equivariance_without_pe")["values"]["max_abs_difference"] < 1e-12
    assert fact(good_report, "permutation_equivariance_lost_with_pe")["values"]["max_abs_difference"] > 1e-3
    assert good_report["result"]["checks_passed"] == good_report["result"]["checks_total"] == len(good_report["evidence"])


def test_result_reproduces_seed_003_worked_example(good_report):
    example = good_report["result"]["worked_example"]
    assert np.allclose(example["weights"], [[0.6698, 0.3302], [0.3302, 0.6698]], atol=1e-4)
    assert np.allclose(example["output"], [[1.6605, 2.6605], [2.3395, 3.3395]], atol=1e-4)
    assert example["causal_output_first_row"] == [1.0, 2.0]


def test_limitations_say_why_the_demo_is_not_production(good_report):
    assert any("producción" in text for text in good_report["limitations"])


# -- the evidence describes the student's code ---------------------------------------------

NO_SQRT = inspect.getsource(reference.attention).replace("/ np.sqrt(d_k)", "")
NO_MASK = inspect.getsource(reference.attention).replace("if mask is not None:", "if False:")
NAIVE_SOFTMAX = "def softmax(z, axis=-1):\n    e = np.exp(z)\n    return e / e.sum(axis=axis, keepdims=True)\n"
PE_SWAPPED = inspect.getsource(reference.positional_encoding).replace("np.sin(pos * omega)", "np.cos(pos * omega)")
POST_LN_WITHOUT_FINAL_NORM = inspect.getsource(reference.transformer_block).replace("return layer_norm(x + ffn)", "return x + ffn")


@pytest.mark.parametrize("name, source, failing_fact", [
    ("attention", NO_SQRT, "scaling_by_sqrt_dk"),
    ("attention", NO_MASK, "causal_mask_future_weight"),
    ("softmax", NAIVE_SOFTMAX, "large_scores_stay_finite"),
    ("positional_encoding", PE_SWAPPED, "pe_rotation"),
    ("transformer_block", POST_LN_WITHOUT_FINAL_NORM, "block_output_normalized"),
], ids=["no_sqrt_dk", "mask_ignored", "softmax_without_max", "pe_sin_cos_swapped", "no_final_layer_norm"])
def test_a_mistake_in_the_notebook_shows_up_as_a_fact_that_does_not_hold(tmp_path, name, source, failing_fact):
    report = lab_report(reference_notebook(tmp_path / "nb.ipynb", **{name: source}))
    assert fact(report, failing_fact)["holds"] is False
    assert failing_fact in report["result"]["failed_checks"]


def test_overflowing_softmax_prints_null_not_nan(tmp_path):
    notebook = reference_notebook(tmp_path / "nb.ipynb", softmax=NAIVE_SOFTMAX)
    done = run_lab("--notebook", notebook)
    assert done.returncode == 0
    text = done.stdout.decode()
    assert "NaN" not in text
    values = fact(json.loads(text), "large_scores_stay_finite")["values"]
    assert values["max_abs_row_sum_error"] is None and values["non_finite_weights"] > 0


def test_lab_source_holds_no_solution():
    source = LAB.read_text(encoding="utf-8")
    assert "import reference" not in source and "from reference" not in source
    for name in GRADED + GIVEN:
        assert f"def {name}(" not in source
    assert "np.exp" not in source


# -- failures: Spanish, non-zero, no traceback ---------------------------------------------


def not_measured(report):
    return {item["id"]: item["not_measured"] for item in report["evidence"] if item["holds"] is None}


def test_a_stub_costs_only_the_facts_that_need_it(tmp_path):
    notebook = reference_notebook(tmp_path / "nb.ipynb", transformer_block=stub("transformer_block"))
    done = run_lab("--notebook", notebook)
    report = json.loads(done.stdout)
    assert done.returncode == 0
    assert set(not_measured(report)) == {"block_output_normalized", "block_causal"}
    assert all("`transformer_block` todavía no está implementada" in why
               for why in not_measured(report).values())
    measured = [item for item in report["evidence"] if item["holds"] is not None]
    assert len(measured) == 9 and all(item["holds"] for item in measured)
    assert report["result"]["worked_example"] is not None
    stderr = done.stderr.decode()
    assert "no se ha medido «block_causal»" in stderr and "Traceback" not in stderr


def test_a_stub_attention_leaves_the_positional_encoding_measured(tmp_path):
    done = run_lab("--notebook", reference_notebook(tmp_path / "nb.ipynb", attention=stub("attention")))
    report = json.loads(done.stdout)
    assert done.returncode == 0
    assert fact(report, "pe_rotation")["holds"] is True
    # multihead and the block call the student's own attention: their facts go with it.
    assert "permutation_equivariance_without_pe" in not_measured(report)
    assert report["result"]["worked_example"] is None


def test_with_every_function_a_stub_nothing_is_measured_and_the_lab_exits_1(tmp_path):
    stubs = {name: stub(name) for name in GRADED}
    done = run_lab("--notebook", reference_notebook(tmp_path / "nb.ipynb", **stubs))
    assert done.returncode == 1
    assert json.loads(done.stdout)["result"]["checks_measured"] == 0
    assert "no se ha podido medir ningún hecho" in done.stderr.decode()


def test_stub_reached_through_another_function_names_the_stub(tmp_path):
    notebook = reference_notebook(tmp_path / "nb.ipynb", positional_encoding=stub("positional_encoding"))
    stderr = run_lab("--notebook", notebook).stderr.decode()
    assert "`positional_encoding` todavía no está implementada" in stderr


def test_exception_in_a_function_names_it(tmp_path):
    crashing = inspect.getsource(reference.multihead).replace("outputs = [", "outputs = 1 / 0 or [")
    notebook = reference_notebook(tmp_path / "nb.ipynb", multihead=crashing)
    done = run_lab("--notebook", notebook)
    stderr = done.stderr.decode()
    assert done.returncode == 0
    assert "`multihead` falló con ZeroDivisionError" in stderr
    assert "Traceback" not in stderr


def test_output_of_the_wrong_shape_is_reported(tmp_path):
    transposed = inspect.getsource(reference.positional_encoding).replace("return pe, omega", "return pe.T, omega")
    done = run_lab("--notebook", reference_notebook(tmp_path / "nb.ipynb", positional_encoding=transposed))
    assert "`positional_encoding`: pe tiene forma (16, 100) y se esperaba (100, 16)" in done.stderr.decode()
    assert "pe_rotation" in not_measured(json.loads(done.stdout))


def test_prints_inside_student_functions_do_not_corrupt_the_json(tmp_path):
    chatty = inspect.getsource(reference.attention).replace("d_k = K.shape[-1]", "d_k = K.shape[-1]; print('depurando')")
    done = run_lab("--notebook", reference_notebook(tmp_path / "nb.ipynb", attention=chatty))
    assert done.returncode == 0
    assert json.loads(done.stdout)["kind"] == "attention"


def test_wrong_command_line_exits_2_in_spanish(good_notebook):
    done = run_lab("--seed", "cincuenta", "--notebook", good_notebook)
    assert done.returncode == 2
    assert "argumentos no válidos" in done.stderr.decode()


# -- the student folder: lab.py, notebook_code.py and one notebook -------------------------


def student_folder(tmp_path, notebooks=("notebook_student.ipynb",)):
    folder = tmp_path / "student"
    folder.mkdir()
    shutil.copy(LAB, folder / "lab.py")
    shutil.copy(NOTEBOOK_CODE, folder / "notebook_code.py")
    shutil.copy(LAB_RUNNER, folder / "lab_runner.py")
    for name in notebooks:
        reference_notebook(folder / name)
    return folder


def test_in_the_student_folder_the_lab_uses_the_only_notebook_beside_it(tmp_path, good_run):
    folder = student_folder(tmp_path)
    done = run_lab(lab=folder / "lab.py", cwd=tmp_path)  # run from elsewhere on purpose
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == good_run.stdout


def test_two_notebooks_beside_the_lab_ask_for_the_notebook_flag(tmp_path):
    folder = student_folder(tmp_path, notebooks=("notebook_student.ipynb", "Untitled.ipynb"))
    done = run_lab(lab=folder / "lab.py")
    assert done.returncode == 2
    assert "--notebook" in done.stderr.decode() and "Untitled.ipynb" in done.stderr.decode()


def test_built_student_notebook_is_reported_as_stubs_and_solution_runs(built_dist, tmp_path):
    student = run_lab("--notebook", built_dist / "student" / NOTEBOOK_NAME)
    assert student.returncode == 1
    assert "todavía no está implementada" in student.stderr.decode()
    folder = shutil.copytree(built_dist / "solution", tmp_path / "solution")
    before = sorted(p.name for p in folder.iterdir())
    solution = run_lab("--notebook", folder / SOLUTION_NAME)
    assert solution.returncode == 0, solution.stderr.decode()
    assert json.loads(solution.stdout)["result"]["failed_checks"] == []
    # Its «Guarda y valida» cell ran too, and wrote nothing: the lab leaves the folder as it was
    # (it used to write resultado.json beside the notebook).
    assert sorted(p.name for p in folder.iterdir()) == before


# -- the saturation facts say no more than they check (issue 13) ---------------------------


@pytest.mark.parametrize("seed", range(1, 21))
def test_both_saturation_facts_hold_for_correct_code_over_seeds_1_to_20(seed):
    lab = import_lab()
    report = lab.run_lab({name: getattr(reference, name) for name in GRADED}, seed)
    for fact_id in ("softmax_saturation", "scaling_never_sharpens"):
        assert fact(report, fact_id)["holds"], (seed, fact(report, fact_id)["values"])
    unscaled = fact(report, "softmax_saturation")["values"]["max_weight_unscaled"]
    assert unscaled == sorted(unscaled) and unscaled[-1] >= lab.SATURATED_WEIGHT


def test_saturation_fact_fails_when_the_largest_weight_does_not_grow(tmp_path):
    # Weights that ignore the scores: uniform, so the largest weight is 1/m at every d_k.
    uniform = ("def attention(Q, K, V, mask=None):\n"
               "    weights = np.full((Q.shape[0], K.shape[0]), 1 / K.shape[0])\n"
               "    return weights @ V, weights\n")
    report = lab_report(reference_notebook(tmp_path / "nb.ipynb", attention=uniform))
    assert fact(report, "softmax_saturation")["holds"] is False
    assert fact(report, "scaling_never_sharpens")["holds"] is True


def test_scaling_fact_fails_when_scaling_sharpens_the_weights(tmp_path):
    # Any softmax of scores divided by a constant passes; scores that shrink as Q·Kᵀ grows
    # make the unscaled weights the flatter ones.
    sharpening = inspect.getsource(reference.attention).replace(
        "scores = Q @ K.T / np.sqrt(d_k)", "scores = np.sqrt(d_k) / (1 + np.abs(Q @ K.T))")
    report = lab_report(reference_notebook(tmp_path / "nb.ipynb", attention=sharpening))
    assert fact(report, "scaling_never_sharpens")["holds"] is False


# -- fast start and the same bytes in the notebook's process -------------------------------


def test_lab_reads_the_notebook_as_plain_json_without_importing_nbformat(good_notebook):
    code = ("import runpy, sys; sys.argv = ['lab.py', '--notebook', sys.argv[1]]\n"
            "try:\n    runpy.run_path(%r, run_name='__main__')\n"
            "except SystemExit as exit_:\n    assert exit_.code == 0, exit_.code\n"
            "assert 'nbformat' not in sys.modules, 'nbformat was imported'\n") % str(LAB)
    done = subprocess.run([sys.executable, "-c", code, str(good_notebook)], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()


def test_json_and_nbformat_readings_give_byte_identical_output(good_notebook, good_run):
    lab = import_lab()
    node = nbformat.read(str(good_notebook), as_version=4)
    report = lab.run_lab(restart_and_run_all(node).namespace, 55)
    assert lab_runner.to_json(report).encode("utf-8") == good_run.stdout


def test_a_format_3_notebook_is_still_read_through_nbformat(tmp_path, good_notebook, good_run):
    old = tmp_path / "viejo.ipynb"
    nbformat.write(nbformat.read(str(good_notebook), as_version=3), str(old), version=3)
    assert json.loads(old.read_text())["nbformat"] == 3
    assert run_lab("--notebook", old).stdout == good_run.stdout


@pytest.mark.parametrize("args", [("--seed", "55"), ("--seed", "cincuenta"), ("--help",)],
                         ids=["report", "bad_seed", "help"])
def test_run_cli_prints_the_same_bytes_as_the_command_line(good_notebook, args):
    argv = [*args, "--notebook", str(good_notebook)]
    done = run_lab(*argv)
    in_process = import_lab().run_cli(argv)
    assert (in_process.code, in_process.stdout.encode(), in_process.stderr.encode()) == \
        (done.returncode, done.stdout, done.stderr)


def test_stub_failure_is_the_same_in_process_and_on_the_command_line(tmp_path):
    notebook = reference_notebook(tmp_path / "nb.ipynb", attention=stub("attention"))
    done = run_lab("--notebook", notebook)
    in_process = import_lab().run_cli(["--notebook", str(notebook)])
    assert (in_process.code, in_process.stderr.encode()) == (done.returncode, done.stderr)


def test_help_is_spanish_with_no_argparse_english():
    done = run_lab("--help")
    text = done.stdout.decode()
    assert done.returncode == 0 and text.startswith("uso: python lab.py")
    for english in ("usage:", "options:", "show this help", "positional arguments"):
        assert english not in text


@pytest.mark.parametrize("blocked, message", [
    ("nbformat", None),  # not needed for a format-4 notebook
    ("numpy", "falta el paquete numpy"),
])
def test_a_missing_package_is_named_in_spanish(good_notebook, blocked, message):
    code = (f"import sys, runpy; sys.modules[{blocked!r}] = None; "
            f"sys.argv = ['lab.py', '--notebook', {str(good_notebook)!r}]; "
            f"runpy.run_path({str(LAB)!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    if message is None:
        assert done.returncode == 0, done.stderr
    else:
        assert done.returncode == 1 and message in done.stderr and "notebook_code.py" not in done.stderr
        assert "Traceback" not in done.stderr


# -- which notebook: whatever its name (issue 13) ------------------------------------------


def otter_notebook(path: Path, assignment="055-atencion-transformer") -> Path:
    reference_notebook(path)
    nb = nbformat.read(str(path), as_version=4)
    nb.metadata["otter"] = {"assignment_name": assignment}
    nbformat.write(nb, str(path))
    return path


def test_renamed_notebook_is_found_by_its_assignment_beside_the_tour(tmp_path, good_run):
    folder = student_folder(tmp_path, notebooks=())
    otter_notebook(folder / "attention (1).ipynb")
    # Another class's notebook, in the same folder: it defines that class's functions.
    other = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def rnn_step(h, x):\n    return h")],
                                     metadata={"otter": {"assignment_name": "054-rnn"}})
    nbformat.write(other, str(folder / "otra tarea.ipynb"))
    reference_notebook(folder / "notebook.ipynb")  # the guided tour carries no assignment
    done = run_lab(lab=folder / "lab.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == good_run.stdout


def test_two_copies_of_the_assignment_are_named_and_the_fix_is_said(tmp_path):
    folder = student_folder(tmp_path, notebooks=())
    otter_notebook(folder / "notebook_student.ipynb")
    otter_notebook(folder / "notebook_student (1).ipynb")
    stderr = run_lab(lab=folder / "lab.py").stderr.decode()
    assert "«notebook_student (1).ipynb»" in stderr and "Deja solo uno" in stderr and "--notebook" in stderr


def test_the_kernel_s_own_notebook_wins_over_copies(tmp_path, monkeypatch):
    from notebook_code import find_notebook

    first = otter_notebook(tmp_path / "notebook_student.ipynb")
    second = otter_notebook(tmp_path / "notebook_student (1).ipynb")
    monkeypatch.setenv("JPY_SESSION_NAME", str(second))
    assert find_notebook(tmp_path, "055-atencion-transformer") == second
    monkeypatch.setenv("JPY_SESSION_NAME", f"carpeta/{first.name}")  # relative to the server's root
    monkeypatch.chdir(tmp_path)
    assert find_notebook(tmp_path, "055-atencion-transformer").name == first.name


RENAMED_ATTENTION = '''def attention(q, k, v, m=None):
    d = k.shape[-1]
    s = q @ k.T / np.sqrt(d)
    if m is not None:
        s = np.where(m, s, -np.inf)
    w = softmax(s, axis=-1)
    return w @ v, w
'''
KEYWORD_ONLY_MASK = RENAMED_ATTENTION.replace("(q, k, v, m=None)", "(q, k, v, *, m=None)")


@pytest.mark.parametrize("source", [RENAMED_ATTENTION, KEYWORD_ONLY_MASK],
                         ids=["renamed", "keyword_only_mask"])
def test_the_lab_calls_the_functions_as_the_notebook_does(tmp_path, source):
    """Renamed parameters or a keyword-only mask are right code: the lab measures every fact
    with them, as the grader's hidden calls grade them."""
    report = lab_report(reference_notebook(tmp_path / "nb.ipynb", attention=source))
    unmeasured = [(item["id"], item["not_measured"]) for item in report["evidence"]
                  if item["holds"] is not True]
    if source is RENAMED_ATTENTION:
        assert not unmeasured
    else:
        # The notebook's own multihead calls attention(Q, K, V, mask): in a kernel too it
        # fails on a keyword-only mask, so those facts are not measured, and say why. The
        # facts the lab measures on attention itself are.
        assert unmeasured and all("al llamar a `multihead`" in why or "al llamar a "
                                  "`transformer_block`" in why for _, why in unmeasured)
        assert any(item["holds"] is True for item in report["evidence"])


def test_control_a_call_by_the_statements_keyword_fails_on_renamed_parameters():
    namespace = {"np": np, "softmax": reference.softmax}
    exec(RENAMED_ATTENTION, namespace)
    Q = np.eye(2)
    with pytest.raises(TypeError):
        namespace["attention"](Q, Q, Q, mask=None)
    assert lab_runner.call({"attention": namespace["attention"]}, "attention",
                           ("la salida", "los pesos"), Q, Q, Q, None)[1].shape == (2, 2)


def test_the_summary_a_student_reads_glosses_every_key_in_spanish(good_report):
    lab = import_lab().LAB
    text = lab.summary(good_report)
    keys = {key for item in good_report["evidence"] for key in item["values"]}
    keys |= set(good_report["result"]) - {"checks_total", "checks_measured", "checks_passed",
                                          "failed_checks", "not_measured"}
    # ...and the keys of the lab carried in result (result.ablacion), fact by fact.
    keys |= {key for value in good_report["result"].values() if lab_runner.is_contract(value)
             for item in value["evidence"] for key in item["values"]}
    assert keys <= set(lab.glosses), keys - set(lab.glosses)
    # A key without a gloss would show bare at the start of its line; every one is glossed.
    for key in keys:
        assert f"{lab.glosses[key]} («{key}»)" in text or f"«{key}»):" in text, key
    assert "(evidence, id" not in text and "en el JSON" in text


# -- result.ablacion: the ablation lab's numbers, the lesson's and not the student's (issue 33) ---


def test_the_ablation_is_in_every_run_whatever_the_functions_the_folder_or_the_door(tmp_path,
                                                                                      good_run):
    """What ablacion.py measures rides in lab.py's JSON as result.ablacion, a copy carried in
    lab.py: the same bytes in a folder without ablacion.py, the same with nothing implemented,
    and the same in the grader's fresh run (the lab's experiments on the functions it is
    handed), so criterion 3 never sees a difference and criterion 4 can cite it anywhere."""
    from extension import lab_run_with

    module = import_lab()
    folder = tmp_path / "sin_ablacion"
    folder.mkdir()
    for source in (LAB, NOTEBOOK_CODE, LAB_RUNNER):
        shutil.copy(source, folder / source.name)
    reference_notebook(folder / "notebook_student.ipynb")
    done = run_lab("--seed", 55, lab=folder / "lab.py", cwd=folder)
    assert done.returncode == 0 and not (folder / "ablacion.py").exists()
    assert done.stdout == good_run.stdout  # the lab beside ablacion.py printed the same bytes
    alone = json.loads(done.stdout)
    assert alone["result"]["ablacion"] == module.ABLATION
    assert module.LAB.run({}, 55)["result"]["ablacion"] == module.ABLATION  # nothing implemented
    graded = lab_run_with(module, {name: getattr(reference, name) for name in GRADED}, 55)
    assert graded.stdout == done.stdout.decode("utf-8")


def test_the_ablation_costs_the_lab_no_training(monkeypatch):
    """The grader runs the lab for every submission: the ablation is read, never trained."""
    from attention import ablacion

    def no_training(*args, **kwargs):
        raise AssertionError("the lab trained the ablation")

    monkeypatch.setattr(ablacion, "train", no_training)
    report = import_lab().LAB.run({name: getattr(reference, name) for name in GRADED}, 55)
    assert report["result"]["ablacion"]["evidence"] and report["result"]["checks_passed"] == 11
    assert "ablacion" not in {node.names[0].name for node in ast.walk(ast.parse(LAB.read_text("utf-8")))
                              if isinstance(node, (ast.Import, ast.ImportFrom)) and node.names}


def test_the_summary_shows_the_ablation_fact_by_fact_after_the_student_s_evidence(good_report):
    text = import_lab().LAB.summary(good_report)
    ablation = text[text.index("(en el JSON: result, «ablacion»):"):]
    assert "no tus funciones" in text[text.index("laboratorio de ablación"):]
    for item in good_report["result"]["ablacion"]["evidence"]:
        assert f"  [se cumple] {item['fact']}  (en el JSON: «{item['id']}»)" in ablation
    assert "pérdida en secuencias nuevas sin la pieza, por semilla («held_out_loss_without»)" in ablation
