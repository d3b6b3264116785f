"""The hidden reference solution of lesson 055. It ships only inside the autograder zip, never to students."""

from .transformer import (
    attention,
    init_multihead,
    layer_norm,
    multihead,
    positional_encoding,
    softmax,
    transformer_block,
)

__all__ = [
    "attention",
    "init_multihead",
    "layer_norm",
    "multihead",
    "positional_encoding",
    "softmax",
    "transformer_block",
]
