"""What ``make assign`` computes for the notebook's public checks (kit_autograder/build/
checks_data.py): lesson 055's side of the contract's ``public_checks()``.

* ``cases(function)``: one public draw of every hidden case (cases.py), from a fixed seed of
  its own, so the public checks cover every kind of input the grade does (odd d_model, long
  tables, n ≠ m, d_k ≠ d_v, every mask and mask=None, several distinct heads) with numbers
  the hidden cases, drawn afresh for each submission, never use;
* ``allowances``: the judge's own (standard.allowances), entry by entry;
* ``mistakes``: the catalog (misconceptions.py) with its mutants and its words;
* ``known_forms``: mistakes outside the catalog (known_forms.py), whose words the build asks
  of the grade itself;
* ``locating``: the grade's locating probes derived from a public case, with the locators'
  words (locating.py), for the notebook to locate where nothing names the mistake;
* ``measures``: what a failing part can be measured for: attention's weights, a row softmax
  of Q·Kᵀ times which factor, and whether their rows sum to 1.

Runs at build time only: nothing of this module, the reference or the mutants ships.
"""

import numpy as np

from .. import findings, misconceptions, tolerances
from ..cases import cases_for
from ..diagnose import GENERIC_HINTS, NORMALIZED_VAR_ATOL
from ..functions import FUNCTIONS
from ..standard import allowances as judge_allowances
from . import known_forms as known
from . import locating as locating_steps

ATOL, RTOL = tolerances.ATOL, tolerances.RTOL

# Public draws use each case's default seed moved by this: seeds no grading draw uses (those
# come from the salt and the submission's code) and apart from Otter's in-kernel defaults.
PUBLIC_SEED_SHIFT = 30000


def public_seed(case):
    return case.default_seed + PUBLIC_SEED_SHIFT


# The positional encoding's cases draw only sizes, each from a few values: a public draw would
# often be some submission's hidden draw too, and its answer, known by heart, would earn that
# case's points. Its public cases keep each family (the parity of d_model, more than 256
# positions, one position) and its description's ranges, with sizes no hidden draw takes
# (tests/test_public_checks.py draws them to make sure).
OWN_SIZES = {
    ("positional_encoding", "d_par"): dict(n_positions=14, d_model=14),
    ("positional_encoding", "d_impar"): dict(n_positions=12, d_model=13),
    ("positional_encoding", "largo"): dict(n_positions=300, d_model=31),
    ("positional_encoding", "una_posicion"): dict(n_positions=1, d_model=13),
}


def cases(function):
    """``[(name, Spanish description, inputs)]``: one public draw of each hidden case."""
    return [(case.name, case.description,
             OWN_SIZES.get((function, case.name))
             or case.inputs(np.random.default_rng(public_seed(case))))
            for case in cases_for(function)]


def allowances(function, inputs, expected):
    """``[(centre, allowance)]`` per returned part, as the judge compares."""
    return [(centre, tolerance + band)
            for centre, tolerance, band in judge_allowances(function, inputs, expected)]


def mistakes(function):
    return [{"id": entry.id, "name": entry.name, "explanation": entry.explanation,
             "hint": entry.hint, "forms": entry.forms}
            for entry in misconceptions.for_function(function)]


def locating(function, inputs):
    """The grade's locating probes derived from one public case (locating.py), as steps."""
    return locating_steps.steps(function, inputs)


def known_forms(function):
    return [(form_id, form) for form_id, name, form in known.FORMS if name == function]


# --- attention: what its weights measure ---------------------------------------------------------

# Factors a scale mistake multiplies Q·Kᵀ by, as functions of the case's sizes, and what each
# says. The right one is 1/√d_k; the catalog names 1, 1/d_k, 1/√m, 1/√n and 1/√d_v by their
# mutants, but with a second mistake, or in a case where two coincide, only the measure says.
FACTORS = (
    ("none", lambda d_k, n, m, d_v: 1.0,
     "tus pesos son la softmax de QKᵀ sin escalar (factor 1), no la de QKᵀ/√d_k: divide las "
     "puntuaciones por √d_k (paso 4)"),
    ("times_sqrt", lambda d_k, n, m, d_v: np.sqrt(d_k),
     "tus pesos son la softmax de QKᵀ·√d_k: multiplicas las puntuaciones por √d_k en lugar de "
     "dividirlas. Son QKᵀ/√d_k (paso 4)"),
    ("half_d_k", lambda d_k, n, m, d_v: 2 / d_k,
     "tus pesos son la softmax de QKᵀ·2/d_k: divides las puntuaciones por d_k/2 en lugar de por "
     "√d_k. ¿Escribiste d_k ** 1/2? La potencia se calcula antes que la división, así que eso es "
     "(d_k ** 1)/2; la raíz es d_k ** 0.5 o np.sqrt(d_k) (paso 4)"),
    ("d_k_then_2", lambda d_k, n, m, d_v: 1 / (2 * d_k),
     "tus pesos son la softmax de QKᵀ/(2·d_k): divides las puntuaciones por d_k y después por "
     "2. ¿Escribiste QKᵀ / d_k ** 1/2? La potencia se calcula primero y las divisiones van de "
     "izquierda a derecha, así que eso es (QKᵀ/d_k)/2; la raíz es d_k ** 0.5 o np.sqrt(d_k) "
     "(paso 4)"),
    ("d_k", lambda d_k, n, m, d_v: 1 / d_k,
     "tus pesos son la softmax de QKᵀ/d_k: divides por d_k en lugar de por √d_k (paso 4)"),
    ("times_d_k", lambda d_k, n, m, d_v: float(d_k),
     "tus pesos son la softmax de QKᵀ·d_k: multiplicas las puntuaciones por d_k; se dividen "
     "por √d_k (paso 4)"),
    ("sqrt_m", lambda d_k, n, m, d_v: 1 / np.sqrt(m),
     "tus pesos son la softmax de QKᵀ/√m, con m el número de claves: d_k es el número de "
     "columnas de K, no de filas (paso 3)"),
    ("sqrt_n", lambda d_k, n, m, d_v: 1 / np.sqrt(n),
     "tus pesos son la softmax de QKᵀ/√n, con n el número de consultas: d_k es el número de "
     "columnas de K (paso 3)"),
    ("sqrt_d_v", lambda d_k, n, m, d_v: 1 / np.sqrt(d_v),
     "tus pesos son la softmax de QKᵀ/√d_v: el escalado usa d_k, las columnas de K, no d_v "
     "(paso 4)"),
)

# A fitted factor names one of FACTORS when it is within this (relative) of its value.
FACTOR_RTOL = 1e-3

# Logs of the weights fit factor·scores (up to one constant per row) within this.
FIT_ATOL = 1e-4

# Weights below this are left out of the fit: their logs carry rounding, not scores.
SMALLEST_WEIGHT = 1e-12


def _block_words(inputs):
    """The grade's own words for a block whose output rows are, or are not, standardised: its
    generic hint (diagnose.GENERIC_HINTS), asked of a standardised output and of one that is
    not, so that the notebook says what the grade says."""
    from reference.attention import transformer_block

    expected = transformer_block(**inputs)
    hint = GENERIC_HINTS["transformer_block"]
    (standard,) = hint(inputs, [expected[::-1]], [], [expected])
    (other,) = hint(inputs, [2 * expected + 1], [], [expected])
    return standard, other


def _precision(function):
    """The judge's float16 finding (findings.precision_findings) on every returned part: a
    whole answer in half precision is said before any place is located, as the grade does."""
    return [{"kind": "half_precision", "part": index, "entries": findings.FLOAT16_ENTRIES,
             "rich_bits": findings.RICH_BITS, "before_locating": True,
             "words": findings.FLOAT16_WORDS.format(name=name)}
            for index, name in enumerate(FUNCTIONS[function].parts)]


def measures(function, inputs):
    return _measures(function, inputs) + _precision(function)


def _measures(function, inputs):
    if function == "transformer_block":
        standard, other = _block_words(inputs)
        return [{"kind": "rows_standardised", "part": 0, "mean_atol": tolerances.ATOL,
                 "var_atol": NORMALIZED_VAR_ATOL, "standard_words": standard,
                 "other_words": other}]
    if function != "attention":
        return []
    Q, K, V, mask = inputs["Q"], inputs["K"], inputs["V"], inputs.get("mask")
    (n, d_k), m, d_v = Q.shape, K.shape[0], V.shape[1]
    allowed = np.ones((n, m), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    expected = 1 / np.sqrt(d_k)
    # A factor equal to the right one, or to another of them here, cannot be told apart on
    # this case: left out, so that only what the case measures is said.
    values = [(key, float(value(d_k, n, m, d_v))) for key, value, _ in FACTORS]
    factors = [[key, value] for key, value in values
               if not np.isclose(value, expected, rtol=FACTOR_RTOL, atol=0)]
    leak = [] if mask is None else [
        {"kind": "zero_where", "part": 1, "where": ~allowed, "atol": tolerances.MASKED_WEIGHT_ATOL,
         "words": "una clave prohibida por la máscara recibe peso, aunque sea muy pequeño, y "
                  "tiene que ser exactamente 0. ¿Pones un número finito (−10, −1e4) en lugar de "
                  "−∞? Pon −∞ en las puntuaciones prohibidas, antes de la softmax (paso 3, "
                  "punto 2)"}]
    return leak + [
        {"kind": "rows_sum_to_one", "part": 1, "atol": tolerances.ROW_SUM_ATOL,
         "rows_words": "las filas de los pesos no suman 1: cada consulta reparte su atención "
                       "entre las claves, así que cada fila de la softmax suma 1 (paso 3, punto 3)",
         "columns_words": "en tus pesos suman 1 las columnas, no las filas: la softmax va sobre el "
                          "eje de las claves, el último (axis=-1) (paso 3, punto 3)"},
        {"kind": "softmax_factor", "part": 1, "scores": Q @ K.T, "allowed": allowed,
         "expected": expected, "factors": factors,
         "words": {key: words for key, _, words in FACTORS},
         "other_words": "tus pesos son la softmax de QKᵀ multiplicada por {factor}, y el factor "
                        "es 1/√d_k, que aquí vale {expected} (paso 4)",
         "masked_atol": tolerances.MASKED_WEIGHT_ATOL, "atol": tolerances.ROW_SUM_ATOL,
         "fit_atol": FIT_ATOL, "factor_rtol": FACTOR_RTOL, "smallest_weight": SMALLEST_WEIGHT},
    ]
