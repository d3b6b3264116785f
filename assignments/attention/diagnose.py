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

Before all of them, an output computed in float16 is said to be so: its rounding blurs every
other property. ``summarize`` then explains a function's failing cases together, which is
what the student reads: a mistake is named for the function only when it explains every
failing case, and each diagnosis is said once.

When two entries fit equally well, the output cannot tell them apart and a wrong name teaches
worse than none, so nothing is named; tests/test_misconceptions.py keeps the hidden cases free
of such ties. No message quotes a hidden input, a reference output or a mutant output.
"""

import threading
from itertools import combinations

import numpy as np

from kit_autograder.verdicts.compare import compare_part, same_within
from kit_autograder.verdicts.in_process import run_in_process
from kit_autograder.verdicts.outcome import Failure, Outcome
from kit_autograder.verdicts.record import Diagnosis
from kit_autograder.verdicts.summary import Judged, grouped, symptoms

from . import misconceptions, mutants, tolerances
from .findings import FINDINGS, READINGS_JOIN, precision_findings
from .functions import FUNCTIONS
from .standard import Standard, reference_parts
from .shapes import SHAPE_KINDS, case_note, explain_error

# exp() overflows float64 above ~709.78, so scores beyond this break a softmax that does not
# subtract the row maximum.
OVERFLOW_SCORE = 700

# LayerNorm leaves a row's variance at v / (v + eps), a little under 1 (the public test of the
# block allows the same), so "normalized rows" cannot mean variance 1 to ATOL.
NORMALIZED_VAR_ATOL = 1e-3


# Error kinds no mutant's outcome can have: a mutant is the reference's code with one mistake,
# so it exists ("missing"), nothing in it raises NotImplementedError (the notebook's stub) and
# every name it reads is defined ("name": a cell of the student's failed, so a name it was to
# define does not exist). An answer with one of these matches no entry, and running the
# catalog's mutants on its case to learn that cost some forty milliseconds of every untouched
# or broken notebook.
NO_MUTANT_RAISES = frozenset({"not_implemented", "missing", "name"})


def diagnose(function, inputs, outcome: Outcome, failures, expected, entries=None) -> list:
    """Failures of kind "misconception", "explanation", "finding" or "hint" that explain
    ``failures``; may be empty. ``entries``: the catalog entries it may name (all)."""
    if outcome.parts is not None:
        precision = precision_findings(outcome.parts, expected, FUNCTIONS[function].parts)
        if precision:  # half precision blurs every other property: say it first
            return precision
    if outcome.parts is None and outcome.error.get("kind") in NO_MUTANT_RAISES:
        matches = []  # the stub, no function, a name never defined: none of the catalog's
    else:
        tried = _mutants_of(function, inputs, expected)
        if entries is not None:
            tried = tried.restricted(entries)
        matches = matching_entries(outcome, tried)
    if len(matches) == 1:
        return [_named(matches[0], "error típico reconocido")]
    if outcome.parts is None:
        return [Failure(text, None, {"kind": "explanation", **({"id": note} if note else {})})
                for note, text in explain_error(function, inputs, outcome.error)]
    # Two mistakes at once explain only what no single one does: not when several fit here,
    # nor behind NaN or infinities, which hide what the other mistake did and so fit pairs by
    # the places of the NaN alone.
    finite = all(np.isfinite(part).all() for part in outcome.parts)
    pair = None if matches or not finite else matching_pair(function, outcome, tried)
    if pair:
        return [_named(entry, "error típico reconocido, uno de los dos que hay a la vez")
                for entry in pair]
    found = FINDINGS[function](inputs, outcome.parts, expected)
    if found:
        return found
    if any(f.details.get("order") for f in failures):
        return []  # the right parts in another order: the failure itself says all of it
    hints = GENERIC_HINTS[function](inputs, outcome.parts, failures, expected)
    return [Failure(hint, None, {"kind": "hint"}) for hint in hints]


def _named(entry, lead):
    message = f"{lead}: {entry.name}. {entry.explanation}\n    Pista: {entry.hint}"
    return Failure(message, None, {"kind": "misconception", "id": entry.id})


_recent = threading.local()  # each thread's last cases: their mutants, from judge to summarize
RECENT_CASES = 32


def _mutants_of(function, inputs, expected):
    """The mutants of the case ``inputs`` (the grader's own dict), computed once between the
    judge, which explains the case alone, and ``summarize``, which explains it with the others."""
    memory = getattr(_recent, "cases", None)
    if memory is None:
        memory = _recent.cases = {}
    key = (function, id(inputs))
    if key in memory and memory[key][0] is inputs:
        return memory[key][1]
    tried = _Mutants(function, inputs, expected)
    memory[key] = (inputs, tried)  # holding inputs keeps its id from being reused
    while len(memory) > RECENT_CASES:
        memory.pop(next(iter(memory)))
    return tried


class _Mutants:
    """The outcomes of the catalog's mutants on one case, each computed once. ``entries``:
    the catalog entries it may name (all of the function's by default)."""

    def __init__(self, function, inputs, expected, entries=None):
        self.function, self.inputs, self.expected = function, inputs, expected
        self.entries = misconceptions.for_function(function) if entries is None else entries
        self.standard = Standard(function, inputs, expected)
        self._outcomes, self._failing = {}, {}

    def restricted(self, entries):
        """The same case and computed outcomes, naming only ``entries``."""
        other = _Mutants(self.function, self.inputs, self.expected, entries)
        other.standard, other._outcomes, other._failing = (self.standard, self._outcomes,
                                                           self._failing)
        return other

    def outcome(self, mutant) -> Outcome:
        if mutant not in self._outcomes:
            # The mutants never change their arguments: no copy of the inputs per call.
            self._outcomes[mutant] = run_in_process(mutant, self.inputs,
                                                    len(FUNCTIONS[self.function].parts),
                                                    copy_inputs=False)
        return self._outcomes[mutant]

    def fails(self, mutant):
        if mutant not in self._failing:
            self._failing[mutant] = bool(self.standard.violations(self.outcome(mutant)))
        return self._failing[mutant]

    def matches(self, outcome, mutant):
        """``outcome`` is what ``mutant`` gives, within the grading tolerances; for the block,
        with any LayerNorm epsilon the judge accepts, since the student's own LayerNorm may
        use any of them (``tolerances.LAYER_NORM_EPS``) beside the mistake."""
        theirs = self.outcome(mutant)
        if same_outcome(outcome, theirs):
            return True
        if (self.function != "transformer_block" or "eps" in dict(mutant.switches)
                or outcome.parts is None or theirs.parts is None
                or outcome.parts[0].shape != theirs.parts[0].shape):
            return False
        # Far beyond what epsilon moves the reference here, no epsilon explains the difference.
        if np.abs(outcome.parts[0] - theirs.parts[0]).max() > 10 * self.epsilon_reach():
            return False
        low, high = (theirs if eps == mutants.DEFAULT_EPS else
                     self.outcome(mutant.with_switches(eps=eps))
                     for eps in tolerances.LAYER_NORM_EPS)
        if low.parts is None or high.parts is None:
            return False
        return _within_band(outcome.parts[0], low.parts[0], high.parts[0])


    def epsilon_reach(self):
        """How far the accepted epsilons move the reference's block on this case, at most,
        plus the tolerance."""
        if not hasattr(self, "_reach"):
            _, tolerance, band = self.standard.shares[0]
            self._reach = float((tolerance + band).max())
        return self._reach


def _within_band(got, low, high):
    if not (got.shape == low.shape == high.shape) or not np.isfinite(got).all() \
            or not (np.isfinite(low).all() and np.isfinite(high).all()):
        return False
    allowed = tolerances.ATOL + tolerances.RTOL * np.abs(high) + np.abs(high - low) / 2
    return bool(np.all(np.abs(got - (low + high) / 2) <= allowed))


def matching_entries(outcome: Outcome, tried):
    """The catalog entries one of whose forms fails this case the way ``outcome`` does."""
    return [entry for entry in tried.entries
            if any(tried.fails(form) and tried.matches(outcome, form) for form in entry.forms)]


def matching_pair(function, outcome: Outcome, tried):
    """The one pair of catalog entries whose mistakes together give ``outcome`` when neither
    alone does, else None. Only for returned values: an error report fits every pair that
    contains the mistake raising it."""
    pairs = set()
    for first, second in combinations(tried.entries, 2):
        for a in first.forms:
            for b in second.forms:
                both = a.combined(b)
                if both is None or not tried.matches(outcome, both):
                    continue
                if not any(same_outcome(tried.outcome(both), tried.outcome(alone))
                           for alone in (a, b)):
                    pairs.add((first, second))
    return sorted(pairs, key=lambda pair: pair[0].id)[0] if len(pairs) == 1 else None


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
    if error.get("kind") == "broadcast":  # a + b and b + a are one mistake
        return ("broadcast", tuple(sorted(tuple(shape) for shape in shapes)))
    return (error.get("kind"), error.get("exception"), tuple(numbers),
            tuple(tuple(shape) for shape in shapes), error.get("name"))


# --- a function's failing cases, together ------------------------------------------------------


MAX_AMBIGUOUS = 3  # more candidates than this say nothing a student can use


def summarize(function, judged) -> list:
    """What explains the failing cases of ``function`` (``summary.Judged``, one per answered
    case), each diagnosis once with the cases it explains:

    1. one catalogued mistake that reproduces every failing case and passes where the student
       passes: named for the function, once;
    2. else a few that do so equally: named as candidates the cases cannot tell apart;
    3. else one pair of mistakes whose combination does so, neither alone: both named;
    4. else each case's own diagnosis (``diagnose``), each distinct one once; a catalogued
       mistake that fits some failing cases only is named for those cases, and said to be so.
    """
    failing = [item for item in judged if item.failures]
    if not failing:
        return []
    cases = [item.case for item in failing]
    trials = {item.case: _mutants_of(function, item.inputs,
                                     reference_parts(function, item.inputs))
              for item in judged}

    passing = [item for item in judged if not item.failures]

    def explains(form):
        return (all(trials[item.case].fails(form) and trials[item.case].matches(item.outcome, form)
                    for item in failing)
                and not any(trials[item.case].fails(form) for item in passing))

    entries = misconceptions.for_function(function)
    scope = _scope(len(failing), len(judged))
    single = [entry for entry in entries if any(explains(form) for form in entry.forms)]
    # Where every failing case raised a shape error (a product or a sum that does not fit),
    # a mistake matches by that report alone, which many other mistakes raise too: it is said
    # as a possibility, not as what the student did. A specific error (a tuple returned where
    # one array goes) still names its mistake.
    by_error = all(item.outcome.parts is None
                   and (item.outcome.error or {}).get("kind") in SHAPE_KINDS for item in failing)
    if len(single) == 1:
        return [Diagnosis("misconception", _named_for_all(single[0], scope, by_error), cases,
                          [single[0].id])]
    if 1 < len(single) <= MAX_AMBIGUOUS:
        return [Diagnosis("ambiguous", _candidates(single, scope, by_error), cases,
                          [entry.id for entry in single])]
    # Two mistakes at once matched by an error report alone would be a guess twice over.
    if not single and not by_error:
        pairs = {(first, second) for first, second in combinations(entries, 2)
                 for a in first.forms for b in second.forms
                 if _explains_together(a, b, explains, failing, trials)}
        if len(pairs) == 1:
            first, second = next(iter(pairs))
            return [Diagnosis("misconception", _pair_for_all(first, second, scope), cases,
                              [first.id, second.id])]
    shared = _shared_reading(function, failing, trials)
    if shared is not None:
        return [shared]
    failing = _notes_measured(function, failing)
    # A mistake that fails a case the student passes is not theirs: no case names it.
    allowed = [entry for entry in entries
               if any(not any(trials[item.case].fails(form) for item in passing)
                      for form in entry.forms)]
    raised = {item.case for item in failing if item.outcome.parts is None}
    return [_partly(diagnosis, set(diagnosis.cases) <= raised)
            if diagnosis.kind == "misconception" else diagnosis
            for diagnosis in grouped([_named_only(item, allowed, function, trials)
                                      for item in failing])]


def _shared_reading(function, failing, trials):
    """One finding for every failing case when each case found the same kind of thing with
    some readings (ways of writing the formula that give exactly its output) and some of them
    are every case's: only those are said. A reading that one case cannot tell from another
    is then named only if the other cases rule the rest out."""
    common, frame, finding_id = None, None, None
    for item in failing:
        # Asked again of every case: a case whose own diagnosis named a catalogued mistake
        # (one of the readings, on this case) still has its readings.
        found = None if item.outcome.parts is None else next(
            (f for f in FINDINGS[function](item.inputs, item.outcome.parts,
                                           trials[item.case].expected)
             if f.details.get("readings")), None)
        if found is None or (finding_id is not None
                             and (found.details["id"], found.details["frame"])
                             != (finding_id, frame)):
            return None
        finding_id, frame = found.details["id"], found.details["frame"]
        readings = found.details["readings"]
        common = readings if common is None else [r for r in common if r in readings]
    if not common:
        return None
    return Diagnosis("finding", frame.format(readings=READINGS_JOIN.join(common)),
                     [item.case for item in failing], [finding_id])


def _notes_measured(function, failing):
    """``failing`` without the notes on unusual sizes (shapes.case_note: «sin suponer que d_k =
    d_v = d_model/h») when a case with none of them raised a shape error too: the unusual
    sizes are then not what breaks the code (a vectorised multihead that never projects V
    raises on every case), and the note would blame them. Each case keeps its own sizes."""
    ordinary = any(item.outcome.parts is None
                   and (item.outcome.error or {}).get("kind") in SHAPE_KINDS
                   and case_note(function, item.inputs) is None for item in failing)
    if not ordinary:
        return failing
    kept = []
    for item in failing:
        if item.outcome.parts is None and any(f.details.get("kind") == "explanation"
                                              for f in item.failures):
            plain = [f for f in item.failures if f.details.get("kind") != "explanation"]
            again = [Failure(text, None, {"kind": "explanation", **({"id": note} if note else {})})
                     for note, text in explain_error(function, item.inputs, item.outcome.error,
                                                     notes=False)]
            item = Judged(item.case, item.description, item.inputs, item.outcome, plain + again)
        kept.append(item)
    return kept


def _named_only(item, allowed, function, trials):
    """``item`` with its own diagnosis, given again without the entries not ``allowed``
    when it named one of them."""
    ids = {allowed_entry.id for allowed_entry in allowed}
    if all(f.details.get("id") in ids for f in item.failures
           if f.details.get("kind") == "misconception"):
        return item
    shown = symptoms(item.failures)
    again = diagnose(function, item.inputs, item.outcome, shown, trials[item.case].expected,
                     allowed)
    return Judged(item.case, item.description, item.inputs, item.outcome, shown + again)


def _explains_together(a, b, explains, failing, trials):
    both = a.combined(b)
    if both is None or not explains(both):
        return False
    # Each mistake must show somewhere: else one alone explains, and step 1 would have said it.
    return all(any(not same_outcome(trials[item.case].outcome(both),
                                    trials[item.case].outcome(alone)) for item in failing)
               for alone in (a, b))


def _scope(failing, total):
    if failing == 1:
        return "el único caso que falla"
    if failing == total:
        return f"los {failing} casos, que fallan todos"
    return f"los {failing} casos que fallan"


BY_ERROR = ("; como ahí tu función lanza un error, la coincidencia es solo el mismo mensaje "
            "de error, y otros fallos lanzan ese mismo error: comprueba si es el tuyo")


def _named_for_all(entry, scope, by_error=False):
    if by_error:
        return (f"tu función lanza, en {scope}, el mismo error que un error típico: "
                f"{entry.name[:1].lower()}{entry.name[1:]}{BY_ERROR}. {entry.explanation}"
                f"\nPista: {entry.hint}")
    return (f"error típico reconocido, que explica {scope}: {entry.name}. {entry.explanation}"
            f"\nPista: {entry.hint}")


def _pair_for_all(first, second, scope):
    return (f"dos errores típicos reconocidos a la vez, que juntos explican {scope}: "
            f"{first.name}, y además {second.name[:1].lower()}{second.name[1:]}. "
            f"{first.explanation} {second.explanation}\nPistas: {first.hint} {second.hint}")


def _candidates(entries, scope, by_error=False):
    names = "; o ".join(entry.name for entry in entries)
    hints = " ".join(dict.fromkeys(entry.hint for entry in entries))
    if by_error:
        return (f"en {scope}, tu función lanza el mismo error que {len(entries)} errores "
                f"típicos: {names}{BY_ERROR}.\nPistas: {hints}")
    return (f"en {scope}, tu función se comporta como {len(entries)} errores típicos que "
            f"estos casos no distinguen: {names}.\nPistas: {hints}")


def _partly(diagnosis, by_error=False):
    """A catalogued mistake one case's diagnosis named, said for the cases it explains only.
    ``by_error``: those cases raised, and an error is matched by its report alone (the same
    matrix product that does not fit), which other mistakes raise too: only a possibility."""
    entry = misconceptions.get(diagnosis.ids[0])
    if by_error:
        return Diagnosis("hint",
                         f"tu función lanza el mismo error que un error típico, «{entry.name}», "
                         "pero otros fallos lanzan ese mismo error: comprueba si es el tuyo. "
                         f"Pista: {entry.hint}", diagnosis.cases, [])
    return Diagnosis("misconception",
                     f"tu salida coincide con la de un error típico: {entry.name}. "
                     f"{entry.explanation}\nPista: {entry.hint}\nEn los otros casos que "
                     "fallan no coincide con él: revisa también qué más cambia allí.",
                     diagnosis.cases, diagnosis.ids)


# --- generic hints: what kind of wrong, when no catalogued mistake matches --------------------


def _failed_parts(failures):
    return {failure.part for failure in failures if failure.part is not None}


def _kinds(failures):
    return {failure.details.get("kind") for failure in failures}


def _attention_hints(inputs, parts, failures, expected_parts):
    weights = parts[1]
    if "nonfinite" in _kinds(failures):
        scores = inputs["Q"] @ inputs["K"].T / np.sqrt(inputs["K"].shape[-1])
        # Both causes are possible where a mask meets large scores, and this hint cannot call
        # the function to tell them apart: it says both, and how to tell.
        overflow = ("la exponencial desborda y ∞/∞ da NaN: resta el máximo de cada fila antes "
                    "de exponenciar")
        minus_infinity = ("operar con −∞ da NaN: una fila entera a −∞, restar −∞, o multiplicar "
                          "−∞ por 0; revisa dónde pones −∞ y sobre qué eje haces la softmax")
        masked = inputs.get("mask") is not None
        if np.abs(scores).max() > OVERFLOW_SCORE:
            if not masked:
                return [f"aparecen NaN o infinitos con puntuaciones grandes: {overflow} (paso 3)"]
            return ["aparecen NaN o infinitos con puntuaciones grandes y máscara, y hay dos "
                    f"causas posibles: o {overflow}, o {minus_infinity}. Si los casos con máscara "
                    "y puntuaciones pequeñas también dan NaN, es la segunda (paso 3)"]
        if masked:
            return ["aparecen NaN o infinitos aunque las puntuaciones son pequeñas: suelen "
                    f"venir de la máscara, porque {minus_infinity} (paso 3)"]
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
