"""Correct code in styles found in public notebooks keeps every point, challenge included.

Found by grading about seventy notebooks written in the styles of public repositories
(none copied): each of these lost points while being right.

* ``%matplotlib inline`` on the first line of the imports cell: the bare IPython shell of
  the sandbox raised on it, so numpy was never imported and every function scored 0;
* module-level constants and helpers that are not literals (``NEG_INF = -np.inf``,
  ``relu = lambda z: ...``) and methods attached with ``setattr`` (d2l's idiom): lab.py's
  extraction dropped them, the lab failed and the challenge lost 5 of its 6 points;
* a multihead that calls attention once on a stack of heads ``(h, n, d_k)``: the reference,
  standing in for the student's attention, read ``K.T`` as reversing all three axes.

Each has its control: the condition that made it fail, shown to hold.
"""

import ast
import subprocess
import sys

import numpy as np
import pytest

from grading_harness import Notebooks, grade_here, total

MAGIC_FIRST = "%matplotlib inline\n"

CONSTANTS_AND_LAMBDAS = '''
NEG_INF = -np.inf
SQRT = np.sqrt
relu = lambda z: np.maximum(z, 0)

def attention(Q, K, V, mask=None):
    scores = Q @ K.T / SQRT(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, NEG_INF)
    weights = softmax(scores)
    return weights @ V, weights
'''

# d2l's way: a class first, its methods attached afterwards, in a cell of their own.
D2L_SETATTR = '''
class DotProductAttention:
    pass

def _forward(self, Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights

setattr(DotProductAttention, "__call__", _forward)
_attend = DotProductAttention()

def attention(Q, K, V, mask=None):
    return _attend(Q, K, V, mask)
'''

STACKED_HEADS = '''
def multihead(X, heads, W_O, mask=None):
    W_Q, W_K, W_V = (np.stack(ws) for ws in zip(*heads))  # (h, d_model, d_k)
    out, _ = attention(X @ W_Q, X @ W_K, X @ W_V, mask)   # (h, n, d_v)
    return np.concatenate(list(out), axis=1) @ W_O
'''

# A correct attention whose cell first imports a module the grading machine lacks.
IMPORT_FIRST = '''
from modulo_que_no_existe import algo
def attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
'''

BATCHED_ATTENTION = '''
def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
'''


def with_magic_first(notebooks):
    import nbformat

    notebook = nbformat.from_dict(notebooks._correct)
    imports = next(c for c in notebook.cells
                   if c.cell_type == "code" and "import numpy as np" in c.source)
    imports.source = MAGIC_FIRST + imports.source
    return Notebooks.to_bytes(notebook)


@pytest.fixture(scope="module")
def graded(built_dist, autograder_zip, tmp_path_factory):
    notebooks = Notebooks(built_dist)
    files = {
        "magia_primero.ipynb": with_magic_first(notebooks),
        "constantes.ipynb": notebooks.with_function("correct", "attention",
                                                   CONSTANTS_AND_LAMBDAS),
        "d2l.ipynb": notebooks.with_function("correct", "attention", D2L_SETATTR),
        "cabezas_apiladas.ipynb": Notebooks.to_bytes(_both(notebooks)),
        "importa_primero.ipynb": notebooks.with_function("correct", "attention", IMPORT_FIRST),
        "lab_falla.ipynb": _nothing_measurable(notebooks),
    }
    folder = tmp_path_factory.mktemp("estilos")
    for name, data in files.items():
        (folder / name).write_bytes(data)
    out = tmp_path_factory.mktemp("estilos-out")
    rows = grade_here(folder, out, autograder_zip)
    return rows, out


def _nothing_measurable(notebooks):
    """The correct notebook with attention and positional_encoding failing: every fact of the
    lab calls one of them, so the notebook's lab run measures nothing and exits 1."""
    import nbformat

    nb = nbformat.reads(notebooks.correct().decode(), as_version=4)
    broken = {"attention": "def attention(Q, K, V, mask=None):\n",
              "positional_encoding": "def positional_encoding(n_positions, d_model):\n"}
    for cell in nb.cells:
        for name, signature in broken.items():
            if cell.cell_type == "code" and cell.source.lstrip().startswith(f"def {name}("):
                cell.source = signature + "    raise RuntimeError('todavía a medias')\n"
    return Notebooks.to_bytes(nb)


def _both(notebooks):
    import nbformat

    from grading_harness import inject

    notebook = inject(nbformat.from_dict(notebooks._correct), "attention", BATCHED_ATTENTION)
    return inject(notebook, "multihead", STACKED_HEADS)


@pytest.mark.parametrize("name", ["magia_primero.ipynb", "constantes.ipynb", "d2l.ipynb",
                                  "cabezas_apiladas.ipynb"])
def test_correct_code_in_a_public_style_keeps_all_20_points(graded, name):
    row = graded[0][name]
    assert total(row) == 20, {k: row[k] for k in row if k != "flags"}


def test_control_a_bare_ipython_shell_refuses_matplotlib_inline():
    script = ("from IPython.core.interactiveshell import InteractiveShell\n"
              "shell = InteractiveShell.instance()\n"
              "shell.run_line_magic('matplotlib', 'inline')\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode != 0 and "enable_gui" in run.stderr


def test_control_those_constants_are_not_literals_and_the_methods_come_by_setattr():
    for source in (CONSTANTS_AND_LAMBDAS, D2L_SETATTR):
        tree = ast.parse(source)
        kept_before = [node for node in tree.body
                       if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Import))]
        assert len(kept_before) < len(tree.body)  # statements a defs-and-literals rule drops


def test_control_the_lessons_reference_reads_a_stack_of_heads_wrongly():
    from reference import attention as reference

    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 5))
    with pytest.raises(ValueError):
        reference.attention(Q, K, V)  # K.T is (4, 3, 2)


def test_a_function_whose_cell_failed_before_its_def_is_said_to_be_so(graded):
    rows, out = graded
    feedback = (out / "feedback" / "importa_primero.md").read_text("utf-8")
    section = feedback.split("### `attention`")[1].split("### ")[0]
    assert "que define `attention` falló al ejecutarse" in section
    assert "no encuentro la función" not in section
    # Control: the cell's first line is the import, not the def a first-line rule looks for.
    assert not IMPORT_FIRST.strip().splitlines()[0].startswith("def attention(")


def test_when_the_notebooks_lab_measures_nothing_the_challenge_says_why(graded):
    rows, out = graded
    feedback = (out / "feedback" / "lab_falla.md").read_text("utf-8")
    # Control: the lab really measured nothing in the notebook (it printed so).
    assert "lab.py terminó con código 1: 0 de 11 hechos medidos" in feedback
    section = feedback.split("### `student_extension`")[1].split("### ")[0]
    assert "no se ha podido medir ningún hecho" in section
    assert "no es un número entero válido" not in section
