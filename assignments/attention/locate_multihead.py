"""Where a ``multihead`` that no catalogued mistake explains first departs, step by step of
step 6: the mask passed to each head, each head's attention on its own projections, the
concatenation of the heads, and the product with W_O.

While multihead is graded, the attention it calls is the reference's, so a departure found
here is in the student's multihead itself. The probes make each step visible on its own:
X is padded with zero columns (and every W_Q, W_K, W_V with zero rows) until d_model ≥ h·d_v,
which changes no head's projections, so that W_O can be the identity and the output *is* the
concatenation; one head alone, with the identity, shows that head by itself.
"""

import numpy as np

from reference import attention as reference

from .probe_compare import agrees

MASK = ("multihead.located_mask",
        "la máscara: sin máscara tu multihead coincide con la correcta, y con ella no. Pasa "
        "la misma máscara a la atención de cada cabeza (paso 6)")
EACH_HEAD = ("multihead.located_each_head",
             "cada cabeza: con una sola cabeza y W_O igual a la identidad, tu salida no es "
             "attention(X·W_Q, X·W_K, X·W_V) con las matrices de esa cabeza. Revisa las tres "
             "proyecciones y la llamada a attention (paso 6)")
CONCATENATION = ("multihead.located_concatenation",
                 "la concatenación de cabezas: cada cabeza sola es correcta, pero con todas y "
                 "W_O igual a la identidad tu salida no es [cabeza_1 | … | cabeza_h], las "
                 "salidas una al lado de la otra, en el orden de la lista (paso 6)")
SCALED = ("multihead.located_scaled",
          "un factor de más: con W_O igual a la identidad tu salida es la concatenación "
          "correcta multiplicada por un número. La salida es concatenación·W_O, sin dividir "
          "ni multiplicar por nada más (paso 6)")
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


def _scaled(got, expected):
    """True when ``got`` is ``expected`` times one number other than 1."""
    norm = float((expected * expected).sum())
    if got.shape != expected.shape or norm == 0.0 or not np.isfinite(got).all():
        return False
    factor = float((got * expected).sum()) / norm
    return not agrees(factor, 1.0) and agrees(got, factor * expected)


def locate(inputs, call):
    """``(finding id, Spanish message)`` for where ``multihead`` departs on ``inputs``, or
    None when no probe locates it (or the student's function raises on a probe)."""
    unmasked = dict(inputs, mask=None)
    probes = []
    if inputs.get("mask") is not None:
        probes.append((unmasked, MASK))  # agrees without the mask: the mask is the step
    probes += [(_padded(unmasked, list(inputs["heads"])[:1]), EACH_HEAD),
               (_padded(unmasked, list(inputs["heads"])), CONCATENATION),
               (unmasked, OUTPUT_PROJECTION)]
    for probe, step in probes:
        answer = _answer(call, probe)
        if answer is None:
            return None
        departs = not agrees(*answer)
        if departs and step in (EACH_HEAD, CONCATENATION) and _scaled(*answer):
            step = SCALED
        if step is MASK:
            if not departs:  # right without the mask: the mask, if the case itself departs
                case = _answer(call, inputs)
                if case is None or agrees(*case):
                    return None
                return MASK[0], f"el fallo está en {MASK[1]}"
            continue
        if departs:
            finding_id, where = step
            return finding_id, f"el fallo está en {where}"
    return None
