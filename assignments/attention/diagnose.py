"""Explain a failed hidden case: name the catalogued mistake it reproduces, or say what is off.

``judge.judge`` calls ``diagnose`` after it has listed the violated properties. Everything
here works on plain data (the case's inputs, the student's ``Outcome`` and the ``Failure``
list) and never calls student code.

1. If the student's output equals, within the grading tolerances, the output of one form of
   exactly one catalogued mutant that fails this case, the feedback names that misconception,
   explains it and points to the notebook step. The mutants run here, inside the grader, and
   their outputs are never shown.
2. Otherwise a generic hint says what kind of wrong the output is (NaN with large scores, rows
   not normalized, weights right but output wrong...), adding to what ``checks`` already said.

No message quotes a hidden input, a reference output or a mutant output.
"""

import numpy as np

from kit_autograder.verdicts.compare import compare_part, same_within
from kit_autograder.verdicts.in_process import run_in_process
from kit_autograder.verdicts.outcome import Failure, Outcome

from . import misconceptions, tolerances
from .functions import FUNCTIONS
from .judge import violations

# exp() overflows float64 above ~709.78, so scores beyond this break a softmax that does not
# subtract the row maximum.
OVERFLOW_SCORE = 700

# LayerNorm leaves a row's variance at v / (v + eps), a little under 1 (the public test of the
# block allows the same), so "normalized rows" cannot mean variance 1 to ATOL.
NORMALIZED_VAR_ATOL = 1e-3


def diagnose(function, inputs, outcome: Outcome, failures, expected) -> list:
    """Failures of kind "misconception" or "hint" that explain ``failures``; may be empty."""
    entry = matching_misconception(function, inputs, outcome, expected)
    if entry is not None:
        message = (f"error típico reconocido: {entry.name}. {entry.explanation}\n"
                   f"    Pista: {entry.hint}")
        return [Failure(message, None, {"kind": "misconception", "id": entry.id})]
    if outcome.parts is None:  # the error message already says what went wrong
        return []
    hints = GENERIC_HINTS[function](inputs, outcome.parts, failures, expected)
    return [Failure(hint, None, {"kind": "hint"}) for hint in hints]


def matching_misconception(function, inputs, outcome: Outcome, expected):
    """The one catalog entry whose mutant fails this case the way ``outcome`` does, else None.

    With two matches the output cannot tell the mistakes apart, and a wrong name teaches worse
    than none; tests/test_misconceptions.py keeps the hidden cases free of such ties.
    """
    matches = []
    for entry in misconceptions.for_function(function):
        for form in entry.forms:
            mutant = run_in_process(form, inputs, len(FUNCTIONS[function].parts))
            if violations(function, inputs, mutant, expected) and same_outcome(outcome, mutant):
                matches.append(entry)
                break
    return matches[0] if len(matches) == 1 else None


def mutant_outcome(entry, inputs) -> Outcome:
    """What the entry's (first) mutant returns on ``inputs``, reduced as a student's result."""
    return run_in_process(entry.mutant, inputs, len(FUNCTIONS[entry.function].parts))


def same_outcome(got: Outcome, mutant: Outcome):
    """Equal within the grading tolerances, with NaN and infinities in the same places.

    Errors match by their report: the kind of error and the sizes NumPy gave.
    """
    if got.error is not None or mutant.error is not None:
        return got.error == mutant.error
    return len(got.parts) == len(mutant.parts) and all(
        same_within(a, b, atol=tolerances.ATOL, rtol=tolerances.RTOL)
        for a, b in zip(got.parts, mutant.parts))


# --- generic hints: what kind of wrong, when no catalogued mistake matches --------------------


def _failed_parts(failures):
    return {failure.part for failure in failures if failure.part is not None}


def _kinds(failures):
    return {failure.details.get("kind") for failure in failures}


def _attention_hints(inputs, parts, failures, expected_parts):
    weights = parts[1]
    if "nonfinite" in _kinds(failures):
        scores = inputs["Q"] @ inputs["K"].T / np.sqrt(inputs["K"].shape[-1])
        if np.abs(scores).max() > OVERFLOW_SCORE:
            return ["aparecen NaN o infinitos con puntuaciones grandes: la exponencial desborda "
                    "y ∞/∞ da NaN; resta el máximo de cada fila antes de exponenciar (paso 3)"]
        if inputs.get("mask") is not None:
            return ["aparecen NaN o infinitos aunque las puntuaciones son pequeñas: suelen "
                    "venir de operar con −∞ (una fila entera a −∞, o restar −∞); revisa dónde "
                    "pones −∞ y sobre qué eje haces la softmax (paso 3)"]
        return []
    failed = _failed_parts(failures)
    if "los pesos" not in failed:
        return ["los pesos son correctos pero la salida no: la salida es la media ponderada "
                "de los valores, pesos·V (paso 3, punto 4)"]
    expected = expected_parts[1]
    if weights.shape != expected.shape or _kinds(failures) & {"row_sum", "mask_leak"}:
        return []
    spread = np.sign(_entropy(weights) - _entropy(expected))
    if (spread <= 0).all() and (spread < 0).any():
        return ["tus pesos están más concentrados que los correctos en todas las filas, como si "
                "tus puntuaciones fueran demasiado grandes: revisa la escala 1/√d_k (paso 4)"]
    if (spread >= 0).all() and (spread > 0).any():
        return ["tus pesos están más repartidos que los correctos en todas las filas, como si "
                "tus puntuaciones fueran demasiado pequeñas: revisa la escala 1/√d_k (paso 4)"]
    return ["tus pesos suman 1 y respetan la máscara, pero no coinciden con los correctos: "
            "revisa las puntuaciones QKᵀ/√d_k (paso 3, punto 1)"]


def _entropy(weights):
    """Each row's entropy, rounded so that ties between equal rows stay ties."""
    with np.errstate(all="ignore"):
        terms = np.where(weights > 0, -weights * np.log(weights), 0.0)
    return np.round(terms.sum(axis=-1), 6)


def _multihead_hints(inputs, parts, failures, expected_parts):
    output = parts[0]
    n, d_model = inputs["X"].shape
    n_heads, d_v = len(inputs["heads"]), inputs["heads"][0][2].shape[1]
    if output.ndim != 2 or output.shape == (n, d_model):
        return []
    if output.shape == (n, n_heads * d_v):
        return ["tu salida tiene las h·d_v columnas de la concatenación: falta multiplicar "
                "por W_O (paso 6)"]
    if output.shape[1] == d_v:
        return ["tu salida tiene las d_v columnas de una sola cabeza: concatena las h cabezas "
                "una al lado de la otra antes de multiplicar por W_O (paso 6)"]
    if output.shape[0] == n_heads * n:
        return ["tu salida tiene una fila por token y por cabeza: las cabezas se concatenan "
                "por columnas, no por filas (paso 6)"]
    return []


def _positional_encoding_hints(inputs, parts, failures, expected_parts):
    pe, omega = parts
    expected_pe, _ = expected_parts
    hints = []
    if pe.shape == expected_pe.shape and pe.shape[0] > 0 and "nonfinite" not in _kinds(failures):
        d_model = pe.shape[1]
        first_row = np.arange(d_model) % 2  # sin 0 = 0 in even columns, cos 0 = 1 in odd ones
        if compare_part("", pe[0], first_row.astype(float), atol=tolerances.ATOL,
                        rtol=tolerances.RTOL):
            hints.append("la fila de la posición 0 debería ser (0, 1, 0, 1, …): sin 0 = 0 en "
                         "las columnas pares y cos 0 = 1 en las impares (paso 7)")
        pairs = pe[:, 0:d_model - 1:2] ** 2 + pe[:, 1::2] ** 2
        if compare_part("", pairs, np.ones_like(pairs), atol=tolerances.ATOL,
                        rtol=tolerances.RTOL):
            hints.append("las columnas 2i y 2i + 1 no forman parejas seno-coseno de la misma "
                         "frecuencia, porque sin² + cos² no vale 1 (paso 7)")
    if "omega" not in _failed_parts(failures):
        hints.append("omega es correcta: el fallo está en cómo construyes pe a partir de ella "
                     "(paso 7)")
    elif omega.ndim == 1 and omega.size > 1 and not (np.diff(omega) < 0).all():
        hints.append("las frecuencias ω_i deberían decrecer con i, desde 1 hacia 1/10000 "
                     "(paso 7)")
    return hints


def _transformer_block_hints(inputs, parts, failures, expected_parts):
    output = parts[0]
    expected = expected_parts[0]
    if output.shape != expected.shape or "nonfinite" in _kinds(failures):
        return []
    off_mean = np.abs(output.mean(axis=-1)).max()
    off_var = np.abs(output.var(axis=-1) - 1).max()
    if off_mean > tolerances.ATOL or off_var > NORMALIZED_VAR_ATOL:
        return ["las filas de tu salida no tienen media 0 y varianza 1: el bloque post-LN "
                "termina con una LayerNorm sobre cada token (paso 8)"]
    return ["tu salida está normalizada por filas, así que el fallo está antes de la última "
            "LayerNorm: revisa las residuales, la FFN y la máscara (paso 8)"]


GENERIC_HINTS = {
    "attention": _attention_hints,
    "multihead": _multihead_hints,
    "positional_encoding": _positional_encoding_hints,
    "transformer_block": _transformer_block_hints,
}
