"""Mutants: the reference with one typical mistake each, for ``attention.misconceptions``.

A mutant keeps the signature of the graded function it breaks and uses only numpy, the
notebook's given helpers (``softmax``, ``layer_norm``) and the other graded functions, so that
``misconceptions.render_source`` can turn it into a student cell ``def NAME(...)``. Private
helpers (``_name``) travel with the mutants that call them.

The graded functions a mutant calls are the reference's here, exactly as the grader isolates a
student's function from the student's other functions. Mutant outputs are computed by the grader
and compared with a failing student's output; they are never shown to anyone.
"""

import numpy as np

from reference import attention, layer_norm, multihead, softmax

# --- attention(Q, K, V, mask=None) -----------------------------------------------------------


def _masked(scores, mask):
    return scores if mask is None else np.where(mask, scores, -np.inf)


def _scaled(Q, K):
    return Q @ K.T / np.sqrt(K.shape[-1])


def _attend(scores, V, mask):
    weights = softmax(_masked(scores, mask))
    return weights @ V, weights


def attention_no_sqrt_dk(Q, K, V, mask=None):
    return _attend(Q @ K.T, V, mask)


def attention_divides_by_dk(Q, K, V, mask=None):
    return _attend(Q @ K.T / K.shape[-1], V, mask)


def attention_sqrt_of_num_keys(Q, K, V, mask=None):
    return _attend(Q @ K.T / np.sqrt(K.shape[0]), V, mask)


def attention_k_not_transposed(Q, K, V, mask=None):
    return _attend(Q @ K / np.sqrt(K.shape[-1]), V, mask)


def attention_q_transposed(Q, K, V, mask=None):
    return _attend(Q.T @ K / np.sqrt(K.shape[-1]), V, mask)


def attention_softmax_over_queries(Q, K, V, mask=None):
    weights = softmax(_masked(_scaled(Q, K), mask), axis=0)
    return weights @ V, weights


def attention_mask_after_softmax(Q, K, V, mask=None):
    weights = softmax(_scaled(Q, K))
    weights = weights if mask is None else np.where(mask, weights, 0.0)
    return weights @ V, weights


def attention_mask_inverted(Q, K, V, mask=None):
    return _attend(_scaled(Q, K), V, None if mask is None else ~mask)


def attention_mask_multiplied(Q, K, V, mask=None):
    scores = _scaled(Q, K)
    return _attend(scores if mask is None else scores * mask, V, None)


def attention_unshifted_softmax(Q, K, V, mask=None):
    e = np.exp(_masked(_scaled(Q, K), mask))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def attention_returns_only_output(Q, K, V, mask=None):
    return _attend(_scaled(Q, K), V, mask)[0]


def attention_returns_weights_first(Q, K, V, mask=None):
    output, weights = _attend(_scaled(Q, K), V, mask)
    return weights, output


# --- multihead(X, heads, W_O, mask=None) -----------------------------------------------------


def _head_outputs(X, heads, mask):
    return [attention(X @ W_Q, X @ W_K, X @ W_V, mask)[0] for W_Q, W_K, W_V in heads]


def multihead_no_w_o(X, heads, W_O, mask=None):
    return np.concatenate(_head_outputs(X, heads, mask), axis=1)


def multihead_sums_heads(X, heads, W_O, mask=None):
    return sum(_head_outputs(X, heads, mask)) @ W_O


def multihead_concat_along_rows(X, heads, W_O, mask=None):
    # Rows first, then reshaped to the expected shape: each row now mixes tokens and heads.
    return np.concatenate(_head_outputs(X, heads, mask), axis=0).reshape(len(X), -1) @ W_O


def multihead_mask_not_passed(X, heads, W_O, mask=None):
    return np.concatenate(_head_outputs(X, heads, None), axis=1) @ W_O


def multihead_scales_by_d_model(X, heads, W_O, mask=None):
    outputs = [softmax(_masked(X @ W_Q @ (X @ W_K).T / np.sqrt(X.shape[1]), mask)) @ (X @ W_V)
               for W_Q, W_K, W_V in heads]
    return np.concatenate(outputs, axis=1) @ W_O


def multihead_w_o_transposed(X, heads, W_O, mask=None):
    return np.concatenate(_head_outputs(X, heads, mask), axis=1) @ W_O.T


def multihead_returns_tuple(X, heads, W_O, mask=None):
    results = [attention(X @ W_Q, X @ W_K, X @ W_V, mask) for W_Q, W_K, W_V in heads]
    return np.concatenate([out for out, _ in results], axis=1) @ W_O, [w for _, w in results]


# --- positional_encoding(n_positions, d_model) ------------------------------------------------


def _frequencies(d_model):
    return 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)


def _interleaved(positions, omega, d_model, even=np.sin, odd=np.cos):
    pe = np.zeros((len(positions), d_model))
    pe[:, 0::2] = even(positions[:, None] * omega)
    pe[:, 1::2] = odd(positions[:, None] * omega[: d_model // 2])
    return pe


def positional_encoding_sin_cos_swapped(n_positions, d_model):
    omega = _frequencies(d_model)
    return _interleaved(np.arange(n_positions), omega, d_model, np.cos, np.sin), omega


def positional_encoding_exponent_i_over_d(n_positions, d_model):
    omega = 1 / 10000 ** (np.arange((d_model + 1) // 2) / d_model)
    return _interleaved(np.arange(n_positions), omega, d_model), omega


def positional_encoding_halves_concatenated(n_positions, d_model):
    omega = _frequencies(d_model)
    angles = np.arange(n_positions)[:, None] * omega
    return np.concatenate([np.sin(angles), np.cos(angles[:, : d_model // 2])], axis=1), omega


def positional_encoding_transposed(n_positions, d_model):
    omega = _frequencies(d_model)
    return _interleaved(np.arange(n_positions), omega, d_model).T, omega


def positional_encoding_positions_from_one(n_positions, d_model):
    omega = _frequencies(d_model)
    return _interleaved(np.arange(1, n_positions + 1), omega, d_model), omega


def positional_encoding_frequency_not_inverted(n_positions, d_model):
    omega = 10000 ** (np.arange(0, d_model, 2) / d_model)
    return _interleaved(np.arange(n_positions), omega, d_model), omega


def positional_encoding_column_index_exponent(n_positions, d_model):
    # One frequency per column j, 1/10000^(j/d): cosines get the next sine's frequency.
    omega = 1 / 10000 ** (np.arange(d_model) / d_model)
    angles = np.arange(n_positions)[:, None] * omega
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles)), omega


# --- transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None) -------------------------------


def _ffn(x, W1, b1, W2, b2):
    return np.maximum(0, x @ W1 + b1) @ W2 + b2


def transformer_block_pre_ln(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = x + multihead(layer_norm(x), heads, W_O, mask)
    return x + _ffn(layer_norm(x), W1, b1, W2, b2)


def transformer_block_no_attention_residual(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(multihead(x, heads, W_O, mask))
    return layer_norm(x + _ffn(x, W1, b1, W2, b2))


def transformer_block_no_ffn_residual(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(_ffn(x, W1, b1, W2, b2))


def transformer_block_no_relu(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(x + (x @ W1 + b1) @ W2 + b2)


def transformer_block_relu_after_second_layer(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(x + np.maximum(0, (x @ W1 + b1) @ W2 + b2))


def transformer_block_ffn_without_biases(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(x + np.maximum(0, x @ W1) @ W2)


def _layer_norm_over_tokens(x, eps=1e-5):
    return (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + eps)


def transformer_block_layer_norm_over_tokens(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = _layer_norm_over_tokens(x + multihead(x, heads, W_O, mask))
    return _layer_norm_over_tokens(x + _ffn(x, W1, b1, W2, b2))


def transformer_block_mask_not_passed(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O))
    return layer_norm(x + _ffn(x, W1, b1, W2, b2))


def transformer_block_no_final_norm(x, heads, W_O, W1, b1, W2, b2, mask=None):
    x = layer_norm(x + multihead(x, heads, W_O, mask))
    return x + _ffn(x, W1, b1, W2, b2)


def transformer_block_ffn_on_block_input(x, heads, W_O, W1, b1, W2, b2, mask=None):
    h = layer_norm(x + multihead(x, heads, W_O, mask))
    return layer_norm(h + _ffn(x, W1, b1, W2, b2))
