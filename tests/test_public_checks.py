"""grader.check gives, on public cases, the diagnosis the grade gives on hidden ones (issue 49).

The notebook's checks run the student's own function on public draws of every hidden family
and compare it with data computed at build time (public_checks.npz: no code of the reference
or of the mutants). Each mistake below is written as a student writes it, independently of
the mutants, and its check must name it; the correct functions (the reference, and the
solution notebook in a kernel) must pass every check with nothing said. The data must hold no
reference code, and answering its public cases by heart must earn nothing on the hidden ones.
"""

import inspect
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from attention import lesson, locate, locate_attention, locate_block, locate_ignored
from attention import locate_multihead, locate_positional
from attention.cases import cases_for
from attention.diagnosis import locating
from attention.diagnosis.public import cases as public_cases
from attention.diagnosis.public import public_seed
from attention.functions import FUNCTIONS
from kit_autograder.build import checks_data
from kit_autograder.build.leaks import check_student_folder, distinctive_lines
from kit_autograder.lesson import LessonError
from reference import attention as reference

import public_checks
from test_misnames import BLOCK as MISNAMES_BLOCK

# --- the mistakes, as students write them ----------------------------------------------------

HELPERS = '''
import numpy as np

def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def layer_norm(x, eps=1e-5):
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
'''


def _attention(scores_line, axis="-1"):
    return f'''
def attention(Q, K, V, mask=None):
    d_k = K.shape[-1]
    scores = {scores_line}
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis={axis})
    return weights @ V, weights
'''


MULTIHEAD_SOFTMAX_OVER_HEADS = '''
def multihead(X, heads, W_O, mask=None):
    Q = np.stack([X @ W_Q for W_Q, _, _ in heads])
    K = np.stack([X @ W_K for _, W_K, _ in heads])
    V = np.stack([X @ W_V for _, _, W_V in heads])
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=0)
    return np.concatenate(list(weights @ V), axis=1) @ W_O
'''

PE_CAPPED = '''
MAX_LEN = 64

def positional_encoding(n_positions, d_model):
    pos = np.arange(MAX_LEN)[:, None]
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    table = np.zeros((MAX_LEN, d_model))
    table[:, 0::2] = np.sin(pos * omega)
    table[:, 1::2] = np.cos(pos * omega[: d_model // 2])
    return table[:n_positions], omega
'''

# The Annotated Transformer's table, written as it is there: every frequency for the cosines,
# which NumPy refuses to store in the odd columns when d_model is odd.
PE_COSINES_TAKE_EVERY_OMEGA = '''
def positional_encoding(n_positions, d_model):
    position = np.arange(0, n_positions)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2) * -(np.log(10000.0) / d_model))
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe, div_term
'''

PE_LAST_COLUMN_ZERO = '''
def positional_encoding(n_positions, d_model):
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n_positions, d_model))
    for pos in range(n_positions):
        for i in range(d_model // 2):
            pe[pos, 2 * i] = np.sin(pos * omega[i])
            pe[pos, 2 * i + 1] = np.cos(pos * omega[i])
    return pe, omega
'''

BLOCK = '''
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    {first}
    hidden = x @ W1 + b1
    ffn = {activation} @ W2 + b2
    return layer_norm(x + ffn)
'''
BLOCK_WITHOUT_FIRST_NORM = BLOCK.format(first="x = x + multihead(x, heads, W_O, mask)",
                                        activation="np.maximum(0, hidden)")
BLOCK_SILU = BLOCK.format(first="x = layer_norm(x + multihead(x, heads, W_O, mask))",
                          activation="hidden / (1 + np.exp(-hidden))")

# (what, the function's source, the question checked, a phrase its check must say, or the id
# of a known mistake whose words, as the grade computed them at build time, it must say)
MISTAKES = [
    ("sin √d_k", _attention("Q @ K.T"), "attention",
     "No divides las puntuaciones por √d_k"),
    ("√d_k multiplicado", _attention("Q @ K.T * np.sqrt(d_k)"), "attention",
     "multiplicas las puntuaciones por √d_k en lugar de dividirlas"),
    ("d_k ** 1/2", _attention("Q @ K.T / (d_k ** 1/2)"), "attention",
     "¿Escribiste d_k ** 1/2?"),
    ("QKᵀ / d_k ** 1/2", _attention("Q @ K.T / d_k ** 1/2"), "attention",
     "¿Escribiste QKᵀ / d_k ** 1/2?"),
    ("softmax con axis=0", _attention("Q @ K.T / np.sqrt(d_k)", axis="0"), "attention",
     "Aplicas la softmax por columnas en lugar de por filas"),
    ("softmax sobre las cabezas", MULTIHEAD_SOFTMAX_OVER_HEADS, "multihead",
     {"id": "multihead.known_softmax_over_heads"}),
    ("tabla de 64 posiciones", PE_CAPPED, "positional_encoding",
     "pe tiene 64 filas en lugar de"),
    ("última columna a 0 con d_model impar", PE_LAST_COLUMN_ZERO, "positional_encoding",
     {"id": "positional_encoding.known_last_column_zero"}),
    ("cosenos con todas las omega", PE_COSINES_TAKE_EVERY_OMEGA, "positional_encoding",
     {"id": "positional_encoding.known_cosines_take_every_omega"}),
    ("sin la primera LayerNorm", BLOCK_WITHOUT_FIRST_NORM, "transformer_block",
     {"id": "transformer_block.known_first_norm_missing"}),
    ("SiLU en lugar de ReLU", BLOCK_SILU, "transformer_block",
     {"id": "transformer_block.known_silu"}),
]


# Mistakes no catalogued mutant reproduces and the grade locates: the notebook locates each on
# the probes the build derived from its public cases, in the locator's own words (issue 49).
MULTIHEAD = '''
def multihead(X, heads, W_O, mask=None):
{body}
'''
# A block over a normalisation of its own (``norm``), as test_misnames.py writes it.
BLOCK_NORMALISED = MISNAMES_BLOCK


LOCATED = [
    ("máscara traspuesta", _attention("Q @ K.T / np.sqrt(d_k)").replace(
        "np.where(mask,", "np.where(np.transpose(mask),"), "attention",
     locate_attention.MASK_TRANSPOSED),
    ("máscara con −10", _attention("Q @ K.T / np.sqrt(d_k)").replace("-np.inf", "-10.0"),
     "attention", locate_attention.MASK),
    ("softmax dos veces", _attention("Q @ K.T / np.sqrt(d_k)").replace(
        "weights = softmax(scores, axis=-1)", "weights = softmax(softmax(scores))"),
     "attention", locate_attention.SOFTMAX_TWICE),
    ("pesos redondeados a 2 decimales", _attention("Q @ K.T / np.sqrt(d_k)").replace(
        "weights = softmax(scores, axis=-1)", "weights = np.round(softmax(scores), 2)"),
     "attention", (locate_attention.ROUNDED[0], locate_attention.ROUNDED[1].format(digits=2))),
    ("posiciones contadas desde el final", '''
def positional_encoding(n_positions, d_model):
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    angles = np.arange(n_positions - 1, -1, -1)[:, None] * omega
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles[:, : d_model // 2])
    return pe, omega
''', "positional_encoding", locate_positional.ROWS_REVERSED_PLACE),
    ("K y V de la primera cabeza", MULTIHEAD.format(body='''\
    _, W_K0, W_V0 = heads[0]
    outs = [attention(X @ W_Q, X @ W_K0, X @ W_V0, mask)[0] for W_Q, _, _ in heads]
    return np.concatenate(outs, axis=1) @ W_O'''), "multihead", locate_multihead.OTHER_HEADS),
    ("cabezas separadas con paso h", MULTIHEAD.format(body='''\
    h, n = len(heads), X.shape[0]
    Qs, Ks, Vs = (X @ np.hstack([head[i] for head in heads]) for i in range(3))
    split = lambda M: M.reshape(n, M.shape[1] // h, h).transpose(2, 0, 1)
    outs = [attention(q, k, v, mask)[0] for q, k, v in zip(split(Qs), split(Ks), split(Vs))]
    return np.concatenate(outs, axis=1) @ W_O'''), "multihead", locate_multihead.SPLITTING),
    ("tanh de la concatenación", MULTIHEAD.format(body='''\
    outs = [attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads]
    return np.tanh(np.concatenate(outs, axis=1)) @ W_O'''), "multihead",
     locate_multihead.AFTER_HEADS),
    ("puntuaciones que pasan de una cabeza a otra", MULTIHEAD.format(body='''\
    carried, outs = 0, []
    for W_Q, W_K, W_V in heads:
        carried = carried + (X @ W_Q) @ (X @ W_K).T / np.sqrt(W_K.shape[1])
        s = carried if mask is None else np.where(mask, carried, -np.inf)
        outs.append(softmax(s) @ (X @ W_V))
    return np.hstack(outs) @ W_O'''), "multihead", locate_multihead.SHARED_WEIGHTS),
    # Vectorised, one softmax over the heads' axis: issue 49 saw it sent to «¿pasas la máscara
    # a cada cabeza?», and the grade said only «cada cabeza».
    ("softmax sobre el eje de las cabezas", MULTIHEAD_SOFTMAX_OVER_HEADS, "multihead",
     locate_multihead.HEADS_AXIS),
    ("W_Q también para las claves", MULTIHEAD.format(body='''\
    outs = [attention(X @ q, X @ q, X @ v, mask)[0] for q, k, v in heads]
    return np.concatenate(outs, axis=1) @ W_O'''), "multihead",
     locate_multihead.roles_place("W_Q para las claves")),
    # Issue 49 saw these sent to «¿sumas la entrada x…?», though their residuals are right.
    ("RMSNorm en el bloque", BLOCK_NORMALISED.format(
        norm="return z / np.sqrt((z * z).mean(axis=-1, keepdims=True) + 1e-5)"),
     "transformer_block", locate_block.RMS_NORM),
    ("LayerNorm de la matriz entera", BLOCK_NORMALISED.format(
        norm="return (z - z.mean()) / np.sqrt(z.var() + 1e-5)"),
     "transformer_block", locate_block.NORM_WHOLE_MATRIX),
    ("codificación posicional dentro del bloque", BLOCK_NORMALISED.format(
        norm="return layer_norm(z)").replace("    x1 = norm(x +", '''\
    n, d = x.shape
    angles = np.arange(n)[:, None] / 10000 ** (np.arange(0, d, 2) / d)
    pe = np.zeros((n, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles[:, : d // 2])
    x = x + pe
    x1 = norm(x +'''), "transformer_block", locate_block.POSITIONS_ADDED),
]
# The same code written right: each stays silent (the controls).
LOCATED_CONTROLS = [
    ("bloque con su propia LayerNorm", BLOCK_NORMALISED.format(
        norm="return (z - z.mean(axis=-1, keepdims=True)) / "
             "np.sqrt(z.var(axis=-1, keepdims=True) + 1e-5)"),
     "transformer_block"),
    ("máscara leída bien", _attention("Q @ K.T / np.sqrt(d_k)"), "attention"),
    ("posiciones contadas desde el principio", '''
def positional_encoding(n_positions, d_model):
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    angles = np.arange(n_positions)[:, None] * omega
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles[:, : d_model // 2])
    return pe, omega
''', "positional_encoding"),
    ("softmax de todas las cabezas sobre las claves", MULTIHEAD_SOFTMAX_OVER_HEADS.replace(
        "axis=0", "axis=-1"), "multihead"),
    ("cabezas separadas bien", MULTIHEAD.format(body='''\
    h, n = len(heads), X.shape[0]
    Qs, Ks, Vs = (X @ np.hstack([head[i] for head in heads]) for i in range(3))
    split = lambda M: M.reshape(n, h, M.shape[1] // h).transpose(1, 0, 2)
    outs = [attention(q, k, v, mask)[0] for q, k, v in zip(split(Qs), split(Ks), split(Vs))]
    return np.concatenate(outs, axis=1) @ W_O'''), "multihead"),
    ("cada cabeza con sus matrices", MULTIHEAD.format(body='''\
    outs = [attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads]
    return np.concatenate(outs, axis=1) @ W_O'''), "multihead"),
]


def located_words(place):
    # As the grade's feedback says a located place (checks_data.grade_words).
    return f"Diagnóstico: {checks_data._sentence(f'el fallo está en {place[1]}')}"


def defined(source, names=None):
    """The notebook's globals after ``source``, with the reference standing in for every graded
    function ``source`` does not define (as the solution's cells would)."""
    env = {name: getattr(reference, name) for name in FUNCTIONS}
    exec(HELPERS + source, env)
    return env


def words_of(checks, function, expected):
    """The phrase a check must say: given, or a known mistake's words as the data holds them."""
    if isinstance(expected, str):
        return [expected]
    (mistake,) = [m for m in checks.functions[function]["mistakes"] if m["id"] == expected["id"]]
    return mistake["words"]


@pytest.fixture(scope="module")
def checks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("checks")
    checks_data.write(lesson, folder)
    return public_checks.load(folder)


# --- in the builder's Python: every mistake named, the correct code silent ------------------------


@pytest.mark.parametrize("what, source, function, expected", MISTAKES,
                         ids=[m[0] for m in MISTAKES])
def test_each_mistake_is_named_by_its_check(checks, what, source, function, expected):
    said = "\n".join(checks.report(function, defined(source)))
    for phrase in words_of(checks, function, expected):
        assert phrase in said, said
    # Named, not the fallback that only says which values are off.
    assert "no coinciden con los esperados" not in said, said


def test_weights_normalised_over_the_whole_matrix_are_never_told_columns_instead_of_rows(checks):
    """With one key (m = 1) the only column's sum is the matrix's: a softmax over every entry
    at once sums to 1 there too, and is no softmax over the columns."""
    whole = _attention("Q @ K.T / np.sqrt(d_k)").replace(
        "softmax(scores, axis=-1)",
        "np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()")
    assert whole != _attention("Q @ K.T / np.sqrt(d_k)")
    said = "\n".join(checks.report("attention", defined(whole)))
    assert "las filas de los pesos no suman 1" in said, said
    assert "suman 1 las columnas" not in said, said
    # Control: a softmax over the columns, with several keys, is still told so.
    columns = "\n".join(checks.report("attention", defined(
        _attention("Q @ K.T / np.sqrt(d_k)", axis="0"))))
    assert "columnas" in columns, columns


@pytest.mark.parametrize("what, source, function, place", LOCATED, ids=[m[0] for m in LOCATED])
def test_each_unnamed_mistake_is_located_as_the_grade_locates_it(checks, what, source, function,
                                                                  place):
    env = defined(source)
    said = "\n".join(checks.report(function, env))
    assert located_words(place) in said, said
    assert "no coinciden con los esperados" not in said, said
    # The grade's own diagnosis of the same function on the same public cases (its judge,
    # summary and locators, with the reference) says the same place.
    assert located_words(place) in checks_data.grade_words(
        lesson, function, env[function], public_cases(function))


def test_cases_that_depart_at_different_places_are_not_located(checks):
    # Concatenated in reverse where d_k ≠ d_v, a tanh after the heads elsewhere: the probes
    # keep each case's shapes, so each case has a place, and no place is every case's: none
    # is said (the grade's rule: a place that explains one case only would be a guess).
    mixed = MULTIHEAD.format(body='''\
    outs = [attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads]
    if heads[0][0].shape[1] != heads[0][2].shape[1]:
        return np.concatenate(outs[::-1], axis=1) @ W_O
    return np.tanh(np.concatenate(outs, axis=1)) @ W_O''')
    said = "\n".join(checks.report("multihead", defined(mixed)))
    assert "no se cumple" in said and "El fallo está en" not in said, said
    # Control: each mistake alone is located.
    condition = "heads[0][0].shape[1] != heads[0][2].shape[1]"
    reversed_only = mixed.replace(condition, "True")
    tanh_only = mixed.replace(condition, "False")
    assert located_words(locate_multihead.CONCATENATION) in "\n".join(
        checks.report("multihead", defined(reversed_only)))
    assert located_words(locate_multihead.AFTER_HEADS) in "\n".join(
        checks.report("multihead", defined(tanh_only)))


@pytest.mark.parametrize("what, source, function", LOCATED_CONTROLS,
                         ids=[m[0] for m in LOCATED_CONTROLS])
def test_the_same_code_written_right_is_not_located(checks, what, source, function):
    assert checks.report(function, defined(source)) == []


# Every assignment of a head's matrices to roles the locator words (all shapes equal: all fit).
ROLES_PLACES = tuple(locate_multihead.roles_place(roles) for _, roles in
                     locate_multihead.roles_forms(dict(X=np.eye(3), heads=[(np.eye(3),) * 3],
                                                       W_O=np.eye(3), mask=None)))


ROUNDED_PLACES = tuple((locate_attention.ROUNDED[0], locate_attention.ROUNDED[1].format(
    digits=digits)) for digits in range(1, 5))


def test_every_locating_step_says_a_locators_own_words(checks):
    # Single source: each step's place is one of the locators' constants (or locate.py's own
    # sentence for a mask used when there is none), never words retyped for the notebook.
    constants = [value for module in (locate_attention, locate_multihead, locate_block,
                                      locate_positional)
                 for value in vars(module).values() if isinstance(value, tuple)]
    assert all(any(place is constant for constant in constants) for place in locating.PLACES)
    # The whole messages locate.py and locate_positional.py say as they are.
    whole = {locate.none_mask_place(f) for f in locate.MASK_SHAPES} | {
        locate_positional.ONE_POSITION}
    shipped = set()
    for function in FUNCTIONS:
        shipped |= set(checks.functions[function].get("places", []))
        for _, _, inputs in public_cases(function):
            for step in locating.steps(function, inputs):
                assert step.place is None or step.place in locating.PLACES or step.place in (
                    tuple(whole) + ROLES_PLACES + ROUNDED_PLACES) or \
                    step.place[0] == \
                    f"{function}.located_ignored_arguments", step.place
    allowed = {located_words(place) for place in locating.PLACES} | {
        f"Diagnóstico: {checks_data._sentence(place[1])}" for place in whole} | {
        f"Diagnóstico: {checks_data._sentence(locate_ignored.message(f, [name])[1])}"
        for f in FUNCTIONS for name in inspect.signature(getattr(reference, f)).parameters} | {
        located_words(place) for place in ROLES_PLACES + ROUNDED_PLACES}
    assert shipped and shipped <= allowed, shipped - allowed
    # Control: a place the locators do not say is caught.
    assert located_words(("x", "otro sitio")) not in allowed


def test_grader_check_prints_no_english_warning_of_the_students_code(built_dist, tmp_path,
                                                                   monkeypatch):
    """A softmax over the heads' axis gives NaN (−∞ − −∞) on the public tests' causal mask, and
    numpy's English RuntimeWarning printed under the Spanish report, seen in a real kernel."""
    import warnings

    from notebook_grader import Grader

    folder = tmp_path / "alumno"
    shutil.copytree(built_dist / "student", folder)
    monkeypatch.chdir(folder)
    first_cells = " ".join(cell["source"] if isinstance(cell["source"], str)
                           else "".join(cell["source"]) for path in folder.glob("*.ipynb")
                           for cell in json.loads(path.read_text("utf-8"))["cells"])
    assignment = re.search(r'Grader\(assignment="([^"]+)"\)', first_cells).group(1)
    grader = Grader(assignment=assignment, folder=folder)
    env = defined(MULTIHEAD_SOFTMAX_OVER_HEADS)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        report = grader._check("multihead", env)
    assert not [w for w in seen if issubclass(w.category, RuntimeWarning)], seen
    assert "el eje de la softmax" in str(report), report
    # Control: Otter's own run of the same public tests does warn.
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        grader._otter.check("multihead", global_env=env)
    assert [w for w in seen if issubclass(w.category, RuntimeWarning)]


def test_one_hot_weights_are_never_told_to_be_an_integer_array(checks):
    """Hard attention (each query all on its best key) gives rows of 0s and one 1, as a
    saturated softmax does: integers, but «¿los guardas en un array de enteros?» would send the
    student to a dtype they never wrote."""
    hard = _attention("Q @ K.T / np.sqrt(d_k)").replace(
        "weights = softmax(scores, axis=-1)",
        "weights = (scores == scores.max(axis=-1, keepdims=True)).astype(float)")
    assert hard != _attention("Q @ K.T / np.sqrt(d_k)")
    said = "\n".join(checks.report("attention", defined(hard)))
    assert "no coinciden" in said and "números enteros" not in said, said
    # Control: a table stored in an array of integers is still told so.
    integers = PE_LAST_COLUMN_ZERO.replace("np.zeros((n_positions, d_model))",
                                           "np.zeros((n_positions, d_model), dtype=int)")
    assert integers != PE_LAST_COLUMN_ZERO
    said = "\n".join(checks.report("positional_encoding", defined(integers)))
    assert "números enteros" in said, said


def test_numpys_english_errors_of_the_students_function_are_said_in_spanish(checks):
    """The same gloss the grade's feedback gives a cell's error (verdicts/messages.py calls
    public_checks.cell_error_text), with NumPy's original kept for a search."""
    from kit_autograder.verdicts.messages import cell_error_text

    broadcast = _attention("Q @ K.T / np.sqrt(d_k) + np.zeros((len(Q), len(Q)))")
    said = "\n".join(checks.report("attention", defined(broadcast)))
    assert "NumPy no puede combinar elemento a elemento arrays de formas" in said, said
    assert cell_error_text("ValueError", "operands could not be broadcast together with "
                           "shapes (4,6) (4,4)") in said, said
    # Control: a message of the student's own is said as they wrote it.
    own = _attention('(_ for _ in ()).throw(ValueError("mi propio error"))')
    assert "tu función lanza ValueError: mi propio error" in "\n".join(
        checks.report("attention", defined(own)))


def test_a_public_test_stopped_by_numpy_says_the_error_in_spanish():
    """Otter's failure text for a public test that NumPy stopped, as grader.check shows it:
    the same gloss as the function's own checks (seen in JupyterLab: the public test's line
    was the one English sentence of the report)."""
    from notebook_grader import spanish_failure

    otter_says = ("❌ Test case failed\nError at line 3 in test attention:\n"
                  "  output, weights = attention(Q, K, V)\n"
                  "ValueError: operands could not be broadcast together with shapes (3,5) (3,3)")
    said = spanish_failure(otter_says)
    assert said.startswith("la prueba se detuvo en «output, weights = attention(Q, K, V)» con "
                           "ValueError: NumPy no puede combinar"), said
    # Control: a failed assertion says the test's own Spanish sentence, untouched.
    assert spanish_failure("❌ Test case failed\nError at line 3 in test attention:\n"
                           "  assert ok\nAssertionError: Los pesos no suman 1.") == \
        "Los pesos no suman 1."


def test_the_scale_mistakes_are_told_apart(checks):
    # Each scale mistake's words, and none of the others': the measured factor decides.
    said = {what: "\n".join(checks.report("attention", defined(source)))
            for what, source, _, _ in MISTAKES[:3]}
    assert "QKᵀ·√d_k" not in said["sin √d_k"] and "d_k ** 1/2" not in said["sin √d_k"]
    assert "No divides" not in said["√d_k multiplicado"] and "d_k ** 1/2" not in said["√d_k multiplicado"]
    assert "No divides" not in said["d_k ** 1/2"] and "QKᵀ·√d_k" not in said["d_k ** 1/2"]


@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_the_reference_passes_every_check_with_nothing_said(checks, function):
    assert checks.report(function, defined("")) == []
    assert checks.passes(function, defined(""))


def test_a_multihead_whose_attention_fails_is_sent_to_fix_attention_first(checks):
    env = defined(_attention("Q @ K.T"))  # the reference's multihead calls this attention
    env["multihead"] = lambda X, heads, W_O, mask=None: np.concatenate(
        [env["attention"](X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads], axis=1) @ W_O
    said = "\n".join(checks.report("multihead", env))
    assert "Arregla primero tu attention" in said, said
    # Control: with the right attention, the same multihead passes with nothing said.
    env.update(defined(""), multihead=env["multihead"])
    assert checks.report("multihead", env) == []


def test_a_multihead_that_never_calls_attention_is_not_blamed_on_it(checks):
    # Measured, not assumed: this multihead computes every head itself, so the broken
    # attention beside it is not its mistake, and its own is named.
    env = defined(_attention("Q @ K.T") + MULTIHEAD_SOFTMAX_OVER_HEADS)
    said = "\n".join(checks.report("multihead", env))
    assert "Arregla primero" not in said, said
    for phrase in words_of(checks, "multihead", {"id": "multihead.known_softmax_over_heads"}):
        assert phrase in said, said


def test_what_the_function_prints_is_not_repeated_by_its_checks(checks, capsys):
    env = defined("")
    right = env["attention"]

    def attention(Q, K, V, mask=None):
        print("depurando", Q.shape)
        return right(Q, K, V, mask)
    env["attention"] = attention
    assert checks.report("attention", env) == [] and checks.passes("attention", env)
    assert "depurando" not in capsys.readouterr().out


def test_what_the_student_code_raises_is_said_in_spanish_and_never_raised(checks):
    def attention(Q, K, V, mask=None):
        raise KeyError("clave")
    said = "\n".join(checks.report("attention", {"attention": attention}))
    assert "tu función lanza KeyError" in said, said
    # A stub still to write says nothing: its public tests already say so.
    def stub(Q, K, V, mask=None):
        raise NotImplementedError
    assert checks.report("attention", {"attention": stub}) == []


def test_a_function_that_departs_from_no_known_mistake_still_says_what_is_off(checks):
    env = defined(_attention("Q @ K.T / np.sqrt(d_k) + 0.3 * np.sign(Q @ K.T)"))
    said = "\n".join(checks.report("attention", env))
    assert "no se cumple" in said and re.search(r"En (ese caso|todos ellos|el caso|los casos)", said), said


def test_the_public_cases_cover_every_hidden_family_with_draws_of_their_own(checks):
    for function in FUNCTIONS:
        public = checks.functions[function]["cases"]
        assert [case["description"] for case in public] == [
            case.description for case in cases_for(function)]
        for case, hidden in zip(public, cases_for(function)):
            assert public_seed(hidden) != hidden.default_seed
            # A case of sizes only (the positional encoding's) draws from a few sizes: no
            # hidden draw may take the public ones, or their answer by heart earns points.
            if not any(isinstance(v, (np.ndarray, list)) for v in case["inputs"].values()):
                drawn = {tuple(sorted(hidden.inputs(np.random.default_rng(seed)).items()))
                         for seed in range(2000)}
                assert tuple(sorted(case["inputs"].items())) not in drawn, case["name"]
                continue
            # Distinct numbers from the fixed default draw (Otter's in-kernel one) and from a
            # draw of a grading generator.
            # A mask may be the case's structure (causal), the same in every draw: the drawn
            # numbers are the float arrays.
            for other in (hidden.inputs(), hidden.inputs(np.random.default_rng(12345))):
                assert not any(_same(case["inputs"][k], other[k]) for k in other
                               if _drawn(other[k])), case["name"]


def _drawn(value):
    return isinstance(value, list) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


def _same(a, b):
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b)
    return a == b


def test_a_folder_without_the_data_says_nothing(tmp_path):
    assert public_checks.load(tmp_path) is None
    (tmp_path / public_checks.DATA_NAME).write_bytes(b"not a zip")
    assert public_checks.load(tmp_path) is None


# --- what ships: data only ---------------------------------------------------------------------


def test_the_student_folder_holds_the_data_and_no_reference_code(built_dist, tmp_path):
    folder = built_dist / "student"
    assert (folder / public_checks.DATA_NAME).is_file()
    check_student_folder(folder, lesson, "", Path(__file__).resolve().parent.parent)
    # Control: the same check reads inside the data file, and refuses one that carries a line
    # of the reference.
    copy = tmp_path / "student"
    shutil.copytree(folder, copy)
    # A line JSON writes as it is (no quotes or backslashes to escape).
    line = next(line for line, _ in distinctive_lines(lesson) if json.dumps(line)[1:-1] == line)
    public_checks.save(copy / public_checks.DATA_NAME, {"format": public_checks.FORMAT,
                                                        "note": line})
    with pytest.raises(LessonError, match=public_checks.DATA_NAME):
        check_student_folder(copy, lesson, "", Path(__file__).resolve().parent.parent)


# --- in the student's kernel: what grader.check prints ------------------------------------------

GRADED = tuple(FUNCTIONS)
MARK = "@@{}@@"


def _checked_cell(what, source, question):
    """A cell that defines the mistake over the solution's function, prints what
    grader.check says, and puts the solution's functions back."""
    return (f"{source}\nprint({MARK.format(what)!r})\nprint(repr(grader.check({question!r})))\n"
            "globals().update(_solution)\n")


@pytest.fixture(scope="module")
def kernel_run(built_dist, tmp_path_factory):
    """The solution notebook in a copy of the student folder, executed by a real kernel, with
    cells appended that check each mistake, the correct functions, and a multihead whose
    attention fails."""
    import nbformat
    from test_student_journey import execute, student_folder
    from autograder.assign import SOLUTION_NAME

    folder = student_folder(built_dist, tmp_path_factory.mktemp("kernel"),
                            built_dist / "solution" / SOLUTION_NAME, "mi_cuaderno.ipynb")
    nb = nbformat.read(folder / "mi_cuaderno.ipynb", as_version=4)
    cells = [f"_solution = {{name: globals()[name] for name in {GRADED!r}}}"]
    cells += [f"print({MARK.format('correcta')!r})\n"
              + "".join(f"print(repr(grader.check({q!r})))\n" for q in GRADED)]
    cells += [_checked_cell(what, source, question) for what, source, question, _ in MISTAKES]
    cells += [_checked_cell("attention sin √d_k, multihead correcta",
                            _attention("Q @ K.T"), "multihead")]
    cells += [_checked_cell(what, source, question)
              for what, source, question, _ in LOCATED_IN_KERNEL]
    nb.cells += [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(nb, folder / "mi_cuaderno.ipynb")
    return execute(folder, "mi_cuaderno.ipynb"), public_checks.load(folder)


def printed(nb, what):
    from test_student_journey import errors, shown

    (cell,) = [c for c in nb.cells if c.cell_type == "code" and MARK.format(what) in c.source]
    assert not errors([cell]), errors([cell])
    return shown([cell])


def test_in_the_kernel_the_solution_passes_every_check_with_no_finding(kernel_run):
    nb, _ = kernel_run
    said = printed(nb, "correcta")
    assert said.count("se cumplen las") == len(GRADED) or "se cumple la única" in said, said
    assert "casos de comprobación" not in said and "Diagnóstico" not in said, said


@pytest.mark.parametrize("what, source, function, expected", MISTAKES,
                         ids=[m[0] for m in MISTAKES])
def test_in_the_kernel_grader_check_names_each_mistake(kernel_run, what, source, function,
                                                         expected):
    nb, checks = kernel_run
    said = printed(nb, what)
    assert f"{function}: no se cumple" in said, said
    for phrase in words_of(checks, function, expected):
        assert phrase in said, said


LOCATED_IN_KERNEL = [LOCATED[0], LOCATED[4]]


@pytest.mark.parametrize("what, source, function, place", LOCATED_IN_KERNEL,
                         ids=[m[0] for m in LOCATED_IN_KERNEL])
def test_in_the_kernel_grader_check_locates_an_unnamed_mistake(kernel_run, what, source,
                                                                function, place):
    nb, _ = kernel_run
    said = printed(nb, what)
    assert f"{function}: no se cumple" in said, said
    assert located_words(place) in said, said


def test_in_the_kernel_multihead_sends_a_broken_attention_first(kernel_run):
    nb, _ = kernel_run
    said = printed(nb, "attention sin √d_k, multihead correcta")
    assert "Arregla primero tu attention" in said, said


# --- answering the public cases by heart earns nothing ---------------------------------------------

BY_HEART = '''
import base64, io
import numpy as np

_ANSWERS = np.load(io.BytesIO(base64.b64decode(DATA)))

def _flat(value):
    if isinstance(value, (list, tuple)):
        return np.concatenate([_flat(v) for v in value]) if value else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=float))

def _by_heart(function, arguments):
    """The public case's answer when the arguments are a public case's, by heart."""
    for key in sorted(k for k in _ANSWERS.files if k.startswith(function + "|") and k.endswith("|n")):
        stem = key[:-2]
        names = [k.split("|")[3] for k in _ANSWERS.files if k.startswith(stem + "|in|")]
        if all(name in arguments and arguments[name] is not None
               and np.array_equal(_flat(arguments[name]), _ANSWERS[stem + "|in|" + name])
               for name in names) and all(v is None for k, v in arguments.items() if k not in names):
            parts = [_ANSWERS[stem + f"|out|{i}"] for i in range(int(_ANSWERS[key]))]
            return parts[0] if len(parts) == 1 else tuple(parts)
    raise NotImplementedError
'''

BY_HEART_FUNCTIONS = {
    "attention": "def attention(Q, K, V, mask=None):\n"
                 "    return _by_heart('attention', dict(Q=Q, K=K, V=V, mask=mask))\n",
    "multihead": "def multihead(X, heads, W_O, mask=None):\n"
                 "    return _by_heart('multihead', dict(X=X, heads=heads, W_O=W_O, mask=mask))\n",
    "positional_encoding": "def positional_encoding(n_positions, d_model):\n"
                           "    return _by_heart('positional_encoding', "
                           "dict(n_positions=n_positions, d_model=d_model))\n",
    "transformer_block": "def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):\n"
                         "    return _by_heart('transformer_block', dict(x=x, heads=heads, "
                         "W_O=W_O, W1=W1, b1=b1, W2=W2, b2=b2, mask=mask))\n",
}


def _flat(value):
    if isinstance(value, (list, tuple)):
        return np.concatenate([_flat(v) for v in value]) if value else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=float))


def _by_heart_source(checks):
    """The helper cell, the public answers written into it as a literal."""
    import base64
    import io

    arrays = {}
    for function in GRADED:
        for number, case in enumerate(checks.functions[function]["cases"]):
            stem = f"{function}|{number}"
            arrays[stem + "|n"] = np.array(len(case["expected"]))
            for name, value in case["inputs"].items():
                if value is not None:
                    arrays[f"{stem}|in|{name}"] = _flat(value)
            for index, part in enumerate(case["expected"]):
                arrays[f"{stem}|out|{index}"] = part
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return f"DATA = {base64.b64encode(buffer.getvalue()).decode()!r}\n" + BY_HEART


def test_answering_the_public_cases_by_heart_scores_as_the_stub(built_dist, autograder_zip,
                                                                 tmp_path):
    from grading_harness import Notebooks, grade_here, inject, write_folder

    checks = public_checks.load(built_dist / "student")
    helper = _by_heart_source(checks)
    # Control: the by-heart functions do answer every public case (their checks pass).
    env = {}
    exec(helper + "".join(BY_HEART_FUNCTIONS.values()), env)
    assert all(checks.passes(function, env) for function in GRADED)
    notebooks = Notebooks(built_dist)
    import nbformat

    nb = nbformat.from_dict(notebooks.student)
    for function, source in BY_HEART_FUNCTIONS.items():
        nb = inject(nb, function, (helper if function == "attention" else "") + source)
    folder = write_folder(tmp_path / "entregas", {"stub.ipynb": notebooks.stub(),
                                                  "de_memoria.ipynb": Notebooks.to_bytes(nb)})
    rows = grade_here(folder, tmp_path / "out", autograder_zip, timeout=60)
    stub, by_heart = rows["stub.ipynb"], rows["de_memoria.ipynb"]
    for function in GRADED:
        assert float(by_heart[function]) == float(stub[function]) == 0, (function, by_heart)


# --- the kit's probe (tests/probe_notebooks.py), in the builder's Python ----------------------------

PROBE_PRELUDE = ("from numpy import *\nfrom math import pi, e\n" + HELPERS
                 + "".join(f"{name} = _reference.{name}\n" for name in GRADED))


def _probe_namespace(cells):
    """A notebook's globals after the solution's cells and then ``cells`` (a probe's answer
    cells and the cells after them), or None when a cell raises here (a magic, a demo)."""
    env = {"_reference": reference}
    try:
        exec(PROBE_PRELUDE, env)
        for cell in cells:
            exec(cell, env)
    except Exception:
        return None
    return env


def _style_cells(names):
    from probe_notebooks import STYLES

    cells = []
    for name in names:
        function, answer, *later = STYLES[name]
        if answer is None:
            return None
        cells += list(answer) + [c for group in later for c in (group or ())]
    return cells


def test_the_probes_correct_notebooks_pass_every_check_with_nothing_said(checks):
    from probe_notebooks import PROBES, STYLES

    judged = 0
    for probe in (p for p in PROBES if p.kind == "correct" and p.styles):
        env = _probe_namespace(_style_cells(probe.styles) or [])
        if env is None:
            continue
        for function in {STYLES[name][0] for name in probe.styles}:
            # Nothing fails; a side effect the grade tells (an argument changed in place,
            # harmless) may be told here too, in its words, and only that.
            said = checks.report(function, env)
            assert not public_checks.failing(said, function), (probe.name, said)
            assert all("cambia los arrays o listas que recibe" in line for line in said), said
            judged += 1
    assert judged >= 30  # the control is wide: most of the probe's styles ran here


def test_the_probes_mistakes_are_at_most_one_in_ten_silent_and_most_named(checks):
    from probe_notebooks import BUGS

    silent, named, said = [], [], []
    for name, bug in BUGS.items():
        env = _probe_namespace(bug.cells)
        if env is None:
            continue
        lines = checks.report(bug.function, env)
        (named if any("Diagnóstico" in line or "Arregla primero" in line for line in lines)
         else said if lines else silent).append(name)
    total = len(silent) + len(named) + len(said)
    assert total >= 80, total
    assert len(silent) <= total / 10, silent
    assert len(named) >= total / 2, (len(named), total)


def test_a_public_tests_guess_is_cut_only_when_the_checks_name_the_cause():
    from types import SimpleNamespace

    from notebook_grader import CheckReport

    guess = ("AssertionError: Con la máscara causal, cambiar el último token no debe cambiar la "
             "salida de los anteriores: ¿pasas la máscara a cada cabeza?")
    message = f"❌ Test case failed\nError at line 3 in test multihead:\n  assert x\n{guess}"
    result = SimpleNamespace(test_case_results=[SimpleNamespace(
        passed=False, message=message,
        test_case=SimpleNamespace(hidden=False, failure_message=""))])
    named = repr(CheckReport("multihead", result, diagnosis=["multihead: …", "  Diagnóstico: …"]))
    assert "cambiar el último token no debe cambiar la salida de los anteriores." in named
    assert "¿pasas la máscara" not in named
    # Controls: with only what is off, or no public checks at all, the guess stays.
    located = repr(CheckReport("multihead", result, diagnosis=["multihead: …", "  En ese caso, …"]))
    plain = repr(CheckReport("multihead", result))
    assert "¿pasas la máscara a cada cabeza?" in located and "¿pasas la máscara a cada cabeza?" in plain


# --- side effects, told in the grade's words ------------------------------------------------------

def _said_of(checks, key, **names):
    """The first sentence of the grade's words for a side effect, its names filled in."""
    return checks.spec["side_effects"][key].format(**names).split(":")[0]


def test_an_argument_changed_in_place_is_told_and_harmless_unless_a_caller_changes(checks):
    scales_q = _attention("Q @ K.T").replace(
        "    d_k = K.shape[-1]\n", "    d_k = K.shape[-1]\n    Q /= np.sqrt(d_k)\n")
    said = checks.report("attention", defined(scales_q))
    assert not public_checks.failing(said, "attention"), said
    assert _said_of(checks, "changed_harmless", function="attention", names="Q", name="Q") in said[0]
    # Harmful: the mask inverted in place changes what the student's multihead computes.
    inverts = '''
def attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        np.logical_not(mask, out=mask)
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores)
    return weights @ V, weights

def multihead(X, heads, W_O, mask=None):
    return np.concatenate([attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads],
                          axis=1) @ W_O
'''
    said = "\n".join(checks.report("attention", defined(inverts)))
    assert _said_of(checks, "changed_harmful", function="attention", names="mask", name="mask",
                    caller="multihead") in said, said
    # Control: the correct attention is told nothing.
    assert checks.report("attention", defined("")) == []


def test_an_answer_changed_by_a_later_call_and_a_cache_by_sizes_are_told(checks):
    shared_buffer = '''
_BUFFER = np.zeros((512, 64))

def positional_encoding(n_positions, d_model):
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    angles = np.arange(n_positions)[:, None] * omega
    pe = _BUFFER[:n_positions, :d_model]
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe, omega
'''
    said = "\n".join(checks.report("positional_encoding", defined(shared_buffer)))
    assert _said_of(checks, "aliased", function="positional_encoding") in said, said
    cache = '''
_CACHE = {}

def attention(Q, K, V, mask=None):
    key = (Q.shape, K.shape, mask is None)
    if key not in _CACHE:
        scores = Q @ K.T / np.sqrt(K.shape[-1])
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        _CACHE[key] = softmax(scores)
    return _CACHE[key] @ V, _CACHE[key]
'''
    said = "\n".join(checks.report("attention", defined(cache)))
    assert _said_of(checks, "stale", function="attention") in said, said
    # Controls: a new array on every call, and no cache, are told nothing.
    assert checks.report("positional_encoding", defined("")) == []
