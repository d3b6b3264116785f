"""Where a block that no catalogued mistake explains first departs from the reference.

The catalogue names mistakes it has seen; a block bug it has not seen used to get only «revisa
las residuales, la FFN y la máscara». Here the block is called again on one failing case with
parts of it switched off, and each answer is compared with the reference's on the same input:

* ``ffn_off``: W1, b1, W2, b2 = 0, so the FFN adds nothing: only the attention sub-layer, its
  residual and the two LayerNorms are left;
* ``attention_off``: W_O = 0, so multi-head attention adds nothing: only the FFN path, its
  residual and the two LayerNorms are left;
* ``both_off``: both, so a correct block returns LayerNorm(LayerNorm(x)): only the residuals
  and the normalisation are left.

Which probes agree says which part departs. Nothing here quotes a value: the messages name a
part of step 8, never a number of the hidden case.
"""

import numpy as np

from reference import attention as reference

from .probe_compare import agrees

PROBES = {
    "ffn_off": ("W1", "b1", "W2", "b2"),
    "attention_off": ("W_O",),
    "both_off": ("W1", "b1", "W2", "b2", "W_O"),
}

# (which probes agree with the reference) -> (finding id, where the block departs)
LOCATIONS = {
    (False, True, True): (
        "transformer_block.located_attention_sublayer",
        "la primera subcapa: con la FFN anulada (pesos y sesgos a cero) tu bloque no coincide "
        "con el correcto, y con la atención anulada (W_O = 0) sí. Revisa la llamada a "
        "`multihead` dentro del bloque (¿le pasas x, heads, W_O y la máscara?), la residual "
        "x + MultiHead(x) y la primera LayerNorm (paso 8)"),
    (True, False, True): (
        "transformer_block.located_ffn_sublayer",
        "la segunda subcapa: con la atención anulada (W_O = 0) tu bloque no coincide con el "
        "correcto, y con la FFN anulada sí. Revisa la FFN, ReLU(x·W1 + b1)·W2 + b2, que reciba "
        "la salida de la primera LayerNorm, su residual y la LayerNorm final (paso 8)"),
    (False, False, True): (
        "transformer_block.located_chaining",
        "cómo se encadenan las dos subcapas: con las dos anuladas tu bloque coincide con el "
        "correcto, pero no con una sola encendida. Revisa qué recibe cada subcapa y qué suma "
        "cada residual: la segunda parte de la salida de la primera LayerNorm, no de x "
        "(paso 8)"),
}
NORMALISATION = (
    "transformer_block.located_residuals_or_norm",
    "las residuales o la normalización: con las dos subcapas anuladas, un bloque correcto "
    "devuelve LayerNorm(x), y el tuyo no. Revisa que cada subcapa sume su entrada (x + …) y "
    "que la LayerNorm vaya después de cada suma, sobre cada token (paso 8)")


def _switched_off(inputs, names):
    probe = dict(inputs)
    for name in names:
        probe[name] = np.zeros_like(np.asarray(inputs[name], dtype=np.float64))
    return probe


def locate(inputs, call):
    """``(finding id, Spanish message)`` for where the block departs on ``inputs`` (a failing
    case), or None. ``call(probe_inputs)`` runs the student's block and returns its parts, or
    None when it raised."""
    agree = []
    for names in PROBES.values():
        probe = _switched_off(inputs, names)
        parts = call(probe)
        if parts is None or len(parts) != 1:  # it raised on a probe: nothing to compare
            return None
        agree.append(agrees(parts[0], reference.transformer_block(**probe)))
    ffn_off, attention_off, both_off = agree
    if not both_off:
        found = NORMALISATION
    else:
        found = LOCATIONS.get((ffn_off, attention_off, both_off))
    if found is None:  # every probe agrees: the departure needs both parts at once
        return None
    finding_id, where = found
    return finding_id, f"el fallo está en {where}"
