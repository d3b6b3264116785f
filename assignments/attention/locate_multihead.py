"""Where a ``multihead`` that no catalogued mistake explains first departs, step by step of
step 6: the mask passed to each head, each head's attention on its own projections, the
concatenation of the heads, and the product with W_O.

While multihead is graded, the attention it calls is the reference's, so a departure found
here is in the student's multihead itself. The probes make each step visible on its own:
X is padded with zero columns (and every W_Q, W_K, W_V with zero rows) until d_model ≥ h·d_v,
which changes no head's projections, so that W_O can be the identity and the output *is* the
concatenation; one head alone, with the identity, shows that head by itself. When every head is right alone
and wrong together, redrawing the other heads' matrices tells a shared softmax or scores
carried across heads (a head moves with the others' W_Q and W_K only) from a wrong split.
"""

import itertools

import numpy as np

from reference import attention as reference

from . import scale_law, tolerances
from .probe_compare import agrees

MASK = ("multihead.located_mask",
        "la máscara: sin máscara tu multihead coincide con la correcta, y con ella no. Cada "
        "cabeza aplica a sus puntuaciones, de forma (n, n), la misma máscara que recibes, "
        "tal cual (paso 6)")
EACH_HEAD = ("multihead.located_each_head",
             "cada cabeza: con una sola cabeza y W_O igual a la identidad, tu salida no es "
             "attention(X·W_Q, X·W_K, X·W_V) con las matrices de esa cabeza. Revisa las tres "
             "proyecciones y la atención de la cabeza (paso 6)")
HEAD_SOFTMAX_AXIS = ("multihead.located_head_softmax_axis",
                     "el eje de la softmax de cada cabeza: con una sola cabeza y W_O igual a la "
                     "identidad, tu salida es la de unos pesos cuyas columnas suman 1, no sus "
                     "filas. Cada consulta (fila) reparte su atención entre las claves: con "
                     "las puntuaciones de todas las cabezas juntas, de forma (h, n, n), la "
                     "softmax va sobre el último eje, axis=-1, no axis=1 (paso 6)")
HEADS_AXIS = ("multihead.located_heads_axis",
              "el eje de la softmax: con una sola cabeza y W_O igual a la identidad, todos tus "
              "pesos valen 1 (cada token recibe la suma de los valores de todas las claves), que "
              "es lo que da una softmax sobre un eje de tamaño 1, el de las cabezas, y con "
              "varias cabezas tus pesos suman 1 entre las cabezas, no entre las claves. Con las "
              "puntuaciones de todas las cabezas juntas, de forma (h, n, n), la softmax va sobre "
              "el último eje, el de las claves (axis=-1), no sobre el de las cabezas (axis=0) "
              "(paso 6)")
CONCATENATION = ("multihead.located_concatenation",
                 "la concatenación de cabezas: cada cabeza sola es correcta, y con todas y W_O "
                 "igual a la identidad tu salida tiene las columnas de [cabeza_1 | … | "
                 "cabeza_h], pero en otro orden. Pon las salidas una al lado de la otra, cada "
                 "una en su bloque de d_v columnas, en el orden de la lista (paso 6)")
SPLITTING = ("multihead.located_splitting",
             "cómo separas o juntas las cabezas: cada cabeza sola es correcta, pero con varias "
             "tu salida no es la concatenación [cabeza_1 | … | cabeza_h], ni siquiera con sus "
             "columnas en otro orden: algo de lo que haces solo cuando hay varias cabezas cambia "
             "sus valores. Si apilas las matrices de todas las cabezas, sepáralas después con "
             "reshape a (n, h, d_k) y luego transpose, no con un reshape directo (paso 6)")
BLOCKS_OVERLAP = ("multihead.located_blocks_overlap",
                  "la concatenación de cabezas: cada cabeza sola es correcta, y con todas y W_O "
                  "igual a la identidad cada columna de tu salida es una columna de alguna "
                  "cabeza o vale 0, pero no todas están en su sitio. ¿Escribes cada cabeza en su "
                  "propio bloque de d_v columnas, de i·d_v a (i + 1)·d_v, sin pisar el de otra? "
                  "(paso 6)")
AFTER_HEADS = ("multihead.located_after_heads",
               "lo que haces con las cabezas antes de W_O: con una sola cabeza y W_O igual a la "
               "identidad, tu salida es una función de la salida correcta, valor a valor (una "
               "tanh, una ReLU, un redondeo…). La concatenación de las cabezas va tal cual al "
               "producto por W_O (paso 6)")
LAST_HEAD_MISSING = ("multihead.located_last_head_missing",
                     "las cabezas que concatenas: con W_O igual a la identidad tu salida es la "
                     "concatenación correcta sin la última cabeza (sus columnas valen 0). "
                     "¿Recorres range(len(heads) − 1)? Van todas, las h (paso 6)")
HEADS_MISSING = ("multihead.located_heads_missing",
                 "las cabezas que concatenas: con W_O igual a la identidad tu salida tiene "
                 "bien las columnas de unas cabezas y a 0 las de otras: cada cabeza de la "
                 "lista tiene su bloque en la concatenación (paso 6)")
SHARED_WEIGHTS = ("multihead.located_shared_weights",
                  "los pesos de cada cabeza: cada cabeza sola es correcta, pero con varias los "
                  "pesos de una cabeza cambian cuando cambias W_Q o W_K de otra, y no cuando "
                  "cambias su W_V. Cada cabeza calcula sus puntuaciones y su softmax solo con "
                  "sus propias W_Q y W_K (¿una softmax común a todas las cabezas, unas "
                  "puntuaciones que pasan de una cabeza a la siguiente sin reiniciarse, o un "
                  "reshape que las mezcla?) (paso 6)")
COMBINING = ("multihead.located_combining",
             "cómo combinas las cabezas: cada cabeza, con las demás anuladas (W_V = 0), da sus "
             "valores correctos, pero en otras columnas que las suyas. La salida es "
             "Concat(head_1, …, head_h)·W_O: las cabezas una al lado de la otra, en el orden de "
             "la lista, y W_O entera, una sola vez, sobre la concatenación (paso 6)")
OTHER_HEADS = ("multihead.located_other_heads",
               "las matrices de cada cabeza: con todas las cabezas iguales tu multihead coincide "
               "con la correcta, y con cabezas distintas no, así que alguna cabeza usa matrices "
               "de otra. La cabeza i usa las tres de heads[i], W_i^Q, W_i^K y W_i^V (paso 6)")
RESIDUAL_INSIDE = ("multihead.located_residual_inside",
                   "lo que devuelves: tu salida es la correcta más X, la entrada. La conexión "
                   "residual, x + MultiHead(x), es del bloque Transformer (paso 8): multihead "
                   "devuelve solo Concat(head_1, …, head_h)·W_O (paso 6)")
MASK_TRANSPOSED = ("multihead.located_mask_transposed",
                   "la máscara: tu multihead coincide con la correcta si le pasas la máscara "
                   "traspuesta, así que la lees al revés: mask[i, j] dice si el token i (la "
                   "fila) puede mirar el token j (la columna), no al contrario. Pasa la máscara "
                   "tal cual a la atención de cada cabeza (paso 6)")
ALWAYS_CAUSAL = ("multihead.located_always_causal",
                 "la máscara: tu multihead aplica la máscara causal aunque no se la pidan. Sin "
                 "máscara (mask=None) cada token atiende a todos; la máscara que llega es la "
                 "única que se aplica, tal cual, a cada cabeza (paso 6)")
TRANSPOSED_OUTPUT = ("multihead.located_output_transposed",
                     "lo que devuelves: tu salida es la correcta traspuesta, una columna por "
                     "token. multihead devuelve una fila por token, de forma (n, d_model), como "
                     "X: si calculas con vectores columna, traspón al final (paso 6)")
NORMALISED_OUTPUT = ("multihead.located_output_normalised",
                     "lo que devuelves: tu salida es la correcta con cada fila normalizada "
                     "(media 0 y varianza 1). La normalización de capa es del bloque "
                     "Transformer (paso 8): multihead devuelve solo "
                     "Concat(head_1, …, head_h)·W_O (paso 6)")
ROLES_SWAPPED = "multihead.located_roles_swapped"
HEAD_SCORES_SCALED = ("multihead.located_head_scores_scaled",
                      "la escala de cada cabeza: con una sola cabeza y W_O igual a la identidad, "
                      "tu salida es la de unas puntuaciones multiplicadas por un número distinto "
                      "de 1/√d_k. attention ya divide por √d_k: ¿escalas Q, K o las "
                      "puntuaciones antes de llamarla, o con otro tamaño que el d_k de la "
                      "cabeza? (paso 6)")
# HEAD_SCORES_SCALED with the factor measured as a law of the sizes (scale_law.py), and the
# same when only several heads together are scaled (a d_k read from the heads' fused W_Q).
SCALE_LAW = ("la escala de cada cabeza: con W_O igual a la identidad, cada cabeza de tu "
             "salida es la atención de unas puntuaciones multiplicadas por {formula}, no por "
             "1/√d_k, donde {names}{question} (paso 6)")
HEADS_SCALED = ("multihead.located_heads_scaled",
                "la escala de las cabezas cuando hay varias: una cabeza sola es correcta, y con "
                "W_O igual a la identidad y todas juntas, cada una es la atención de unas "
                "puntuaciones multiplicadas por {formula}, no por 1/√d_k, donde {names}{question} "
                "(paso 6)")
FUSED_QUESTION = ". ¿Tomas d_k de la W_Q de todas las cabezas juntas, que tiene h·d_k columnas?"
SCALED_AGAIN_QUESTION = (". attention ya divide por √d_k: ¿escalas Q, K o las puntuaciones "
                         "antes de llamarla?")
# The sizes a head's factor may depend on, as step 6 names them, and what each counts.
SIZE_NAMES = {"h": "h es el número de cabezas", "d_k": "d_k es el número de columnas de la W_Q "
              "de una cabeza", "d_v": "d_v es el de su W_V", "n": "n es el número de tokens",
              "d_model": "d_model es el número de columnas de X"}
HEAD_COLUMNS_MOVED = ("multihead.located_head_columns_moved",
                      "dónde colocas la salida de cada cabeza: con una sola cabeza y W_O igual "
                      "a la identidad, tus columnas son columnas de la salida correcta de esa "
                      "cabeza, pero desplazadas o en otro orden (o alguna a 0). La cabeza i "
                      "ocupa su bloque de d_v columnas de la concatenación, en orden y sin "
                      "columnas de relleno (paso 6)")
SCALED = ("multihead.located_scaled",
          "un factor de más: con W_O igual a la identidad tu salida es la concatenación "
          "correcta multiplicada por un número. La salida es concatenación·W_O, sin dividir "
          "ni multiplicar por nada más (paso 6)")
ELEMENTWISE_W_O = ("multihead.located_elementwise_w_o",
                   "el producto por W_O: tu salida es la concatenación de las cabezas "
                   "multiplicada por W_O elemento a elemento (*), no con el producto de "
                   "matrices (@). Concat(head_1, …, head_h) @ W_O da (n, d_model) (paso 6)")
REVERSED_W_O = ("multihead.located_reversed_w_o",
                "el producto por W_O: tu salida es W_O multiplicada por la concatenación, en "
                "ese orden, y es al revés: Concat(head_1, …, head_h) @ W_O, con la "
                "concatenación a la izquierda, da (n, d_model) (paso 6)")
CONCATENATION_ONLY = ("multihead.located_concatenation_only",
                      "la proyección final: tu salida es la concatenación de las cabezas, sin "
                      "multiplicarla por W_O. MultiHead(X) = Concat(head_1, …, head_h)·W_O "
                      "con cualquier número de cabezas, también con una sola (paso 6)")
INTEGER_VALUES = ("multihead.located_integer_values",
                  "el tipo de lo que guardas: con W_O igual a la identidad, todos los valores "
                  "de tu salida son números enteros, porque guardas las "
                  "cabezas en un array de enteros (np.zeros(…, dtype=int), o uno creado a partir "
                  "de enteros) y cada valor se trunca. Crea el array con np.zeros((n, h·d_v)), "
                  "de números reales (paso 6)")
ROWS_LEFT_AT_ZERO = ("multihead.located_rows_left_at_zero",
                     "las filas que rellenas: con una sola cabeza y W_O igual a la identidad, "
                     "las primeras filas de tu salida son las correctas y las siguientes valen 0, "
                     "así que algo se para antes de llegar a todos los tokens: ¿un bucle sobre "
                     "los tokens que recorre otra cantidad, como len(heads), en lugar de las n "
                     "filas de X? (paso 6)")
HEAD_COUNT = "multihead.located_head_count"
OUTPUT_PROJECTION = ("multihead.located_output_projection",
                     "W_O: con W_O igual a la identidad tu salida es la concatenación "
                     "correcta, y con la W_O del caso no. La salida es concatenación·W_O, "
                     "en ese orden (paso 6)")


def _padded(inputs, heads):
    """A probe on which W_O is the identity: X and the projections padded with zeros until
    d_model ≥ h·d_v, so that every column of the concatenation reaches the output."""
    X = np.asarray(inputs["X"], dtype=np.float64)
    width = sum(np.asarray(W_V).shape[1] for _, _, W_V in heads)
    d_model = max(X.shape[1], width)
    pad = d_model - X.shape[1]
    padded_heads = [tuple(np.vstack([np.asarray(W, dtype=np.float64),
                                     np.zeros((pad, np.asarray(W).shape[1]))])
                          for W in head) for head in heads]
    return dict(X=np.hstack([X, np.zeros((X.shape[0], pad))]), heads=padded_heads,
                W_O=np.eye(width, d_model), mask=inputs.get("mask"))


def _answer(call, probe):
    """The student's answer on ``probe`` and the reference's, or None when the student's
    raised."""
    parts = call(probe)
    if parts is None or len(parts) != 1:
        return None
    return np.asarray(parts[0], dtype=np.float64), reference.multihead(**probe)


def _columns_moved(got, expected):
    """True when every column of ``got`` is 0 or a column of ``expected``, and some column
    that is not 0 is not the one in its own place (columns zeroed in place are not moved)."""
    if got.shape != expected.shape:
        return False
    moved = False
    for column, own in zip(got.T, expected.T):
        if bool(np.all(np.abs(column) <= tolerances.ATOL)):
            continue
        if not any(agrees(column, want) for want in expected.T):
            return False
        moved |= not agrees(column, own)
    return moved


def _scaled(got, expected):
    """True when ``got`` is ``expected`` times one number other than 1."""
    norm = float((expected * expected).sum())
    if got.shape != expected.shape or norm == 0.0 or not np.isfinite(got).all():
        return False
    factor = float((got * expected).sum()) / norm
    # A factor of 0 is an answer of zeros, which says nothing about a scale.
    return (not agrees(factor, 1.0) and not agrees(factor, 0.0)
            and agrees(got, factor * expected))


def _causal(n, mask=None):
    causal = np.tril(np.ones((n, n), dtype=bool))
    return causal if mask is None else causal & np.asarray(mask, dtype=bool)


def _column_permutation(got, expected):
    """True when the columns of ``got`` are those of ``expected`` in another order."""
    if got.shape != expected.shape:
        return False
    unused = list(range(expected.shape[1]))
    for column in got.T:
        match = next((j for j in unused if agrees(column, expected[:, j])), None)
        if match is None:
            return False
        unused.remove(match)
    return True


def whole_answer(inputs, call):
    """``(finding id, Spanish message)`` for a whole wrong form that the unmasked case measures
    exactly, or None: the input added to the output (a residual), a causal mask nobody asked
    for, the output transposed, each of its rows normalised (the block's LayerNorm), or the
    heads' concatenation returned without W_O."""
    inputs = _fresh(inputs)
    answer = _answer(call, inputs)
    if answer is None or agrees(*answer):
        return None
    for value, found in whole_forms(inputs):  # agrees compares shapes too
        if value is not None and agrees(answer[0], value):
            return found[0], f"el fallo está en {found[1]}"
    return None


def whole_forms(inputs):
    """``[(value, place)]``: the whole wrong answers whole_answer recognises on the probe
    ``inputs``, in its order (a value None where the form does not fit)."""
    X = np.asarray(inputs["X"], dtype=np.float64)
    expected = reference.multihead(**inputs)
    concat = _concatenation(inputs)
    n = X.shape[0]
    return ([(expected + X, RESIDUAL_INSIDE),
             (reference.multihead(**dict(inputs, mask=_causal(n))) if n > 1 else None,
              ALWAYS_CAUSAL),
             (expected.T, TRANSPOSED_OUTPUT)]
            # Any epsilon the judge accepts for a LayerNorm: a row of small variance shows it.
            + [(reference.layer_norm(expected, eps), NORMALISED_OUTPUT)
               for eps in tolerances.LAYER_NORM_EPS]
            + [(concat, CONCATENATION_ONLY), (_elementwise_w_o(inputs, concat), ELEMENTWISE_W_O),
               (_reversed_w_o(inputs, concat), REVERSED_W_O)])


def _concatenation(inputs):
    X = np.asarray(inputs["X"], dtype=np.float64)
    return np.concatenate([reference.attention(X @ W_Q, X @ W_K, X @ W_V, inputs.get("mask"))[0]
                           for W_Q, W_K, W_V in inputs["heads"]], axis=1)


def _elementwise_w_o(inputs, concat):
    """The right concatenation ``concat`` times W_O entry by entry (where the two shapes
    broadcast, else None), not as a product of matrices."""
    try:
        return concat * np.asarray(inputs["W_O"], dtype=np.float64)
    except ValueError:
        return None


def _reversed_w_o(inputs, concat):
    """W_O @ the right concatenation, where the shapes allow it (else None)."""
    W_O = np.asarray(inputs["W_O"], dtype=np.float64)
    return W_O @ concat if W_O.shape[1] == concat.shape[0] else None


def _integer_valued(got, expected):
    """True when every value of ``got`` is a whole number and the reference's are not."""
    return (got.size > 0 and np.isfinite(got).all() and np.array_equal(got, np.round(got))
            and bool(np.any(got != 0)) and not np.array_equal(expected, np.round(expected)))


# Values in (−1, 1) truncate to 0, which shows no integer: an answer of zeros is asked again
# with X this many times larger.
LARGER = 10.0


def _integer_valued_larger(call, probe, answer):
    """When ``answer`` is all 0 and the reference's is not: the same probe with X larger,
    integer-valued (_integer_valued)."""
    got, expected = answer
    if np.any(np.abs(got) > tolerances.ATOL) or not np.any(np.abs(expected) > tolerances.ATOL):
        return False
    larger = _answer(call, dict(probe, X=LARGER * np.asarray(probe["X"], dtype=np.float64)))
    return larger is not None and _integer_valued(*larger)


def _softmax_over_queries(probe, got):
    """True when ``got`` is the one-head ``probe``'s output with its weights normalised over
    the queries (each column summing to 1) instead of over the keys."""
    return agrees(got, over_the_queries(probe))


def over_the_queries(probe):
    """The one-head ``probe``'s output with its weights normalised over the queries."""
    ((W_Q, W_K, W_V),) = probe["heads"]
    X = np.asarray(probe["X"], dtype=np.float64)
    scores = (X @ W_Q) @ (X @ W_K).T / np.sqrt(np.shape(W_K)[1])
    if probe.get("mask") is not None:
        scores = np.where(np.asarray(probe["mask"], dtype=bool), scores, -np.inf)
    weights = reference.softmax(scores, axis=0)
    return weights @ (X @ W_V) @ probe["W_O"]


def weights_of_one(probe):
    """The one-head ``probe``'s answer with every weight 1: a softmax over an axis of size 1
    (the heads', when there is one head)."""
    ((_, _, W_V),) = probe["heads"]
    X = np.asarray(probe["X"], dtype=np.float64)
    return np.ones((len(X), len(X))) @ (X @ W_V) @ probe["W_O"]


def over_the_heads(probe):
    """The ``probe``'s answer with each head's weights normalised over the heads: at each
    query and key, the weights of all heads sum to 1 (a softmax on axis 0 of the (h, n, n)
    scores)."""
    X = np.asarray(probe["X"], dtype=np.float64)
    scores = np.stack([(X @ W_Q) @ (X @ W_K).T / np.sqrt(np.shape(W_K)[1])
                       for W_Q, W_K, _ in probe["heads"]])
    if probe.get("mask") is not None:
        scores = np.where(np.asarray(probe["mask"], dtype=bool), scores, -np.inf)
    weights = reference.softmax(scores, axis=0)
    return np.concatenate([w @ (X @ W_V) for w, (_, _, W_V) in zip(weights, probe["heads"])],
                          axis=1) @ probe["W_O"]


def several_heads(heads):
    """``heads``, or its one head twice: a sum over the heads shows only with several."""
    return list(heads) if len(heads) > 1 else list(heads) * 2


def _softmax_over_heads(call, unmasked, heads, probe, got):
    """True when, with one head alone (``probe``), every weight is 1, and with several heads
    (W_O = I) the weights sum to 1 over the heads: the softmax on the heads' axis."""
    if not agrees(got, weights_of_one(probe)):
        return False
    together = _padded(unmasked, several_heads(heads))
    answer = _answer(call, together)
    return answer is not None and agrees(answer[0], over_the_heads(together))


# Each of a head's three roles, and the matrix that plays it in (W_Q, W_K, W_V) order.
ROLES = ("las consultas", "las claves", "los valores")
MATRICES = ("W_Q", "W_K", "W_V")


def _roles_swapped(probe, got):
    """The Spanish words for the head's matrices put in the wrong roles (W_K for the queries,
    W_Q for the keys…) when ``got`` is the one-head ``probe``'s output with them; else None.
    Only shape-compatible assignments are tried: W_V fits a query or key role when d_v = d_k."""
    for answer, roles in roles_forms(probe):
        if agrees(got, answer):
            return roles
    return None


def roles_forms(probe):
    """``[(answer, roles)]``: the one-head ``probe``'s answer with its matrices in each other
    shape-compatible assignment of roles, and the Spanish words for it, in order."""
    ((W_Q, W_K, W_V),) = probe["heads"]
    matrices, forms = (W_Q, W_K, W_V), []
    for chosen in itertools.product(range(3), repeat=3):
        if chosen == (0, 1, 2) or np.shape(matrices[chosen[0]]) != np.shape(
                matrices[chosen[1]]) or np.shape(matrices[chosen[2]])[1] != np.shape(W_V)[1]:
            continue
        head = tuple(matrices[index] for index in chosen)
        forms.append((reference.multihead(**dict(probe, heads=[head])),
                      " y ".join(f"{MATRICES[index]} para {ROLES[role]}"
                                 for role, index in enumerate(chosen) if index != role)))
    return forms


def roles_place(roles):
    """``(finding id, place)`` of a head's matrices in the ``roles`` said."""
    return (ROLES_SWAPPED, f"los papeles de las matrices de cada cabeza: usas {roles}. Cada "
            "cabeza es la tupla (W_Q, W_K, W_V), en ese orden, y calcula "
            "attention(X·W_Q, X·W_K, X·W_V) (paso 6)")


def _best_log_factor(error):
    """The log c that minimises ``error(log c)``: searched on a log grid, then refined by
    golden section, since an attention output moves smoothly with the factor of its scores."""
    grid = np.linspace(-5, 5, 41)
    best = int(np.argmin([error(x) for x in grid]))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    ratio = (np.sqrt(5) - 1) / 2
    for _ in range(40):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        low, high = (low, b) if error(a) < error(b) else (a, high)
    return (low + high) / 2


def _scores_factor(probe, got):
    """c ≠ 1 when ``got`` is the one-head ``probe``'s output with every score multiplied by
    one number c (Q scaled before attention, which scales again…); else None."""
    ((W_Q, W_K, W_V),) = probe["heads"]

    def error(log_c):
        head = (np.exp(log_c) * np.asarray(W_Q, dtype=np.float64), W_K, W_V)
        return np.abs(reference.multihead(**dict(probe, heads=[head])) - got).max()

    c = float(np.exp(_best_log_factor(error)))
    head = (c * np.asarray(W_Q, dtype=np.float64), W_K, W_V)
    if abs(c - 1) <= tolerances.RTOL or not agrees(
            got, reference.multihead(**dict(probe, heads=[head]))):
        return None
    return c


def _head_factor(X, head, block, mask):
    """c when ``block`` is ``head``'s attention on X with its scores multiplied by c on top of
    1/√d_k (W_Q scaled by c), else None."""
    W_Q, W_K, W_V = (np.asarray(W, dtype=np.float64) for W in head)
    K, V = X @ W_K, X @ W_V

    def output(log_c):
        return reference.attention(np.exp(log_c) * (X @ W_Q), K, V, mask)[0]

    log_c = _best_log_factor(lambda x: np.abs(output(x) - block).max())
    return float(np.exp(log_c)) if agrees(block, output(log_c)) else None


def _common_head_factor(probe, got):
    """The one factor c every head's block of ``got`` (the padded ``probe``'s answer, W_O =
    I) shows on its scores (_head_factor), or None when a head is no such attention or two
    heads differ."""
    X, start, factors = np.asarray(probe["X"], dtype=np.float64), 0, []
    for head in probe["heads"]:
        width = np.shape(head[2])[1]
        factor = _head_factor(X, head, got[:, start:start + width], probe.get("mask"))
        if factor is None:
            return None
        factors.append(factor)
        start += width
    if not all(agrees(np.array([f]), np.array([factors[0]])) for f in factors):
        return None
    return factors[0]


# The sizes of the probes a head's factor is measured on: d_model holds every grown h·d_v, so
# that W_O is the identity on each of them.
LAW_SIZES = dict(h=2, d_k=3, d_v=2, n=6, d_model=24)
LAW_GROWN = dict(h=5, d_k=7, d_v=4, n=13, d_model=48)


def _law_probe(sizes, rng):
    heads = [(rng.normal(size=(sizes["d_model"], sizes["d_k"])),
              rng.normal(size=(sizes["d_model"], sizes["d_k"])),
              rng.normal(size=(sizes["d_model"], sizes["d_v"]))) for _ in range(sizes["h"])]
    return dict(X=rng.normal(size=(sizes["n"], sizes["d_model"])) / np.sqrt(sizes["d_model"]),
                heads=heads, W_O=np.eye(sizes["h"] * sizes["d_v"], sizes["d_model"]), mask=None)


def scale_said(call, template, heads_only=False):
    """``template`` (SCALE_LAW or HEADS_SCALED's words) with the factor of every head's scores
    measured as a law of h, d_k, d_v, n and d_model, or None when no simple law holds on every
    probe. ``heads_only``: the law must hold with several heads only (h = 1 is right)."""
    rng = np.random.default_rng(PROBE_SEED + 4)

    def measure(sizes):
        probe = _law_probe(sizes, rng)
        parts = call(probe)
        if parts is None or len(parts) != 1:
            return None
        factor = _common_head_factor(probe, np.asarray(parts[0], dtype=np.float64))
        return None if factor is None else factor / np.sqrt(sizes["d_k"])

    law = scale_law.measured_law(measure, LAW_SIZES, LAW_GROWN)
    if law is None:
        return None
    exponents, constant = law
    said = scale_law.formula(exponents, constant)
    used = [name for name, p in exponents.items() if p]
    if said is None or not used or (heads_only and "h" not in used):
        return None
    listed = [SIZE_NAMES[name] for name in (used if "d_k" in used else used + ["d_k"])]
    names = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + f" y {listed[-1]}"
    # A question only where the law is the trace of that mistake: 1/√(h·d_k) of the heads'
    # W_Q side by side, 1/d_k of a √d_k divided twice; anything else is said as measured.
    question = {("h", "d_k"): FUSED_QUESTION if said == "1/√(h·d_k)" else "",
                ("d_k",): SCALED_AGAIN_QUESTION if said == "1/d_k" else ""}.get(tuple(used), "")
    return template.format(formula=said, names=names, question=question)


def _rows_left_at_zero(got, expected):
    """True when the first rows of ``got`` are the reference's and every later one is 0."""
    if got.shape != expected.shape or got.shape[0] < 2:
        return False
    zero = np.all(np.abs(got) <= tolerances.ATOL, axis=1)
    kept = int(np.argmax(zero)) if zero.any() else got.shape[0]
    return (0 < kept < got.shape[0] and bool(zero[kept:].all())
            and agrees(got[:kept], expected[:kept]) and not agrees(got, expected))


# At least this many distinct values before a value-by-value function is said to be seen.
MIN_VALUES = 12


def _value_by_value(got, expected):
    """True when ``got`` is one monotone function of ``expected``, entry by entry."""
    if got.shape != expected.shape or np.unique(np.round(expected, 9)).size < MIN_VALUES:
        return False
    order = np.argsort(expected, axis=None)
    steps = np.diff(got.ravel()[order])
    return bool((steps >= -tolerances.ATOL).all() or (steps <= tolerances.ATOL).all())


def _one_live_head(inputs, heads, live):
    """The padded probe with every head's W_V but ``live``'s set to zero."""
    quiet = [(W_Q, W_K, W_V if i == live else np.zeros_like(np.asarray(W_V, dtype=np.float64)))
             for i, (W_Q, W_K, W_V) in enumerate(heads)]
    return _padded(inputs, quiet)


def _missing_heads(got, expected, heads):
    """LAST_HEAD_MISSING or HEADS_MISSING when each head's block of columns is either right
    or all 0, some of each; else None."""
    if got.shape != expected.shape:
        return None
    right, zero, start = [], [], 0
    for _, _, W_V in heads:
        width = np.shape(W_V)[1]
        block, want = got[:, start:start + width], expected[:, start:start + width]
        right.append(agrees(block, want))
        zero.append(bool(np.all(np.abs(block) <= tolerances.ATOL)))
        start += width
    if not all(r or z for r, z in zip(right, zero)) or all(right) or not any(right):
        return None
    return LAST_HEAD_MISSING if right[:-1] == [True] * (len(right) - 1) else HEADS_MISSING


def _heads_step(inputs, call, padded_all):
    """Why every head right alone is wrong together: the concatenation's order (the right
    columns, reordered), another head's matrices (identical heads agree) or the splitting."""
    heads = list(inputs["heads"])
    missing = _missing_heads(*padded_all, heads)
    if missing is not None:
        return missing
    if _column_permutation(*padded_all):
        return CONCATENATION
    # Every head right alone and, together, each the attention of scores scaled by one same
    # factor: a scale that grows with the heads (√(h·d_k) from a fused W_Q), not a split.
    if _common_head_factor(_padded(inputs, heads), padded_all[0]) is not None:
        scaled = scale_said(call, HEADS_SCALED[1], heads_only=True)
        if scaled is not None:
            return HEADS_SCALED[0], scaled
    alone = [_answer(call, _one_live_head(inputs, heads, i)) for i in range(len(heads))]
    if all(answer is not None and _column_permutation(*answer) for answer in alone):
        return COMBINING
    same = _answer(call, _padded(inputs, [heads[0]] * len(heads)))
    if same is not None and agrees(*same):
        return OTHER_HEADS
    # After OTHER_HEADS: heads that all repeat one head also have only columns of heads.
    if _columns_moved(*padded_all):
        return BLOCKS_OVERLAP
    return SHARED_WEIGHTS if _weights_shared(inputs, call, heads) else SPLITTING


def _blocks(inputs, call, heads):
    """The student's heads' blocks of columns on the padded probe (W_O = identity), or None."""
    parts = call(_padded(inputs, heads))
    if parts is None or len(parts) != 1:
        return None
    got, start, blocks = np.asarray(parts[0], dtype=np.float64), 0, []
    for _, _, W_V in heads:
        blocks.append(got[:, start:start + np.shape(W_V)[1]])
        start += np.shape(W_V)[1]
    return blocks


def _weights_shared(inputs, call, heads):
    """True when some head's output moves with the other heads' W_Q and W_K, and no head's
    with the others' W_V: a head's weights depend on other heads' scores (a softmax shared
    among them, scores carried from one head to the next), its values do not."""
    if len(heads) < 2:
        return False
    rng = np.random.default_rng(PROBE_SEED + 2)
    base = _blocks(inputs, call, heads)  # the same for every head: asked once
    if base is None:
        return False
    moved_by_scores, moved_by_values = False, False
    for i in range(len(heads)):
        def redrawn(which):
            return [head if j == i else tuple(rng.normal(size=np.shape(W)) if k in which else W
                                              for k, W in enumerate(head))
                    for j, head in enumerate(heads)]
        scores, values = (_blocks(inputs, call, h) for h in (redrawn((0, 1)), redrawn((2,))))
        if scores is None or values is None or any(
                a.shape != b.shape for other in (scores, values) for a, b in zip(base, other)):
            return False
        moved_by_scores |= not agrees(base[i], scores[i])
        moved_by_values |= not agrees(base[i], values[i])
    return moved_by_scores and not moved_by_values


# Probes draw X afresh (a fixed generator, never the case's values) with at least this many
# tokens: a place is a property of the code, and with few tokens a wrong head can look like a
# function of the right one by chance.
PROBE_SEED = 8055
MIN_TOKENS = 6


def _fresh(inputs, seed=PROBE_SEED):
    """``inputs`` without a mask and with X drawn afresh, of the case's width."""
    n, d_model = np.shape(inputs["X"])
    X = np.random.default_rng(seed).normal(size=(max(n, MIN_TOKENS), d_model))
    return dict(inputs, X=X, mask=None)


def _mask_transposed(inputs, call):
    """MASK_TRANSPOSED when the case's answer is the reference's with the mask transposed."""
    mask = np.asarray(inputs["mask"], dtype=bool)
    if mask.ndim != 2 or mask.shape[0] != mask.shape[1] or np.array_equal(mask, mask.T):
        return None
    parts = call(inputs)
    if parts is None or len(parts) != 1:
        return None
    with np.errstate(invalid="ignore"):
        # A key no query sees is, transposed, a query that sees nothing: NaN in both answers.
        transposed = reference.multihead(**dict(inputs, mask=mask.T))
    got = np.asarray(parts[0], dtype=np.float64)
    if got.shape != transposed.shape or not np.array_equal(np.isnan(got), np.isnan(transposed)):
        return None
    seen = ~np.isnan(transposed)
    return MASK_TRANSPOSED if agrees(got[seen], transposed[seen]) else None


# The head counts tried, each with d_k = d_v = COUNT_WIDTH / h, so that a d_k taken as
# d_model // h is right too: only the number of heads changes from one probe to the next.
# Each count is tried with two numbers of tokens that are no width of the probe (12, 6, 4,
# 3): a scale read from the number of tokens must not pass for the count of heads.
HEAD_COUNTS = (1, 2, 3, 4)
COUNT_WIDTH = 12
COUNT_TOKENS = (7, 11)


def by_head_count(inputs, call):
    """HEAD_COUNT when the student's multihead agrees with the reference for some number of
    heads (more than one) but not for the case's: a count of heads that is not len(heads)."""
    rng = np.random.default_rng(PROBE_SEED + 3)
    right = []
    for h in HEAD_COUNTS:
        width = COUNT_WIDTH // h
        agreed = True
        for n in COUNT_TOKENS:
            heads = [tuple(rng.normal(size=(COUNT_WIDTH, width)) for _ in range(3))
                     for _ in range(h)]
            answer = _answer(call, dict(X=rng.normal(size=(n, COUNT_WIDTH)), heads=heads,
                                        W_O=rng.normal(size=(COUNT_WIDTH, COUNT_WIDTH)),
                                        mask=None))
            agreed = agreed and answer is not None and agrees(*answer)
        if agreed:
            right.append(h)
    if not right or right == [1] or len(inputs["heads"]) in right or len(right) == len(
            HEAD_COUNTS) or _blocks_overwritten(inputs, call):
        return None
    def spoken(numbers):
        return " o ".join([", ".join(map(str, numbers[:-1])), str(numbers[-1])] if len(
            numbers) > 1 else [str(numbers[0])])
    counts, others = spoken(right), spoken([h for h in HEAD_COUNTS if h not in right])
    return HEAD_COUNT, (
        f"el fallo está en el número de cabezas: tu multihead coincide con la correcta con "
        f"{counts} cabezas, y no con {others}. ¿De dónde sacas cuántas cabezas hay? Son "
        "len(heads), una por cada tupla (W_Q, W_K, W_V) de la lista, sin fijar el número ni "
        "tomarlo de otra forma (paso 6)")


def _blocks_overwritten(inputs, call):
    """True when, with W_O = identity, the case's heads land in one another's blocks: a
    multihead right for few heads only is then writing its blocks in the wrong places (an
    offset reset rather than accumulated), not counting its heads wrong."""
    answer = _answer(call, _padded(_fresh(inputs), list(inputs["heads"])))
    return answer is not None and _columns_moved(*answer)


def _lone_head(call, inputs, heads):
    """``(index, answer)`` of the first head whose answer alone, with W_O = I, departs from
    the reference's; the first head's (its answer None if it raised) when none does."""
    first = None
    for index, head in enumerate(heads):
        answer = _answer(call, _padded(inputs, [head]))
        if index == 0:
            first = answer
        if answer is not None and not agrees(*answer):
            return index, answer
    return 0, first


def locate(inputs, call):
    """``(finding id, Spanish message)`` for where ``multihead`` departs on ``inputs``, or
    None when no probe locates it (or the student's function raises on a probe)."""
    by_count = by_head_count(inputs, call)
    if by_count is not None:
        return by_count
    unmasked = _fresh(inputs)
    probes = []
    if inputs.get("mask") is not None:
        probes.append((unmasked, MASK))  # agrees without the mask: the mask is the step
    # The head alone that departs first: with one head only, a value-by-value change (a
    # ReLU) may by chance change nothing on that head's values.
    heads = list(inputs["heads"])
    lone, lone_answer = _lone_head(call, unmasked, heads)
    probes += [(_padded(unmasked, heads[lone:lone + 1]), EACH_HEAD),
               (_padded(unmasked, heads), CONCATENATION),
               (unmasked, OUTPUT_PROJECTION)]
    each_head_seen = True
    for probe, step in probes:
        answer = lone_answer if step is EACH_HEAD else _answer(call, probe)
        if answer is None and step is EACH_HEAD:
            each_head_seen = False  # then no place may say «cada cabeza sola es correcta»
            continue  # one head alone may be what it cannot take (a loop to len(heads) − 1)
        if answer is None:
            return None
        departs = not agrees(*answer)
        if departs and step in (EACH_HEAD, CONCATENATION) and (
                _integer_valued(*answer) or _integer_valued_larger(call, probe, answer)):
            step = INTEGER_VALUES
        elif departs and step is EACH_HEAD and _softmax_over_queries(probe, answer[0]):
            step = HEAD_SOFTMAX_AXIS
        elif departs and step is EACH_HEAD and _softmax_over_heads(call, unmasked, heads, probe,
                                                                    answer[0]):
            step = HEADS_AXIS
        elif departs and step is EACH_HEAD and (roles := _roles_swapped(probe, answer[0])):
            step = roles_place(roles)
        elif departs and step is EACH_HEAD and _scores_factor(probe, answer[0]) is not None:
            measured = scale_said(call, SCALE_LAW)
            step = HEAD_SCORES_SCALED if measured is None else (HEAD_SCORES_SCALED[0], measured)
        elif departs and step is EACH_HEAD and _rows_left_at_zero(*answer):
            step = ROWS_LEFT_AT_ZERO
        elif departs and step in (EACH_HEAD, CONCATENATION) and _scaled(*answer):
            step = SCALED
        elif departs and step is EACH_HEAD and _columns_moved(*answer):
            step = HEAD_COLUMNS_MOVED
        elif departs and step is EACH_HEAD and _value_by_value(*answer):
            # The same function on a second draw too, or the order was a coincidence.
            again = _answer(call, _padded(_fresh(inputs, PROBE_SEED + 1),
                                          heads[lone:lone + 1]))
            if again is not None and _value_by_value(
                    np.concatenate([answer[0].ravel(), again[0].ravel()]),
                    np.concatenate([answer[1].ravel(), again[1].ravel()])):
                step = AFTER_HEADS
        if step is MASK:
            if not departs:  # right without the mask: the mask, if the case itself departs
                case = _answer(call, inputs)
                if case is None or agrees(*case):
                    return None
                found = _mask_transposed(inputs, call) or MASK
                return found[0], f"el fallo está en {found[1]}"
            continue
        if departs:
            if step is CONCATENATION and not each_head_seen:
                step = _missing_heads(*answer, list(unmasked["heads"]))
                if step is None:
                    return None
            elif step is CONCATENATION:
                step = _heads_step(unmasked, call, answer)
            finding_id, where = step
            return finding_id, f"el fallo está en {where}"
    return None
