"""Where a block that no catalogued mistake explains first departs from the reference.

The catalogue names mistakes it has seen; a block bug it has not seen used to get only «revisa
las residuales, la FFN y la máscara». Here the block is called again on one failing case with
parts of it switched off, and each answer is compared with the reference's on the same input:

* ``both_off``: W_O = 0 and the FFN's weights and biases = 0, so a correct block returns
  LayerNorm(LayerNorm(x)) = LayerNorm(x): only the residuals and the two LayerNorms are left.
  When it departs, the rows of the answer say where: not normalised, the last LayerNorm; all
  zeros, x never added; normalised but another vector, what reaches the last LayerNorm.
* ``ffn_off`` (the FFN's weights and biases = 0) leaves the attention sub-layer, and
  ``attention_off`` (W_O = 0) the FFN sub-layer; which of the two agrees says which departs.
  Inside the FFN sub-layer, W1 = 0 makes the FFN a constant that ignores its input, and
  W1 = W2 = 0 leaves only b2: agreeing there but not before says the FFN's input, then the
  FFN's own inside; departing even with b2 alone leaves the second residual and b2.

The probes use x drawn afresh with the case's width (a fixed generator, not the case's values):
the case's x may be nearly constant rows, on which LayerNorm's epsilon, not the student's
code, decides whether two blocks agree. Nothing here quotes a value: the messages name a part
of step 8, never a number of the hidden case.
"""

import numpy as np

from reference import attention as reference

from . import tolerances
from .probe_compare import agrees

FFN = ("W1", "b1", "W2", "b2")
PROBES = {
    "ffn_off": FFN,
    "attention_off": ("W_O",),
    "both_off": FFN + ("W_O",),
}

ATTENTION_SUBLAYER = (
    "transformer_block.located_attention_sublayer",
    "la primera subcapa: con la FFN anulada (pesos y sesgos a cero) tu bloque no coincide "
    "con el correcto, y con la atención anulada (W_O = 0) sí. Revisa la llamada a "
    "`multihead` dentro del bloque (¿le pasas x, heads, W_O y la máscara?), la residual "
    "x + MultiHead(x) y la primera LayerNorm (paso 8)")
ATTENTION_MASK = (
    "transformer_block.located_attention_mask",
    "la máscara de la primera subcapa: sin máscara tu bloque coincide con el correcto, y con "
    "ella no. Pasa la máscara que recibe el bloque, tal cual, a `multihead` (paso 8)")
FFN_INPUT = (
    "transformer_block.located_ffn_input",
    "lo que entra en la FFN: con la atención anulada y W1 = 0, la FFN da lo mismo sea cual sea "
    "su entrada, y tu bloque coincide con el correcto; con W1 no. La FFN se aplica una sola "
    "vez, a la salida de la primera LayerNorm, multiplicada por W1 (paso 8)")
FFN_ACTIVATION = (
    "transformer_block.located_ffn_activation",
    "la activación de la FFN: con la atención anulada y cada entrada de la ReLU entre 0 y 1, "
    "donde ReLU(z) = z, tu bloque coincide con el correcto; con las del caso no. La ReLU es "
    "np.maximum(0, z) elemento a elemento, sin tope por arriba ni otra forma (paso 8)")
FFN_LAST_TOKEN = (
    "transformer_block.located_ffn_last_token",
    "la FFN del último token: con la atención anulada tu bloque coincide con el correcto en "
    "todos los tokens menos el último. La FFN se aplica a cada token (cada fila) por igual, "
    "todos a la vez con x·W1: si recorres los tokens, ¿paras uno antes, range(n − 1)? "
    "(paso 8)")
FFN_SOME_TOKENS = (
    "transformer_block.located_ffn_some_tokens",
    "la FFN de algunos tokens: con la atención anulada tu bloque coincide con el correcto en "
    "unos tokens (filas) y no en otros, y la FFN es la misma para cada token: aplícala a "
    "todas las filas a la vez, con x·W1 (paso 8)")
FFN_INPUT_OR_ACTIVATION = (
    "transformer_block.located_ffn_input_or_activation",
    "lo que entra en la FFN o su activación: con la atención anulada y W1 = 0, la FFN da lo "
    "mismo sea cual sea su entrada, y tu bloque coincide con el correcto; con W1 no. La FFN se "
    "aplica una sola vez, a la salida de la primera LayerNorm, tal cual, multiplicada por W1, "
    "y la ReLU es np.maximum(0, z) elemento a elemento (paso 8)")
FFN_INSIDE = (
    "transformer_block.located_ffn_inside",
    "el interior de la FFN: con la atención anulada y W1 = W2 = 0 (la FFN solo suma b2) tu "
    "bloque coincide con el correcto, pero con W2 no. Revisa ReLU(x·W1 + b1)·W2: la ReLU, "
    "np.maximum(0, ·) elemento a elemento, entre las dos capas, y b1 antes de la ReLU (paso 8)")
SECOND_RESIDUAL = (
    "transformer_block.located_second_residual",
    # What this probe sees can come from either side of the second sum: a first LayerNorm that
    # is wrong by a scale or shift per token is undone by the last one, and shows only here.
    "la segunda residual o en lo que le llega: con la atención anulada y la FFN reducida a su "
    "sesgo b2, tu bloque no coincide con el correcto. La segunda subcapa es LayerNorm(y + "
    "FFN(y)), con y la salida de la primera LayerNorm (cada token con media 0 y varianza 1) "
    "sumada tal cual, sin escalar, y b2 sumado después de ·W2. Si falta tu primera LayerNorm, "
    "o normaliza con otras medias o varianzas, no se nota hasta aquí, porque la última lo "
    "corrige (paso 8)")
NORM_SHIFT = (
    "transformer_block.located_norm_shift",
    "la normalización: con la atención y la FFN anuladas, sumar el mismo número a todas las "
    "columnas de cada token cambia tu bloque, y LayerNorm no cambia con eso, porque resta la "
    "media de cada token antes de calcular su varianza. ¿Calculas la varianza como la media de "
    "z² sin restar antes la media, o restas otra media? Usa la layer_norm que viene hecha "
    "(paso 8)")
CHAINING = (
    "transformer_block.located_chaining",
    "cómo se encadenan las dos subcapas: con las dos anuladas tu bloque coincide con el "
    "correcto, pero no con una sola encendida. Revisa qué recibe cada subcapa y qué suma "
    "cada residual: la segunda parte de la salida de la primera LayerNorm, no de x "
    "(paso 8)")
LAST_NORM_MEAN = (
    "transformer_block.located_last_norm_mean",
    "la última LayerNorm: con las dos subcapas anuladas, las filas de tu salida no tienen "
    "media 0. LayerNorm resta a cada token (fila) su propia media, sobre el último eje "
    "(paso 8)")
LAST_NORM_OFFSET = (
    "transformer_block.located_last_norm_offset",
    "lo que sumas después de normalizar: con las dos subcapas anuladas, tus filas son las "
    "normalizadas correctas más un mismo valor en cada token, así que restas bien la media y "
    "divides bien, pero después sumas algo (¿un β de unos, np.ones, donde van ceros?). "
    "LayerNorm deja cada token con media 0 y varianza 1 (paso 8)")
LAST_NORM_COLUMNS = (
    "transformer_block.located_last_norm_columns",
    "la última LayerNorm: con las dos subcapas anuladas, tu salida tiene media 0 por columnas, "
    "no por filas, así que normalizas sobre los tokens (axis=0). LayerNorm normaliza cada "
    "token por separado, sobre el último eje (paso 8)")
LAST_NORM_SPREAD_OVER_TOKENS = (
    "transformer_block.located_last_norm_spread_over_tokens",
    "la última LayerNorm: con las dos subcapas anuladas, cada token está centrado en su propia "
    "media, pero cada columna de tu salida está dividida por un número distinto: la desviación "
    "típica la calculas sobre los tokens (axis=0), no sobre las columnas de cada token "
    "(axis=-1), como la media (paso 8)")
LAST_NORM_SCALE = (
    "transformer_block.located_last_norm_scale",
    "la última LayerNorm: con las dos subcapas anuladas, las filas de tu salida tienen media 0 "
    "pero no varianza 1, así que divides por otra cosa que la desviación típica de cada "
    "token, √(varianza + ε) (paso 8)")
NOTHING_ADDED = (
    "transformer_block.located_residual_missing",
    "las residuales: con las dos subcapas anuladas tu bloque devuelve 0, así que no sumas la "
    "entrada: cada subcapa es LayerNorm(x + Subcapa(x)), con la suma x + …, no un producto "
    "ni la subcapa sola (paso 8)")
BETWEEN_NORMS = (
    "transformer_block.located_between_norms",
    "lo que llega a la última LayerNorm: con las dos subcapas anuladas, un bloque correcto "
    "normaliza x dos veces, que es normalizarla una vez, y el tuyo normaliza otra cosa. "
    "Revisa la primera LayerNorm y que la segunda residual sume su salida tal cual, sin "
    "activaciones ni factores (paso 8)")

RETURNS_FIRST_SUBLAYER = (
    "transformer_block.located_returns_first_sublayer",
    "lo que devuelves: tu bloque devuelve la salida de la primera subcapa, "
    "LayerNorm(x + MultiHead(x)), y la segunda, LayerNorm(y + FFN(y)), no llega a la salida. "
    "Devuelve el resultado de la segunda subcapa (paso 8)")
NORM_BEFORE_SUM = (
    "transformer_block.located_norm_before_sum",
    "los paréntesis de cada subcapa: tu bloque suma LayerNorm(x) + Subcapa(x), y cada "
    "subcapa es LayerNorm(x + Subcapa(x)): la suma residual va dentro de la LayerNorm (paso 8)")
POSITIONS_ADDED = (
    "transformer_block.located_positions_added",
    "la entrada del bloque: tu bloque es el correcto aplicado a x más la codificación "
    "posicional. Las posiciones se suman una sola vez, a los embeddings, antes del primer "
    "bloque (paso 7); el bloque usa la x que recibe tal cual (paso 8)")
INPUT_NORMALISED = (
    "transformer_block.located_input_normalised",
    "la entrada del bloque: tu bloque es el correcto aplicado a LayerNorm(x), no a x, así que "
    "normalizas la entrada antes de la primera subcapa. En el bloque post-LN cada LayerNorm va "
    "después de su suma residual, y la primera subcapa recibe x tal cual (paso 8)")
FIRST_ROW_OF_ATTENTION = (
    "transformer_block.located_first_row_of_attention",
    "la primera subcapa: sumas a cada token la salida de multihead del primer token. "
    "multihead devuelve un solo array (n, d_model), no una tupla como attention, así que "
    "multihead(…)[0] es su primera fila: la residual es x + multihead(x, heads, W_O, mask) "
    "entera (paso 8)")
W_O_TWICE = (
    "transformer_block.located_w_o_twice",
    "la primera subcapa: multiplicas otra vez por W_O la salida de multihead, que ya termina "
    "con ·W_O. La residual es x + multihead(x, heads, W_O, mask) tal cual (paso 8)")
ALWAYS_CAUSAL = (
    "transformer_block.located_always_causal",
    "la máscara: sin máscara tu bloque es el correcto con una máscara causal. Cuando mask es "
    "None, cada token atiende a todos, también a los que vienen después; la máscara causal "
    "solo se aplica si te la pasan (paso 8)")
INPUT_ADDED_AFTER = (
    "transformer_block.located_input_added_after",
    "lo que devuelves: tu salida es la correcta más x, la entrada del bloque. Cada residual "
    "suma antes de su LayerNorm, LayerNorm(x + Subcapa(x)); después de la última no se suma "
    "nada (paso 8)")
B2_AFTER_LAST_NORM = (
    "transformer_block.located_b2_after_last_norm",
    "dónde sumas b2: tu salida es la de un bloque sin b2 más b2, así que lo sumas después de "
    "la última LayerNorm. b2 es el sesgo de la segunda capa de la FFN, ReLU(x·W1 + b1)·W2 + b2, y va "
    "dentro de la suma que se normaliza (paso 8)")
NORM_INSIDE = (
    "transformer_block.located_norm_not_after_sums",
    "la LayerNorm: con las dos subcapas anuladas tu bloque devuelve x tal cual, sin "
    "normalizar, así que falta la LayerNorm después de cada suma, o está dentro de la "
    "subcapa o antes de ella. Cada subcapa es LayerNorm(x + Subcapa(x)) (paso 8)")
RETURNS_BEFORE_LAST_NORM = (
    "transformer_block.located_returns_before_last_norm",
    "lo que devuelves: tu bloque devuelve y + FFN(y) sin la última LayerNorm. La segunda "
    "subcapa es LayerNorm(y + FFN(y)): normaliza la suma antes de devolverla (paso 8)")

# Fresh rows for the probes: any fixed draw with rows far from constant does. Without a mask
# the probe has at least MIN_PROBE_TOKENS tokens: on one token, normalising over the tokens
# and adding nothing both give zeros, and attention mixes nothing.
PROBE_SEED = 8055
MIN_PROBE_TOKENS = 4


def _probe(inputs, own_tokens=False):
    """A probe shaped like the case, every value drawn afresh: x, the heads, W_O and the FFN
    (the case may make a sub-layer nearly vanish, with tiny weights or nearly constant rows,
    and then a wrong block agrees with the right one there by chance). The case's mask is
    kept; without one the probe has at least MIN_PROBE_TOKENS tokens, unless ``own_tokens``
    (a block wrong only for so few tokens, say one, is right on a longer probe)."""
    rng = np.random.default_rng(PROBE_SEED)
    n, d_model = np.shape(inputs["x"])
    if inputs.get("mask") is None and not own_tokens:
        n = max(n, MIN_PROBE_TOKENS)

    def weights(shape):
        return rng.normal(0, 1 / np.sqrt(shape[0]), size=shape)

    heads = [tuple(weights(np.shape(W)) for W in head) for head in inputs["heads"]]
    return dict(inputs, x=rng.normal(size=(n, d_model)), heads=heads,
                W_O=weights(np.shape(inputs["W_O"])), W1=weights(np.shape(inputs["W1"])),
                b1=rng.normal(0, 0.5, size=np.shape(inputs["b1"])),
                W2=weights(np.shape(inputs["W2"])),
                b2=rng.normal(0, 0.5, size=np.shape(inputs["b2"])))


def _switched_off(inputs, names):
    probe = dict(inputs)
    for name in names:
        probe[name] = np.zeros_like(np.asarray(inputs[name], dtype=np.float64))
    return probe


def _answer(call, probe):
    parts = call(probe)
    return None if parts is None or len(parts) != 1 else np.asarray(parts[0], dtype=np.float64)


NORM_NOT_FINITE = (
    "transformer_block.located_norm_not_finite",
    "la normalización: con la atención y la FFN anuladas tu bloque ya da NaN o infinitos, y "
    "LayerNorm(LayerNorm(x)) no: tu LayerNorm saca la raíz de un número negativo o divide "
    "por 0. ¿Está bien escrita la varianza, que nunca es negativa, y es ε un número pequeño "
    "y positivo (10 ** -5 o 1e-5; en Python, 10 ^ -5 es otra cosa)? (paso 8)")


# Normalisations that are not LayerNorm, each told by its own signature on the both-off probe
# (where a correct block returns LayerNorm(x)): the rows' means, their spread, and which of
# them the whole matrix shares.
RMS_NORM = (
    "transformer_block.located_rms_norm",
    "la normalización: con las dos subcapas anuladas, tus filas no tienen media 0, y cada "
    "una es el token dividido por la raíz de la media de sus cuadrados, √(media(z²) + ε), "
    "sin restarle antes su media: eso es RMSNorm, otra normalización. LayerNorm resta a cada "
    "token su propia media y divide por su desviación típica, √(varianza + ε) (paso 8)")
NORM_WHOLE_MATRIX = (
    "transformer_block.located_norm_whole_matrix",
    "la normalización: con las dos subcapas anuladas, tus filas no tienen media 0 ni "
    "varianza 1, pero la matriz entera sí: restas una sola media y divides por una sola "
    "desviación típica, las de todos los tokens juntos (¿z.mean() y z.std() sin axis?). "
    "LayerNorm normaliza cada token (fila) con su propia media y su propia varianza, "
    "axis=-1 y keepdims=True (paso 8)")
NORM_BY_VARIANCE = (
    "transformer_block.located_norm_by_variance",
    "la normalización: con las dos subcapas anuladas, tus filas tienen media 0, pero cada "
    "una está dividida por su varianza + ε, no por su raíz: LayerNorm divide por la "
    "desviación típica, √(varianza + ε) (paso 8)")


def _rms(z, eps):
    return z / np.sqrt((z * z).mean(axis=-1, keepdims=True) + eps)


def _whole(z, eps):
    return (z - z.mean()) / np.sqrt(z.var() + eps)


def _by_variance(z, eps):
    centred = z - z.mean(axis=-1, keepdims=True)
    return centred / (centred.var(axis=-1, keepdims=True) + eps)


def _other_normalisation(output, x):
    """RMS_NORM, NORM_WHOLE_MATRIX or NORM_BY_VARIANCE when ``output`` (the both-off
    probe's) is that normalisation of x, used for both LayerNorms or for the last one alone,
    with any epsilon the judge accepts; else None. A form is tried only where the rows show
    its signature: RMSNorm and the whole matrix's normalisation leave rows whose mean is not
    0, the latter with the mean of the whole matrix 0 and more than one token (with one, the
    matrix is the row, and it is LayerNorm there); dividing by the variance leaves rows of
    mean 0."""
    row_means = np.abs(output.mean(axis=-1)).max() > tolerances.ATOL
    forms = []
    if row_means:
        forms.append((RMS_NORM, _rms))
        if output.shape[0] > 1 and abs(output.mean()) <= tolerances.ATOL:
            forms.append((NORM_WHOLE_MATRIX, _whole))
    else:
        forms.append((NORM_BY_VARIANCE, _by_variance))
    for found, norm in forms:
        for eps in tolerances.LAYER_NORM_EPS:
            once = norm(x, eps)
            if any(agrees(output, candidate) for candidate in (
                    once, norm(once, eps), norm(reference.layer_norm(x, eps), eps))):
                return found
    return None


def _normalisation(output, expected, x):
    """Which part of the residuals and normalisation departs, from the rows of the answer on
    ``both_off`` (``expected``: LayerNorm(x))."""
    if output.shape != expected.shape:
        return None
    if not np.isfinite(output).all():
        # LayerNorm(LayerNorm(x)) is finite for every finite x: NaN here is the norm's own.
        return NORM_NOT_FINITE if np.isfinite(expected).all() else None
    if agrees(output, x):
        return NORM_INSIDE
    if np.abs(output).max() <= tolerances.ATOL:
        return NOTHING_ADDED
    other = _other_normalisation(output, x)
    if other is not None:
        return other
    offset = output - expected
    if (np.abs(offset).max() > tolerances.ATOL
            and agrees(offset, np.broadcast_to(offset[0], offset.shape))):
        return LAST_NORM_OFFSET
    if np.abs(output.mean(axis=-1)).max() > tolerances.ATOL:
        columns = output.shape[0] > 1 and np.abs(output.mean(axis=0)).max() <= tolerances.ATOL
        if columns:
            return LAST_NORM_COLUMNS
        return LAST_NORM_SPREAD_OVER_TOKENS if _scaled_per_column(output, expected) \
            else LAST_NORM_MEAN
    if np.abs(output.var(axis=-1) - expected.var(axis=-1)).max() > 10 * tolerances.ATOL:
        return LAST_NORM_SCALE
    return BETWEEN_NORMS


# Added to every column of x and to b2 on the both-off probe: LayerNorm(z + c) = LayerNorm(z).
SHIFT = 10.0


def _shift_invariant(call, inputs):
    """True unless adding one number to every feature of each token, before each LayerNorm,
    changes the block with both sublayers off (or the student's block raised there)."""
    probe = _switched_off(inputs, FFN + ("W_O",))
    probe = dict(probe, x=probe["x"] + SHIFT, b2=probe["b2"] + SHIFT)
    answer = _answer(call, probe)
    if answer is None:
        return True
    expected = reference.transformer_block(**probe)
    # Moved by exactly the shift of b2: b2 is added after the last LayerNorm, which is itself
    # right (whole_answer says so where it can); only another movement is the normalisation's.
    return agrees(answer, expected) or agrees(answer, expected + SHIFT)


def _scaled_per_column(output, expected):
    """True when each column of ``output`` is the same column of ``expected`` (a LayerNorm's
    centred rows) times its own positive factor, not all factors equal: each token centred
    by its own mean, then divided by a spread taken per column, over the tokens."""
    if output.shape[0] < 2:
        return False
    norms = (expected * expected).sum(axis=0)
    if (norms == 0).any():
        return False
    factors = (output * expected).sum(axis=0) / norms
    return bool((factors > 0).all()) and not agrees(factors, np.full_like(factors, factors[0])) \
        and agrees(output, expected * factors)


def _second_sublayer(call, inputs, fresh=True):
    attention_off = _switched_off(inputs, ("W_O",))
    answer = _answer(call, attention_off)
    expected = reference.transformer_block(**attention_off)
    if answer is not None and answer.shape == expected.shape and len(answer) > 1:
        rows = [agrees(got, want) for got, want in zip(answer, expected)]
        # A token-wise step that misses some tokens: those rows are the block without the FFN
        # (an activation can also leave some rows right, by where its inputs fall).
        without = reference.transformer_block(**_switched_off(attention_off, FFN))
        skipped = all(agrees(got, bare) for got, bare, right in zip(answer, without, rows)
                      if not right)
        if any(rows) and not all(rows) and skipped:
            return FFN_LAST_TOKEN if rows[:-1] == [True] * (len(rows) - 1) else FFN_SOME_TOKENS
    for names, found in ((("W1",), FFN_INPUT), (("W1", "W2"), FFN_INSIDE)):
        probe = _switched_off(attention_off, names)
        answer = _answer(call, probe)
        if answer is None:
            return None
        if agrees(answer, reference.transformer_block(**probe)):
            if found is FFN_INPUT:
                linear = _linear_region(call, attention_off)
                if linear is None:
                    return None
                if not linear:
                    return FFN_INPUT
                # The linear probe scales W1 down, and a departure as small as those only the
                # case's own values show shrinks with it below the tolerance: not told apart.
                return FFN_ACTIVATION if fresh else FFN_INPUT_OR_ACTIVATION
            return found
    return SECOND_RESIDUAL


def _linear_region(call, attention_off):
    """Whether the block agrees when every input of the ReLU lies in (0.4, 0.6), where
    ReLU(z) = z: b1 = 0.5 and W1 scaled down. Agreeing there and not on the case puts the
    departure in the activation, not in what enters the FFN. None if it raised."""
    probe = linear_probe(attention_off)
    answer = _answer(call, probe)
    return None if answer is None else agrees(answer, reference.transformer_block(**probe))


def linear_probe(attention_off):
    """``attention_off`` with b1 = 0.5 and W1 scaled down so that every input of the ReLU
    lies in (0.4, 0.6), where ReLU(z) = z."""
    W1 = np.asarray(attention_off["W1"], dtype=np.float64)
    first = reference.layer_norm(np.asarray(attention_off["x"], dtype=np.float64))
    largest = np.abs(first @ W1).max()
    scale = 0.1 / largest if largest > 0 else 1.0
    return dict(attention_off, W1=W1 * scale, b1=np.full(np.shape(attention_off["b1"]), 0.5))


def _first_sublayer(call, inputs):
    if inputs.get("mask") is None:
        return ATTENTION_SUBLAYER
    probe = _switched_off(dict(inputs, mask=None), FFN)
    answer = _answer(call, probe)
    if answer is not None and agrees(answer, reference.transformer_block(**probe)):
        return ATTENTION_MASK
    return ATTENTION_SUBLAYER


def whole_answer(inputs, call):
    """``(finding id, Spanish message)`` when the student's block returns a whole value of the
    correct block short of its output (which explains any argument it then ignores), the block
    with LayerNorm's parenthesis closed early, or the block on x plus the positions; or None."""
    inputs = _probe(inputs)
    answer = _answer(call, inputs)
    if answer is None:
        return None
    for value, found in whole_forms(inputs):
        if value is not None and agrees(answer, value):
            return found[0], f"el fallo está en {found[1]}"
    return None


def whole_forms(inputs):
    """``[(value, place)]``: the whole wrong answers whole_answer recognises on the probe
    ``inputs``, in its order (a value None where the form does not fit)."""
    first = reference.transformer_block(**_switched_off(inputs, FFN))  # LN(x + MH(x))
    correct = reference.transformer_block(**inputs)
    shifted = dict(inputs, x=inputs["x"] + reference.positional_encoding(*np.shape(inputs["x"]))[0])
    return ((first, RETURNS_FIRST_SUBLAYER),
            (first + _ffn(first, inputs), RETURNS_BEFORE_LAST_NORM),
            (correct + inputs["x"], INPUT_ADDED_AFTER),
            (reference.transformer_block(**dict(inputs, b2=0 * inputs["b2"]))
             + inputs["b2"], B2_AFTER_LAST_NORM),
            (_norm_before_sum(inputs), NORM_BEFORE_SUM),
            (reference.transformer_block(**shifted), POSITIONS_ADDED),
            (reference.transformer_block(**dict(
                inputs, x=reference.layer_norm(inputs["x"]))), INPUT_NORMALISED),
            (_causal_when_unmasked(inputs), ALWAYS_CAUSAL),
            (_with_attention(inputs, lambda a: np.broadcast_to(a[0], a.shape)),
             FIRST_ROW_OF_ATTENTION),
            (_with_attention(inputs, lambda a: a @ inputs["W_O"]
                             if a.shape[1] == np.shape(inputs["W_O"])[0] else None),
             W_O_TWICE))


def _with_attention(inputs, change):
    """The correct block with MultiHead(x) replaced by ``change`` of it in the first
    residual, or None when ``change`` gives nothing (shapes that do not fit)."""
    ln = reference.layer_norm
    attended = reference.multihead(inputs["x"], inputs["heads"], inputs["W_O"], inputs.get("mask"))
    changed = change(attended)
    if changed is None or np.shape(changed) != attended.shape:
        return None
    x1 = ln(inputs["x"] + changed)
    return ln(x1 + _ffn(x1, inputs))


def _causal_when_unmasked(inputs):
    """The correct block under a causal mask, when the case has no mask (else None)."""
    n = len(inputs["x"])
    if inputs.get("mask") is not None or n < 2:
        return None
    return reference.transformer_block(**dict(inputs, mask=np.tril(np.ones((n, n), dtype=bool))))


def _ffn(h, inputs):
    """ReLU(h·W1 + b1)·W2 + b2 with the case's weights."""
    return np.maximum(0, h @ inputs["W1"] + inputs["b1"]) @ inputs["W2"] + inputs["b2"]


def _norm_before_sum(inputs):
    """LayerNorm(x) + Subcapa(x) in both sublayers, the parenthesis closed early."""
    ln = reference.layer_norm
    x1 = ln(inputs["x"]) + reference.multihead(inputs["x"], inputs["heads"], inputs["W_O"],
                                               inputs.get("mask"))
    return ln(x1) + _ffn(x1, inputs)


ZERO_TOKENS = (
    "transformer_block.located_zero_tokens",
    "los tokens que valen 0: en este caso un token de x es todo ceros, y tu bloque falla; con "
    "ese token apenas distinto de 0, coincide con el correcto. ¿Tratas los tokens a 0 como "
    "relleno (una máscara tuya, un if)? Un token a 0 es un token "
    "más: qué claves se ven lo dice solo la máscara que recibes (paso 8)")
# Zero tokens are nudged off 0 by this much to tell a special case of 0 from a departure.
NUDGE = 1e-3


def _zero_tokens(inputs, call):
    """ZERO_TOKENS when the case has tokens whose x is all 0 and the same case with those
    tokens nudged off 0 agrees with the reference: the code treats a zero token apart."""
    x = np.asarray(inputs["x"], dtype=np.float64)
    zero = np.all(x == 0, axis=1)
    if not zero.any():
        return None
    noise = NUDGE * np.random.default_rng(PROBE_SEED).normal(size=x.shape)
    nudged = dict(inputs, x=np.where(zero[:, None], noise, x))
    answer = _answer(call, nudged)
    if answer is None or not agrees(answer, reference.transformer_block(**nudged)):
        return None
    return ZERO_TOKENS[0], f"el fallo está en {ZERO_TOKENS[1]}"


def locate(inputs, call):
    """``(finding id, Spanish message)`` for where the block departs on ``inputs`` (a failing
    case), or None. ``call(probe_inputs)`` runs the student's block and returns its parts, or
    None when it raised. Probed with at least MIN_PROBE_TOKENS tokens first, then, if nothing
    departs there, with the case's own number of tokens, then with the case's own values."""
    fresh = _probe(inputs)
    found = _zero_tokens(inputs, call) or _located(fresh, call)
    if found is None and len(inputs["x"]) < MIN_PROBE_TOKENS and inputs.get("mask") is None:
        probe = _probe(inputs, own_tokens=True)
        answer = _answer(call, probe)
        if answer is not None and not agrees(answer, reference.transformer_block(**probe)):
            found = _located(probe, call)
    if found is None:
        found = _mask_with_both(fresh, call)
    return found if found is not None else _on_own_values(inputs, call)


MASK_WITH_BOTH = (
    "transformer_block.located_mask_with_both",
    "la máscara: sin máscara tu bloque coincide con el correcto, y con ella no, aunque con la "
    "FFN anulada, o con la atención anulada, también coincide. La salida enmascarada de "
    "multihead tiene que llegar, la misma, a la primera residual y, a través de la primera "
    "LayerNorm, a la FFN: ¿llamas a multihead (o calculas la primera subcapa) más de una vez, "
    "alguna sin la máscara? (paso 8)")


def _mask_with_both(probe, call):
    """MASK_WITH_BOTH when the block departs on ``probe`` with its mask and agrees without it:
    a departure that needs the attention, the FFN and the mask at once."""
    if probe.get("mask") is None:
        return None
    masked, unmasked = _answer(call, probe), _answer(call, dict(probe, mask=None))
    if masked is None or unmasked is None:
        return None
    if agrees(masked, reference.transformer_block(**probe)) or not agrees(
            unmasked, reference.transformer_block(**dict(probe, mask=None))):
        return None
    return MASK_WITH_BOTH[0], f"el fallo está en {MASK_WITH_BOTH[1]}"


def _on_own_values(inputs, call):
    """Where the block departs on the failing case's own values, when no fresh probe shows
    it: a departure the size of LayerNorm's epsilon (what enters the FFN normalised twice)
    shows only on nearly constant rows. An epsilon of the student's own is not what this
    measures: the case failed, and the judge accepts every epsilon that would explain it."""
    return _located(inputs, call, fresh=False)


def _located(inputs, call, fresh=True):
    """Where the block departs on one probe already drawn (``_probe``), or None."""
    agree, answers = [], {}
    for name, names in PROBES.items():
        probe = _switched_off(inputs, names)
        answers[name] = _answer(call, probe)
        if answers[name] is None:  # it raised on a probe: nothing to compare
            return None
        agree.append(agrees(answers[name], reference.transformer_block(**probe)))
    ffn_off, attention_off, both_off = agree
    if both_off and not _shift_invariant(call, inputs):
        found = NORM_SHIFT
    elif not both_off:
        found = _normalisation(answers["both_off"], reference.layer_norm(inputs["x"]),
                               inputs["x"])
    elif not ffn_off and attention_off:
        found = _first_sublayer(call, inputs)
    elif ffn_off and not attention_off:
        found = _second_sublayer(call, inputs, fresh)
    elif not ffn_off and not attention_off:
        found = CHAINING
    else:  # every probe agrees: the departure needs both parts at once
        found = None
    if found is None:
        return None
    finding_id, where = found
    return finding_id, f"el fallo está en {where}"
