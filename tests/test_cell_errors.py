"""A student's own cell that fails with one of NumPy's common errors reads, in «Errores al
ejecutar tu cuaderno», a Spanish gloss first and NumPy's original line beside it (issue 31.6).
The errors are raised by NumPy itself here, so a NumPy that rewords one fails this test."""

import numpy as np
import pytest

from kit_autograder.verdicts.messages import cell_error_text

RAISED = {
    "broadcast": (lambda: np.ones((3, 4)) + np.ones(3), "combinar elemento a elemento"),
    "matmul": (lambda: np.ones((2, 3)) @ np.ones((4, 5)), "B tiene 4 filas y A tiene 3 columnas"),
    "dot": (lambda: np.dot(np.ones((2, 3)), np.ones((4, 5))), "la última dimensión del primero (3)"),
    "index": (lambda: np.ones(5)[5], "el índice 5 se sale del eje 0, que tiene tamaño 5"),
    "axis": (lambda: np.ones((2, 2)).sum(axis=2), "el eje 2 no existe en un array de 2 dimensiones"),
    "reshape": (lambda: np.ones(12).reshape(5, 2), "un array de 12 elementos no cabe en la forma (5,2)"),
    "concatenate": (lambda: np.concatenate([np.ones((3, 2)), np.ones((4, 3))], axis=1),
                    "para concatenar"),
    "stack": (lambda: np.stack([np.ones(2), np.ones(3)]), "para apilar"),
    "sequence": (lambda: np.array([1.0, [1, 2]], dtype=float), "una secuencia en un solo elemento"),
}


@pytest.mark.parametrize("name", sorted(RAISED))
def test_numpy_errors_are_glossed_in_spanish_beside_the_original(name):
    make, spanish = RAISED[name]
    with pytest.raises(Exception) as raised:
        make()
    original = str(raised.value).strip()
    text = cell_error_text(type(raised.value).__name__, original)
    assert spanish in text, text
    assert text.endswith(f"Mensaje original de NumPy: {original}")


def test_an_error_that_is_not_numpy_s_is_shown_as_the_student_raised_it():
    # The control: the glosses match NumPy's wording only.
    assert cell_error_text("ValueError", "mi propio error") == "ValueError: mi propio error"
    assert cell_error_text("IndexError", "list index out of range") == (
        "IndexError: índice de lista fuera de rango")


def test_a_star_import_of_numpy_is_named_when_something_fails(built_dist, autograder_zip,
                                                             tmp_path):
    from grading_harness import Notebooks, grade_here, write_folder

    notebooks = Notebooks(built_dist)
    breaks = "from numpy import *\nmayor = max(np.ones(3), 0.5)\n"  # NumPy's max: 0.5 is an axis
    files = {"estrella.ipynb": notebooks.correct([breaks]),
             # The controls: the same failure without the star import, and the star import
             # in a notebook where nothing fails, get no note.
             "sin_estrella.ipynb": notebooks.correct(["import numpy\nnumpy.max(numpy.ones(3), 0.5)\n"]),
             "estrella_sin_fallos.ipynb": notebooks.correct(["from numpy import *\n"])}
    out = tmp_path / "out"
    grade_here(write_folder(tmp_path / "in", files), out, autograder_zip)
    read = {name: (out / "feedback" / f"{name[:-6]}.md").read_text("utf-8") for name in files}
    assert "Tu cuaderno hace `from numpy import *`" in read["estrella.ipynb"]
    assert "from numpy import *" not in read["sin_estrella.ipynb"]
    assert "Tu cuaderno hace" not in read["estrella_sin_fallos.ipynb"]


def test_cells_that_fail_on_a_function_not_written_yet_are_one_line_per_function():
    from kit_autograder.report import feedback
    from kit_autograder.verdicts.record import Record

    stub = "Implementa attention: sustituye esta línea por tu código (paso 3)."
    other = "Implementa multihead: sustituye esta línea por tu código (paso 6)."
    errors = [dict(cell=n, kind="error", exception="NotImplementedError", message=stub,
                   first_line="pesos = attention(Q, K, V)") for n in (5, 7, 9, 11)]
    errors += [dict(cell=13, kind="error", exception="NotImplementedError", message=other,
                    first_line="multihead(x, heads, W_O)")]
    errors += [dict(cell=20 + n, kind="error", exception="ValueError", message=f"propio {n}",
                    first_line=f"fallo_{n}()") for n in range(10)]
    text = feedback.render(Record(file="a.ipynb", stem="a", cell_errors=errors))
    assert "Celdas [5], [7], [9] y [11]: `NotImplementedError: Implementa attention" in text
    assert "Celda [13]: `NotImplementedError: Implementa multihead" in text
    # Every one of the ten other errors is still shown: none pushed out by the stubs.
    assert all(f"propio {n}" in text for n in range(10)) and " más." not in text
    # The control: eleven errors of other kinds do not fit, and the last is counted instead.
    more = errors[5:] + [dict(cell=40, kind="error", exception="ValueError", message="propio 10",
                              first_line="x")]
    assert "… y 1 error más." in feedback.render(Record(file="a.ipynb", stem="a", cell_errors=more))
