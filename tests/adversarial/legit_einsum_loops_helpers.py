"""Honest implementations in other styles: einsum, explicit loops, helpers, np.finfo, math.sqrt."""
# %%
import math

NEG = -1e30


def _stable_softmax(scores):
    shifted = scores - np.max(scores, axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / np.sum(weights, axis=-1, keepdims=True)


def attention(Q, K, V, mask=None):
    scores = np.einsum("id,jd->ij", Q, K) / math.sqrt(K.shape[1])
    if mask is not None:
        scores = np.where(mask, scores, np.finfo(scores.dtype).min)
    weights = _stable_softmax(scores)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
        weights = weights / weights.sum(axis=1, keepdims=True)
    return np.einsum("ij,jd->id", weights, V), weights

# %%
def _one_head(X, projections, mask):
    W_Q, W_K, W_V = projections
    output, _ = attention(X @ W_Q, X @ W_K, X @ W_V, mask=mask)
    return output


def multihead(X, heads, W_O, mask=None):
    outputs = []
    for projections in heads:
        outputs.append(_one_head(X, projections, mask))
    return np.hstack(outputs) @ W_O

# %%
def positional_encoding(n_positions, d_model):
    omega = np.array([1.0 / math.pow(10000.0, i / d_model) for i in range(0, d_model, 2)])
    pe = np.empty((n_positions, d_model))
    for pos in range(n_positions):
        for j in range(d_model):
            angle = pos * omega[j // 2]
            pe[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe, omega

# %%
EPSILON = 1e-5


def _norm_rows(x):
    centered = x - x.mean(axis=1, keepdims=True)
    return centered / np.sqrt((centered ** 2).mean(axis=1, keepdims=True) + EPSILON)


def _feed_forward(x, W1, b1, W2, b2):
    hidden = np.maximum(x @ W1 + b1, 0.0)
    return hidden @ W2 + b2


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = _norm_rows(x + multihead(x, heads, W_O, mask=mask))
    return _norm_rows(x + _feed_forward(x, W1, b1, W2, b2))
