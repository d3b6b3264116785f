"""Where an ``attention`` that no catalogued mistake explains first departs, step by step of
step 3's formula: the mask, the softmax (its axis and its normalisation), the scale, the
scores Q·Kᵀ, and the weights times V.

The probes are built from the failing case: K moved by its mean key, which only subtracts one
number from each row of scores (the softmax does not change), and Q scaled so that no
score/√d_k exceeds MODERATE_SCORE (every weight then stays well above zero, and the log of a
row of weights is its scores up to a constant); then the same without the mask. Each step is said only when a probe measures
it: «la escala» only when the student's weights are exactly the softmax of Q·Kᵀ times some
other factor, «las puntuaciones» only when they are distributions that no factor explains.
Where only the mask departs, its form is measured too: NaN that small scores cannot explain
(operating with −∞), the mask read transposed, or the unmasked weights returned.
"""

import numpy as np

from reference import attention as reference

from . import scale_law, tolerances
from .probe_compare import agrees

# The largest |score|/√d_k of the probes: e^-16 ≈ 1e-7 is then the smallest ratio of two
# weights in a row, far above float64 rounding, so logs of the student's weights mean
# something; and scores of 8 are far from uniform weights, so a wrong factor still shows.
MODERATE_SCORE = 8.0

# Probes draw their values from this generator, and have at least this many queries.
PROBE_SEED = 8055
MIN_QUERIES = 4

# The mask is probed where every score is this small: −10 in place of −∞ then leaves a
# forbidden key a weight of about e^-11 of the row, far above the masked-weight tolerance.
SMALL_SCORE = 1.0

MASK = ("attention.located_mask",
        "la máscara: sin máscara tu atención coincide con la correcta, y con ella no. Pon −∞ "
        "en las puntuaciones donde la máscara vale False antes de la softmax, para que esas "
        "claves reciban peso exactamente 0 (paso 3, punto 2)")
MASK_NAN = ("attention.located_mask_nan",
            "cómo aplicas la máscara: sin máscara tu atención coincide con la correcta, y con "
            "ella da NaN aunque las puntuaciones sean pequeñas, así que el NaN no es un "
            "desbordamiento: sale de cómo marcas las posiciones prohibidas (un NaN, u operar "
            "con −∞: restar −∞, como la media de una fila que lo contiene, o multiplicar −∞ "
            "por 0). Pon −∞ con np.where(mask, puntuaciones, −np.inf) y resta el máximo de "
            "cada fila (paso 3, punto 2)")
MASK_NAN_MARKED = ("attention.located_mask_nan_marked",
                   "cómo aplicas la máscara: sin máscara tu atención coincide con la correcta, "
                   "y con ella tus pesos valen NaN justo en las claves que la máscara prohíbe. "
                   "¿Marcas esas posiciones con NaN? Una clave prohibida tiene peso 0: pon −∞ "
                   "en sus puntuaciones, np.where(mask, puntuaciones, −np.inf), antes de la "
                   "softmax (paso 3, punto 2)")
MASK_TRANSPOSED = ("attention.located_mask_transposed",
                   "la máscara: tu atención coincide con la correcta si le pasas la máscara "
                   "traspuesta, así que la lees al revés: mask[i, j] dice si la consulta i (la "
                   "fila) puede mirar la clave j (la columna), no al contrario; revisa el orden "
                   "de los índices (paso 3, punto 2)")
UNMASKED_WEIGHTS = ("attention.located_unmasked_weights",
                    "los pesos que devuelves: tu salida sí usa la máscara, pero los pesos que "
                    "devuelves son los de antes de aplicarla. Devuelve los mismos pesos con los "
                    "que calculas la salida (paso 3, punto 2)")
WEIGHTS_TIMES_V = ("attention.located_weights_times_v",
                   "el último paso: tus pesos coinciden con los correctos, pero tu salida no es "
                   "pesos·V, la media de los valores ponderada por cada fila de pesos "
                   "(paso 3, punto 4)")
LARGE_SCORES = ("attention.located_large_scores",
                "el tamaño de las puntuaciones: con puntuaciones moderadas tu atención coincide "
                "con la correcta, y con puntuaciones grandes no. La exponencial de un número "
                "grande desborda: resta a cada fila su máximo antes de exponenciar, que no "
                "cambia la softmax, y que sea el máximo de lo mismo que exponencias, las "
                "puntuaciones ya divididas por √d_k y con la máscara (paso 3, punto 3)")
FORBIDDEN_DOMINATE = ("attention.located_forbidden_dominate",
                      "la máscara con puntuaciones grandes: sin máscara tu atención coincide con "
                      "la correcta también con puntuaciones grandes, y con la máscara no, cuando "
                      "las claves prohibidas puntúan miles por encima de las permitidas. ¿Restas "
                      "el máximo de toda la fila, prohibidas incluidas, y aplicas la máscara "
                      "después (así las permitidas se quedan en e^(−miles) = 0), o pones en las "
                      "prohibidas un número finito que no basta (−1e4)? Pon −∞ en las "
                      "prohibidas antes de restar el máximo de cada fila (paso 3, puntos 2 y 3)")
SOFTMAX_AXIS = ("attention.located_softmax_axis",
                "el eje de la softmax: en tus pesos suman 1 las columnas, no las filas. Cada "
                "consulta (fila) reparte su atención entre las claves: la softmax va sobre el "
                "último eje (paso 3, punto 3)")
SOFTMAX_NORMALISATION = ("attention.located_softmax_sum",
                         "la normalización de la softmax: tus pesos son proporcionales a los "
                         "correctos, pero sus filas no suman 1. Divide cada fila de "
                         "exponenciales por su propia suma (paso 3, punto 3)")
SCALED_AFTER_SOFTMAX = ("attention.located_scaled_after_softmax",
                        "el orden de la escala y la softmax: tus pesos son una softmax de Q·Kᵀ "
                        "multiplicada por un mismo número, así que cada fila suma ese número y "
                        "no 1. La escala 1/√d_k divide las puntuaciones antes de la softmax; "
                        "después de ella no se multiplica por nada (pasos 3 y 4)")
SOFTMAX = ("attention.located_softmax",
           "la softmax: tus pesos no son distribuciones (cada fila, no negativa y con suma 1). "
           "Exponencia las puntuaciones y divide cada fila por su suma (paso 3, punto 3)")
SCALE = ("attention.located_scale",
         "la escala: tus pesos son la softmax de Q·Kᵀ multiplicada por un factor distinto de "
         "1/√d_k, con d_k el número de columnas de K (paso 4)")
# The same place, with the factor measured as a law of the sizes (scale_law.py).
SCALE_LAW = ("la escala: tus pesos son la softmax de Q·Kᵀ multiplicada por {formula}, no por "
             "1/√d_k ({names}). Las puntuaciones se dividen por √d_k (paso 4)")
SCALE_NONE = ("la escala: tus pesos son la softmax de Q·Kᵀ sin escalar, multiplicada por 1 en "
              "lugar de 1/√d_k. Divide las puntuaciones por √d_k, con d_k el número de "
              "columnas de K (paso 4)")
SCALE_FIXED = ("la escala: tus pesos son la softmax de Q·Kᵀ multiplicada por un número fijo"
               "{number}, el mismo con cualquier tamaño de Q, K y V. La escala es 1/√d_k, con "
               "d_k el número de columnas de K, K.shape[-1]{origin} (paso 4)")
SCALE_FIXED_ORIGIN = (". Tu número es 1/√{size}: ¿tomas d_k de una variable de otra celda "
                      "(d_k = {size}) en lugar de la K que recibes?")
# The sizes a factor may depend on, as step 3 names them, and what each counts.
SIZE_NAMES = {"d_k": "d_k, el número de columnas de K",
              "d_v": "d_v, el número de columnas de V", "n": "n, el número de consultas",
              "m": "m, el número de claves"}
ROUNDED_SCORES = ("attention.located_rounded_scores",
                  "la escala: tus pesos son la softmax de Q·Kᵀ/√d_k redondeada a números "
                  "enteros. ¿Divides con //, la división entera, o redondeas (np.floor, "
                  "np.round, int)? Las puntuaciones se dividen con /, sin redondear (paso 4)")
EXP_BASE = ("attention.located_exp_base",
            "la base de la exponencial: tus pesos son la softmax de Q·Kᵀ/√d_k con las "
            "puntuaciones multiplicadas por {ratio}, que es ln {base}: es lo que da exponenciar "
            "en base {base} ({how}) en lugar de e. La escala está bien; la softmax usa la "
            "exponencial de base e, np.exp (paso 3, punto 3)")
# Bases a softmax is written in by mistake, with how a student writes each.
EXP_BASES = ((2, "2**x o np.exp2"), (10, "10**x o np.power(10, x)"))
NEGATED = ("attention.located_negated",
           "el signo de las puntuaciones: tus pesos son la softmax de −Q·Kᵀ/√d_k, así que cada "
           "consulta da más peso a las claves menos parecidas. ¿Un signo cambiado en las "
           "puntuaciones, o, si escribes la softmax por diferencias, e^(s_k − s_j), la suma por "
           "el eje que no toca? (paso 3, puntos 1 y 3)")
SCORES_TRANSPOSED = ("attention.located_scores_transposed",
                     "las puntuaciones: tus pesos son la softmax de K·Qᵀ, una fila por clave; "
                     "deben ser Q·Kᵀ, una fila por consulta y una columna por clave "
                     "(paso 3, punto 1)")
NO_EXPONENTIAL = ("attention.located_no_exponential",
                  "la exponencial de la softmax: tus pesos son las puntuaciones divididas por la "
                  "suma de su fila, sin exponenciar. La softmax de una fila es e^(s_j) / Σ_k "
                  "e^(s_k): exponencia las puntuaciones antes de dividir (paso 3, punto 3)")
SCORES_AS_WEIGHTS = ("attention.located_scores_as_weights",
                     "lo que devuelves como pesos: tu salida es la correcta, pero los pesos que "
                     "devuelves son las puntuaciones Q·Kᵀ/√d_k, de antes de la softmax. Devuelve "
                     "la matriz de la softmax, la misma que multiplicas por V (paso 3)")
DROPOUT = ("attention.located_dropout",
           "lo que haces con los pesos después de la softmax: cada uno de tus pesos es 0 o el "
           "correcto multiplicado por un mismo número, {factor}, que es lo que hace el dropout. "
           "Al evaluar no hay dropout (solo se usa al entrenar): quítalo (paso 3, punto 3)")
ROWS_SKIPPED = ("attention.located_rows_skipped",
                "las filas que calculas: {rows} de tus pesos y de tu salida {verb} 0, y las demás "
                "son correctas, así que tu bucle sobre las consultas no pasa por ahí. ¿Empieza "
                "en 1, o acaba antes de n? Cada una de las n consultas tiene su fila (paso 3)")
ROWS_MISSING = ("attention.located_rows_missing",
                "las filas que calculas: las primeras filas de tus pesos y de tu salida son "
                "correctas, y las demás valen 0. ¿Un return dentro del bucle sobre las "
                "consultas? Cada una de las n consultas tiene su fila (paso 3)")
SOFTMAX_TWICE = ("attention.located_softmax_twice",
                 "la softmax: tus pesos son la softmax de los pesos correctos, así que la "
                 "aplicas dos veces. Una sola softmax por fila convierte las puntuaciones en "
                 "pesos (paso 3, punto 3)")
ROUNDED = ("attention.located_rounded",
           "lo que haces con los pesos después de la softmax: tus pesos son los correctos "
           "redondeados a {digits} decimales. No redondees: el redondeo cambia la salida y "
           "deja filas que no suman 1 (paso 3)")
QUERIES_AS_KEYS = ("attention.located_queries_as_keys",
                   "las puntuaciones: tus pesos son la softmax de Q·Qᵀ, las consultas contra "
                   "sí mismas; las claves no intervienen. Las puntuaciones son Q·Kᵀ/√d_k "
                   "(paso 3, punto 1)")
SCORES_TRANSFORMED = ("attention.located_between_scores_and_weights",
                      "lo que hay entre las puntuaciones y los pesos: en cada fila, tus pesos "
                      "ordenan las claves igual que las puntuaciones correctas, pero no son su "
                      "softmax con ningún factor. Algo más que la máscara y una softmax por "
                      "fila cambia las puntuaciones o los pesos (una segunda función, un "
                      "recorte, una ReLU…): entre Q·Kᵀ/√d_k y pesos·V solo van la máscara y la "
                      "softmax (paso 3)")
ALWAYS_CAUSAL = ("attention.located_always_causal",
                 "la máscara: sin máscara (mask=None) tu atención aplica una máscara causal. Sin "
                 "máscara cada consulta atiende a todas las claves; la máscara que llega es la "
                 "única que se aplica, y solo cuando llega (paso 3, punto 2)")
SCORES = ("attention.located_scores",
          "las puntuaciones: cada fila de tus pesos suma 1, pero no es la softmax de Q·Kᵀ por "
          "ningún factor. Revisa el producto escalar de cada consulta con cada clave, y que "
          "lo que restes antes de exponenciar sea un solo número por fila (su máximo) "
          "(paso 3, punto 1)")


# Added to every key when the mean-centred keys leave a row of scores summing to 0: one
# number more in each row of scores, so their sums move away from 0.
KEY_SHIFT = 0.5


def _moderate(inputs):
    """A probe shaped like the case, with moderate scores, and whether the case's own scores
    were larger than that.

    Its values are drawn afresh (a fixed generator, never the case's): where a function
    departs is a property of its code, and one probe for every case keeps a small or special
    case (one query, a few keys) from showing another place by chance. Without a mask it has
    at least MIN_QUERIES queries. K is moved by its mean key, which only subtracts one number
    per row of scores, and Q scaled so that the largest score/√d_k is MODERATE_SCORE."""
    (n, d_k), (m, _), (_, d_v) = (np.shape(inputs[name]) for name in ("Q", "K", "V"))
    root = np.sqrt(d_k)
    large = np.abs(np.asarray(inputs["Q"]) @ np.asarray(inputs["K"]).T).max() / root \
        > MODERATE_SCORE
    mask = inputs.get("mask")
    rng = np.random.default_rng(PROBE_SEED)
    Q = rng.normal(size=(n if mask is not None else max(n, MIN_QUERIES), d_k))
    K, V = rng.normal(size=(m, d_k)), rng.normal(size=(m, d_v))
    K = K - K.mean(axis=0, keepdims=True)
    largest = np.abs(Q @ K.T).max() / root
    if largest > 0:
        Q = Q * (MODERATE_SCORE / largest)
    return dict(Q=Q, K=K, V=V, mask=mask), large


def _small(probe):
    """``probe`` with scores of at most SMALL_SCORE: a mask that puts a finite number, not −∞,
    on forbidden keys then leaves them a weight far above the tolerance."""
    Q, K = probe["Q"], probe["K"]
    largest = np.abs(Q @ K.T).max() / np.sqrt(K.shape[-1])
    return dict(probe, Q=Q * (SMALL_SCORE / largest)) if largest > SMALL_SCORE else probe


def _departs(parts, probe, leaks_count=False):
    """True or False for the student's ``parts`` on ``probe`` against the reference's; None
    when the student's raised or gave NaN or infinities (the judge's own words on non-finite
    values speak then). With ``leaks_count``, any weight on a key the mask forbids departs,
    however small, as the judge counts it."""
    if parts is None or len(parts) != 2 or not all(np.isfinite(p).all() for p in parts):
        return None
    weights, mask = np.asarray(parts[1]), probe.get("mask")
    if (leaks_count and mask is not None and weights.shape == np.shape(mask)
            and (np.abs(weights[~np.asarray(mask, dtype=bool)])
                 > tolerances.MASKED_WEIGHT_ATOL).any()):
        return True
    expected = reference.attention(**probe)
    return not all(agrees(got, want) for got, want in zip(parts, expected))


def _fails(call, inputs):
    """True when the student's answer on the case itself is not the reference's (NaN and
    infinities included)."""
    parts = call(inputs)
    if parts is None or len(parts) != 2:
        return False
    return not all(agrees(got, want) for got, want in zip(parts, reference.attention(**inputs)))


def _large_scores_step(call, inputs):
    """LARGE_SCORES, or FORBIDDEN_DOMINATE when the same large scores without the mask agree:
    only keys the mask forbids, scoring above the allowed ones, break the answer."""
    if inputs.get("mask") is not None and not _fails(call, dict(inputs, mask=None)):
        return FORBIDDEN_DOMINATE
    return LARGE_SCORES


def _row_softmax_of(weights, scores):
    """True when ``weights`` is softmax(c·scores) along rows for one factor c (fitted on the
    row-centred logs, then checked entry by entry)."""
    return _row_softmax_factor(weights, scores) is not None


def _row_softmax_factor(weights, scores):
    """The factor c with ``weights`` = softmax(c·scores) along rows, or None."""
    if weights.shape != scores.shape or (weights <= 0).any():
        return None
    logs = np.log(weights)
    logs = logs - logs.mean(axis=-1, keepdims=True)
    centred = scores - scores.mean(axis=-1, keepdims=True)
    norm = float((centred * centred).sum())
    if norm == 0.0:
        return None
    factor = float((logs * centred).sum()) / norm
    return factor if agrees(weights, reference.softmax(factor * scores, axis=-1)) else None


def _dropout_factor(weights, expected):
    """The one factor c > 1 with every weight 0 or c times the right one, some of each (the
    inverted dropout of training code), else None."""
    dropped = np.abs(weights) <= tolerances.ATOL * 1e-3
    kept = ~dropped & (expected > tolerances.ATOL)
    if not dropped.any() or kept.sum() < 2 or (dropped & (expected <= tolerances.ATOL)).all():
        return None
    factor = float(np.median(weights[kept] / expected[kept]))
    if factor <= 1 + tolerances.RTOL or not agrees(weights, np.where(dropped, 0.0,
                                                                      factor * expected)):
        return None
    return factor


def _positive(probe):
    """``probe`` with every score positive (Q and K taken entry by entry in absolute value):
    the row sums of the scores are then far from 0, so a softmax without its exponential
    gives finite weights that can be recognised."""
    return dict(probe, Q=np.abs(probe["Q"]), K=np.abs(probe["K"]))


def _without_exponential(call, probe):
    """True when, on a probe with positive scores, the student's weights are the scores
    divided by their row sums: a softmax without its exponential."""
    positive = _positive(probe)
    parts = call(positive)
    if parts is None or len(parts) != 2:
        return False
    scores = positive["Q"] @ positive["K"].T / np.sqrt(positive["K"].shape[-1])
    sums = scores.sum(axis=-1, keepdims=True)
    return bool((sums > tolerances.ATOL).all() and agrees(parts[1], scores / sums))


def _zero_rows(output, weights, expected_output, expected_weights):
    """The rows (of the probe's) that are 0 in both weights and output while every other row
    is right, when some are but not all, else []."""
    zero = np.all(np.abs(weights) <= tolerances.ATOL, axis=-1) & np.all(
        np.abs(output) <= tolerances.ATOL, axis=-1)
    if not zero.any() or zero.all():
        return []
    if not (agrees(weights[~zero], expected_weights[~zero])
            and agrees(output[~zero], expected_output[~zero])):
        return []
    return [int(i) for i in np.flatnonzero(zero)]


def _rows_form(rows, n):
    """ROWS_MISSING when the zero ``rows`` are the last ones (a return inside the loop), else
    ROWS_SKIPPED with them said; None without any."""
    if not rows:
        return None
    if rows == list(range(rows[0], n)):  # rows[0] > 0: not every row is zero
        return ROWS_MISSING
    said = (f"la fila {rows[0]}" if len(rows) == 1 else
            "las filas " + ", ".join(map(str, rows[:-1])) + f" y {rows[-1]}")
    verb = "vale" if len(rows) == 1 else "valen"
    return ROWS_SKIPPED[0], ROWS_SKIPPED[1].format(rows=said, verb=verb)


def _rounded_digits(weights, expected):
    """The number of decimals the right weights were rounded to, if they were."""
    for digits in range(1, 5):
        if np.array_equal(weights, np.round(expected, digits)) or agrees(
                weights, np.round(expected, digits), atol=0.5 * 10.0 ** -(digits + 2)):
            if not agrees(weights, expected):
                return digits
    return None


def _same_order(weights, scores):
    """True when, in every row, the weights rank the keys as the scores do (ties allowed)."""
    for w, s in zip(weights, scores):
        differences = np.subtract.outer(w, w) * np.subtract.outer(s, s)
        if (differences < -tolerances.ATOL ** 2).any():
            return False
    return True


def _measured_form(call, probe, output, weights, expected_output, expected_weights):
    """A whole wrong form of the softmax that a probe measures exactly, or None."""
    Q, K = probe["Q"], probe["K"]
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if weights.shape != scores.shape or output.shape != expected_output.shape:
        return None
    if agrees(output, expected_output) and agrees(weights, scores):
        return SCORES_AS_WEIGHTS
    rows = _rows_form(_zero_rows(output, weights, expected_output, expected_weights),
                      len(weights))
    if rows is not None:
        return rows
    if agrees(weights, reference.softmax(expected_weights, axis=-1)):
        return SOFTMAX_TWICE
    digits = _rounded_digits(weights, expected_weights)
    if digits is not None:
        return ROUNDED[0], ROUNDED[1].format(digits=digits)
    if Q.shape == K.shape and agrees(weights, reference.softmax(Q @ Q.T / np.sqrt(K.shape[-1]))):
        return QUERIES_AS_KEYS
    causal = np.tril(np.ones(weights.shape, dtype=bool))
    if probe.get("mask") is None and agrees(weights, reference.attention(
            Q, K, probe["V"], causal)[1]):
        return ALWAYS_CAUSAL
    if _without_exponential(call, probe):
        return NO_EXPONENTIAL
    factor = _dropout_factor(weights, expected_weights)
    if factor is not None:
        finding_id, where = DROPOUT
        return finding_id, where.format(factor=f"{factor:.2f}".replace(".", ","))
    return None


def _weights_step(probe, weights, expected):
    """Which step before the weights departs, measured on the moderate probe (``expected``:
    the reference's weights on it)."""
    Q, K = probe["Q"], probe["K"]
    if weights.shape != expected.shape:
        return None  # shapes are said by the judge itself
    rows, columns = weights.sum(axis=-1), weights.sum(axis=0)
    if not agrees(rows, np.ones_like(rows)) or (weights < -tolerances.ATOL).any():
        if agrees(columns, np.ones_like(columns)) and (weights >= -tolerances.ATOL).all():
            return SOFTMAX_AXIS
        # Each row a multiple of the right one, whatever its sign (divided by a sum of scores).
        if (np.abs(rows) > tolerances.ATOL).all() and agrees(weights / rows[:, None], expected):
            return SOFTMAX_NORMALISATION
        if (rows > 0).all() and agrees(rows, np.full_like(rows, rows[0])) \
                and _row_softmax_of(weights / rows[:, None], Q @ K.T):
            return SCALED_AFTER_SOFTMAX
        return SOFTMAX
    uniform = agrees(weights, np.full_like(weights, 1 / weights.shape[-1]))
    factor = None if uniform else _row_softmax_factor(weights, Q @ K.T)
    if factor is not None:  # uniform: factor 0, no scale
        # −1/√d_k is a sign, not a scale: the keys least like the query weigh most.
        right = 1 / np.sqrt(K.shape[-1])
        if agrees(np.array([factor]), np.array([-right])):
            return NEGATED
        return _exp_base(factor / right) or SCALE
    if not uniform and Q.shape[0] == K.shape[0] and _row_softmax_of(weights, K @ Q.T):
        return SCORES_TRANSPOSED
    if not uniform and _softmax_of_rounded(weights, Q @ K.T / np.sqrt(K.shape[-1])):
        return ROUNDED_SCORES
    if not uniform and _same_order(weights, Q @ K.T):
        return [SCORES_TRANSFORMED, SCORES]  # a case with few keys may keep the order by chance
    return SCORES


def _probe_of_sizes(sizes):
    """A moderate probe without a mask, of the ``sizes`` n, m, d_k and d_v."""
    shapes = dict(Q=np.zeros((sizes["n"], sizes["d_k"])), K=np.zeros((sizes["m"], sizes["d_k"])),
                  V=np.zeros((sizes["m"], sizes["d_v"])), mask=None)
    return _moderate(shapes)[0]


def _scale_measured(call, probe):
    """SCALE worded with the factor measured as a law of the sizes, or None when no simple
    law holds on every probe."""
    (n, d_k), (m, _), (_, d_v) = (np.shape(probe[name]) for name in ("Q", "K", "V"))
    sizes = dict(n=max(n, MIN_QUERIES), m=m, d_k=d_k, d_v=d_v)

    def measure(these):
        sized = _probe_of_sizes(these)
        parts = call(sized)
        if parts is None or len(parts) != 2:
            return None
        return _row_softmax_factor(np.asarray(parts[1], dtype=np.float64),
                                   sized["Q"] @ sized["K"].T)

    law = scale_law.measured_law(measure, sizes, {name: 2 * size + 1
                                                  for name, size in sizes.items()})
    if law is None:
        return None
    exponents, constant = law
    if not any(exponents.values()):
        if np.isclose(constant, 1.0, rtol=1e-3):
            return SCALE[0], SCALE_NONE
        size = scale_law.fixed_size(constant)
        if size is None:  # digits only of a notebook's size (scale_law.SHOWN_FIXED_SIZES)
            return SCALE[0], SCALE_FIXED.format(number="", origin="")
        return SCALE[0], SCALE_FIXED.format(number=f", {scale_law.decimal(constant)}",
                                            origin=SCALE_FIXED_ORIGIN.format(size=size))
    said = scale_law.formula(exponents, constant)
    if said is None:
        return None
    used = [name for name, p in exponents.items() if p]
    names = "; ".join(SIZE_NAMES[name] for name in (used if "d_k" in used else used + ["d_k"]))
    return SCALE[0], SCALE_LAW.format(formula=said, names=names)


def _softmax_of_rounded(weights, scaled):
    """True when ``weights`` are the softmax of the scaled scores rounded to integers, in any
    of the ways code rounds (//, np.floor, np.round, int, np.ceil), and the rounding changed
    them (scores that are already whole would say nothing)."""
    return any(not agrees(rounded, scaled) and agrees(weights, reference.softmax(rounded))
               for rounded in (np.floor(scaled), np.round(scaled), np.trunc(scaled),
                               np.ceil(scaled)))


def _exp_base(ratio):
    """EXP_BASE, worded, when the weights' factor over 1/√d_k is ln of a base a softmax is
    written in by mistake (np.exp2 gives ln 2): the scale is right, the exponential is not."""
    for base, how in EXP_BASES:
        if agrees(np.array([ratio]), np.array([np.log(base)])):
            finding_id, where = EXP_BASE
            said = f"{np.log(base):.3f}".replace(".", ",")
            return finding_id, where.format(ratio=said, base=base, how=how)
    return None


def _not_finite(parts):
    """True when the student's answer has NaN or infinities (False if it raised)."""
    return parts is not None and not all(np.isfinite(np.asarray(p, dtype=np.float64)).all()
                                         for p in parts)


def _nan_where_forbidden(parts, probe):
    """True when the weights are NaN exactly on the keys the mask forbids and right elsewhere:
    NaN written as the mark of a forbidden key."""
    if parts is None or len(parts) != 2:
        return False
    weights, mask = np.asarray(parts[1], dtype=np.float64), np.asarray(probe["mask"], dtype=bool)
    if weights.shape != mask.shape or not np.array_equal(np.isnan(weights), ~mask):
        return False
    return agrees(weights[mask], reference.attention(**probe)[1][mask])


def _mask_form(parts, probe):
    """MASK_TRANSPOSED or UNMASKED_WEIGHTS when the student's ``parts`` on the masked
    ``probe`` are exactly that form, else None."""
    if parts is None or len(parts) != 2:
        return None
    output, weights = (np.asarray(part, dtype=np.float64) for part in parts)
    mask = np.asarray(probe["mask"], dtype=bool)
    expected_output, _ = reference.attention(**probe)
    if mask.shape[0] == mask.shape[1] and not np.array_equal(mask, mask.T):
        transposed = reference.attention(**dict(probe, mask=mask.T))
        if all(agrees(got, want) for got, want in zip((output, weights), transposed)):
            return MASK_TRANSPOSED
    unmasked = reference.attention(**dict(probe, mask=None))[1]
    if agrees(output, expected_output) and agrees(weights, unmasked):
        return UNMASKED_WEIGHTS
    return None


# A case of one key is located on this many keys: with one key every weight is 1 whatever the
# scores, so no part of the formula shows, and a place is a property of the code.
KEYS_OF_ONE_KEY_PROBE = 5
ONE_KEY = ("attention.located_one_key",
           "el caso de una sola clave: con varias claves tu attention es la correcta, y con "
           "m = 1 no. ¿Aplanas (squeeze) el eje de las claves o tratas aparte una sola columna? "
           "Con una clave los pesos son una columna de unos, de forma (n, 1), y cada fila de la "
           "salida es la única fila de V (paso 3)")


def _with_more_keys(inputs):
    """``inputs`` with KEYS_OF_ONE_KEY_PROBE keys and values, the case's first among them, and
    a mask (if any) that allows the new ones."""
    rng = np.random.default_rng(PROBE_SEED)
    K, V = np.asarray(inputs["K"]), np.asarray(inputs["V"])
    more = KEYS_OF_ONE_KEY_PROBE - K.shape[0]
    wider = dict(inputs, K=np.vstack([K, rng.normal(size=(more, K.shape[1]))]),
                 V=np.vstack([V, rng.normal(size=(more, V.shape[1]))]))
    if inputs.get("mask") is not None:
        mask = np.asarray(inputs["mask"], dtype=bool)
        wider["mask"] = np.hstack([mask, np.ones((mask.shape[0], more), dtype=bool)])
    return wider


def _right(call, inputs):
    """True when the student's answer on ``inputs`` is the reference's."""
    parts = call(inputs)
    return (parts is not None and len(parts) == 2
            and all(agrees(got, want) for got, want in zip(parts, reference.attention(**inputs))))


def locate(inputs, call):
    """``(finding id, Spanish message)`` for where ``attention`` departs on ``inputs``, or
    None when no probe locates it (or the student's function raises on a probe). A case of one
    key is located on more keys, or said to be the place when the function is right there."""
    if np.shape(inputs["K"])[0] == 1 and not _right(call, inputs):
        inputs = _with_more_keys(inputs)
        if _right(call, inputs):
            return ONE_KEY[0], f"el fallo está en {ONE_KEY[1]}"
    moderate, scaled = _moderate(inputs)
    probe = dict(moderate, mask=None)
    parts = call(probe)
    if parts is None or len(parts) != 2:
        return None
    output, weights = (np.asarray(part, dtype=np.float64) for part in parts)
    if not (np.isfinite(output).all() and np.isfinite(weights).all()):
        # Dividing by row sums that the mean-centred keys bring to 0 gives infinities.
        if _without_exponential(call, probe):
            return NO_EXPONENTIAL[0], f"el fallo está en {NO_EXPONENTIAL[1]}"
        # Anything else divided by those sums: the same probe with every key moved by one
        # vector, which adds one number to each row of scores (the softmax does not change).
        probe = dict(probe, K=probe["K"] + KEY_SHIFT)
        parts = call(probe)
        if parts is None or len(parts) != 2:
            return None
        output, weights = (np.asarray(part, dtype=np.float64) for part in parts)
        if not (np.isfinite(output).all() and np.isfinite(weights).all()):
            return None
    expected_output, expected_weights = reference.attention(**probe)
    if not agrees(weights, expected_weights):
        found = (_measured_form(call, probe, output, weights, expected_output,
                                expected_weights)
                 or _weights_step(probe, weights, expected_weights))
    elif not agrees(output, expected_output):
        found = WEIGHTS_TIMES_V
    else:  # right without the mask at moderate scores: the mask, or the scores' size
        # One call on the masked probe, read three ways: NaN, a departure, and its form.
        small = _small(moderate) if moderate["mask"] is not None else None
        small_parts = call(small) if small is not None else None
        if small is not None and _not_finite(small_parts):
            found = MASK_NAN_MARKED if _nan_where_forbidden(small_parts, small) else MASK_NAN
            return found[0], f"el fallo está en {found[1]}"
        masked = (_departs(small_parts, small, leaks_count=True)
                  if small is not None else False)
        if masked is None:
            return None
        found = (_mask_form(small_parts, small) or MASK) if masked else (
            _large_scores_step(call, inputs) if scaled and _fails(call, inputs) else None)
    if found is None:
        return None
    if found is SCALE:
        found = _scale_measured(call, probe) or SCALE
    if isinstance(found, list):  # from the most precise place to the most general
        return [(finding_id, f"el fallo está en {where}") for finding_id, where in found]
    finding_id, where = found
    return finding_id, f"el fallo está en {where}"
