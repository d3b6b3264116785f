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
