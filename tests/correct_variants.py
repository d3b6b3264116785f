"""Correct implementations written differently from the reference: they must keep full marks.

Besides rewriting the formulas (einsum, loops, stacked tensors), they change what the
tolerances must absorb: float32 arithmetic, -1e9 or -1e30 for -inf, and a LayerNorm of the
student's own with a smaller epsilon or in the (x - mean) / (std + eps) form of public code.

Each is a student cell once renamed (``misconceptions.render_source``): numpy, the notebook's
given helpers and, imported inside the function as a student would, the standard library.
``VARIANTS`` maps each graded function to its variants; ``variant_sets`` groups them one per
function, so one notebook can carry a set.
"""

import numpy as np

from reference.attention import attention, layer_norm, multihead, softmax

# --- attention -------------------------------------------------------------------------------


def attention_einsum(Q, K, V, mask=None):
    scores = np.einsum("nd,md->nm", Q, K) / np.sqrt(K.shape[1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - np.max(scores, axis=1, keepdims=True))
    weights = e / np.einsum("nm->n", e)[:, None]
    return np.einsum("nm,mv->nv", weights, V), weights


def attention_loops(Q, K, V, mask=None):
    import math

    n, m, d_v = len(Q), len(K), V.shape[1]
    weights, output = np.zeros((n, m)), np.zeros((n, d_v))
    for i in range(n):
        row = [sum(Q[i, t] * K[j, t] for t in range(K.shape[1])) / math.sqrt(K.shape[1])
               if mask is None or mask[i, j] else -math.inf for j in range(m)]
        top = max(row)
        exps = [math.exp(s - top) for s in row]
        for j in range(m):
            weights[i, j] = exps[j] / sum(exps)
            for c in range(d_v):
                output[i, c] += weights[i, j] * V[j, c]
    return output, weights


def attention_minus_1e9(Q, K, V, mask=None):
    scores = Q @ K.T / K.shape[-1] ** 0.5
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def attention_minus_1e30(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = scores + np.where(mask, 0.0, -1e30)
    return softmax(scores) @ V, softmax(scores)


def attention_float32(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float32) for a in (Q, K, V))
    scores = Q @ K.T / np.float32(np.sqrt(K.shape[-1]))
    if mask is not None:
        scores = np.where(mask, scores, np.float32(-1e9))
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def attention_masked_assignment(Q, K, V, mask=None):
    scores = np.dot(Q, K.T) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores[~mask] = -np.inf
    scores -= scores.max(axis=1)[:, None]
    weights = np.exp(scores) / np.exp(scores).sum(axis=1)[:, None]
    return np.dot(weights, V), weights


# --- multihead -------------------------------------------------------------------------------


def multihead_stacked_weights(X, heads, W_O, mask=None):
    W_Q, W_K, W_V = (np.stack([head[i] for head in heads]) for i in range(3))  # (h, d_model, d)
    Q, K, V = (np.einsum("nd,hdk->hnk", X, W) for W in (W_Q, W_K, W_V))
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(W_K.shape[-1])
    if mask is not None:
        scores = np.where(mask[None], scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    out = weights @ V  # (h, n, d_v)
    return out.transpose(1, 0, 2).reshape(len(X), -1) @ W_O


def multihead_blocks_of_w_o(X, heads, W_O, mask=None):
    # Concat(heads) @ W_O is the sum of each head times its own block of rows of W_O.
    d_v = heads[0][2].shape[1]
    total = 0
    for i, (W_Q, W_K, W_V) in enumerate(heads):
        out, _ = attention(X @ W_Q, X @ W_K, X @ W_V, mask=mask)
        total = total + out @ W_O[i * d_v:(i + 1) * d_v]
    return total


def multihead_hstack(X, heads, W_O, mask=None):
    return np.hstack([attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads]) @ W_O


def multihead_float32(X, heads, W_O, mask=None):
    X, W_O = X.astype(np.float32), W_O.astype(np.float32)
    outputs = []
    for W_Q, W_K, W_V in heads:
        Q, K, V = (X @ W.astype(np.float32) for W in (W_Q, W_K, W_V))
        scores = Q @ K.T / np.float32(np.sqrt(K.shape[1]))
        if mask is not None:
            scores = np.where(mask, scores, np.float32(-1e9))
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        outputs.append(e / e.sum(axis=1, keepdims=True) @ V)
    return np.concatenate(outputs, axis=1) @ W_O


# --- positional_encoding ---------------------------------------------------------------------


def positional_encoding_loops(n_positions, d_model):
    import math

    omega = np.array([1 / 10000 ** (i / d_model) for i in range(0, d_model, 2)])
    pe = np.zeros((n_positions, d_model))
    for pos in range(n_positions):
        for i in range(0, d_model, 2):
            pe[pos, i] = math.sin(pos * omega[i // 2])
            if i + 1 < d_model:
                pe[pos, i + 1] = math.cos(pos * omega[i // 2])
    return pe, omega


def positional_encoding_stack_and_reshape(n_positions, d_model):
    omega = np.exp(-np.log(10000.0) * np.arange(0, d_model, 2) / d_model)
    angles = np.outer(np.arange(n_positions), omega)
    pe = np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(n_positions, -1)
    return pe[:, :d_model], omega


def positional_encoding_power(n_positions, d_model):
    omega = np.power(10000.0, -np.arange(0, d_model, 2) / d_model)
    pe = np.empty((n_positions, d_model))
    pe[:, ::2] = np.sin(np.arange(n_positions)[:, None] * omega)
    pe[:, 1::2] = np.cos(np.arange(n_positions)[:, None] * omega)[:, : d_model // 2]
    return pe, omega


def positional_encoding_float32(n_positions, d_model):
    position = np.arange(n_positions, dtype=np.float32)[:, None]
    omega = np.float32(1) / np.float32(10000) ** (np.arange(0, d_model, 2, dtype=np.float32)
                                                  / np.float32(d_model))
    pe = np.zeros((n_positions, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(position * omega)
    pe[:, 1::2] = np.cos(position * omega[: d_model // 2])
    return pe, omega


# --- transformer_block -----------------------------------------------------------------------


def _own_layer_norm(x, eps=1e-5):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def transformer_block_own_layer_norm(x, heads, W_O, W1, b1, W2, b2, mask=None):
    h = _own_layer_norm(x + multihead(x, heads, W_O, mask=mask))
    hidden = h @ W1 + b1
    return _own_layer_norm(h + np.where(hidden > 0, hidden, 0) @ W2 + b2)


def _layer_norm_eps_1e6(x, eps=1e-6):
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)


def transformer_block_layer_norm_eps_1e6(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = _layer_norm_eps_1e6(x + multihead(x, heads, W_O, mask))
    return _layer_norm_eps_1e6(x + np.maximum(0, x @ W1 + b1) @ W2 + b2)


def _layer_norm_std_plus_eps(x, eps=1e-6):
    return (x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True) + eps)


def transformer_block_std_plus_eps(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = _layer_norm_std_plus_eps(x + multihead(x, heads, W_O, mask))
    return _layer_norm_std_plus_eps(x + np.maximum(0, x @ W1 + b1) @ W2 + b2)


def transformer_block_float32(x, heads, W_O, W1, b1, W2, b2, mask=None):
    def norm(z):
        return (z - z.mean(-1, keepdims=True)) / np.sqrt(z.var(-1, keepdims=True)
                                                         + np.float32(1e-5))

    x = norm(x.astype(np.float32) + multihead(x, heads, W_O, mask).astype(np.float32))
    W1, b1, W2, b2 = (a.astype(np.float32) for a in (W1, b1, W2, b2))
    return norm(x + np.maximum(0, x @ W1 + b1) @ W2 + b2)


def transformer_block_token_by_token_ffn(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    ffn = np.array([np.maximum(0, token @ W1 + b1) @ W2 + b2 for token in x])
    return layer_norm(x + ffn.reshape(x.shape))


def transformer_block_einsum(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    hidden = np.clip(np.einsum("nd,df->nf", x, W1) + b1, 0, None)
    return layer_norm(x + np.einsum("nf,fd->nd", hidden, W2) + b2)


VARIANTS = {
    "attention": [attention_einsum, attention_loops, attention_minus_1e9, attention_minus_1e30,
                  attention_float32, attention_masked_assignment],
    "multihead": [multihead_stacked_weights, multihead_blocks_of_w_o, multihead_hstack,
                  multihead_float32],
    "positional_encoding": [positional_encoding_loops, positional_encoding_stack_and_reshape,
                            positional_encoding_power, positional_encoding_float32],
    "transformer_block": [transformer_block_own_layer_norm, transformer_block_token_by_token_ffn,
                          transformer_block_einsum, transformer_block_layer_norm_eps_1e6,
                          transformer_block_std_plus_eps, transformer_block_float32],
}


def all_variants():
    """(graded function, variant) pairs, in a stable order."""
    return [(function, variant) for function, variants in VARIANTS.items()
            for variant in variants]


def variant_sets():
    """Sets of at most one variant per function; together they hold every variant once."""
    depth = max(len(variants) for variants in VARIANTS.values())
    return [{function: variants[i] for function, variants in VARIANTS.items() if i < len(variants)}
            for i in range(depth)]
