"""Honest implementations split into many small helpers, with constants and a class."""
# %%
from math import sqrt

import numpy


class Shapes:
    def __init__(self, Q, K):
        self.n, self.m, self.d_k = Q.shape[0], K.shape[0], Q.shape[1]


def masked(scores, mask):
    if mask is None:
        return scores
    out = scores.copy()
    out[~mask] = -numpy.inf
    return out


def attention(Q, K, V, mask=None):
    shape = Shapes(Q, K)
    scores = masked(Q.dot(K.T) / sqrt(shape.d_k), mask)
    scores = scores - scores.max(axis=1)[:, None]
    weights = numpy.exp(scores)
    weights /= weights.sum(axis=1)[:, None]
    return weights.dot(V), weights

# %%
def multihead(X, heads, W_O, mask=None):
    return numpy.concatenate([attention(X @ q, X @ k, X @ v, mask)[0] for q, k, v in heads],
                             axis=-1) @ W_O

# %%
BASE = 10_000


def positional_encoding(n_positions, d_model):
    positions = numpy.arange(n_positions).reshape(-1, 1)
    omega = BASE ** (-numpy.arange(0, d_model, 2) / d_model)
    pe = numpy.zeros((n_positions, d_model))
    pe[:, ::2] = numpy.sin(positions * omega)
    pe[:, 1::2] = numpy.cos(positions * omega)[:, : d_model // 2]
    return pe, omega

# %%
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    first = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(first + numpy.maximum(0, first @ W1 + b1) @ W2 + b2)
