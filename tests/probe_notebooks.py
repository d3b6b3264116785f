"""The probe: about a hundred notebooks written the way a class writes them, as a fixture.

Issue 20 measured the kit with notebooks in public styles; this is the kit's own probe, written
for this project (no public code copied). Each probe notebook starts from the build's correct
notebook and changes it the way students do:

* *habits* (``HABITS``) change the notebook around the answers: pip lines and shell escapes in
  every form IPython knows, line and cell magics, star imports, helpers defined after the graded
  cell, failing demo cells, shuffled execution counts and stale outputs, Windows line endings;
* *styles* (``STYLES``) replace an answer cell with a correct implementation written another way
  (renamed parameters, dataclasses, closures, ``functools.partial``, masked arrays, ...);
* *bugs* (``BUGS``) replace one answer cell with one mistake, each with the phrase its feedback
  must contain and the ids the diagnosis may name (``Bug.phrases``, ``Bug.ids``).

``PROBES`` is the table: every notebook's kind, habits and answers. ``build(student, solutions)``
turns it into ``{file name: notebook bytes}``; ``tests/test_probe.py`` grades them all through
``make grade``'s engine in one batch and counts false fails, false passes, collateral damage
and misnamed mistakes.
"""

import json
import random
from dataclasses import dataclass, field

import nbformat

GRADED = ("attention", "multihead", "positional_encoding", "transformer_block")


@dataclass(frozen=True)
class Bug:
    function: str
    cells: tuple  # the answer cell and any cells after it
    phrases: tuple  # each must appear in the function's section of the feedback
    ids: tuple = ()  # what the diagnosis may name; anything else named is "misnamed"


@dataclass(frozen=True)
class Probe:
    name: str
    kind: str  # "correct", "buggy" or "edge"
    habits: tuple = ()
    styles: tuple = ()  # names in STYLES: correct answers written otherwise
    bug: str = ""  # a name in BUGS
    # Or several, one per graded function: each is graded with the reference standing in for
    # the others, so four mistakes in one notebook are judged as four notebooks would be.
    bugs: tuple = ()
    # Edge cases: what each function must score ("full" or "loses") and the phrases its
    # section must hold; a function not listed must keep full marks.
    expect: dict = field(default_factory=dict)
    phrases: dict = field(default_factory=dict)
    ids: dict = field(default_factory=dict)

    @property
    def buggy_function(self):
        return BUGS[self.bug].function if self.bug else None

    @property
    def all_bugs(self):
        return ((self.bug,) if self.bug else ()) + tuple(self.bugs)


# --- correct answers in other styles ----------------------------------------------------------

STYLES = {
    # attention
    "att_renamed": ("attention", ('''\
def attention(q, k, v, mask=None):
    """Atención con nombres en minúscula."""
    d = k.shape[-1]
    s = q @ k.T / np.sqrt(d)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = softmax(s, axis=-1)
    return w @ v, w
''',)),
    "att_query_key_value": ("attention", ('''\
def attention(query, key, value, attn_mask=None):
    scale = 1.0 / np.sqrt(key.shape[1])
    logits = (query @ key.T) * scale
    if attn_mask is not None:
        logits = np.where(attn_mask, logits, -1e9)
    probs = softmax(logits)
    return probs @ value, probs
''',)),
    "att_dataclass": ("attention", ('''\
from dataclasses import dataclass


@dataclass
class ConfigAtencion:
    relleno: float = -1e9
    eje: int = -1

    def escala(self, d_k):
        return 1.0 / np.sqrt(d_k)


CFG = ConfigAtencion()


def attention(Q, K, V, mask=None):
    puntuaciones = (Q @ K.T) * CFG.escala(K.shape[1])
    if mask is not None:
        puntuaciones = np.where(mask, puntuaciones, CFG.relleno)
    pesos = softmax(puntuaciones, axis=CFG.eje)
    return pesos @ V, pesos
''',)),
    "att_closure": ("attention", ('''\
def crear_atencion(normalizar):
    """Devuelve una función de atención que usa `normalizar` como softmax."""
    def atencion(Q, K, V, mask=None):
        scores = Q @ K.T / np.sqrt(K.shape[-1])
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        weights = normalizar(scores)
        return weights @ V, weights
    return atencion


attention = crear_atencion(softmax)
''',)),
    "att_matmul_finfo": ("attention", ('''\
def attention(Q, K, V, mask=None):
    scores = np.matmul(Q, np.swapaxes(K, 0, 1)) / np.sqrt(np.shape(K)[1])
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, np.finfo(scores.dtype).min)
    scores = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(scores)
    weights = e / e.sum(axis=1, keepdims=True)
    return np.matmul(weights, V), weights
''',)),
    "att_logsumexp": ("attention", ('''\
def _log_softmax(z):
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def attention(Q, K, V, mask=None):
    z = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        z = np.where(mask, z, -np.inf)
    weights = np.exp(_log_softmax(z))
    return weights @ V, weights
''',)),
    "att_typed_asserts": ("attention", ('''\
from typing import Optional, Tuple


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray,
              mask: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
    assert Q.ndim == K.ndim == V.ndim == 2, "Q, K y V deben ser matrices"
    assert Q.shape[1] == K.shape[1], "Q y K deben tener la misma d_k"
    assert K.shape[0] == V.shape[0], "K y V deben tener tantas filas como claves"
    if mask is not None:
        assert mask.shape == (Q.shape[0], K.shape[0]), "la máscara debe ser (n, m)"
    scores = Q @ K.T / np.sqrt(K.shape[1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=1)
    return weights @ V, weights
''',)),
    "att_star_names": ("attention", ('''\
def attention(Q, K, V, mask=None):
    S = dot(Q, transpose(K)) / sqrt(K.shape[1])
    if mask is not None:
        S = where(mask, S, -inf)
    S = S - amax(S, axis=1, keepdims=True)
    W = exp(S)
    W = W / W.sum(axis=1, keepdims=True)
    return dot(W, V), W
''',)),
    "att_helper_later": ("attention", ('''\
def attention(Q, K, V, mask=None):
    pesos = _pesos_atencion(Q, K, mask)
    return pesos @ V, pesos
''',), ('''\
# Lo definí después, cuando ya funcionaba la celda de arriba.
def _pesos_atencion(Q, K, mask):
    s = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    return softmax(s)
''',)),
    "att_partial": ("attention", ('''\
from functools import partial


def _atencion_general(Q, K, V, mask=None, escala=None, relleno=-np.inf):
    escala = 1 / np.sqrt(K.shape[-1]) if escala is None else escala
    s = escala * (Q @ K.T)
    if mask is not None:
        s = np.where(mask, s, relleno)
    w = softmax(s)
    return w @ V, w


attention = partial(_atencion_general, relleno=-1e30)
''',)),
    "att_masked_array": ("attention", ('''\
def attention(Q, K, V, mask=None):
    s = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        s = np.ma.masked_array(s, mask=~np.asarray(mask, dtype=bool))
    s = s - s.max(axis=-1, keepdims=True)
    e = np.ma.exp(s)
    w = np.ma.filled(e / e.sum(axis=-1, keepdims=True), 0.0)
    return np.asarray(w) @ V, np.asarray(w)
''',)),
    "att_callable_class": ("attention", ('''\
class Atencion:
    """Atención de producto escalar escalado como objeto."""

    @staticmethod
    def puntuaciones(Q, K):
        return Q @ K.T / np.sqrt(K.shape[-1])

    def __call__(self, Q, K, V, mask=None):
        s = self.puntuaciones(Q, K)
        if mask is not None:
            s[~mask] = -np.inf
        w = softmax(s)
        self.ultimos_pesos = w
        return w @ V, w


attention = Atencion()
''',)),
    "att_tensordot": ("attention", ('''\
def attention(Q, K, V, mask=None):
    scores = np.tensordot(Q, K, axes=([1], [1])) / K.shape[1] ** 0.5
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return np.tensordot(weights, V, axes=1), weights
''',)),
    "att_apply_along_axis": ("attention", ('''\
def _softmax_vector(z):
    z = z - z.max()
    e = np.exp(z)
    return e / e.sum()


def attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.apply_along_axis(_softmax_vector, 1, scores)
    return weights @ V, weights
''',)),
    "att_kwonly_mask": ("attention", ('''\
def attention(Q, K, V, *, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
''',)),
    "att_returns_list": ("attention", ('''\
def attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return [weights @ V, weights]
''',)),
    "att_unicode_tabs": ("attention", (
        "def attention(Q, K, V, mask=None):\n"
        "\tα = 1 / np.sqrt(K.shape[-1])\n"
        "\tpuntuación = α * (Q @ K.T)\n"
        "\tif mask is not None:\n"
        "\t\tpuntuación = np.where(mask, puntuación, -np.inf)\n"
        "\tω = softmax(puntuación)\n"
        "\treturn ω @ V, ω\n",)),
    "att_prints": ("attention", ('''\
def attention(Q, K, V, mask=None):
    print("Q", Q.shape, "K", K.shape, "V", V.shape)  # depuración
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    print("suma de cada fila:", weights.sum(axis=1))
    return weights @ V, weights
''',)),
    "att_global_later": ("attention", ('''\
def attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, RELLENO)
    weights = softmax(scores)
    return weights @ V, weights
''',), ("RELLENO = -np.inf  # lo uso en attention, más arriba\n",)),
    # multihead
    "mh_renamed": ("multihead", ('''\
def multihead(x, cabezas, w_o, mascara=None):
    salidas = []
    for w_q, w_k, w_v in cabezas:
        salida, _ = attention(x @ w_q, x @ w_k, x @ w_v, mascara)
        salidas.append(salida)
    return np.concatenate(salidas, axis=1) @ w_o
''',)),
    "mh_reduce": ("multihead", ('''\
from functools import reduce


def multihead(X, heads, W_O, mask=None):
    def una_cabeza(pesos):
        W_Q, W_K, W_V = pesos
        return attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
    concat = reduce(lambda a, b: np.concatenate([a, b], axis=1), map(una_cabeza, heads))
    return concat @ W_O
''',)),
    "mh_dataclass": ("multihead", ('''\
from dataclasses import dataclass


@dataclass
class Cabeza:
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray

    def __call__(self, X, mask=None):
        salida, _ = attention(X @ self.W_Q, X @ self.W_K, X @ self.W_V, mask)
        return salida


def multihead(X, heads, W_O, mask=None):
    cabezas = [Cabeza(*h) for h in heads]
    return np.hstack([c(X, mask) for c in cabezas]) @ W_O
''',)),
    "mh_preallocated": ("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    n = X.shape[0]
    d_v = heads[0][2].shape[1]
    concat = np.empty((n, len(heads) * d_v))
    for i, (W_Q, W_K, W_V) in enumerate(heads):
        concat[:, i * d_v:(i + 1) * d_v] = attention(X @ W_Q, X @ W_K, X @ W_V, mask=mask)[0]
    return concat @ W_O
''',)),
    "mh_block": ("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    return np.block([[attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads]]) @ W_O
''',)),
    "mh_zip_dot": ("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    Wq, Wk, Wv = zip(*heads)
    salidas = []
    for i in range(len(heads)):
        o, _ = attention(X.dot(Wq[i]), X.dot(Wk[i]), X.dot(Wv[i]), mask)
        salidas.append(o)
    return np.concatenate(salidas, axis=-1).dot(W_O)
''',)),
    "mh_inline_attention": ("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    outs = []
    for W_Q, W_K, W_V in heads:
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        s = Q @ K.T / np.sqrt(W_K.shape[1])
        if mask is not None:
            s = np.where(mask, s, -1e9)
        outs.append(softmax(s) @ V)
    return np.concatenate(outs, 1) @ W_O
''',)),
    "mh_helper_later": ("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    return _concatenar_cabezas(X, heads, mask) @ W_O
''',), ('''\
def _concatenar_cabezas(X, heads, mask):
    return np.concatenate([attention(X @ a, X @ b, X @ c, mask)[0] for a, b, c in heads],
                          axis=1)
''',)),
    "mh_keywords": ("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    salidas = [attention(Q=X @ W_Q, K=X @ W_K, V=X @ W_V, mask=mask)[0]
               for (W_Q, W_K, W_V) in heads]
    return np.concatenate(salidas, axis=1) @ W_O
''',)),
    # positional_encoding
    "pe_outer": ("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    omega = 1.0 / np.power(10000.0, np.arange(0, d_model, 2) / d_model)
    angulos = np.outer(np.arange(n_positions), omega)
    pe = np.zeros((n_positions, d_model))
    pe[:, ::2] = np.sin(angulos)
    pe[:, 1::2] = np.cos(angulos)[:, :d_model // 2]
    return pe, omega
''',)),
    "pe_fromfunction": ("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    def valor(pos, j):
        par = j - j % 2
        angulo = pos / 10000 ** (par / d_model)
        return np.where(j % 2 == 0, np.sin(angulo), np.cos(angulo))
    pe = np.fromfunction(valor, (n_positions, d_model))
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    return pe, omega
''',)),
    "pe_complex": ("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    z = np.exp(1j * np.arange(n_positions)[:, None] * omega)  # cos + i·sin
    pe = np.empty((n_positions, d_model))
    pe[:, 0::2] = z.imag
    pe[:, 1::2] = z.real[:, : d_model // 2]
    return pe, omega
''',)),
    "pe_lru_cache": ("positional_encoding", ('''\
from functools import lru_cache


@lru_cache(maxsize=32)
def positional_encoding(n_positions, d_model):
    pos = np.arange(n_positions)[:, None]
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])
    return pe, omega
''',)),
    "pe_comprehension": ("positional_encoding", ('''\
import math


def positional_encoding(n_positions, d_model):
    def entrada(pos, j):
        angulo = pos / 10000 ** ((j - j % 2) / d_model)
        return math.sin(angulo) if j % 2 == 0 else math.cos(angulo)
    pe = np.array([[entrada(pos, j) for j in range(d_model)] for pos in range(n_positions)])
    omega = np.array([1 / 10000 ** (2 * i / d_model) for i in range((d_model + 1) // 2)])
    return pe, omega
''',)),
    "pe_exp_matmul": ("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    n_sin, n_cos = (d_model + 1) // 2, d_model // 2
    i = np.arange(n_sin)
    omega = np.exp(-2 * i * np.log(10000) / d_model)
    pos = np.arange(n_positions, dtype=float).reshape(-1, 1)
    pe = np.empty((n_positions, d_model))
    pe[:, 0::2] = np.sin(pos @ omega.reshape(1, -1))
    pe[:, 1::2] = np.cos(pos @ omega[:n_cos].reshape(1, -1))
    return pe, omega
''',)),
    "pe_helper_later": ("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    omega = _frecuencias(d_model)
    angulos = np.arange(n_positions)[:, None] * omega
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angulos)
    pe[:, 1::2] = np.cos(angulos[:, : d_model // 2])
    return pe, omega
''',), ('''\
def _frecuencias(d_model):
    return 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
''',)),
    "pe_star_names": ("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    omega = 1 / power(10000, arange(0, d_model, 2) / d_model)
    pe = zeros((n_positions, d_model))
    pe[:, 0::2] = sin(outer(arange(n_positions), omega))
    pe[:, 1::2] = cos(outer(arange(n_positions), omega[: d_model // 2]))
    return pe, omega
''',)),
    # transformer_block
    "blk_renamed": ("transformer_block", ('''\
def transformer_block(X, cabezas, Wo, w1, B1, w2, B2, m=None):
    h = layer_norm(X + multihead(X, cabezas, Wo, m))
    return layer_norm(h + np.maximum(0, h @ w1 + B1) @ w2 + B2)
''',)),
    "blk_sublayer_closure": ("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    def subcapa(entrada, f):
        return layer_norm(entrada + f(entrada))
    x = subcapa(x, lambda z: multihead(z, heads, W_O, mask))
    return subcapa(x, lambda z: np.maximum(z @ W1 + b1, 0) @ W2 + b2)
''',)),
    "blk_dataclass_norm": ("transformer_block", ('''\
from dataclasses import dataclass


@dataclass
class NormaCapa:
    eps: float = 1e-6

    def __call__(self, x):
        media = x.mean(axis=-1, keepdims=True)
        var = ((x - media) ** 2).mean(axis=-1, keepdims=True)
        return (x - media) / np.sqrt(var + self.eps)


norma = NormaCapa()


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    h = norma(x + multihead(x, heads, W_O, mask))
    z = h @ W1 + b1
    return norma(h + (z * (z > 0)) @ W2 + b2)
''',)),
    "blk_clip_keywords": ("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    atendido = multihead(x, heads=heads, W_O=W_O, mask=mask)
    x = layer_norm(x + atendido)
    ffn = np.clip(x @ W1 + b1, 0, None) @ W2 + b2
    return layer_norm(x + ffn)
''',)),
    "blk_helper_later": ("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(x + red_ffn(x, W1, b1, W2, b2))
''',), ('''\
def red_ffn(z, W1, b1, W2, b2):
    return np.fmax(z @ W1 + b1, 0.0) @ W2 + b2
''',)),
    "blk_in_place": ("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = x.copy()
    x += multihead(x, heads, W_O, mask)
    x = layer_norm(x)
    oculto = x @ W1
    oculto += b1
    np.maximum(oculto, 0, out=oculto)
    x = x + oculto @ W2 + b2
    return layer_norm(x)
''',)),
    "blk_std_eps0": ("transformer_block", ('''\
def _normaliza(z):
    return (z - z.mean(axis=1)[:, None]) / z.std(axis=1)[:, None]


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    h = _normaliza(x + multihead(x, heads, W_O, mask))
    return _normaliza(h + np.maximum(0, h @ W1 + b1) @ W2 + b2)
''',)),
    "blk_eps_1e6_var": ("transformer_block", ('''\
EPS = 1e-6


def ln(z):
    mu = np.mean(z, axis=-1, keepdims=True)
    return (z - mu) / np.sqrt(np.var(z, axis=-1, keepdims=True) + EPS)


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = ln(x + multihead(x, heads, W_O, mask))
    return ln(x + np.maximum(0, x @ W1 + b1) @ W2 + b2)
''',)),
    "blk_star_names": ("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    h = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(h + dot(maximum(0, dot(h, W1) + b1), W2) + b2)
''',)),
}


# --- one mistake each ----------------------------------------------------------------------------

def _att(body):
    return ("def attention(Q, K, V, mask=None):\n" + body,)


BUGS = {
    # attention
    "att_sqrt_n": Bug("attention", _att('''\
    d_k = Q.shape[0]
    scores = Q @ K.T / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
'''), ("número de consultas",), ("attention.sqrt_of_num_queries",)),
    "att_sqrt_m": Bug("attention", _att('''\
    scores = np.dot(Q, K.T) / np.sqrt(len(K))
    if mask is not None:
        scores[~mask] = -np.inf
    weights = softmax(scores, axis=1)
    return np.dot(weights, V), weights
'''), ("número de claves",), ("attention.sqrt_of_num_keys",)),
    "att_weights_T": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights.T
'''), ("traspuest",), ("attention.weights_transposed",)),
    "att_float16": Bug("attention", _att('''\
    Q, K, V = (np.asarray(a, dtype=np.float16) for a in (Q, K, V))  # para ahorrar memoria
    scores = Q @ K.T / np.float16(np.sqrt(K.shape[-1]))
    if mask is not None:
        scores = np.where(mask, scores, np.float16(-np.inf))
    weights = softmax(scores)
    return weights @ V, weights
'''), ("float16",), ("precision.float16",)),
    "att_mask_added": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores)
    return weights @ V, weights
'''), ("Sumas la máscara",), ("attention.mask_added",)),
    "att_sqrt_dv": Bug("attention", _att('''\
    d = V.shape[1]
    weights = softmax(np.where(mask, Q @ K.T / np.sqrt(d), -np.inf) if mask is not None
                      else Q @ K.T / np.sqrt(d))
    return weights @ V, weights
'''), ("d_v",), ("attention.sqrt_of_d_v",)),
    "att_keys_for_values": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ K, weights
'''), ("por K",), ("attention.keys_for_values",)),
    "att_no_scale": Bug("attention", _att('''\
    scores = Q.dot(K.T)
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = softmax(scores)
    return weights.dot(V), weights
'''), ("√d_k",), ("attention.no_sqrt_dk",)),
    "att_softmax_axis0": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=0)
    return weights @ V, weights
'''), ("por columnas",), ("attention.softmax_over_queries",)),
    "att_unshifted": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores)
    weights = e / e.sum(axis=1)[:, None]
    return weights @ V, weights
'''), ("máximo",), ("attention.unshifted_softmax",)),
    "att_mask_after": Bug("attention", _att('''\
    weights = softmax(Q @ K.T / np.sqrt(K.shape[-1]))
    if mask is not None:
        weights = weights * mask
    return weights @ V, weights
'''), ("después de la softmax",), ("attention.mask_after_softmax",)),
    "att_divides_dk": Bug("attention", _att('''\
    scores = Q @ K.T / K.shape[1]
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
'''), ("d_k",), ("attention.divides_by_dk",)),
    # multihead
    "mh_wo_per_head_concat": Bug("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    bloques = np.split(W_O, len(heads), axis=0)  # un bloque de W_O por cabeza
    partes = [attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0] @ B
              for (W_Q, W_K, W_V), B in zip(heads, bloques)]
    return np.concatenate(partes, axis=1)
''',), ("por separado",), ("multihead.w_o_per_head",)),
    "mh_wo_per_head_mean": Bug("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    d_v = heads[0][2].shape[1]
    proyectadas = []
    for i, (W_Q, W_K, W_V) in enumerate(heads):
        cabeza = attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
        proyectadas.append(cabeza @ W_O[i * d_v:(i + 1) * d_v])
    return np.mean(proyectadas, axis=0)
''',), ("dividida por h",), ("multihead.divided_by_h",)),
    "mh_wo_whole_each": Bug("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    total = 0
    for W_Q, W_K, W_V in heads:
        total = total + attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0] @ W_O
    return total
''',), ("por separado",),
        # Summing the heads first raises the very same error: both are named, as candidates.
        ("multihead.w_o_per_head", "multihead.sums_heads")),
    "mh_one_big": Bug("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    W_Q = np.hstack([h[0] for h in heads])
    W_K = np.hstack([h[1] for h in heads])
    W_V = np.hstack([h[2] for h in heads])
    salida, _ = attention(X @ W_Q, X @ W_K, X @ W_V, mask)
    return salida @ W_O
''',), ("una sola atención",), ("multihead.heads_not_split",)),
    "mh_dk_dmodel_h": Bug("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    d_k = X.shape[1] // len(heads)
    outs = []
    for W_Q, W_K, W_V in heads:
        s = (X @ W_Q) @ (X @ W_K).T / np.sqrt(d_k)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        outs.append(softmax(s) @ (X @ W_V))
    return np.concatenate(outs, axis=1) @ W_O
''',), ("d_model/h",), ("multihead.scales_by_d_model_over_h",)),
    "mh_sqrt_dv": Bug("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    outs = []
    for W_Q, W_K, W_V in heads:
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        s = Q @ K.T / np.sqrt(V.shape[-1])
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        outs.append(softmax(s) @ V)
    return np.hstack(outs) @ W_O
''',), ("d_v",), ("multihead.scales_by_d_v",)),
    "mh_wk_values": Bug("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    cabezas = [attention(X @ W_Q, X @ W_K, X @ W_K, mask)[0] for W_Q, W_K, W_V in heads]
    return np.concatenate(cabezas, axis=1) @ W_O
''',), ("W_K",), ("multihead.w_k_for_values",)),
    "mh_no_wo": Bug("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    return np.hstack([attention(X @ a, X @ b, X @ c, mask)[0] for a, b, c in heads])
''',), ("W_O",), ("multihead.no_w_o",)),
    "mh_mask_not_passed": Bug("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    salidas = []
    for W_Q, W_K, W_V in heads:
        salidas.append(attention(X @ W_Q, X @ W_K, X @ W_V)[0])
    return np.concatenate(salidas, axis=1) @ W_O
''',), ("máscara",), ("multihead.mask_not_passed",)),
    "mh_sum_heads": Bug("multihead", ('''\
def multihead(X, heads, W_O, mask=None):
    return np.sum([attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads], axis=0) @ W_O
''',), ("Sumas",),
        ("multihead.sums_heads", "multihead.w_o_per_head")),  # the same error: candidates
    # positional_encoding
    "pe_reshape_not_T": Bug("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((d_model, n_positions))  # una fila por dimensión, como en el mapa de calor
    pos = np.arange(n_positions)
    pe[0::2] = np.sin(omega[:, None] * pos)
    pe[1::2] = np.cos(omega[: d_model // 2, None] * pos)
    return pe.reshape(n_positions, d_model), omega
''',), ("en lugar de trasponer",), ("positional_encoding.reshaped_not_transposed",)),
    "pe_floor_div": Bug("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    i = np.arange((d_model + 1) // 2)
    omega = 1 / 10000 ** (2 * i // d_model)
    pos = np.arange(n_positions)[:, None]
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])
    return pe, omega
''',), ("división entera",), ("positional_encoding.frequencies",)),
    "pe_swapped": Bug("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    omega = np.exp(-np.log(10000.0) * np.arange(0, d_model, 2) / d_model)
    ang = np.arange(n_positions)[:, None] * omega
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.cos(ang)
    pe[:, 1::2] = np.sin(ang[:, : d_model // 2])
    return pe, omega
''',), ("senos y cosenos",), ("positional_encoding.sin_cos_swapped",)),
    "pe_from_one": Bug("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    pos = np.arange(1, n_positions + 1).reshape(-1, 1)
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, ::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega)[:, : d_model // 2]
    return pe, omega
''',), ("desde 1",), ("positional_encoding.positions_from_one",)),
    "pe_base_1000": Bug("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    omega = 1 / 1000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(np.arange(n_positions)[:, None] * omega)
    pe[:, 1::2] = np.cos(np.arange(n_positions)[:, None] * omega[: d_model // 2])
    return pe, omega
''',), ("la base es 1000",), ("positional_encoding.frequencies",)),
    "pe_i_over_d": Bug("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    i = np.arange((d_model + 1) // 2)
    omega = 1 / np.power(10000, i / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(np.arange(n_positions)[:, None] * omega)
    pe[:, 1::2] = np.cos(np.arange(n_positions)[:, None] * omega[: d_model // 2])
    return pe, omega
''',), ("i/d_model",), ("positional_encoding.exponent_i_over_d",)),
    "pe_transposed": Bug("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    pos = np.arange(n_positions)[:, None]
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])
    return pe.T, omega  # así se ve como en la figura
''',), ("traspuesta",), ("positional_encoding.transposed",)),
    "pe_halves": Bug("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    ang = np.arange(n_positions)[:, None] * omega
    return np.concatenate([np.sin(ang), np.cos(ang[:, : d_model // 2])], axis=1), omega
''',), ("todos los senos",), ("positional_encoding.halves_concatenated",)),
    "pe_not_inverted": Bug("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    omega = 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(np.arange(n_positions)[:, None] / omega)
    pe[:, 1::2] = np.cos(np.arange(n_positions)[:, None] / omega[: d_model // 2])
    return pe, omega
''',), ("crecen con i",),
        # pe is right (it divides by omega): only the omega returned is inverted.
        ("positional_encoding.frequencies", "positional_encoding.frequency_not_inverted")),
    "pe_float16": Bug("positional_encoding", ('''\
def positional_encoding(n_positions, d_model):
    pos = np.arange(n_positions, dtype=np.float16)[:, None]
    omega = (1 / 10000 ** (np.arange(0, d_model, 2) / d_model)).astype(np.float16)
    pe = np.zeros((n_positions, d_model), dtype=np.float16)
    pe[:, 0::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])
    return pe, omega
''',), ("float16",), ("precision.float16",)),
    # transformer_block
    "blk_leaky": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    z = x @ W1 + b1
    return layer_norm(x + np.where(z > 0, z, 0.01 * z) @ W2 + b2)
''',), ("leaky",), ("transformer_block.leaky_relu",)),
    "blk_leaky_02": Bug("transformer_block", ('''\
def leaky_relu(z, alpha=0.2):
    return np.maximum(alpha * z, z)


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(x + leaky_relu(x @ W1 + b1) @ W2 + b2)
''',), ("leaky",), ("transformer_block.leaky_relu",)),
    "blk_no_b1": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(x + np.maximum(0, x @ W1) @ W2 + b2)
''',), ("b_1",), ("transformer_block.no_b1",)),
    "blk_no_b2": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    ffn = np.maximum(0, x @ W1 + b1) @ W2
    return layer_norm(x + ffn)
''',), ("b_2",), ("transformer_block.no_b2",)),
    "blk_b1_after_relu": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    oculto = np.maximum(0, x @ W1) + b1
    return layer_norm(x + oculto @ W2 + b2)
''',), ("después de la ReLU",), ("transformer_block.b1_after_relu",)),
    "blk_residual_from_input": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    h = layer_norm(x + multihead(x, heads, W_O, mask))
    ffn = np.maximum(0, h @ W1 + b1) @ W2 + b2
    return layer_norm(x + ffn)
''',), ("entrada del bloque",), ("transformer_block.second_residual_from_input",)),
    "blk_no_attn_residual": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    h = layer_norm(multihead(x, heads, W_O, mask))
    return layer_norm(h + np.maximum(0, h @ W1 + b1) @ W2 + b2)
''',), ("residual de la atención",), ("transformer_block.no_attention_residual",)),
    "blk_no_ffn_residual": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    h = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(np.maximum(0, h @ W1 + b1) @ W2 + b2)
''',), ("residual de la FFN",), ("transformer_block.no_ffn_residual",)),
    "blk_w1_T": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(x + np.maximum(0, x @ W1.T + b1) @ W2 + b2)
''',), ("W_1",), ("transformer_block.w1_transposed",)),
    "blk_one_layer": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(x + np.maximum(0, x @ W1 + b1))  # la FFN
''',), ("una sola capa",), ("transformer_block.one_layer_ffn",)),
    "blk_eps_1e3": Bug("transformer_block", ('''\
def norma(z, eps=1e-3):
    return (z - z.mean(-1, keepdims=True)) / np.sqrt(z.var(-1, keepdims=True) + eps)


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = norma(x + multihead(x, heads, W_O, mask))
    return norma(x + np.maximum(0, x @ W1 + b1) @ W2 + b2)
''',), ("ε ≈ 10⁻³",), ("transformer_block.layer_norm_epsilon",)),
    "blk_pre_ln": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = x + multihead(layer_norm(x), heads, W_O, mask)
    return x + np.maximum(0, layer_norm(x) @ W1 + b1) @ W2 + b2
''',), ("pre-LN",), ("transformer_block.pre_ln",)),
    "blk_gelu": Bug("transformer_block", ('''\
def gelu(z):
    return 0.5 * z * (1 + np.tanh(0.7978845608 * (z + 0.044715 * z ** 3)))


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(x + gelu(x @ W1 + b1) @ W2 + b2)
''',), ("GELU",), ("transformer_block.gelu_instead_of_relu",)),
    "blk_no_final_norm": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return x + np.maximum(0, x @ W1 + b1) @ W2 + b2
''',), ("LayerNorm final",), ("transformer_block.no_final_norm",)),
    "blk_mask_not_passed": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O))
    return layer_norm(x + np.maximum(0, x @ W1 + b1) @ W2 + b2)
''',), ("máscara",), ("transformer_block.mask_not_passed",)),
    "blk_norm_tokens": Bug("transformer_block", ('''\
def ln_columnas(z, eps=1e-5):
    return (z - z.mean(axis=0)) / np.sqrt(z.var(axis=0) + eps)


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = ln_columnas(x + multihead(x, heads, W_O, mask))
    return ln_columnas(x + np.maximum(0, x @ W1 + b1) @ W2 + b2)
''',), ("por columnas",), ("transformer_block.layer_norm_over_tokens",)),
    "blk_ddof1": Bug("transformer_block", ('''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    def ln(z):
        return (z - z.mean(1, keepdims=True)) / np.sqrt(z.var(1, ddof=1, keepdims=True) + 1e-5)
    x = ln(x + multihead(x, heads, W_O, mask))
    return ln(x + np.maximum(0, x @ W1 + b1) @ W2 + b2)
''',), ("d_model − 1",), ("transformer_block.layer_norm_unbiased_variance",)),
}


# --- habits: what a notebook does around the answers -------------------------------------------

def _imports_cell(nb):
    return next(c for c in nb.cells if c.cell_type == "code" and "import numpy as np" in c.source)


def _index_after_check(nb, function):
    """The index just after the ``grader.check("function")`` cell."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and cell.source.strip().startswith(f'grader.check("{function}")'):
            return index + 1
    raise ValueError(f"no grader.check for {function}")


def _prefix_imports(text):
    def apply(nb, rng):
        cell = _imports_cell(nb)
        cell.source = text + cell.source
    return apply


def _cell_before_imports(text):
    def apply(nb, rng):
        index = nb.cells.index(_imports_cell(nb))
        nb.cells.insert(index, nbformat.v4.new_code_cell(text))
    return apply


def _cell_after_imports(text):
    def apply(nb, rng):
        index = nb.cells.index(_imports_cell(nb))
        nb.cells.insert(index + 1, nbformat.v4.new_code_cell(text))
    return apply


def _cell_after_check(function, *texts):
    def apply(nb, rng):
        index = _index_after_check(nb, function)
        for offset, text in enumerate(texts):
            nb.cells.insert(index + offset, nbformat.v4.new_code_cell(text))
    return apply


def _magic_on_answer(function, magic):
    def apply(nb, rng):
        cell = _answer_cell(nb, function)
        cell.source = magic + cell.source
    return apply


def _shuffle_counts(nb, rng):
    """Saved after running cells out of order, with stale outputs and an old error."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    numbers = list(range(1, 3 * len(code)))
    rng.shuffle(numbers)
    for cell, number in zip(code, numbers):
        cell.execution_count = number
        cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "array([...])"},
                                               execution_count=number)]
    code[len(code) // 2].outputs.append(nbformat.v4.new_output(
        "error", ename="NameError", evalue="name 'attention' is not defined",
        traceback=["NameError: name 'attention' is not defined"]))


def _crlf(nb, rng):
    for cell in nb.cells:
        cell.source = cell.source.replace("\n", "\r\n")


HABITS = {
    # pip lines and shell escapes, in every form IPython knows
    "pip_magic_first": _prefix_imports("%pip install -q numpy matplotlib\n"),
    "bang_pip_first": _prefix_imports("!pip install numpy matplotlib\n"),
    "pip_own_cell": _cell_before_imports("!pip install -q numpy==1.26.4 matplotlib\n"),
    "pip_requirements": _prefix_imports("%pip install -r requirements.txt\n"),
    "conda_first": _prefix_imports("%conda install -y numpy\n"),
    "bang_bang": _prefix_imports("!!python --version\n"),
    "capture_listing": _cell_after_imports("archivos = !ls\nprint(len(archivos), 'archivos')\n"
                                           "versión = !python -c 'import numpy; print(numpy.__version__)'\n"),
    "sx_system": _cell_after_imports("%sx nvidia-smi\nsalida = %system echo hola\n"
                                     "print('sigo')\n"),
    "bash_cell": _cell_after_imports("%%bash\necho 'instalando'\npip install -q numpy\n"),
    "sh_cell": _cell_after_imports("%%sh\nls -la\n"),
    "script_cell": _cell_after_imports("%%script bash\nwget https://example.org/datos.npy\n"),
    "bang_in_block": _cell_after_imports("try:\n    import tqdm\nexcept ImportError:\n"
                                         "    !pip install tqdm\nprint('listo')\n"),
    "bang_wget": _cell_after_imports("!wget -q https://example.org/pesos.npz\n"
                                     "!ls -la\nEXPERIMENTO = 'base'\n"),
    "alias_ls": _cell_after_imports("%ls\n%alias saluda echo hola\n%saluda\n"),
    # magics that IPython runs itself
    "matplotlib_inline": _prefix_imports("%matplotlib inline\n"),
    "autoreload": _prefix_imports("%load_ext autoreload\n%autoreload 2\n"),
    "config_retina": _cell_after_imports("%config InlineBackend.figure_format = 'retina'\n"
                                         "%precision 4\n%env OMP_NUM_THREADS=1\n"),
    "who": _cell_after_check("attention", "%who\n%whos ndarray\n"),
    "time_lines": _cell_after_check("positional_encoding",
                                    "%time pe_demo, _ = positional_encoding(50, 16)\n"
                                    "%timeit -n 3 -r 1 positional_encoding(50, 16)\n"),
    "timeit_cell": _cell_after_check("multihead", "%%timeit -n 2 -r 1\n"
                                                  "multihead(X, heads, W_O, mask=causal)\n"),
    "capture_demo": _cell_after_check("attention", "%%capture salida_demo\n"
                                                   "print(attention(np.eye(2), np.eye(2), "
                                                   "np.eye(2)))\n"),
    # imports
    "star_numpy": _cell_after_imports("from numpy import *\n"),
    "star_numpy_math": _cell_after_imports("from numpy import *\nfrom math import pi, e\n"),
    # failing demo cells
    "failing_demos": _cell_after_check(
        "attention",
        "attention(X_toy)  # me faltan argumentos\n",
        "assert np.allclose(softmax(np.ones(3)).sum(), 2), 'esto falla a propósito'\n",
        "nombre = input('¿Cómo te llamas? ')\n"),
    "failing_plot": _cell_after_check("positional_encoding",
                                      "plt.plot(PE_no_existe)\nplt.show()\n"),
    "missing_module_demo": _cell_after_check("transformer_block",
                                             "import seaborn as sns\nsns.heatmap(y)\n"),
    # cell magics on a graded cell: IPython runs the cell, and the def is kept
    "time_on_attention": _magic_on_answer("attention", "%%time\n"),
    "capture_on_multihead": _magic_on_answer("multihead", "%%capture\n"),
    # the saved file itself
    "shuffled_counts": _shuffle_counts,
    "crlf": _crlf,
}


def _writefile_helpers(nb, rng):
    index = nb.cells.index(_imports_cell(nb))
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(
        "%%writefile ayudas_atencion.py\nimport numpy as np\n\n\n"
        "def filas_suman_uno(w):\n    return bool(np.allclose(w.sum(axis=-1), 1))\n"))
    nb.cells.insert(index + 2, nbformat.v4.new_code_cell("from ayudas_atencion import *\n"))
    at = _index_after_check(nb, "attention")
    nb.cells.insert(at, nbformat.v4.new_code_cell(
        "print(filas_suman_uno(attention(np.eye(3), np.eye(3), np.eye(3))[1]))\n"))


HABITS["writefile_helpers"] = _writefile_helpers

# Habits with a shell escape: the feedback must say, once, that it was skipped.
SHELL_HABITS = {"pip_magic_first", "bang_pip_first", "pip_own_cell", "pip_requirements",
                "conda_first", "bang_bang", "capture_listing", "sx_system", "bash_cell",
                "sh_cell", "script_cell", "bang_in_block", "bang_wget", "alias_ls"}

# Habits that change what the notebook's own lab run reads from the saved file (the lab
# rebuilds the functions statically until the lead's change): the challenge may lose points
# for these while grading keeps every function's.
LAB_HABITS = {"star_numpy", "star_numpy_math", "time_on_attention",
              "capture_on_multihead"}


# --- the table -----------------------------------------------------------------------------------

def _correct(name, *habits, styles=()):
    return Probe(name, "correct", tuple(habits), tuple(styles))


def _buggy(bug, *habits, styles=()):
    return Probe(f"bug_{bug}", "buggy", tuple(habits), tuple(styles), bug=bug)


PROBES = [
    # correct notebooks: pip lines and shell escapes
    _correct("ok_pip_magic_first", "pip_magic_first"),
    _correct("ok_bang_pip_first", "bang_pip_first"),
    _correct("ok_pip_own_cell", "pip_own_cell", styles=("att_renamed",)),
    _correct("ok_pip_requirements", "pip_requirements", "matplotlib_inline",
             styles=("mh_reduce",)),
    _correct("ok_conda", "conda_first", styles=("pe_outer",)),
    _correct("ok_bang_bang", "bang_bang", styles=("blk_renamed",)),
    _correct("ok_capture_listing", "capture_listing", styles=("att_dataclass",)),
    _correct("ok_sx_system", "sx_system", styles=("mh_dataclass",)),
    _correct("ok_bash_cell", "bash_cell", styles=("pe_fromfunction",)),
    _correct("ok_sh_cell", "sh_cell", styles=("blk_sublayer_closure",)),
    _correct("ok_script_cell", "script_cell", styles=("att_closure",)),
    _correct("ok_bang_in_block", "bang_in_block", styles=("mh_preallocated",)),
    _correct("ok_bang_wget", "bang_wget", styles=("pe_complex",)),
    _correct("ok_alias_ls", "alias_ls", styles=("blk_dataclass_norm",)),
    _correct("ok_pip_and_magics", "pip_magic_first", "matplotlib_inline", "autoreload",
             styles=("att_matmul_finfo", "mh_block")),
    # magics IPython runs itself
    _correct("ok_autoreload", "autoreload", styles=("att_logsumexp",)),
    _correct("ok_config", "config_retina", styles=("mh_zip_dot", "pe_lru_cache")),
    _correct("ok_who", "who", styles=("att_typed_asserts",)),
    _correct("ok_time_lines", "time_lines", styles=("pe_comprehension",)),
    _correct("ok_timeit_cell", "timeit_cell", styles=("mh_inline_attention",)),
    _correct("ok_capture_demo", "capture_demo", styles=("att_tensordot",)),
    _correct("ok_writefile", "writefile_helpers", styles=("blk_clip_keywords",)),
    # star imports
    _correct("ok_star_numpy", "star_numpy", styles=("att_star_names",)),
    _correct("ok_star_numpy_pe", "star_numpy_math", styles=("pe_star_names",)),
    _correct("ok_star_numpy_block", "star_numpy", "pip_magic_first",
             styles=("blk_star_names",)),
    # helpers after the graded cell
    _correct("ok_helper_after_attention", styles=("att_helper_later",)),
    _correct("ok_helper_after_multihead", "failing_demos", styles=("mh_helper_later",)),
    _correct("ok_helper_after_pe", styles=("pe_helper_later",)),
    _correct("ok_helper_after_block", "shuffled_counts", styles=("blk_helper_later",)),
    _correct("ok_global_after_attention", styles=("att_global_later",)),
    # dataclasses, closures, partial, objects
    _correct("ok_partial", styles=("att_partial", "mh_keywords")),
    _correct("ok_callable_class", "matplotlib_inline", styles=("att_callable_class",)),
    _correct("ok_masked_array", styles=("att_masked_array", "pe_exp_matmul")),
    _correct("ok_apply_along_axis", "time_lines", styles=("att_apply_along_axis",)),
    _correct("ok_in_place_block", styles=("blk_in_place",)),
    _correct("ok_std_eps0", "bang_pip_first", styles=("blk_std_eps0",)),
    _correct("ok_eps_1e6", styles=("blk_eps_1e6_var",)),
    # renamed parameters: the public tests and the notebook call positionally
    _correct("ok_renamed_all", styles=("att_renamed", "mh_renamed", "blk_renamed")),
    _correct("ok_query_key_value", "pip_own_cell", styles=("att_query_key_value",)),
    _correct("ok_kwonly_mask", styles=("att_kwonly_mask",)),
    _correct("ok_returns_list", styles=("att_returns_list",)),
    # failing demo cells, shuffled counts, the saved file
    _correct("ok_failing_demos", "failing_demos"),
    _correct("ok_failing_plot", "failing_plot", "missing_module_demo"),
    _correct("ok_shuffled", "shuffled_counts"),
    _correct("ok_shuffled_pip", "shuffled_counts", "pip_magic_first",
             styles=("mh_reduce", "pe_outer")),
    _correct("ok_crlf", "crlf", styles=("att_dataclass",)),
    _correct("ok_unicode_tabs", styles=("att_unicode_tabs",)),
    _correct("ok_prints", "who", styles=("att_prints",)),
    _correct("ok_everything", "pip_magic_first", "matplotlib_inline", "capture_listing",
             "bash_cell", "failing_demos", "shuffled_counts",
             styles=("att_closure", "mh_dataclass", "pe_fromfunction", "blk_in_place")),
    _correct("ok_time_on_answer", "time_on_attention", "capture_on_multihead"),
    _correct("ok_plain"),
    # buggy notebooks: one mistake in one function each, amid the same habits
    _buggy("att_sqrt_n", "pip_magic_first"),
    _buggy("att_sqrt_m", "bang_pip_first"),
    _buggy("att_weights_T", "matplotlib_inline"),
    _buggy("att_float16", "shuffled_counts"),
    _buggy("att_mask_added", "failing_demos"),
    _buggy("att_sqrt_dv", "capture_listing"),
    _buggy("att_keys_for_values", "bash_cell"),
    _buggy("att_no_scale", "star_numpy"),
    _buggy("att_softmax_axis0", "autoreload"),
    _buggy("att_unshifted", "config_retina"),
    _buggy("att_mask_after", "who"),
    _buggy("att_divides_dk", "pip_own_cell"),
    _buggy("mh_wo_per_head_concat", "pip_magic_first", styles=("att_dataclass",)),
    _buggy("mh_wo_per_head_mean", "timeit_cell"),
    _buggy("mh_wo_whole_each", "bang_wget"),
    _buggy("mh_one_big", "shuffled_counts", styles=("pe_outer",)),
    _buggy("mh_dk_dmodel_h", "sx_system"),
    _buggy("mh_sqrt_dv", "matplotlib_inline"),
    _buggy("mh_wk_values", "failing_demos"),
    _buggy("mh_no_wo", "star_numpy"),
    _buggy("mh_mask_not_passed", "crlf"),
    _buggy("mh_sum_heads", "conda_first"),
    _buggy("pe_reshape_not_T", "pip_magic_first"),
    _buggy("pe_floor_div", "time_lines"),
    _buggy("pe_swapped", "shuffled_counts"),
    _buggy("pe_from_one", "sh_cell"),
    _buggy("pe_base_1000", "autoreload", styles=("blk_sublayer_closure",)),
    _buggy("pe_i_over_d", "failing_plot"),
    _buggy("pe_transposed", "bang_in_block"),
    _buggy("pe_halves", "writefile_helpers"),
    _buggy("pe_not_inverted", "matplotlib_inline"),
    _buggy("pe_float16", "pip_own_cell"),
    _buggy("blk_leaky", "pip_magic_first"),
    _buggy("blk_leaky_02", "shuffled_counts"),
    _buggy("blk_no_b1", "bang_pip_first", styles=("mh_preallocated",)),
    _buggy("blk_no_b2", "failing_demos"),
    _buggy("blk_b1_after_relu", "autoreload"),
    _buggy("blk_residual_from_input", "script_cell"),
    _buggy("blk_no_attn_residual", "who"),
    _buggy("blk_no_ffn_residual", "matplotlib_inline"),
    _buggy("blk_w1_T", "capture_listing"),
    _buggy("blk_one_layer", "time_lines"),
    _buggy("blk_eps_1e3", "missing_module_demo"),
    _buggy("blk_pre_ln", "alias_ls"),
    _buggy("blk_gelu", "crlf"),
    _buggy("blk_no_final_norm", "bash_cell"),
    _buggy("blk_mask_not_passed", "pip_own_cell"),
    _buggy("blk_norm_tokens", "star_numpy"),
    _buggy("blk_ddof1", "config_retina"),
    # edge cases
    Probe("edge_stub_block", "edge", ("pip_magic_first",), (), "",
          expect={"transformer_block": "loses"},
          phrases={"transformer_block": ("todavía no has implementado",)}),
    Probe("edge_no_mask_parameter", "edge", (), ("att_no_mask_param",),
          expect={"attention": "loses"}, phrases={"attention": ("`mask`",)}),
    Probe("edge_mask_without_default", "edge", (), ("att_mask_required",),
          expect={"attention": "loses"}, phrases={"attention": ("valor por defecto",)}),
    # The grade calls the demo's attention, and says so (issue 49.4): the redefinition too.
    Probe("edge_redefined_by_a_demo", "edge", (), ("att_redefined_later",),
          expect={"attention": "loses"},
          phrases={"attention": ("√d_k", "define `attention` en las celdas")},
          ids={"attention": ("attention.no_sqrt_dk", "notebook.redefined")}),
    Probe("edge_all_in_one_cell", "edge", ("matplotlib_inline",), ("all_in_first_cell",)),
    Probe("edge_def_then_error", "edge", (), ("att_then_error",)),
    Probe("edge_list_sources", "edge", ("crlf", "shuffled_counts"), ("raw_list_sources",)),
    Probe("edge_only_shell_cells", "edge", ("bash_cell", "sh_cell", "script_cell",
                                            "capture_listing", "sx_system", "alias_ls",
                                            "bang_bang", "pip_own_cell"), ()),
    Probe("edge_two_bugs_two_functions", "edge", (), ("two_bugs",),
          expect={"attention": "loses", "positional_encoding": "loses"},
          phrases={"attention": ("√d_k",), "positional_encoding": ("senos y cosenos",)},
          ids={"attention": ("attention.no_sqrt_dk",),
               "positional_encoding": ("positional_encoding.sin_cos_swapped",)}),
    Probe("edge_stub_attention_only", "edge", ("shuffled_counts",), ("stub_attention",),
          expect={"attention": "loses"},
          phrases={"attention": ("todavía no has implementado",)}),
]

# Answers that only edge cases use: not correct styles, and not one-function bugs.
STYLES.update({
    "att_no_mask_param": ("attention", ('''\
def attention(Q, K, V):
    weights = softmax(Q @ K.T / np.sqrt(K.shape[-1]))
    return weights @ V, weights
''',)),
    "att_mask_required": ("attention", ('''\
def attention(Q, K, V, mask):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
''',)),
    "att_redefined_later": ("attention", None, ('''\
# Para comparar: la misma atención sin escalar (¡ojo, redefine attention!)
def attention(Q, K, V, mask=None):
    scores = Q @ K.T
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
''',)),
    "att_then_error": ("attention", ('''\
def attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights


print(attention(X_toy, X_toy)[1])  # prueba rápida (le falta V)
''',)),
})
SPECIAL = {"all_in_first_cell", "raw_list_sources", "two_bugs", "stub_attention"}


# Mistakes no catalogue entry reproduces (issue 31, the second held-out probe): each must be
# named by a measured form or located where it first departs, never given a guess.
_HEAD_MH = "def multihead(X, heads, W_O, mask=None):\n"
_HEAD_PE = "def positional_encoding(n_positions, d_model):\n"
_HEAD_BLK = "def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):\n"
_PE_RIGHT = """\
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    angles = np.arange(n_positions)[:, None] * omega
"""
BUGS.update({
    "att_no_exponential": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, 0.0)
    weights = scores / scores.sum(axis=-1, keepdims=True)  # que cada fila sume 1
    return weights @ V, weights
'''), ("sin exponenciar",), ("attention.located_no_exponential",)),
    "att_scores_returned": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return softmax(scores) @ V, scores
'''), ("de antes de la softmax",), ("attention.located_scores_as_weights",)),
    "att_seeded_dropout": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    keep = np.random.default_rng(0).random(weights.shape) >= 0.1  # dropout, p = 0,1
    weights = weights * keep / 0.9
    return weights @ V, weights
'''), ("dropout",), ("attention.located_dropout",)),
    "att_finite_mask": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -10.0)
    weights = softmax(scores)
    return weights @ V, weights
'''), ("la máscara",), ("attention.located_mask",)),
    "mh_other_heads_kv": Bug("multihead", (_HEAD_MH + '''\
    _, W_K0, W_V0 = heads[0]
    outs = [attention(X @ W_Q, X @ W_K0, X @ W_V0, mask)[0] for W_Q, _, _ in heads]
    return np.concatenate(outs, axis=1) @ W_O
''',), ("usa matrices de otra",), ("multihead.located_other_heads",)),
    "mh_split_stride": Bug("multihead", (_HEAD_MH + '''\
    h, n = len(heads), X.shape[0]
    Qs, Ks, Vs = (X @ np.hstack([head[i] for head in heads]) for i in range(3))
    split = lambda M: M.reshape(n, M.shape[1] // h, h).transpose(2, 0, 1)
    outs = [attention(q, k, v, mask)[0] for q, k, v in zip(split(Qs), split(Ks), split(Vs))]
    return np.concatenate(outs, axis=1) @ W_O
''',), ("cómo separas o juntas las cabezas",), ("multihead.located_splitting",)),
    "mh_residual_inside": Bug("multihead", (_HEAD_MH + '''\
    outs = [attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads]
    return X + np.concatenate(outs, axis=1) @ W_O  # con su residual
''',), ("más X",), ("multihead.located_residual_inside",)),
    "mh_always_causal": Bug("multihead", (_HEAD_MH + '''\
    n = X.shape[0]
    causal = np.tril(np.ones((n, n), dtype=bool))
    mask = causal if mask is None else mask & causal
    outs = [attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads]
    return np.concatenate(outs, axis=1) @ W_O
''',), ("aunque no se la pidan",), ("multihead.located_always_causal",)),
    "pe_int_buffer": Bug("positional_encoding", (_HEAD_PE + _PE_RIGHT + '''\
    pe = np.zeros((n_positions, d_model), dtype=int)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe, omega
''',), ("números enteros",), ("positional_encoding.located_integers",)),
    "pe_omega_per_column": Bug("positional_encoding", (_HEAD_PE + _PE_RIGHT + '''\
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe, np.repeat(omega, 2)[:d_model]
''',), ("una frecuencia por columna",), ("positional_encoding.located_omega_per_column",)),
    "pe_pos_i_swapped": Bug("positional_encoding", (_HEAD_PE + '''\
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pos = np.arange(n_positions)[:, None]
    i = np.arange((d_model + 1) // 2)[None, :]
    angles = i / 10000 ** (2 * pos / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe, omega
''',), ("intercambias pos e i",), ("positional_encoding.located_pos_and_i_swapped",)),
    "pe_degrees": Bug("positional_encoding", (_HEAD_PE + _PE_RIGHT + '''\
    angles = np.radians(angles)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe, omega
''',), ("π/180",), ("positional_encoding.frequencies",)),
    "pe_exponent_4i": Bug("positional_encoding", (_HEAD_PE + '''\
    i = np.arange(0, d_model, 2)  # el índice de la columna par
    omega = 1 / 10000 ** (2 * i / d_model)
    angles = np.arange(n_positions)[:, None] * omega
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe, omega
''',), ("4i/d_model",), ("positional_encoding.frequencies",)),
    "blk_returns_first_sublayer": Bug("transformer_block", (_HEAD_BLK + '''\
    h = layer_norm(x + multihead(x, heads, W_O, mask))
    out = layer_norm(h + np.maximum(0, h @ W1 + b1) @ W2 + b2)
    return h
''',), ("la salida de la primera subcapa",),
        ("transformer_block.located_returns_first_sublayer",)),
    "blk_second_norm_columns": Bug("transformer_block", (_HEAD_BLK + '''\
    h = layer_norm(x + multihead(x, heads, W_O, mask))
    y = h + np.maximum(0, h @ W1 + b1) @ W2 + b2
    return (y - y.mean(axis=0)) / np.sqrt(y.var(axis=0) + 1e-5)
''',), ("normalizas sobre los tokens",), ("transformer_block.located_last_norm_columns",)),
    "blk_residual_multiplied": Bug("transformer_block", (_HEAD_BLK + '''\
    h = layer_norm(x * multihead(x, heads, W_O, mask))
    return layer_norm(h + np.maximum(0, h @ W1 + b1) @ W2 + b2)
''',), ("no sumas la entrada",), ("transformer_block.located_residual_missing",)),
    "blk_ffn_on_sum": Bug("transformer_block", (_HEAD_BLK + '''\
    s = x + multihead(x, heads, W_O, mask)
    h = layer_norm(s)
    return layer_norm(h + np.maximum(0, s @ W1 + b1) @ W2 + b2)
''',), ("lo que entra en la FFN",), ("transformer_block.located_ffn_input",)),
    "blk_half_ffn": Bug("transformer_block", (_HEAD_BLK + '''\
    h = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(h + 0.5 * (np.maximum(0, h @ W1 + b1) @ W2 + b2))
''',), ("la segunda residual",), ("transformer_block.located_second_residual",)),
    "blk_max_for_maximum": Bug("transformer_block", (_HEAD_BLK + '''\
    h = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(h + np.max(h @ W1 + b1, 0) @ W2 + b2)
''',), ("el interior de la FFN",), ("transformer_block.located_ffn_inside",)),
})
BUGS.update({
    "att_return_in_loop": Bug("attention", _att('''\
    out, weights = np.zeros((len(Q), V.shape[1])), np.zeros((len(Q), len(K)))
    for i in range(len(Q)):
        s = K @ Q[i] / np.sqrt(K.shape[-1])
        if mask is not None:
            s = np.where(mask[i], s, -np.inf)
        weights[i] = softmax(s)
        out[i] = weights[i] @ V
        return out, weights
'''), ("¿Un return dentro del bucle",), ("attention.located_rows_missing",)),
    "att_softmax_twice": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(softmax(scores))  # por si acaso
    return weights @ V, weights
'''), ("la aplicas dos veces",), ("attention.located_softmax_twice",)),
    "att_rounded": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.round(softmax(scores), 2)
    return weights @ V, weights
'''), ("redondeados a 2 decimales",), ("attention.located_rounded",)),
    "att_clipped": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.clip(softmax(scores), 0.05, 0.95)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
'''), ("entre las puntuaciones y los pesos",),
        ("attention.located_between_scores_and_weights", "attention.located_scores")),
    "mh_tanh_concat": Bug("multihead", (_HEAD_MH + '''\
    outs = [attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads]
    return np.tanh(np.concatenate(outs, axis=1)) @ W_O
''',), ("valor a valor",), ("multihead.located_after_heads",)),
    "mh_last_block_of_w_o": Bug("multihead", (_HEAD_MH + '''\
    d_v = heads[0][2].shape[1]
    bloque = W_O[-d_v:]
    return sum(attention(X @ q, X @ k, X @ v, mask)[0] @ bloque for q, k, v in heads)
''',), ("cómo combinas las cabezas",), ("multihead.located_combining",)),
    "mh_weights_concatenated": Bug("multihead", (_HEAD_MH + '''\
    outs = [attention(X @ q, X @ k, X @ v, mask)[1] for q, k, v in heads]
    return np.concatenate(outs, axis=1) @ W_O
''',), ("¿Concatenas los pesos de las cabezas",),
        ("multihead.weights_concatenated",)),
    "pe_rows_reversed": Bug("positional_encoding", (_HEAD_PE + '''\
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    angles = np.arange(n_positions - 1, -1, -1)[:, None] * omega
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe, omega
''',), ("cuentas las posiciones desde el final",),
        ("positional_encoding.located_rows_reversed",)),
    "pe_omega_reversed": Bug("positional_encoding", (_HEAD_PE + _PE_RIGHT + '''\
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe, omega[::-1]
''',), ("al revés",), ("positional_encoding.omega_reversed",)),
    "pe_precedence": Bug("positional_encoding", (_HEAD_PE + '''\
    omega = 10000.0 ** -np.arange(0, d_model, 2) / d_model
    angles = np.arange(n_positions)[:, None] * omega
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe, omega
''',), ("sin paréntesis",), ("positional_encoding.frequencies",)),
    "blk_outer_residual": Bug("transformer_block", (_HEAD_BLK + '''\
    h = layer_norm(x + multihead(x, heads, W_O, mask))
    return x + layer_norm(h + np.maximum(0, h @ W1 + b1) @ W2 + b2)
''',), ("la correcta más x",), ("transformer_block.located_input_added_after",)),
    "blk_norm_then_add": Bug("transformer_block", (_HEAD_BLK + '''\
    h = x + layer_norm(multihead(x, heads, W_O, mask))
    return h + layer_norm(np.maximum(0, h @ W1 + b1) @ W2 + b2)
''',), ("devuelve x tal cual",), ("transformer_block.located_norm_not_after_sums",)),
})
BUGS.update({
    # The fifth blind probe's forms, written anew: each was said at a vaguer place, or with a
    # false overflow, before it was measured.
    "att_mask_nan": Bug("attention", _att('''\
    s = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    s = s - s.mean(axis=-1, keepdims=True)  # centro cada fila para que no desborde
    e = np.exp(s)
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights
'''), ("no es un desbordamiento",), ("attention.located_mask_nan",)),
    "att_mask_transposed": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(np.transpose(mask), scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
'''), ("la máscara traspuesta",), ("attention.located_mask_transposed",
                                    # where the mask is not square it raises, and that is said
                                    "shapes.transposed_operand")),
    "att_unmasked_weights": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    pesos = softmax(scores)
    if mask is None:
        return pesos @ V, pesos
    pesos_mascara = softmax(np.where(mask, scores, -np.inf))
    return pesos_mascara @ V, pesos
'''), ("los de antes de aplicarla",), ("attention.located_unmasked_weights",)),
    "mh_scores_carried": Bug("multihead", (_HEAD_MH + '''\
    acumuladas = np.zeros((X.shape[0], X.shape[0]))
    salidas = []
    for W_Q, W_K, W_V in heads:
        acumuladas += (X @ W_Q) @ (X @ W_K).T / np.sqrt(W_K.shape[1])
        s = acumuladas if mask is None else np.where(mask, acumuladas, -np.inf)
        salidas.append(softmax(s) @ (X @ W_V))
    return np.hstack(salidas) @ W_O
''',), ("los pesos de una cabeza cambian",), ("multihead.located_shared_weights",)),
    "mh_mask_transposed": Bug("multihead", (_HEAD_MH + '''\
    m = None if mask is None else mask.T
    outs = [attention(X @ q, X @ k, X @ v, m)[0] for q, k, v in heads]
    return np.concatenate(outs, axis=1) @ W_O
''',), ("la máscara traspuesta",), ("multihead.located_mask_transposed",)),
    "pe_tiled": Bug("positional_encoding", (_HEAD_PE + _PE_RIGHT + '''\
    por_columna = np.tile(omega, 2)[:d_model]
    angulos = np.arange(n_positions)[:, None] * por_columna
    pe = np.where(np.arange(d_model) % 2 == 0, np.sin(angulos), np.cos(angulos))
    return pe, omega
''',), ("la frecuencia de cada columna",), ("positional_encoding.located_column_frequencies",)),
    "pe_flat_blocks": Bug("positional_encoding", (_HEAD_PE + _PE_RIGHT + '''\
    senos, cosenos = np.sin(angles), np.cos(angles[:, : d_model // 2])
    pe = np.concatenate([senos.ravel(), cosenos.ravel()]).reshape(n_positions, d_model)
    return pe, omega
''',), ("en otras casillas",), ("positional_encoding.located_places",)),
    "blk_pre_ln_final_norm": Bug("transformer_block", (_HEAD_BLK + '''\
    x = x + multihead(layer_norm(x), heads, W_O, mask)
    x = x + np.maximum(0, layer_norm(x) @ W1 + b1) @ W2 + b2
    return layer_norm(x)  # la normalización final, como en GPT-2
''',), ("pre-LN",), ("transformer_block.pre_ln",)),
})
STYLES.update({
    # Changes its argument in place, and the answer is right: told, never a lost point
    # (issue 49): no result the grade measures changes.
    "att_scales_q_in_place": ("attention", _att('''\
    Q /= np.sqrt(K.shape[-1])  # escalo las consultas
    scores = Q @ K.T
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
''')),
})
BUGS.update({
    # Side effects (the third blind probe): each passes every hidden case called once.
    # Inverts the caller's mask in place: each call is right, but the student's own multihead
    # hands the next head the inverted mask.
    "att_inverts_mask_in_place": Bug("attention", _att('''\
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        np.logical_not(mask, out=mask)  # ahora True = prohibido
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores)
    return weights @ V, weights
'''), ("cambia los arrays o listas que recibe (mask)", "tu `multihead`"),
        ("side_effects.mutates_arguments",)),
    "pe_shared_buffer": Bug("positional_encoding", ('''\
_BUFER = np.zeros((4096, 4096))


def positional_encoding(n_positions, d_model):
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    angles = np.arange(n_positions)[:, None] * omega
    pe = _BUFER[:n_positions, :d_model]  # sin reservar memoria cada vez
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe, omega
''',), ("lo que devolvió antes",), ("side_effects.changes_earlier_answers",)),
    "att_cache_by_shape": Bug("attention", ('''\
_PESOS = {}


def attention(Q, K, V, mask=None):
    clave = (Q.shape, K.shape, mask is None)  # las mismas formas, los mismos pesos
    if clave not in _PESOS:
        scores = Q @ K.T / np.sqrt(K.shape[-1])
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        _PESOS[clave] = softmax(scores)
    weights = _PESOS[clave]
    return weights @ V, weights
''',), ("guardas resultados entre llamadas",), ("side_effects.stale_answer",)),
})
PROBES += [
    Probe("bugs_located_7", "buggy", bugs=("att_return_in_loop", "mh_tanh_concat",
                                           "pe_rows_reversed", "blk_outer_residual")),
    Probe("bugs_located_8", "buggy", bugs=("att_softmax_twice", "mh_last_block_of_w_o",
                                           "pe_omega_reversed", "blk_norm_then_add")),
    Probe("bugs_located_9", "buggy", bugs=("att_rounded", "mh_weights_concatenated",
                                           "pe_precedence")),
    Probe("bugs_located_10", "buggy", bugs=("att_clipped", "pe_shared_buffer")),
    Probe("bugs_side_effects_1", "buggy", bugs=("att_inverts_mask_in_place",)),
    _correct("ok_scales_q_in_place", styles=("att_scales_q_in_place",)),
    Probe("bugs_side_effects_2", "buggy", bugs=("att_cache_by_shape",)),
]
STYLES.update({
    "att_named_tuple": ("attention", ('''\
from typing import NamedTuple


class Atencion(NamedTuple):
    output: np.ndarray
    weights: np.ndarray


def attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return Atencion(weights @ V, weights)
''',)),
    "mh_named_fields": ("multihead", (_HEAD_MH + '''\
    outs = [attention(X @ q, X @ k, X @ v, mask).output for q, k, v in heads]
    return np.concatenate(outs, axis=1) @ W_O
''',)),
})
# Packed one bug per function: each function is graded with the reference standing in for
# the others, so each of the four is judged alone, at a quarter of the notebooks.
PROBES += [
    Probe("bugs_located_1", "buggy", bugs=("att_no_exponential", "mh_other_heads_kv",
                                           "pe_int_buffer", "blk_returns_first_sublayer")),
    Probe("bugs_located_2", "buggy", bugs=("att_scores_returned", "mh_split_stride",
                                           "pe_omega_per_column", "blk_second_norm_columns")),
    Probe("bugs_located_3", "buggy", bugs=("att_seeded_dropout", "mh_residual_inside",
                                           "pe_pos_i_swapped", "blk_residual_multiplied")),
    Probe("bugs_located_4", "buggy", bugs=("att_finite_mask", "mh_always_causal",
                                           "pe_degrees", "blk_ffn_on_sum")),
    Probe("bugs_located_5", "buggy", bugs=("pe_exponent_4i", "blk_half_ffn")),
    Probe("bugs_located_6", "buggy", bugs=("blk_max_for_maximum",)),
    Probe("bugs_probe5_1", "buggy", bugs=("att_mask_nan", "mh_scores_carried", "pe_tiled",
                                           "blk_pre_ln_final_norm")),
    Probe("bugs_probe5_2", "buggy", bugs=("att_mask_transposed", "mh_mask_transposed",
                                           "pe_flat_blocks")),
    Probe("bugs_probe5_3", "buggy", bugs=("att_unmasked_weights",)),
    # A named tuple read by name in multihead: the reference's attention must answer in it.
    _correct("ok_named_tuple", styles=("att_named_tuple", "mh_named_fields")),
]


# --- building ------------------------------------------------------------------------------------

def _answer_cell(nb, function):
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.lstrip().startswith(f"def {function}("):
            return cell
    raise ValueError(f"no answer cell for {function}")


def _replace(nb, function, cells, later=()):
    """The answer cell of ``function`` replaced by ``cells`` (None keeps it); ``later`` cells
    go right after its ``grader.check`` cell."""
    answer = _answer_cell(nb, function)
    if cells is not None:
        index = nb.cells.index(answer)
        nb.cells[index:index + 1] = [nbformat.v4.new_code_cell(source) for source in cells]
    at = _index_after_check(nb, function)
    for offset, source in enumerate(later):
        nb.cells.insert(at + offset, nbformat.v4.new_code_cell(source))


def _apply_style(nb, name):
    function, cells, *later = STYLES[name]
    _replace(nb, function, cells, later[0] if later else ())


def _special(nb, name, student):
    if name == "all_in_first_cell":
        sources = [_answer_cell(nb, f).source for f in GRADED]
        _answer_cell(nb, "attention").source = "\n\n\n".join(sources)
        for function in GRADED[1:]:
            _answer_cell(nb, function).source = f"# {function}: la escribí arriba, con attention\n"
    elif name == "two_bugs":
        _replace(nb, "attention", BUGS["att_no_scale"].cells)
        _replace(nb, "positional_encoding", BUGS["pe_swapped"].cells)
    elif name == "stub_attention":
        stub = next(c for c in student.cells
                    if c.cell_type == "code" and c.source.startswith("def attention("))
        _answer_cell(nb, "attention").source = stub.source
    elif name == "raw_list_sources":
        pass  # applied to the JSON in build()


def build_one(probe, student, correct_nb, seed):
    nb = nbformat.from_dict(correct_nb)
    if probe.name == "edge_stub_block":
        stub = next(c for c in student.cells
                    if c.cell_type == "code" and c.source.startswith("def transformer_block("))
        _answer_cell(nb, "transformer_block").source = stub.source
    for style in probe.styles:
        if style in SPECIAL:
            _special(nb, style, student)
        else:
            _apply_style(nb, style)
    for name in probe.all_bugs:
        bug = BUGS[name]
        _replace(nb, bug.function, bug.cells)
    rng = random.Random(seed)
    for habit in probe.habits:
        HABITS[habit](nb, rng)
    for number, cell in enumerate(nb.cells):
        cell.id = f"probe-{number}"
    data = nbformat.writes(nb)
    if "raw_list_sources" in probe.styles:
        raw = json.loads(data)
        for cell in raw["cells"]:
            cell["source"] = cell["source"].splitlines(keepends=True) \
                if isinstance(cell["source"], str) else cell["source"]
        data = json.dumps(raw, ensure_ascii=False, indent=1)
    return data.encode("utf-8") + b"\n"


def build(student, correct_nb):
    """``{file name: bytes}`` for every probe, built from the build's notebooks."""
    return {f"{probe.name}.ipynb": build_one(probe, student, correct_nb, seed)
            for seed, probe in enumerate(PROBES)}


def check_table():
    names = [probe.name for probe in PROBES]
    assert len(names) == len(set(names)), "probe names must be unique"
    for probe in PROBES:
        assert all(h in HABITS for h in probe.habits), probe.name
        assert all(s in STYLES or s in SPECIAL for s in probe.styles), probe.name
        assert all(bug in BUGS for bug in probe.all_bugs), probe.name
        functions = [BUGS[bug].function for bug in probe.all_bugs]
        assert len(functions) == len(set(functions)), f"{probe.name}: one bug per function"
    assert set(BUGS) == {b for p in PROBES for b in p.all_bugs}, "every bug has its notebook"
    used = {s for p in PROBES for s in p.styles}
    assert set(STYLES) <= used, sorted(set(STYLES) - used)
