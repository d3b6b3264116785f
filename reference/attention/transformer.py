"""Reference implementation of lesson 055, with the signatures of seed 000.

Every array is 2-D, one row per token, exactly as in the lesson: no batch axis.
The graded ``transformer_block`` is post-LN, as in the lesson and in Vaswani et al. (2017);
the pre-LN formula of the assessment seed is the modern variant and is not graded.
"""

import numpy as np


def softmax(z, axis=-1):
    """Softmax along ``axis``, shifted by the maximum so that large scores cannot overflow."""
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attention(Q, K, V, mask=None):
    """Scaled dot-product attention. ``mask`` is boolean: True means "may attend".

    Returns ``(output, weights)``: output has one row per query, weights one row per query
    and one column per key, each row summing to 1.
    """
    d_k = K.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)
    if mask is not None:
        # -inf before the softmax, so forbidden keys get exactly zero weight.
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def init_multihead(d_model, n_heads, rng):
    """Random projections for ``n_heads`` heads of size d_model // n_heads, drawn from ``rng``."""
    d_k = d_model // n_heads
    heads = [
        tuple(rng.normal(0, 1 / np.sqrt(d_model), (d_model, d_k)) for _ in range(3))
        for _ in range(n_heads)
    ]
    W_O = rng.normal(0, 1 / np.sqrt(d_model), (d_model, d_model))
    return heads, W_O


def multihead(X, heads, W_O, mask=None):
    """Multi-head self-attention: each head attends on its own projections, then W_O mixes them."""
    outputs = [attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0] for W_Q, W_K, W_V in heads]
    # Heads are concatenated side by side (one block of columns each), not summed.
    return np.concatenate(outputs, axis=1) @ W_O


def positional_encoding(n_positions, d_model):
    """Sinusoidal encoding: sin on even columns, cos on odd ones, one frequency per pair.

    Returns ``(pe, omega)`` with ``pe`` of shape (n_positions, d_model) and one ``omega`` per
    pair of columns. With an odd d_model the last column is a sine whose cosine partner would
    fall outside the matrix, which is what the formula gives for 2i < d_model <= 2i + 1.
    """
    pos = np.arange(n_positions)[:, None]
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])
    return pe, omega


def layer_norm(x, eps=1e-5):
    """Normalize each token (row) to mean 0 and variance 1, with no learned gain or bias."""
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    """One post-LN block: LayerNorm(x + MultiHead(x)), then LayerNorm(x + FFN(x))."""
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    ffn = np.maximum(0, x @ W1 + b1) @ W2 + b2
    return layer_norm(x + ffn)
