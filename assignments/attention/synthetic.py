"""Submissions made from a build's own notebooks: correct, wrong, untouched stub, broken.

Used by ``autograder/demo_submissions.py`` (the bundled demo, ``examples/``), by the bench and
by the tests. Every notebook starts from the build's student notebook, so its Otter metadata
carries the current assignment name and its cells are the ones students get; only the answer
cells change. A correct answer is the build's solution, a wrong one a realistic mistake below.
Output is byte-for-byte reproducible.
"""

import ast
import io
import textwrap
import zipfile
from pathlib import Path

import nbformat

from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME

from .functions import FUNCTIONS

GRADED_FUNCTIONS = tuple(FUNCTIONS)
SOLUTION_BEGIN, SOLUTION_END = "# BEGIN SOLUTION NO PROMPT", "# END SOLUTION"

# Realistic mistakes, one function body each (indented as in the cell).
MISTAKES = {
    "attention_sin_escalar": ("attention", """
        scores = Q @ K.T
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        weights = softmax(scores, axis=-1)
        return weights @ V, weights
    """),
    "attention_softmax_sin_restar_maximo": ("attention", """
        scores = Q @ K.T / np.sqrt(K.shape[1])
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        e = np.exp(scores)
        weights = e / e.sum(axis=1, keepdims=True)
        return weights @ V, weights
    """),
    "multihead_olvida_la_mascara": ("multihead", """
        outputs = [attention(X @ W_Q, X @ W_K, X @ W_V)[0] for W_Q, W_K, W_V in heads]
        return np.concatenate(outputs, axis=1) @ W_O
    """),
    "positional_encoding_falla_con_d_impar": ("positional_encoding", """
        pos = np.arange(n_positions)[:, None]
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        pe = np.zeros((n_positions, d_model))
        pe[:, 0::2] = np.sin(pos * omega)
        pe[:, 1::2] = np.cos(pos * omega)
        return pe, omega
    """),
    "transformer_block_pre_ln": ("transformer_block", """
        x = x + multihead(layer_norm(x), heads, W_O, mask)
        h = layer_norm(x)
        return x + np.maximum(0, h @ W1 + b1) @ W2 + b2
    """),
    "transformer_block_sin_sesgos": ("transformer_block", """
        x = layer_norm(x + multihead(x, heads, W_O, mask))
        return layer_norm(x + np.maximum(0, x @ W1) @ W2)
    """),
}

# The bundled "partly wrong" submission: one function right, two with a mistake, one untouched.
PARTLY_WRONG = {"attention": "correct", "multihead": "multihead_olvida_la_mascara",
                "positional_encoding": "positional_encoding_falla_con_d_impar"}


def read_build(dist: Path):
    """The build's student notebook and the solution of each answer cell, ``{name: source}``.

    The k-th answer code cell of the student notebook is the k-th solution code cell of the
    solution notebook; its solution, as a student would write it, is that cell without Otter's
    markers and prompt.
    """
    student = nbformat.read(dist / "student" / NOTEBOOK_NAME, as_version=4)
    solution = nbformat.read(dist / "solution" / SOLUTION_NAME, as_version=4)
    answers = [cell for cell in student.cells if _tagged(cell, "otter_answer_cell")]
    solved = [cell for cell in solution.cells if _tagged(cell, "otter_assign_solution_cell")]
    if len(answers) != len(solved):
        raise ValueError(f"{len(answers)} answer cells but {len(solved)} solution cells")
    solutions = {_answer_name(a): _without_markers(s.source) for a, s in zip(answers, solved)}
    missing = set(GRADED_FUNCTIONS) - set(solutions)
    if missing:
        raise ValueError(f"the solution notebook has no solution for {sorted(missing)}")
    return student, solutions


def _tagged(cell, tag):
    return cell.cell_type == "code" and tag in cell.metadata.get("tags", [])


def _answer_name(cell):
    """The question an answer cell answers: the function it defines or the name it assigns."""
    tree = ast.parse(cell.source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            return node.name
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
    return None


def _without_markers(source):
    lines, kept, in_prompt = source.splitlines(), [], False
    for line in lines:
        marker = line.strip()
        if marker.endswith("# BEGIN PROMPT"):
            in_prompt = True
        elif marker.endswith("# END PROMPT"):
            in_prompt = False
        elif not in_prompt and marker not in (SOLUTION_BEGIN, "# BEGIN SOLUTION", SOLUTION_END):
            kept.append(line)
    return "\n".join(kept).rstrip()


def _with_body(stub_source, body):
    """The stub cell with its final ``raise NotImplementedError`` replaced by ``body``."""
    function = ast.parse(stub_source).body[0]
    keep = function.body[-1].lineno - 1  # everything before the stub's raise: signature, docstring
    head = stub_source.splitlines()[:keep]
    return "\n".join(head + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
                     .splitlines())


def implement(student, solutions, choices):
    """A copy of the student notebook where ``choices`` maps answers to "correct" or a mistake."""
    nb = nbformat.from_dict(student)
    for cell in nb.cells:
        if not _tagged(cell, "otter_answer_cell"):
            continue
        name = _answer_name(cell)
        choice = choices.get(name)
        if choice == "correct":
            cell.source = solutions[name]
        elif choice is not None:
            function, body = MISTAKES[choice]
            assert function == name, f"mistake {choice} is for {function}, not {name}"
            cell.source = _with_body(cell.source, body)
    return nb


def correct(student, solutions):
    return implement(student, solutions, {name: "correct" for name in solutions})


def broken_code(student, solutions):
    """Valid JSON, broken Python: numpy never imported and a syntax error in `attention`."""
    nb = correct(student, solutions)
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("import numpy as np"):
            cell.source = cell.source.replace("import numpy as np\n", "")
        if cell.cell_type == "code" and cell.source.startswith("def attention("):
            cell.source = cell.source.replace("return weights @ V, weights",
                                              "return weights @ V, weights)")
    return nb


def notebook_bytes(nb):
    return nbformat.writes(nb).encode("utf-8") + b"\n"


def export_zip(notebook: bytes, zip_name, notebook_name=NOTEBOOK_NAME):
    """What ``grader.export()`` writes (notebook and ``__zip_filename__``), with fixed dates so
    that the same notebook always gives the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
        for name, data in ((notebook_name, notebook), ("__zip_filename__", zip_name.encode())):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return buffer.getvalue()


def demo_submissions(dist: Path):
    """The bundled demo, ``{file name: bytes}``: one of each kind the README describes."""
    student, solutions = read_build(dist)
    right = notebook_bytes(correct(student, solutions))
    return {
        "correcta.ipynb": right,
        "parcial.ipynb": notebook_bytes(implement(student, solutions, PARTLY_WRONG)),
        "sin_hacer.ipynb": notebook_bytes(student),
        # Cut mid-file, as an interrupted save or upload leaves it.
        "rota.ipynb": right[: len(right) * 2 // 5],
        "exportada.zip": export_zip(right, "exportada.zip"),
    }


KINDS = ("correct", "wrong", "stub", "broken")


def mixed_submissions(dist: Path, n: int):
    """``n`` submissions cycling through ``KINDS``, ``{file name: bytes}``; each wrong one has
    one or two of the mistakes above, the rest of it correct. As in a real class, no two
    students' answer cells are the same text (each starts with its author's comment), so
    nothing the grader keeps per distinct cell can hide behind repeated notebooks; the
    untouched stubs stay identical, as they are."""
    student, solutions = read_build(dist)
    mistakes = sorted(MISTAKES)
    files = {}
    for index in range(n):
        kind = KINDS[index % len(KINDS)]
        if kind == "stub":
            files[f"{index:03d}_{kind}.ipynb"] = notebook_bytes(student)
            continue
        if kind == "wrong":
            round_ = index // len(KINDS)
            chosen = {MISTAKES[m][0]: m for m in (mistakes[round_ % len(mistakes)],
                                                  mistakes[(3 * round_ + 1) % len(mistakes)])}
            choices = {name: "correct" for name in solutions}
            choices.update({function: mistake for function, mistake in chosen.items()})
            nb = implement(student, solutions, choices)
        else:
            nb = (correct if kind == "correct" else broken_code)(student, solutions)
        for cell in nb.cells:
            if _tagged(cell, "otter_answer_cell"):
                cell.source = f"# Entrega {index:03d}\n{cell.source}"
        files[f"{index:03d}_{kind}.ipynb"] = notebook_bytes(nb)
    return files
