"""Submissions in the styles of public numpy code, written for this project as notebook cells.

Course material and from-scratch projects rarely write a function the way the reference
does. They build classes and attach methods to them later with a decorator (d2l's
``@add_to_class``), keep constants computed at module level, stack the heads' weights into
one tensor, use einsum or loops, float32, a LayerNorm of their own with ``eps = 1e-6``, -1e9
or -1e6 for the mask, and write the positional encoding as exp(-log(10000)·…) or interleave it
with stack and reshape. None of that is a mistake: every ``correct`` variant keeps full marks.
The ``buggy`` ones make the mistakes such code makes (the sum of the heads, one head reused,
a wrong base, pre-LN with GELU, a reshape that assumes d_k = d_v, an odd d_model that does not
fit) and must be caught and named: ``names`` lists every id the diagnosis must give on a
failing case (catalog entries, findings or explanations), and nothing else may be named.

Each variant is a list of code cells that replaces the notebook's cell of ``function``; the
cells run in order, as the sandbox runs a notebook, after the notebook's own earlier cells
(numpy as ``np``, ``softmax``, ``layer_norm`` and the graded functions defined before).
"""

from dataclasses import dataclass, field

import numpy as np

from reference import attention as reference


@dataclass(frozen=True)
class Variant:
    name: str
    function: str
    cells: tuple
    names: tuple = ()  # empty: a correct variant
    # Cases on which it must fail (empty: on some case of every draw).
    fails_on: tuple = field(default=())

    @property
    def correct(self):
        return not self.names

    def define(self):
        """The function the cells define, in a namespace like the notebook's at that point."""
        namespace = {"np": np, "softmax": reference.softmax, "layer_norm": reference.layer_norm,
                     "attention": reference.attention, "multihead": reference.multihead}
        for index, cell in enumerate(self.cells):
            exec(compile(cell, f"<{self.name} cell {index}>", "exec"), namespace)
        return namespace[self.function]


ADD_TO_CLASS = '''\
def add_to_class(Class):
    """Attach the decorated function to Class as a method (d2l's idiom)."""
    def wrapper(obj):
        setattr(Class, obj.__name__, obj)
    return wrapper
'''

# --- attention ---------------------------------------------------------------------------------

ATTENTION_D2L = Variant("attention_d2l_class", "attention", (
    ADD_TO_CLASS,
    '''\
class DotProductAttention:
    """Scaled dot-product attention, d2l-style."""

    def __init__(self, fill=-1e6):
        self.fill = fill
''',
    '''\
@add_to_class(DotProductAttention)
def masked_softmax(self, scores, mask):
    if mask is not None:
        scores = np.where(mask, scores, self.fill)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    return weights / weights.sum(axis=-1, keepdims=True)
''',
    '''\
@add_to_class(DotProductAttention)
def forward(self, queries, keys, values, mask=None):
    d = queries.shape[-1]
    self.attention_weights = self.masked_softmax(queries @ keys.T / np.sqrt(d), mask)
    return self.attention_weights @ values
''',
    '''\
def attention(Q, K, V, mask=None):
    layer = DotProductAttention()
    output = layer.forward(Q, K, V, mask)
    return output, layer.attention_weights
''',
))

ATTENTION_EINSUM_FLOAT32 = Variant("attention_einsum_float32", "attention", (
    '''\
NEG_INF = np.float32(-1e9)


def attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(t, dtype=np.float32) for t in (Q, K, V))
    scores = np.einsum("qd,kd->qk", Q, K) * np.float32(1.0 / np.sqrt(K.shape[-1]))
    if mask is not None:
        scores = np.where(mask, scores, NEG_INF)
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.einsum("qk,kv->qv", weights, V), weights
''',
))

ATTENTION_LOOPS = Variant("attention_loops_by_query", "attention", (
    '''\
import math


def attention(Q, K, V, mask=None):
    n, m = Q.shape[0], K.shape[0]
    weights = np.zeros((n, m))
    for i in range(n):
        scores = np.array([Q[i] @ K[j] / math.sqrt(K.shape[1]) for j in range(m)])
        if mask is not None:
            scores[~mask[i]] = -math.inf
        e = np.exp(scores - scores.max())
        weights[i] = e / e.sum()
    return weights @ V, weights
''',
))

ATTENTION_MASK_INVERTED_D2L = Variant("attention_d2l_mask_inverted", "attention", (
    '''\
def sequence_mask(scores, keep, value=-1e6):
    """d2l's helper, with the mask meaning "hide" rather than "keep"."""
    scores = scores.copy()
    scores[keep] = value
    return scores


def attention(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[1])
    if mask is not None:
        scores = sequence_mask(scores, mask)
    weights = softmax(scores)
    return weights @ V, weights
''',
), names=("attention.mask_inverted",), fails_on=("causal", "mascara_aleatoria",
                                                 "puntuaciones_grandes"))

# --- multihead ---------------------------------------------------------------------------------

MULTIHEAD_D2L = Variant("multihead_d2l_transpose_qkv", "multihead", (
    ADD_TO_CLASS,
    '''\
class MultiHeadAttention:
    """All heads at once: the heads' projections side by side in one matrix each."""

    def __init__(self, heads, W_O):
        self.num_heads = len(heads)
        self.W_q, self.W_k, self.W_v = (np.concatenate([head[i] for head in heads], axis=1)
                                         for i in range(3))
        self.W_o = W_O
''',
    '''\
@add_to_class(MultiHeadAttention)
def transpose_qkv(self, X):
    """(n, h * d) -> (h, n, d): one slice per head."""
    X = X.reshape(X.shape[0], self.num_heads, -1)
    return X.transpose(1, 0, 2)


@add_to_class(MultiHeadAttention)
def transpose_output(self, X):
    """(h, n, d_v) -> (n, h * d_v): the heads side by side again."""
    return X.transpose(1, 0, 2).reshape(X.shape[1], -1)
''',
    '''\
@add_to_class(MultiHeadAttention)
def forward(self, X, mask=None):
    queries = self.transpose_qkv(X @ self.W_q)
    keys = self.transpose_qkv(X @ self.W_k)
    values = self.transpose_qkv(X @ self.W_v)
    scores = queries @ keys.transpose(0, 2, 1) / np.sqrt(queries.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = softmax(scores, axis=-1)
    return self.transpose_output(weights @ values) @ self.W_o
''',
    '''\
def multihead(X, heads, W_O, mask=None):
    return MultiHeadAttention(heads, W_O).forward(X, mask)
''',
))

MULTIHEAD_STACKED_EINSUM = Variant("multihead_stacked_einsum_float32", "multihead", (
    '''\
def multihead(X, heads, W_O, mask=None):
    X = X.astype(np.float32)
    Wq = np.stack([h[0] for h in heads]).astype(np.float32)  # (h, d_model, d_k)
    Wk = np.stack([h[1] for h in heads]).astype(np.float32)
    Wv = np.stack([h[2] for h in heads]).astype(np.float32)  # (h, d_model, d_v)
    q, k, v = (np.einsum("nd,hde->hne", X, W) for W in (Wq, Wk, Wv))
    scores = np.einsum("hqe,hke->hqk", q, k) / np.sqrt(np.float32(Wq.shape[-1]))
    if mask is not None:
        scores = np.where(mask[None], scores, np.float32(-1e9))
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    heads_out = np.einsum("hqk,hkv->qhv", weights, v)
    return heads_out.reshape(X.shape[0], -1) @ W_O.astype(np.float32)
''',
))

MULTIHEAD_CALLS_ATTENTION = Variant("multihead_loop_over_heads", "multihead", (
    '''\
def multihead(X, heads, W_O, mask=None):
    outputs = []
    for W_Q, W_K, W_V in heads:
        head, _ = attention(X @ W_Q, X @ W_K, X @ W_V, mask=mask)
        outputs.append(head)
    return np.hstack(outputs) @ W_O
''',
))

MULTIHEAD_SUMS_HEADS = Variant("multihead_sums_heads_np_dot", "multihead", (
    '''\
def multihead(X, heads, W_O, mask=None):
    total = 0
    for W_Q, W_K, W_V in heads:
        total = total + attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0]
    return np.dot(total, W_O)
''',
    # The sum's d_v columns times the h·d_v rows of W_O: the very error a head times the whole
    # of W_O raises, so both mistakes are given as candidates.
), names=("multihead.sums_heads", "multihead.w_o_per_head"))

MULTIHEAD_MEAN_NO_W_O = Variant("multihead_mean_of_heads_no_w_o", "multihead", (
    '''\
def multihead(X, heads, W_O, mask=None):
    stacked = np.stack([attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads])
    return stacked.mean(axis=0)
''',
), names=("multihead.sums_heads", "multihead.no_w_o"))

MULTIHEAD_ONE_HEAD_REUSED = Variant("multihead_one_head_reused", "multihead", (
    '''\
def multihead(X, heads, W_O, mask=None):
    W_Q, W_K, W_V = heads[0]  # meant to be inside the loop
    outputs = []
    for _ in heads:
        outputs.append(attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0])
    return np.concatenate(outputs, axis=-1) @ W_O
''',
), names=("multihead.same_head_everywhere",))

MULTIHEAD_HEADS_REVERSED = Variant("multihead_heads_reversed", "multihead", (
    '''\
def multihead(X, heads, W_O, mask=None):
    outputs = []
    for W_Q, W_K, W_V in heads:
        outputs.insert(0, attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0])
    return np.concatenate(outputs, axis=1) @ W_O
''',
), names=("multihead.heads_out_of_order",))

MULTIHEAD_D2L_HEAD_SIZE = Variant("multihead_d2l_assumes_d_model_over_h", "multihead", (
    '''\
class MultiHeadAttention:
    def __init__(self, heads, W_O):
        self.h = len(heads)
        self.W_q, self.W_k, self.W_v = (np.concatenate([w[i] for w in heads], axis=1)
                                         for i in range(3))
        self.W_o = W_O

    def split_heads(self, X):
        head_dim = self.W_o.shape[1] // self.h  # every head d_model / h wide, as in the paper
        return X.reshape(X.shape[0], self.h, head_dim).transpose(1, 0, 2)

    def __call__(self, X, mask=None):
        q, k, v = (self.split_heads(X @ W) for W in (self.W_q, self.W_k, self.W_v))
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
        if mask is not None:
            scores = np.where(mask, scores, -1e9)
        out = softmax(scores) @ v
        return out.transpose(1, 0, 2).reshape(X.shape[0], -1) @ self.W_o
''',
    '''\
def multihead(X, heads, W_O, mask=None):
    return MultiHeadAttention(heads, W_O)(X, mask)
''',
), names=("multihead.head_sizes",), fails_on=("dk_distinto_dv",))

# --- positional_encoding ----------------------------------------------------------------------

PE_EXP_LOG = Variant("positional_encoding_exp_log_constant", "positional_encoding", (
    '''\
import math

LOG_TIMESCALE = math.log(10000.0)  # computed once, at module level


def positional_encoding(n_positions, d_model):
    position = np.arange(n_positions)[:, np.newaxis]
    div_term = np.exp(np.arange(0, d_model, 2) * (-LOG_TIMESCALE / d_model))
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)[:, : d_model // 2]
    return pe, div_term
''',
))

PE_STACK_RESHAPE = Variant("positional_encoding_interleave_by_stack", "positional_encoding", (
    '''\
def positional_encoding(n_positions, d_model):
    half = (d_model + 1) // 2
    omega = 1.0 / np.power(10000.0, 2 * np.arange(half) / d_model)
    angles = np.arange(n_positions, dtype=np.float32)[:, None] * omega.astype(np.float32)
    pe = np.stack([np.sin(angles), np.cos(angles)], axis=2).reshape(n_positions, 2 * half)
    return pe[:, :d_model], omega
''',
))

PE_LOOPS = Variant("positional_encoding_loops_math", "positional_encoding", (
    '''\
import math


def positional_encoding(n_positions, d_model):
    pe = np.zeros((n_positions, d_model))
    omega = []
    for i in range(0, d_model, 2):
        w = 1 / (10000 ** (i / d_model))
        omega.append(w)
        for pos in range(n_positions):
            pe[pos, i] = math.sin(pos * w)
            if i + 1 < d_model:
                pe[pos, i + 1] = math.cos(pos * w)
    return pe, np.array(omega)
''',
))

PE_BASE_1000 = Variant("positional_encoding_base_1000", "positional_encoding", (
    '''\
def positional_encoding(n_positions, d_model):
    pos = np.arange(n_positions)[:, None]
    omega = 1 / 1000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])
    return pe, omega
''',
), names=("positional_encoding.frequencies",))

PE_BASE_100 = Variant("positional_encoding_base_100", "positional_encoding", (
    '''\
def positional_encoding(n_positions, d_model):
    pos = np.arange(n_positions)[:, None]
    omega = np.exp(-np.log(100.0) * np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])
    return pe, omega
''',
), names=("positional_encoding.exponent_i_over_d",))

PE_ODD_BROADCAST = Variant("positional_encoding_odd_broadcast", "positional_encoding", (
    '''\
def positional_encoding(n_positions, d_model):
    pos = np.arange(n_positions)[:, None]
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega)  # one cosine too many when d_model is odd
    return pe, omega
''',
), names=("positional_encoding.odd_d_model",), fails_on=("d_impar",))

PE_ODD_EXTRA_COLUMN = Variant("positional_encoding_odd_extra_column", "positional_encoding", (
    '''\
def positional_encoding(n_positions, d_model):
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    angles = np.outer(np.arange(n_positions), omega)
    pe = np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(n_positions, -1)
    return pe, omega
''',
), names=("positional_encoding.odd_extra_column",), fails_on=("d_impar",))

# --- transformer_block ---------------------------------------------------------------------

BLOCK_ANNOTATED = Variant("transformer_block_layer_norm_class_eps_1e6", "transformer_block", (
    '''\
class LayerNorm:
    """Normalise each token; eps = 1e-6, as much public code has it."""

    def __init__(self, eps=1e-6):
        self.eps = eps

    def __call__(self, x):
        mean = x.mean(-1, keepdims=True)
        std = x.std(-1, keepdims=True)
        return (x - mean) / (std + self.eps)


class SublayerConnection:
    """Post-LN residual: norm(x + sublayer(x))."""

    def __init__(self):
        self.norm = LayerNorm()

    def __call__(self, x, sublayer):
        return self.norm(x + sublayer(x))


class PositionwiseFeedForward:
    def __init__(self, W1, b1, W2, b2):
        self.W1, self.b1, self.W2, self.b2 = W1, b1, W2, b2

    def __call__(self, x):
        return np.maximum(x @ self.W1 + self.b1, 0) @ self.W2 + self.b2
''',
    '''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    first, second = SublayerConnection(), SublayerConnection()
    x = first(x, lambda z: multihead(z, heads, W_O, mask))
    return second(x, PositionwiseFeedForward(W1, b1, W2, b2))
''',
))

BLOCK_FLOAT32_EINSUM = Variant("transformer_block_float32_einsum", "transformer_block", (
    '''\
EPS = np.float32(1e-6)


def norm32(x):
    x = x.astype(np.float32)
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + EPS)


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    h = norm32(x + multihead(x, heads, W_O, mask))
    hidden = np.maximum(np.einsum("nd,df->nf", h, W1.astype(np.float32)) + b1, 0)
    return norm32(h + np.einsum("nf,fd->nd", hidden, W2.astype(np.float32)) + b2)
''',
))

BLOCK_PRE_LN_GELU = Variant("transformer_block_pre_ln_gelu", "transformer_block", (
    '''\
def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def norm(x, eps=1e-6):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = x + multihead(norm(x), heads, W_O, mask)   # GPT-2 style: normalise first
    return x + gelu(norm(x) @ W1 + b1) @ W2 + b2
''',
), names=("transformer_block.pre_ln", "transformer_block.gelu_instead_of_relu"))

BLOCK_LARGE_EPS = Variant("transformer_block_layer_norm_eps_1e2", "transformer_block", (
    '''\
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    def ln(z, eps=1e-2):
        return (z - z.mean(-1, keepdims=True)) / np.sqrt(z.var(-1, keepdims=True) + eps)
    x = ln(x + multihead(x, heads, W_O, mask))
    return ln(x + np.maximum(0, x @ W1 + b1) @ W2 + b2)
''',
), names=("transformer_block.layer_norm_epsilon",))

VARIANTS = [
    ATTENTION_D2L, ATTENTION_EINSUM_FLOAT32, ATTENTION_LOOPS, ATTENTION_MASK_INVERTED_D2L,
    MULTIHEAD_D2L, MULTIHEAD_STACKED_EINSUM, MULTIHEAD_CALLS_ATTENTION, MULTIHEAD_SUMS_HEADS,
    MULTIHEAD_MEAN_NO_W_O, MULTIHEAD_ONE_HEAD_REUSED, MULTIHEAD_HEADS_REVERSED,
    MULTIHEAD_D2L_HEAD_SIZE,
    PE_EXP_LOG, PE_STACK_RESHAPE, PE_LOOPS, PE_BASE_1000, PE_BASE_100, PE_ODD_BROADCAST,
    PE_ODD_EXTRA_COLUMN,
    BLOCK_ANNOTATED, BLOCK_FLOAT32_EINSUM, BLOCK_PRE_LN_GELU, BLOCK_LARGE_EPS,
]
CORRECT = [v for v in VARIANTS if v.correct]
BUGGY = [v for v in VARIANTS if not v.correct]
