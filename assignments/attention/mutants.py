"""Mutants: the reference with typical mistakes in it, for ``attention.misconceptions``.

Each graded function has one trusted implementation here with a keyword *switch* for each
way of getting it wrong: ``attention_with(Q, K, V, mask, scale="none")`` forgets √d_k, and
with every switch at its default it is the reference. A catalog entry's mutant is that
implementation with the entry's switches (``MISTAKES``), and two entries' switches set at
once give the mutant of both mistakes together, which is how the diagnosis names two mistakes
in one output (``Mutant.combined``).

The implementations use only numpy, the notebook's given helpers and the other graded
functions, so that a mutant can be rendered as a student cell
(``misconceptions.render_source``). The graded functions they call are the reference's here,
exactly as the grader isolates a student's function from the student's other functions.
Mutant outputs are computed by the grader and compared with a failing student's output; they
are never shown to anyone.
"""

import inspect
from dataclasses import dataclass

import numpy as np

import reference
from reference import attention, multihead, softmax

# --- attention(Q, K, V, mask=None) -----------------------------------------------------------


def attention_with(Q, K, V, mask=None, *, product="Q @ K.T", scale="sqrt(d_k)",
                   masking="-inf before", hidden=-np.inf, softmax_axis=-1, shift=True,
                   returns="output, weights"):
    """Attention with switches: which product, which scale, how the mask acts and what score a
    hidden key gets, which axis the softmax runs over, whether it subtracts the maximum, and
    what is returned.

    A finite ``hidden`` score (-1e9, d2l's -1e6) gives the same weights as -inf except in a row
    where every key is hidden: uniform weights there, not NaN.
    """
    if product == "Q @ K.T":
        scores = Q @ K.T
    elif product == "Q @ K":
        scores = Q @ K
    else:  # "Q.T @ K"
        scores = Q.T @ K
    if scale == "sqrt(d_k)":
        scores = scores / np.sqrt(K.shape[-1])
    elif scale == "d_k":
        scores = scores / K.shape[-1]
    elif scale == "sqrt(m)":
        scores = scores / np.sqrt(K.shape[0])
    if mask is not None and masking == "-inf before":
        scores = np.where(mask, scores, hidden)
    elif mask is not None and masking == "inverted":
        scores = np.where(~mask, scores, hidden)
    elif mask is not None and masking == "multiplied":
        scores = scores * mask
    if shift:
        weights = softmax(scores, axis=softmax_axis)
    else:
        e = np.exp(scores)
        weights = e / e.sum(axis=softmax_axis, keepdims=True)
    if mask is not None and masking == "zeroed after":
        weights = np.where(mask, weights, 0.0)
    output = weights @ V
    if returns == "output":
        return output
    if returns == "weights, output":
        return weights, output
    return output, weights


# --- multihead(X, heads, W_O, mask=None) -----------------------------------------------------


def multihead_with(X, heads, W_O, mask=None, *, pass_mask=True, scale="sqrt(d_k)",
                   combine="concat", w_o="W_O", returns="output"):
    """Multi-head attention with switches: whether each head gets the mask, which dimension
    scales the scores, how the heads are combined and how W_O is applied."""
    head_mask = mask if pass_mask else None
    outputs, weights = [], []
    for W_Q, W_K, W_V in heads:
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        if scale == "sqrt(d_k)":
            output, head_weights = attention(Q, K, V, head_mask)
        else:  # "sqrt(d_model)": the head's own attention, scaled by the model's width
            scores = Q @ K.T / np.sqrt(X.shape[1])
            head_weights = softmax(scores if head_mask is None
                                   else np.where(head_mask, scores, -np.inf))
            output = head_weights @ V
        outputs.append(output)
        weights.append(head_weights)
    if combine == "concat":
        combined = np.concatenate(outputs, axis=1)
    elif combine == "sum":
        combined = sum(outputs)
    elif combine == "mean":
        combined = sum(outputs) / len(outputs)
    else:  # "rows, reshaped": each row now mixes tokens and heads
        combined = np.concatenate(outputs, axis=0).reshape(len(X), -1)
    if w_o == "W_O":
        result = combined @ W_O
    elif w_o == "W_O.T":
        result = combined @ W_O.T
    else:  # "none"
        result = combined
    return (result, weights) if returns == "output, weights" else result


# --- positional_encoding(n_positions, d_model) ------------------------------------------------


def positional_encoding_with(n_positions, d_model, *, exponent="2i/d", inverted=False,
                             first=0, even="sin", layout="interleaved", transposed=False):
    """Sinusoidal encoding with switches: the frequencies' exponent and direction, where the
    positions start, which function the even columns carry, and how the columns are laid out.

    ``exponent="j/d"`` gives every column its own frequency, so a cosine no longer shares the
    frequency of its sine.
    """
    if exponent == "2i/d":
        powers = np.arange(0, d_model, 2) / d_model
    elif exponent == "i/d":
        powers = np.arange((d_model + 1) // 2) / d_model
    else:  # "j/d"
        powers = np.arange(d_model) / d_model
    omega = 10000 ** powers if inverted else 1 / 10000 ** powers
    angles = np.arange(first, first + n_positions)[:, None] * omega
    sin, cos = (np.sin, np.cos) if even == "sin" else (np.cos, np.sin)
    if exponent == "j/d":
        pe = np.where(np.arange(d_model) % 2 == 0, sin(angles), cos(angles))
    elif layout == "interleaved":
        pe = np.zeros((n_positions, d_model))
        pe[:, 0::2] = sin(angles)
        pe[:, 1::2] = cos(angles[:, : d_model // 2])
    else:  # "halves": every sine, then every cosine
        pe = np.concatenate([sin(angles), cos(angles[:, : d_model // 2])], axis=1)
    return (pe.T if transposed else pe), omega


# --- transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None) -------------------------------


def _normalize(x, axis=-1, eps=1e-5, ddof=0):
    # The variance written out, as np.var computes it, so that ddof = 1 over a single row
    # divides by zero under the caller's errstate instead of warning.
    centred = x - x.mean(axis=axis, keepdims=True)
    variance = (centred * centred).sum(axis=axis, keepdims=True) / (x.shape[axis] - ddof)
    return centred / np.sqrt(variance + eps)


def _gelu(z):
    # GPT-2's tanh approximation, the one usually written with numpy alone.
    return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z ** 3)))


def _gelu_erf(z):
    # The exact GELU, z·Φ(z), as BERT defines it.
    from math import erf

    return 0.5 * z * (1 + np.vectorize(erf)(z / np.sqrt(2)))


def transformer_block_with(x, heads, W_O, W1, b1, W2, b2, mask=None, *, pre_ln=False,
                           attention_residual=True, ffn_residual=True, activation="relu",
                           biases=True, norm_axis=-1, eps=1e-5, ddof=0, pass_mask=True,
                           final_norm=True, ffn_on_block_input=False):
    """A block with switches: pre-LN or post-LN, each residual, the FFN's activation and
    biases, the LayerNorm's axis, epsilon and variance (``ddof=1`` divides by d_model − 1),
    the mask, the final norm and the FFN's input."""

    def norm(z):
        return _normalize(z, norm_axis, eps, ddof)

    def mixed(z):
        return multihead(z, heads, W_O, mask if pass_mask else None)

    def ffn(z):
        hidden = z @ W1 + b1 if biases else z @ W1
        if activation == "relu":
            hidden = np.maximum(0, hidden)
        elif activation == "gelu":
            hidden = _gelu(hidden)
        elif activation == "gelu_erf":
            hidden = _gelu_erf(hidden)
        out = hidden @ W2 + b2 if biases else hidden @ W2
        return np.maximum(0, out) if activation == "relu after W2" else out

    if pre_ln:  # x ← x + MultiHead(LN(x)); x ← x + FFN(LN(x)), with no norm at the end
        h = mixed(norm(x)) + (x if attention_residual else 0)
        return ffn(norm(x if ffn_on_block_input else h)) + (h if ffn_residual else 0)
    h = norm(mixed(x) + (x if attention_residual else 0))
    out = ffn(x if ffn_on_block_input else h) + (h if ffn_residual else 0)
    return norm(out) if final_norm else out


IMPLEMENTATIONS = {
    "attention": attention_with,
    "multihead": multihead_with,
    "positional_encoding": positional_encoding_with,
    "transformer_block": transformer_block_with,
}


# --- the catalog's mistakes, as switches ---------------------------------------------------------

# Each entry of ``misconceptions.CATALOG`` has its switches here. An entry may list several
# forms of one mistake (the sum or the mean of the heads); any of them names it.
MISTAKES = {
    "attention.no_sqrt_dk": [dict(scale="none")],
    "attention.divides_by_dk": [dict(scale="d_k")],
    "attention.sqrt_of_num_keys": [dict(scale="sqrt(m)")],
    "attention.k_not_transposed": [dict(product="Q @ K")],
    "attention.q_transposed": [dict(product="Q.T @ K")],
    "attention.softmax_over_queries": [dict(softmax_axis=0)],
    "attention.mask_after_softmax": [dict(masking="zeroed after")],
    "attention.mask_inverted": [dict(masking="inverted"), dict(masking="inverted", hidden=-1e9)],
    "attention.mask_multiplied": [dict(masking="multiplied")],
    "attention.unshifted_softmax": [dict(shift=False)],
    "attention.returns_only_output": [dict(returns="output")],
    "attention.returns_weights_first": [dict(returns="weights, output")],
    "multihead.no_w_o": [dict(w_o="none")],
    "multihead.sums_heads": [dict(combine="sum"), dict(combine="mean")],
    "multihead.concat_along_rows": [dict(combine="rows, reshaped")],
    "multihead.mask_not_passed": [dict(pass_mask=False)],
    "multihead.scales_by_d_model": [dict(scale="sqrt(d_model)")],
    "multihead.w_o_transposed": [dict(w_o="W_O.T")],
    "multihead.returns_tuple": [dict(returns="output, weights")],
    "positional_encoding.sin_cos_swapped": [dict(even="cos")],
    "positional_encoding.exponent_i_over_d": [dict(exponent="i/d")],
    "positional_encoding.halves_concatenated": [dict(layout="halves")],
    "positional_encoding.transposed": [dict(transposed=True)],
    "positional_encoding.positions_from_one": [dict(first=1)],
    "positional_encoding.frequency_not_inverted": [dict(inverted=True)],
    "positional_encoding.column_index_exponent": [dict(exponent="j/d")],
    "transformer_block.pre_ln": [dict(pre_ln=True)],
    "transformer_block.no_attention_residual": [dict(attention_residual=False)],
    "transformer_block.no_ffn_residual": [dict(ffn_residual=False)],
    "transformer_block.no_relu": [dict(activation="none")],
    "transformer_block.relu_after_second_layer": [dict(activation="relu after W2")],
    "transformer_block.gelu_instead_of_relu": [dict(activation="gelu"),
                                               dict(activation="gelu_erf")],
    "transformer_block.ffn_without_biases": [dict(biases=False)],
    "transformer_block.layer_norm_over_tokens": [dict(norm_axis=0)],
    "transformer_block.layer_norm_unbiased_variance": [dict(ddof=1)],
    "transformer_block.mask_not_passed": [dict(pass_mask=False)],
    "transformer_block.no_final_norm": [dict(final_norm=False)],
    "transformer_block.ffn_on_block_input": [dict(ffn_on_block_input=True)],
}


@dataclass(frozen=True)
class Mutant:
    """A graded function's implementation with some switches set: callable like the student's
    function, with the same arguments."""

    function: str
    switches: tuple  # ((name, value), ...), sorted by name

    @classmethod
    def of(cls, function, **switches):
        return cls(function, tuple(sorted(switches.items())))

    def __call__(self, *args, **inputs):
        return IMPLEMENTATIONS[self.function](*args, **inputs, **dict(self.switches))

    def combined(self, other):
        """Both mutants' mistakes at once, or None when they set the same switch."""
        names = {name for name, _ in self.switches}
        if self.function != other.function or names & {name for name, _ in other.switches}:
            return None
        return Mutant.of(self.function, **dict(self.switches), **dict(other.switches))

    @property
    def implementation(self):
        return IMPLEMENTATIONS[self.function]

    def call_source(self, name):
        """``def name(...)`` calling the implementation with these switches, as a cell's head."""
        signature = inspect.signature(getattr(reference, self.function))
        arguments = [*signature.parameters, *(f"{k}={v!r}" for k, v in self.switches)]
        return (f"def {name}{signature}:\n"
                f"    return {self.implementation.__name__}({', '.join(arguments)})\n")


def forms(misconception_id):
    """The mutants of one catalog entry, one per form of the mistake."""
    function = misconception_id.split(".")[0]
    return [Mutant.of(function, **switches) for switches in MISTAKES[misconception_id]]
