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

from reference import attention as reference
from reference.attention import attention, multihead, softmax

# --- attention(Q, K, V, mask=None) -----------------------------------------------------------


def attention_with(Q, K, V, mask=None, *, product="Q @ K.T", scale="sqrt(d_k)",
                   masking="-inf before", hidden=-np.inf, softmax_axis=-1, shift=True,
                   values="V", returns="output, weights", squeeze=False):
    """Attention with switches: which product, which scale, how the mask acts and what score a
    hidden key gets, which axis the softmax runs over, whether it subtracts the maximum, what
    the weights multiply and what is returned. ``shift="columns"`` subtracts each column's
    maximum instead of each row's; ``squeeze`` drops every size-1 axis of what is returned
    (``.squeeze()``), which changes only a single query's shapes.

    A finite ``hidden`` score (-1e9, d2l's -1e6) gives the same weights as -inf except in a row
    where every key is hidden: uniform weights there, not NaN.
    """
    if product == "Q @ K.T":
        scores = Q @ K.T
    elif product == "Q @ K":
        scores = Q @ K
    else:  # "Q.T @ K"
        scores = Q.T @ K
    divisors = {"sqrt(d_k)": np.sqrt(K.shape[-1]), "d_k": K.shape[-1],
                "sqrt(m)": np.sqrt(K.shape[0]), "sqrt(n)": np.sqrt(Q.shape[0]),
                "sqrt(d_v)": np.sqrt(V.shape[-1]), "none": 1}
    scores = scores / divisors[scale]
    if mask is not None and masking == "-inf before":
        scores = np.where(mask, scores, hidden)
    elif mask is not None and masking == "inverted":
        scores = np.where(~mask, scores, hidden)
    elif mask is not None and masking == "multiplied":
        scores = scores * mask
    elif mask is not None and masking == "added":  # True counts as 1, False as 0
        scores = scores + mask
    if shift == "columns":  # each key's maximum, over the queries: not one constant per row
        finite = np.where(np.isfinite(scores), scores, -np.inf)
        e = np.exp(scores - finite.max(axis=0, keepdims=True))
        weights = e / e.sum(axis=softmax_axis, keepdims=True)
    elif shift:
        weights = softmax(scores, axis=softmax_axis)
    else:
        e = np.exp(scores)
        weights = e / e.sum(axis=softmax_axis, keepdims=True)
    if mask is not None and masking == "zeroed after":
        weights = np.where(mask, weights, 0.0)
    output = weights @ (V if values == "V" else K)
    if squeeze:
        output, weights = np.squeeze(output), np.squeeze(weights)
    if returns == "output":
        return output
    if returns == "weights, output":
        return weights, output
    if returns == "output, weights.T":
        return output, weights.T
    return output, weights


# --- multihead(X, heads, W_O, mask=None) -----------------------------------------------------


def multihead_with(X, heads, W_O, mask=None, *, pass_mask=True, scale="sqrt(d_k)",
                   values="W_V", combine="concat", w_o="W_O", returns="output"):
    """Multi-head attention with switches: whether each head gets the mask, which size scales
    its scores, which projection gives its values, how the heads are combined (or not split at
    all) and how W_O is applied."""
    head_mask = mask if pass_mask else None
    if combine == "one attention":  # every head's projections side by side, one attention
        heads = [tuple(np.concatenate([head[i] for head in heads], axis=1) for i in range(3))]
    outputs, weights = [], []
    for W_Q, W_K, W_V in heads:
        Q, K = X @ W_Q, X @ W_K
        V = X @ (W_V if values == "W_V" else W_K)
        if scale == "sqrt(d_k)":
            output, head_weights = attention(Q, K, V, head_mask)
        else:  # the head's own attention, scaled by another size
            divisor = {"sqrt(d_model)": X.shape[1], "sqrt(d_v)": V.shape[1],
                       "sqrt(d_model/h)": X.shape[1] // len(heads)}[scale]
            scores = Q @ K.T / np.sqrt(divisor)
            head_weights = softmax(scores if head_mask is None
                                   else np.where(head_mask, scores, -np.inf))
            output = head_weights @ V
        outputs.append(output)
        weights.append(head_weights)
    h, d_v = len(outputs), outputs[0].shape[1]
    blocks = [W_O[i * d_v:(i + 1) * d_v] for i in range(h)]
    if w_o == "per head, concatenated":  # each head through its block of W_O, side by side
        return np.concatenate([o @ b for o, b in zip(outputs, blocks)], axis=1)
    if w_o == "per head, mean":  # each head through its block of W_O, averaged
        return sum(o @ b for o, b in zip(outputs, blocks)) / h
    if w_o == "whole, per head":  # each head through the whole of W_O, summed
        return sum(o @ W_O for o in outputs)
    if combine in ("concat", "one attention"):
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
    positions start, which function the even columns carry, how the columns are laid out, and
    whether pe comes back transposed (``True``) or, built as (d_model, n_positions), reshaped
    to the right shape instead of transposed (``"reshaped"``), or its table of angles, built as
    (frequencies, positions), reshaped so (``"angles reshaped"``).

    ``exponent="j/d"`` gives every column its own frequency, so a cosine no longer shares the
    frequency of its sine; ``"2i/(d-1)"`` and ``"(2i+1)/d"`` are the exponent's two off-by-ones;
    ``even="cos, cos"`` puts a cosine in every column.
    """
    if exponent == "2i/d":
        powers = np.arange(0, d_model, 2) / d_model
    elif exponent == "2i/(d-1)":
        powers = np.arange(0, d_model, 2) / max(d_model - 1, 1)
    elif exponent == "(2i+1)/d":
        powers = (np.arange(0, d_model, 2) + 1) / d_model
    elif exponent == "i/d":
        powers = np.arange((d_model + 1) // 2) / d_model
    else:  # "j/d"
        powers = np.arange(d_model) / d_model
    omega = 10000 ** powers if inverted else 1 / 10000 ** powers
    angles = np.arange(first, first + n_positions)[:, None] * omega
    if transposed == "angles reshaped":  # the table built (frequencies, positions), reshaped
        angles = np.outer(omega, np.arange(first, first + n_positions)).reshape(n_positions, -1)
    sin, cos = {"sin": (np.sin, np.cos), "cos": (np.cos, np.sin),
                "cos, cos": (np.cos, np.cos)}[even]
    if exponent == "j/d":
        pe = np.where(np.arange(d_model) % 2 == 0, sin(angles), cos(angles))
    elif layout == "interleaved":
        pe = np.zeros((n_positions, d_model))
        pe[:, 0::2] = sin(angles)
        pe[:, 1::2] = cos(angles[:, : d_model // 2])
    else:  # "halves": every sine, then every cosine
        pe = np.concatenate([sin(angles), cos(angles[:, : d_model // 2])], axis=1)
    if transposed == "reshaped":
        return pe.T.reshape(n_positions, d_model), omega
    return (pe.T if transposed is True else pe), omega


# --- transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None) -------------------------------


DEFAULT_EPS = 1e-5  # the given layer_norm's, the default of the epsilon switches below


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
                           attention_residual=True, ffn_residual=True, second_residual="h",
                           activation="relu", slope=0.01, biases=True, b1_used=True,
                           b2_used=True, b1_after_relu=False, w1="W1", layers=2, norm_axis=-1,
                           eps=1e-5, ddof=0, pass_mask=True, final_norm=True,
                           ffn_on_block_input=False):
    """A block with switches: pre-LN (``"with final norm"``: GPT-2's, a LayerNorm after the
    last sum) or post-LN, each residual and what the second one adds,
    the FFN's activation (a leaky ReLU's ``slope``), its biases (both, or b_1 or b_2 alone;
    b_1 added after the ReLU), W_1 transposed, one layer instead of two, the LayerNorm's axis,
    epsilon and variance (``ddof=1`` divides by d_model − 1), the mask, the final norm and the
    FFN's input."""

    def norm(z):
        return _normalize(z, norm_axis, eps, ddof)

    def mixed(z):
        return multihead(z, heads, W_O, mask if pass_mask else None)

    def ffn(z):
        hidden = z @ (W1.T if w1 == "W1.T" else W1)
        if biases and b1_used and not b1_after_relu:
            hidden = hidden + b1
        if activation in ("relu", "relu after W2", "relu, also after W2"):
            hidden = hidden if activation == "relu after W2" else np.maximum(0, hidden)
        elif activation == "leaky":
            hidden = np.where(hidden > 0, hidden, slope * hidden)
        elif activation == "gelu":
            hidden = _gelu(hidden)
        elif activation == "gelu_erf":
            hidden = _gelu_erf(hidden)
        if b1_after_relu:
            hidden = hidden + b1
        if layers == 1:  # the first layer's output is the FFN's: d_ff columns, not d_model
            return hidden
        out = hidden @ W2 + b2 if biases and b2_used else hidden @ W2
        return np.maximum(0, out) if activation.endswith("after W2") else out

    if pre_ln:  # x ← x + MultiHead(LN(x)); x ← x + FFN(LN(x)); a last LN only in GPT-2's form
        h = mixed(norm(x)) + (x if attention_residual else 0)
        out = ffn(norm(x if ffn_on_block_input else h)) + (h if ffn_residual else 0)
        return norm(out) if pre_ln == "with final norm" else out
    h = norm(mixed(x) + (x if attention_residual else 0))
    residual = (h if second_residual == "h" else x) if ffn_residual else 0
    if final_norm == "ffn only":  # h + LayerNorm(FFN(h)): the sum itself is not normalized
        return residual + norm(ffn(x if ffn_on_block_input else h))
    out = residual + ffn(x if ffn_on_block_input else h)
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
    "attention.sqrt_of_num_queries": [dict(scale="sqrt(n)")],
    "attention.sqrt_of_d_v": [dict(scale="sqrt(d_v)")],
    "attention.mask_added": [dict(masking="added")],
    "attention.weights_transposed": [dict(returns="output, weights.T")],
    "attention.keys_for_values": [dict(values="K")],
    "attention.column_max_shift": [dict(shift="columns")],
    "attention.squeezed": [dict(squeeze=True)],
    "multihead.no_w_o": [dict(w_o="none")],
    "multihead.sums_heads": [dict(combine="sum"), dict(combine="mean")],
    "multihead.concat_along_rows": [dict(combine="rows, reshaped")],
    "multihead.mask_not_passed": [dict(pass_mask=False)],
    "multihead.scales_by_d_model": [dict(scale="sqrt(d_model)")],
    "multihead.w_o_transposed": [dict(w_o="W_O.T")],
    "multihead.returns_tuple": [dict(returns="output, weights")],
    "multihead.w_o_per_head": [dict(w_o="per head, concatenated"), dict(w_o="whole, per head")],
    "multihead.divided_by_h": [dict(w_o="per head, mean")],
    "multihead.heads_not_split": [dict(combine="one attention")],
    "multihead.scales_by_d_model_over_h": [dict(scale="sqrt(d_model/h)")],
    "multihead.scales_by_d_v": [dict(scale="sqrt(d_v)")],
    "multihead.w_k_for_values": [dict(values="W_K")],
    "positional_encoding.sin_cos_swapped": [dict(even="cos")],
    "positional_encoding.exponent_i_over_d": [dict(exponent="i/d")],
    "positional_encoding.halves_concatenated": [dict(layout="halves")],
    "positional_encoding.transposed": [dict(transposed=True)],
    "positional_encoding.positions_from_one": [dict(first=1)],
    "positional_encoding.frequency_not_inverted": [dict(inverted=True)],
    "positional_encoding.column_index_exponent": [dict(exponent="j/d")],
    "positional_encoding.reshaped_not_transposed": [dict(transposed="reshaped"),
                                                    dict(transposed="angles reshaped")],
    "positional_encoding.exponent_over_d_minus_one": [dict(exponent="2i/(d-1)")],
    "positional_encoding.exponent_2i_plus_1": [dict(exponent="(2i+1)/d")],
    "positional_encoding.cos_everywhere": [dict(even="cos, cos")],
    "transformer_block.pre_ln": [dict(pre_ln=True), dict(pre_ln="with final norm")],
    "transformer_block.no_attention_residual": [dict(attention_residual=False)],
    "transformer_block.no_ffn_residual": [dict(ffn_residual=False)],
    "transformer_block.no_relu": [dict(activation="none")],
    "transformer_block.relu_after_second_layer": [dict(activation="relu after W2"),
                                                  dict(activation="relu, also after W2")],
    "transformer_block.gelu_instead_of_relu": [dict(activation="gelu"),
                                               dict(activation="gelu_erf")],
    "transformer_block.ffn_without_biases": [dict(biases=False)],
    "transformer_block.layer_norm_over_tokens": [dict(norm_axis=0)],
    "transformer_block.layer_norm_unbiased_variance": [dict(ddof=1)],
    "transformer_block.mask_not_passed": [dict(pass_mask=False)],
    "transformer_block.no_final_norm": [dict(final_norm=False)],
    "transformer_block.ffn_on_block_input": [dict(ffn_on_block_input=True)],
    # PyTorch's default slope, Keras's LeakyReLU layer and two other round ones.
    "transformer_block.leaky_relu": [dict(activation="leaky", slope=a)
                                     for a in (0.01, 0.1, 0.2, 0.3)],
    "transformer_block.no_b1": [dict(b1_used=False)],
    "transformer_block.no_b2": [dict(b2_used=False)],
    "transformer_block.b1_after_relu": [dict(b1_after_relu=True)],
    "transformer_block.second_residual_from_input": [dict(second_residual="x")],
    "transformer_block.w1_transposed": [dict(w1="W1.T")],
    "transformer_block.one_layer_ffn": [dict(layers=1)],
    "transformer_block.layer_norm_on_ffn_only": [dict(final_norm="ffn only")],
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

    def with_switches(self, **switches):
        """This mutant with ``switches`` set too (replacing any of the same name)."""
        return Mutant.of(self.function, **{**dict(self.switches), **switches})

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
