"""Mistakes outside the catalog that students write, as code, for the public checks only.

The catalog (misconceptions.py) names what it names on the hidden cases; these are mistakes
its mutants do not reproduce, which the grade explains by measuring (findings.py and the
locators). At build time each runs on the public cases and the grade's own diagnosis of it
there becomes the words the notebook says when a student's function gives the same outputs
(kit_autograder/build/checks_data.py). Never shipped: only their outputs and words are.
"""

import numpy as np

from reference.attention import (attention, layer_norm, multihead, positional_encoding,
                                 softmax)


def _attention_always_causal(Q, K, V, mask=None):
    # The causal mask built inside, in place of the one it receives (or of none).
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights


def _multihead_softmax_over_heads(X, heads, W_O, mask=None):
    # Every head's scores stacked (h, n, n) and one softmax over the heads' axis.
    scores = np.stack([(X @ W_Q) @ (X @ W_K).T / np.sqrt(W_K.shape[1]) for W_Q, W_K, _ in heads])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=0)
    outputs = [w @ (X @ W_V) for w, (_, _, W_V) in zip(weights, heads)]
    return np.concatenate(outputs, axis=1) @ W_O


def _multihead_interleaved(X, heads, W_O, mask=None):
    # Heads stacked on a last axis and flattened: column j·h + i is head i's column j.
    outputs = [attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0] for W_Q, W_K, W_V in heads]
    return np.stack(outputs, axis=-1).reshape(len(X), -1) @ W_O


def _multihead_residual_inside(X, heads, W_O, mask=None):
    return X + multihead(X, heads, W_O, mask)


def _pe_last_column_zero(n_positions, d_model):
    # One loop over d_model // 2 pairs: with an odd d_model the last sine is never written.
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((n_positions, d_model))
    for i in range(d_model // 2):
        pe[:, 2 * i] = np.sin(np.arange(n_positions) * omega[i])
        pe[:, 2 * i + 1] = np.cos(np.arange(n_positions) * omega[i])
    return pe, omega


def _pe_cosines_take_every_omega(n_positions, d_model):
    # Every frequency for the cosines too (a widespread public table): with an odd d_model
    # there is one odd column fewer, and NumPy refuses the assignment with a message naming
    # both shapes, which every code that does this raises alike.
    pe, omega = positional_encoding(n_positions, d_model)
    pe[:, 1::2] = np.cos(np.arange(n_positions)[:, None] * omega)
    return pe, omega


def _block_without_first_norm(x, heads, W_O, W1, b1, W2, b2, mask=None):
    h = x + multihead(x, heads, W_O, mask)
    return layer_norm(h + np.maximum(0, h @ W1 + b1) @ W2 + b2)


def _block_silu(x, heads, W_O, W1, b1, W2, b2, mask=None):
    h = layer_norm(x + multihead(x, heads, W_O, mask))
    z = h @ W1 + b1
    return layer_norm(h + (z / (1 + np.exp(-z))) @ W2 + b2)


def _block_ffn_on_unnormalised_sum(x, heads, W_O, W1, b1, W2, b2, mask=None):
    s = x + multihead(x, heads, W_O, mask)
    return layer_norm(layer_norm(s) + np.maximum(0, s @ W1 + b1) @ W2 + b2)


# (id, graded function, implementation)
FORMS = (
    ("attention.known_always_causal", "attention", _attention_always_causal),
    ("multihead.known_softmax_over_heads", "multihead", _multihead_softmax_over_heads),
    ("multihead.known_interleaved_heads", "multihead", _multihead_interleaved),
    ("multihead.known_residual_inside", "multihead", _multihead_residual_inside),
    ("positional_encoding.known_last_column_zero", "positional_encoding", _pe_last_column_zero),
    ("positional_encoding.known_cosines_take_every_omega", "positional_encoding",
     _pe_cosines_take_every_omega),
    ("transformer_block.known_first_norm_missing", "transformer_block",
     _block_without_first_norm),
    ("transformer_block.known_silu", "transformer_block", _block_silu),
    ("transformer_block.known_ffn_on_unnormalised_sum", "transformer_block",
     _block_ffn_on_unnormalised_sum),
)
