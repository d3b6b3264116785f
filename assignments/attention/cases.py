"""Hidden inputs: the cases on which each graded function is compared with the reference.

A case fixes the *kind* of input (its shapes, its scale, its mask) and draws the numbers from
a generator. The grader seeds that generator from a secret salt in the zip and the
submission's own code (kit_autograder.hidden_inputs), so each submission gets numbers of its
own: a leaked set, or a table of answers, answers nothing for another submission, while
regrading the same file gives the same numbers. Without a generator (Otter's in-kernel tests,
which decide nothing) each case uses its fixed default seed. Only a case's Spanish
description ever reaches a student; the arrays themselves are never printed.

The cases cover what the lesson's own examples do not: n != m and d_k != d_v, a single
query, no mask, the causal mask, a random mask, scores of magnitude ~1e3 (which turn an
unshifted softmax into NaN), odd as well as even d_model, and tokens of tiny variance (which
make a LayerNorm's epsilon visible).
"""

from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Case:
    """One hidden input for one graded function."""

    function: str
    name: str
    description: str  # Spanish, shown to students: says what kind of input, never its values
    build: Callable[[np.random.Generator], dict] = field(repr=False)
    default_seed: int = 0

    def inputs(self, rng=None) -> dict:
        """Fresh keyword arguments for the function, drawn from ``rng`` (new arrays each call).
        Without one, the case's fixed default seed."""
        return self.build(rng if rng is not None else np.random.default_rng(self.default_seed))


def _causal(n):
    return np.tril(np.ones((n, n), dtype=bool))


def _random_mask(rng, n, m):
    """A random boolean mask that is not triangular and lets every query see at least one key."""
    mask = rng.random((n, m)) < 0.5
    mask[np.arange(n), rng.integers(0, m, n)] = True
    return mask


def _with_an_unseen_key(rng, mask):
    """``mask`` with one key that no query may see, as a padding token is, every query still
    seeing at least one other key."""
    mask = mask.copy()
    unseen = int(rng.integers(0, mask.shape[1]))
    mask[:, unseen] = False
    others = [k for k in range(mask.shape[1]) if k != unseen]
    for row in np.flatnonzero(~mask.any(axis=1)):
        mask[row, rng.choice(others)] = True
    return mask


def _heads(rng, d_model, n_heads, d_k, d_v):
    scale = 1 / np.sqrt(d_model)
    heads = [
        (
            rng.normal(0, scale, (d_model, d_k)),
            rng.normal(0, scale, (d_model, d_k)),
            rng.normal(0, scale, (d_model, d_v)),
        )
        for _ in range(n_heads)
    ]
    W_O = rng.normal(0, scale, (n_heads * d_v, d_model))
    return heads, W_O


# --- attention(Q, K, V, mask=None) -------------------------------------------------------


def _attention_rectangular(rng):
    # Scale 1.5 keeps the weights far from uniform, so a wrong scale factor shows.
    return dict(Q=1.5 * rng.normal(size=(4, 3)), K=1.5 * rng.normal(size=(6, 3)),
                V=rng.normal(size=(6, 5)))


def _attention_single_query(rng):
    # Scale 1, not 1.5: with one query the whole output is one row, which a too-large scale
    # saturates to one-hot, and two wrong scales (say ×2 and ×3) then coincide.
    return dict(Q=rng.normal(size=(1, 4)), K=rng.normal(size=(5, 4)), V=rng.normal(size=(5, 2)))


def _attention_single_key(rng):
    # One key: every weight is 1 and every output row is V's one row, whatever the scale or
    # the scores. Code that squeezes the key axis away, or special-cases one column, shows
    # only here (a thirteenth and a fifteenth blind probe's m = 1 bugs passed every case).
    return dict(Q=1.5 * rng.normal(size=(4, 3)), K=1.5 * rng.normal(size=(1, 3)),
                V=rng.normal(size=(1, 5)))


def _attention_causal(rng):
    return dict(Q=1.5 * rng.normal(size=(5, 4)), K=1.5 * rng.normal(size=(5, 4)),
                V=rng.normal(size=(5, 3)), mask=_causal(5))


def _attention_random_mask(rng):
    return dict(Q=1.5 * rng.normal(size=(4, 2)), K=1.5 * rng.normal(size=(6, 2)),
                V=rng.normal(size=(6, 3)), mask=_random_mask(rng, 4, 6))


def _attention_large_scores(rng):
    # Each score is a common part of order 1e3 plus a part of order 1 that sets the weights:
    # exp() overflows unless the row maximum is subtracted, while the weights stay far from
    # one-hot, so a wrong scale still shows. (Entries of 25 in every direction gave visible
    # scores all below exp's limit, ~709.8, in half the draws, and one-hot weights in the rest.)
    # With m = 5 keys, K is not square, so Q·K without the transpose raises instead of
    # coinciding with other mistakes once the weights saturate.
    # Keys 3 and 4, forbidden to every query, score three times higher than the allowed ones
    # (thousands above them): a row maximum taken over forbidden keys too, before the mask,
    # underflows every allowed key to 0 (a twelfth blind probe's `e * mask` passed).
    direction = rng.normal(size=4)
    direction /= np.linalg.norm(direction)
    K = 50 * direction + 0.025 * rng.normal(size=(5, 4))
    K[3:] *= 3
    # The queries' lengths are far apart (one near 45, one near 80): their rows' largest
    # scores differ by more than exp's range, so one maximum for the whole matrix, not one
    # per row, turns a row into 0/0 (a seventeenth blind probe's global maximum passed).
    lengths = rng.permutation([rng.uniform(45, 47), rng.uniform(58, 66), rng.uniform(78, 80)])
    Q = lengths[:, None] * direction + 0.5 * rng.normal(size=(3, 4))
    return dict(Q=Q, K=K, V=rng.normal(size=(5, 2)), mask=_causal(5)[:3])


# --- multihead(X, heads, W_O, mask=None) ---------------------------------------------------


def _multihead_two_heads(rng):
    heads, W_O = _heads(rng, d_model=8, n_heads=2, d_k=4, d_v=4)
    return dict(X=2 * rng.normal(size=(5, 8)), heads=heads, W_O=W_O)


def _multihead_causal_three_heads(rng):
    heads, W_O = _heads(rng, d_model=6, n_heads=3, d_k=2, d_v=2)
    return dict(X=2 * rng.normal(size=(6, 6)), heads=heads, W_O=W_O, mask=_causal(6))


def _multihead_dk_differs_from_dv(rng):
    # Every size differs from every other (n = 7, d_model = 8, h = 2, d_k = 3, d_v = 5,
    # d_model/h = 4, h·d_k = 6, h·d_v = 10), so a shape error says which size the code
    # confused: with d_k = h and d_v = d_model/h, "16 numbers into (4, 2, 3)" could not.
    # One key no query sees (a padding token): code that drops such tokens from X drops them
    # as queries too (a thirteenth blind probe's zeroed rows passed every case).
    heads, W_O = _heads(rng, d_model=8, n_heads=2, d_k=3, d_v=5)
    return dict(X=2 * rng.normal(size=(7, 8)), heads=heads, W_O=W_O,
                mask=_with_an_unseen_key(rng, _random_mask(rng, 7, 7)))


def _multihead_one_head(rng):
    # One head: its output alone goes through W_O, so code that special-cases h = 1, or that
    # takes h from anything but len(heads), shows here. d_model // d_k = 2 and d_model / h = 9
    # differ from h, d_k and d_v, so a head count computed from the sizes shows too.
    # d_k > d_v here, d_k < d_v in "dk_distinto_dv": code that takes one head size for the
    # other fails one way or the other (a fifteenth blind probe's d_k > d_v bug had no case).
    heads, W_O = _heads(rng, d_model=9, n_heads=1, d_k=4, d_v=3)
    return dict(X=2 * rng.normal(size=(5, 9)), heads=heads, W_O=W_O,
                mask=_random_mask(rng, 5, 5))


# --- positional_encoding(n_positions, d_model) ----------------------------------------------


# The sizes vary too, so that no table of encodings answers another submission's case.
def _pe_even(rng):
    return dict(n_positions=int(rng.integers(6, 13)), d_model=int(rng.choice([6, 8, 10, 12])))


# Odd widths from 7: with d_model = 5 base 100000 and the exponent over d_model − 1 give the
# same frequencies (100000^(2i/5) = 10000^(2i/4)), and a fifteenth probe's 10e4 was told the
# second. From 7 on, the base that matches d_model − 1 is no round number.
ODD_WIDTHS = [7, 9, 11]


def _pe_odd(rng):
    return dict(n_positions=int(rng.integers(5, 11)), d_model=int(rng.choice(ODD_WIDTHS)))


def _pe_long(rng):
    # d_model odd: its last column, the sine of the slowest frequency (about 1e-4), reaches
    # the tolerance only over many positions, so only here does a last column left at 0 show
    # (an eighth blind probe's `range(d_model // 2)` passed with few positions). More positions
    # than the tables students cap at 64, 100, 128 or 256 (an eleventh probe's MAX_LEN = 64
    # passed with 52) and than the notebook's own 100, and past what 8 bits count (a twelfth
    # probe's uint8 positions wrapped after 255 and passed with 200).
    return dict(n_positions=int(rng.integers(257, 321)), d_model=int(rng.choice([25, 29, 33, 37])))


def _pe_one_position(rng):
    # One position: row 0 alone, (0, 1, 0, 1, …), which no other case asks alone. A recurrence
    # seeded with two rows, positions divided by n_positions − 1 or a squeeze show only here
    # (a twelfth blind probe's two-row seed passed every case).
    # d_model odd on every draw, as in every other case a parity is fixed: a mistake of one
    # parity must fail or pass this case for every submission alike.
    return dict(n_positions=1, d_model=int(rng.choice(ODD_WIDTHS)))


# --- transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None) -----------------------------


def _block(rng, n, d_model, n_heads, d_ff, causal, signed_b2=False):
    d_k = d_model // n_heads
    heads, W_O = _heads(rng, d_model, n_heads, d_k, d_k)
    # Non-zero biases and an offset input, so that a dropped bias or a LayerNorm over the
    # wrong axis cannot hide behind zeros and centred data.
    inputs = dict(
        x=1.0 + 2 * rng.normal(size=(n, d_model)),
        heads=heads,
        W_O=W_O,
        W1=rng.normal(0, 1 / np.sqrt(d_model), (d_model, d_ff)),
        b1=rng.normal(0, 0.5, d_ff),
        W2=rng.normal(0, 1 / np.sqrt(d_ff), (d_ff, d_model)),
        b2=rng.normal(0, 0.5, d_model),
    )
    if signed_b2:
        # Half of b2 at about +2 and half at about -2, so that the FFN's last layer has both
        # signs on every token (see the "un_token" case).
        signs = rng.permutation(np.resize([1.0, -1.0], d_model))
        inputs["b2"] = 2 * signs + rng.normal(0, 0.3, d_model)
    if causal:
        inputs["mask"] = _causal(n)
    return inputs


def _block_with_a_zero_token(rng):
    # One token whose x is exactly the zero vector: an ordinary input (an embedding of zeros),
    # which a block that treats zero tokens as padding drops as a key (a twelfth blind probe's
    # own padding mask from `np.any(x != 0, axis=1)` passed every case).
    inputs = _block(rng, n=5, d_model=8, n_heads=2, d_ff=16, causal=False)
    inputs["x"][int(rng.integers(0, 5))] = 0.0
    return inputs


def _padding(n, length):
    """A padding mask: every query sees the first ``length`` keys only (not triangular)."""
    mask = np.zeros((n, n), dtype=bool)
    mask[:, :length] = True
    return mask


def _block_padding(rng):
    # The block must pass the mask it is given, whatever its form: a causal mask built
    # inside the block, or one combined with the given mask, differs from a padding mask.
    inputs = _block(rng, n=5, d_model=8, n_heads=2, d_ff=16, causal=False)
    inputs["mask"] = _padding(5, int(rng.integers(2, 4)))
    return inputs


def _block_small_variance(rng):
    # Tokens that are almost constant (an offset plus a ripple of 0.03) and a W_O a hundred
    # times smaller than usual: each row entering the first LayerNorm has a variance near 1e-3,
    # where epsilon shows. ε = 1e-3 then shrinks those rows by 0.5 to 0.8 and the block's output
    # moves by far more than the tolerance on every draw, while any ε from 0 to 1e-5 changes
    # them by under 2 % and stays inside the judge's epsilon band (tolerances.LAYER_NORM_EPS).
    # Before this case, ε = 1e-3 (Keras's default) kept full marks in most draws.
    inputs = _block(rng, n=4, d_model=8, n_heads=2, d_ff=16, causal=False)
    inputs["x"] = rng.uniform(-2, 2, (4, 1)) + 0.03 * rng.normal(size=(4, 8))
    inputs["W_O"] = 0.01 * inputs["W_O"]
    return inputs


CASES = [
    Case("attention", "rectangular", "sin máscara, n ≠ m y d_k ≠ d_v", _attention_rectangular, 5501),
    Case("attention", "una_consulta", "una sola consulta (n = 1)", _attention_single_query, 5502),
    Case("attention", "una_clave", "una sola clave (m = 1)", _attention_single_key, 5506),
    Case("attention", "causal", "máscara causal", _attention_causal, 5503),
    Case("attention", "mascara_aleatoria", "máscara arbitraria (no triangular)",
         _attention_random_mask, 5504),
    Case("attention", "puntuaciones_grandes",
         "puntuaciones del orden de 1000, y mayores en las claves prohibidas",
         _attention_large_scores, 5505),
    Case("multihead", "dos_cabezas", "2 cabezas, sin máscara", _multihead_two_heads, 5511),
    Case("multihead", "causal", "3 cabezas con máscara causal", _multihead_causal_three_heads, 5512),
    Case("multihead", "dk_distinto_dv",
         "cabezas con d_k ≠ d_v y máscara arbitraria, con una clave que nadie ve",
         _multihead_dk_differs_from_dv, 5513),
    Case("multihead", "una_cabeza", "1 cabeza con máscara arbitraria", _multihead_one_head, 5514),
    Case("positional_encoding", "d_par", "d_model par", _pe_even, 5521),
    Case("positional_encoding", "d_impar", "d_model impar", _pe_odd, 5522),
    Case("positional_encoding", "largo",
         "muchas posiciones (entre 257 y 320) y d_model grande e impar",
         _pe_long, 5523),
    Case("positional_encoding", "una_posicion", "una sola posición (n_positions = 1)",
         _pe_one_position, 5524),
    Case("transformer_block", "sin_mascara", "2 cabezas, sin máscara, y un token todo a 0",
         _block_with_a_zero_token, 5531),
    Case("transformer_block", "causal", "3 cabezas con máscara causal",
         lambda rng: _block(rng, n=6, d_model=6, n_heads=3, d_ff=12, causal=True), 5532),
    # One token has few output entries, so mistakes coincide on it more easily than on a
    # sequence: were the FFN's last layer of one sign on all of them, a ReLU put after that
    # layer would give the same output as no ReLU at all (all positive) or as no FFN at all
    # (all negative). A b2 with both signs, and d_model = 8, keep both signs there.
    Case("transformer_block", "un_token", "un solo token",
         lambda rng: _block(rng, n=1, d_model=8, n_heads=2, d_ff=16, causal=False,
                            signed_b2=True),
         5533),
    Case("transformer_block", "varianza_pequena", "tokens casi constantes (poca varianza)",
         _block_small_variance, 5534),
    Case("transformer_block", "mascara_de_relleno", "máscara de relleno (no causal)", _block_padding, 5535),
]


def cases_for(function):
    """The hidden cases of one graded function, in a stable order."""
    return [case for case in CASES if case.function == function]

