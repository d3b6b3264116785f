"""Hidden inputs: the cases on which each graded function is compared with the reference.

Each case is drawn from its own fixed seed, so every run of the grader, in the kernel or out
of it, sees the same numbers. Only a case's Spanish description ever reaches a student; the
arrays themselves are never printed.

The cases cover what the lesson's own examples do not: n != m and d_k != d_v, a single
query, no mask, the causal mask, a random mask, scores of magnitude ~1e3 (which turn an
unshifted softmax into NaN), and odd as well as even d_model.
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
    build: Callable[[], dict] = field(repr=False)

    def inputs(self) -> dict:
        """Fresh keyword arguments for the function (new arrays on every call)."""
        return self.build()


def _rng(seed):
    return np.random.default_rng(seed)


def _causal(n):
    return np.tril(np.ones((n, n), dtype=bool))


def _random_mask(rng, n, m):
    """A random boolean mask that is not triangular and lets every query see at least one key."""
    mask = rng.random((n, m)) < 0.5
    mask[np.arange(n), rng.integers(0, m, n)] = True
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


def _attention_rectangular():
    rng = _rng(5501)
    # Scale 1.5 keeps the weights far from uniform, so a wrong scale factor shows.
    return dict(Q=1.5 * rng.normal(size=(4, 3)), K=1.5 * rng.normal(size=(6, 3)),
                V=rng.normal(size=(6, 5)))


def _attention_single_query():
    rng = _rng(5502)
    return dict(Q=1.5 * rng.normal(size=(1, 4)), K=1.5 * rng.normal(size=(5, 4)),
                V=rng.normal(size=(5, 2)))


def _attention_causal():
    rng = _rng(5503)
    return dict(Q=1.5 * rng.normal(size=(5, 4)), K=1.5 * rng.normal(size=(5, 4)),
                V=rng.normal(size=(5, 3)), mask=_causal(5))


def _attention_random_mask():
    rng = _rng(5504)
    return dict(Q=1.5 * rng.normal(size=(4, 2)), K=1.5 * rng.normal(size=(6, 2)),
                V=rng.normal(size=(6, 3)), mask=_random_mask(rng, 4, 6))


def _attention_large_scores():
    rng = _rng(5505)
    # Entries of 25 give dot products of order 1e3: exp() overflows unless the maximum is subtracted.
    return dict(Q=25 * rng.normal(size=(3, 4)), K=25 * rng.normal(size=(4, 4)),
                V=rng.normal(size=(4, 2)), mask=_causal(4)[:3])


# --- multihead(X, heads, W_O, mask=None) ---------------------------------------------------


def _multihead_two_heads():
    rng = _rng(5511)
    heads, W_O = _heads(rng, d_model=8, n_heads=2, d_k=4, d_v=4)
    return dict(X=2 * rng.normal(size=(5, 8)), heads=heads, W_O=W_O)


def _multihead_causal_three_heads():
    rng = _rng(5512)
    heads, W_O = _heads(rng, d_model=6, n_heads=3, d_k=2, d_v=2)
    return dict(X=2 * rng.normal(size=(6, 6)), heads=heads, W_O=W_O, mask=_causal(6))


def _multihead_dk_differs_from_dv():
    rng = _rng(5513)
    heads, W_O = _heads(rng, d_model=6, n_heads=2, d_k=2, d_v=3)
    return dict(X=2 * rng.normal(size=(4, 6)), heads=heads, W_O=W_O,
                mask=_random_mask(rng, 4, 4))


# --- positional_encoding(n_positions, d_model) ----------------------------------------------


def _pe_even():
    return dict(n_positions=10, d_model=8)


def _pe_odd():
    return dict(n_positions=6, d_model=7)


def _pe_long():
    return dict(n_positions=64, d_model=32)


# --- transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None) -----------------------------


def _block(seed, n, d_model, n_heads, d_ff, causal):
    rng = _rng(seed)
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
    if causal:
        inputs["mask"] = _causal(n)
    return inputs


CASES = [
    Case("attention", "rectangular", "sin máscara, n ≠ m y d_k ≠ d_v", _attention_rectangular),
    Case("attention", "una_consulta", "una sola consulta (n = 1)", _attention_single_query),
    Case("attention", "causal", "máscara causal", _attention_causal),
    Case("attention", "mascara_aleatoria", "máscara arbitraria (no triangular)", _attention_random_mask),
    Case("attention", "puntuaciones_grandes", "puntuaciones del orden de 1000", _attention_large_scores),
    Case("multihead", "dos_cabezas", "2 cabezas, sin máscara", _multihead_two_heads),
    Case("multihead", "causal", "3 cabezas con máscara causal", _multihead_causal_three_heads),
    Case("multihead", "dk_distinto_dv", "cabezas con d_k ≠ d_v y máscara arbitraria",
         _multihead_dk_differs_from_dv),
    Case("positional_encoding", "d_par", "d_model par", _pe_even),
    Case("positional_encoding", "d_impar", "d_model impar", _pe_odd),
    Case("positional_encoding", "largo", "64 posiciones, d_model = 32", _pe_long),
    Case("transformer_block", "sin_mascara", "2 cabezas, sin máscara",
         lambda: _block(5531, n=5, d_model=8, n_heads=2, d_ff=16, causal=False)),
    Case("transformer_block", "causal", "3 cabezas con máscara causal",
         lambda: _block(5532, n=6, d_model=6, n_heads=3, d_ff=12, causal=True)),
    Case("transformer_block", "un_token", "un solo token",
         lambda: _block(5533, n=1, d_model=4, n_heads=1, d_ff=8, causal=False)),
]


def cases_for(function):
    """The hidden cases of one graded function, in a stable order."""
    return [case for case in CASES if case.function == function]


def get_case(function, name):
    for case in CASES:
        if case.function == function and case.name == name:
            return case
    raise KeyError(f"no hidden case {name!r} for {function!r}")
