"""Explain a failed hidden case: name the mistake it reproduces, or say what is off.

``judge.judge`` calls ``diagnose`` after it has listed the violated properties. Everything
here works on plain data (the case's inputs, the student's ``Outcome`` and the ``Failure``
list) and never calls student code; the mutants and the reference it runs are the grader's.
The first step that explains the failure gives the diagnosis:

1. One catalogued mistake: the student's output equals, within the grading tolerances, the
   output of exactly one catalog entry's mutant that fails this case. The feedback names it,
   explains it and points to the notebook step.
2. An error the catalog does not reproduce: its sizes, named as the notebook names them, and
   the shapes the notebook asked for (shapes.py).
3. Two catalogued mistakes at once: the output equals the mutant with both mistakes, and
   neither mistake alone gives it, so each explains part of the difference.
4. A finding: a property of the output that names a mistake outside the catalog, such as a
   sum of the heads or a wrong base in the frequencies (findings.py).
5. A generic hint about what kind of wrong the output is (NaN with large scores, rows not
   normalized, weights right but output wrong...).

When two entries fit equally well, the output cannot tell them apart and a wrong name teaches
worse than none, so nothing is named; tests/test_misconceptions.py keeps the hidden cases free
of such ties. No message quotes a hidden input, a reference output or a mutant output.
"""

from itertools import combinations

import numpy as np

from kit_autograder.verdicts.compare import compare_part, same_within
from kit_autograder.verdicts.in_process import run_in_process
from kit_autograder.verdicts.outcome import Failure, Outcome

from . import misconceptions, tolerances
from .findings import FINDINGS
from .functions import FUNCTIONS
from .judge import violations
from .shapes import explain_error

# exp() overflows float64 above ~709.78, so scores beyond this break a softmax that does not
# subtract the row maximum.
OVERFLOW_SCORE = 700

# LayerNorm leaves a row's variance at v / (v + eps), a little under 1 (the public test of the
# block allows the same), so "normalized rows" cannot mean variance 1 to ATOL.
NORMALIZED_VAR_ATOL = 1e-3


def diagnose(function, inputs, outcome: Outcome, failures, expected) -> list:
    """Failures of kind "misconception", "explanation", "finding" or "hint" that explain
    ``failures``; may be empty."""
    tried = _Mutants(function, inputs, expected)
    entry = matching_misconception(function, inputs, outcome, expected, tried)
    if entry is not None:
        return [_named(entry, "error típico reconocido")]
    if outcome.parts is None:
        return [Failure(text, None, {"kind": "explanation", **({"id": note} if note else {})})
                for note, text in explain_error(function, inputs, outcome.error)]
    pair = matching_pair(function, outcome, tried)
    if pair:
        return [_named(entry, "error típico reconocido, uno de los dos que hay a la vez")
                for entry in pair]
    found = FINDINGS[function](inputs, outcome.parts, expected)
    if found:
        return found
    hints = GENERIC_HINTS[function](inputs, outcome.parts, failures, expected)
    return [Failure(hint, None, {"kind": "hint"}) for hint in hints]


def _named(entry, lead):
    message = f"{lead}: {entry.name}. {entry.explanation}\n    Pista: {entry.hint}"
    return Failure(message, None, {"kind": "misconception", "id": entry.id})


class _Mutants:
    """The outcomes of the catalog's mutants on one case, each computed once."""

    def __init__(self, function, inputs, expected):
        self.function, self.inputs, self.expected = function, inputs, expected
        self.entries = misconceptions.for_function(function)
        self._outcomes, self._failing = {}, {}

    def outcome(self, mutant) -> Outcome:
        if mutant not in self._outcomes:
            self._outcomes[mutant] = run_in_process(mutant, self.inputs,
                                                    len(FUNCTIONS[self.function].parts))
        return self._outcomes[mutant]

    def fails(self, mutant):
        if mutant not in self._failing:
            self._failing[mutant] = bool(violations(self.function, self.inputs,
                                                    self.outcome(mutant), self.expected))
        return self._failing[mutant]


def matching_misconception(function, inputs, outcome: Outcome, expected, tried=None):
    """The one catalog entry one of whose forms fails this case the way ``outcome`` does,
    else None (also when two entries fit)."""
    tried = tried or _Mutants(function, inputs, expected)
    matches = [entry for entry in tried.entries
               if any(tried.fails(form) and same_outcome(outcome, tried.outcome(form))
                      for form in entry.forms)]
    return matches[0] if len(matches) == 1 else None


def matching_pair(function, outcome: Outcome, tried):
    """The one pair of catalog entries whose mistakes together give ``outcome`` when neither
    alone does, else None. Only for returned values: an error report fits every pair that
    contains the mistake raising it."""
    pairs = set()
    for first, second in combinations(tried.entries, 2):
        for a in first.forms:
            for b in second.forms:
                both = a.combined(b)
                if both is None or not same_outcome(outcome, tried.outcome(both)):
                    continue
                if not any(same_outcome(tried.outcome(both), tried.outcome(alone))
                           for alone in (a, b)):
                    pairs.add((first, second))
    return sorted(pairs, key=lambda pair: pair[0].id)[0] if len(pairs) == 1 else None


def mutant_outcome(entry, inputs) -> Outcome:
    """What the entry's (first) mutant returns on ``inputs``, reduced as a student's result."""
    return run_in_process(entry.mutant, inputs, len(FUNCTIONS[entry.function].parts))


def same_outcome(got: Outcome, mutant: Outcome):
    """Equal within the grading tolerances, with NaN and infinities in the same places.

    Errors match by their report: the kind of error and the sizes NumPy gave (``_canonical``).
    """
    if got.error is not None or mutant.error is not None:
        return (got.error is not None and mutant.error is not None
                and _canonical(got.error) == _canonical(mutant.error))
    return len(got.parts) == len(mutant.parts) and all(
        same_within(a, b, atol=tolerances.ATOL, rtol=tolerances.RTOL)
        for a, b in zip(got.parts, mutant.parts))


def _canonical(error):
    """What an error report says about the mistake rather than about the call that raised it:
    a matrix product whose inner sizes differ is one mistake whether it was written with @
    (a "matmul" report: the right operand's rows, then the left one's columns) or np.dot."""
    numbers, shapes = error.get("numbers", []), error.get("shapes", [])
    if error.get("kind") == "matmul" and len(numbers) >= 2:
        return ("inner sizes", numbers[1], numbers[0])
    if error.get("kind") == "not_aligned" and len(shapes) >= 2 and shapes[0] and shapes[1]:
        return ("inner sizes", shapes[0][-1], shapes[1][0])
    return (error.get("kind"), error.get("exception"), tuple(numbers),
            tuple(tuple(shape) for shape in shapes), error.get("name"))


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
