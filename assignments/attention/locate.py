"""Where a function that no catalogued mistake explains first departs from the reference.

The catalogue (mutants.py, misconceptions.py) names mistakes it has seen. For the others, the
engine calls the lesson's ``locate`` on one failing case: the student's function is called
again on probes built from that case (a part switched off, the mask removed, one head alone;
the positional encoding's own answer split into ω, sines, cosines and rows), each answer is
compared with the reference's on the same probe, and the first step of the notebook's formula
where they part is said. One module per function; none quotes a value of the hidden case.
"""

import numpy as np

from . import locate_attention, locate_block, locate_ignored, locate_multihead, locate_positional
from .functions import FUNCTIONS
from .probe_compare import agrees
from .standard import reference_parts

LOCATORS = {
    "attention": locate_attention.locate,
    "multihead": locate_multihead.locate,
    "positional_encoding": locate_positional.locate,
    "transformer_block": locate_block.locate,
}

# Answers recognised whole, before any part is probed.
WHOLE_ANSWERS = {
    "multihead": locate_multihead.whole_answer,
    "transformer_block": locate_block.whole_answer,
}

# Each function's probe drawn afresh with the case's shapes, without the mask and with enough
# tokens: on one query, or on the first row under a causal mask, the weights are 1 whatever Q
# and K are, which is no sign of ignoring them. Ignoring an argument is a property of the code.
PROBES = {
    "attention": lambda inputs: locate_attention._moderate(dict(inputs, mask=None))[0],
    "multihead": locate_multihead._fresh,
    "transformer_block": lambda inputs: locate_block._probe(dict(inputs, mask=None)),
}


# The mask that forbids nothing, of the shape each function's mask has.
MASK_SHAPES = {
    "attention": lambda inputs: (len(inputs["Q"]), len(inputs["K"])),
    "multihead": lambda inputs: (len(inputs["X"]),) * 2,
    "transformer_block": lambda inputs: (len(inputs["x"]),) * 2,
}


def _none_mask(function, inputs, call):
    """A place when, without a mask, the answer has NaN or infinities, and with a mask that
    forbids nothing it is the reference's: the function masks even when mask is None
    (np.where(None, …) is False everywhere, so every score becomes −∞)."""
    if function not in MASK_SHAPES or inputs.get("mask") is not None:
        return None
    parts = call(inputs)
    if parts is None or all(np.isfinite(part).all() for part in parts):
        return None
    open_mask = dict(inputs, mask=np.ones(MASK_SHAPES[function](inputs), dtype=bool))
    again = call(open_mask)
    expected = reference_parts(function, open_mask)
    if again is None or len(again) != len(expected) or not all(
            agrees(mine, theirs) for mine, theirs in zip(again, expected)):
        return None
    return none_mask_place(function)


def none_mask_place(function):
    """``(finding id, Spanish message)`` of a function that masks when mask is None."""
    return (f"{function}.located_none_mask",
            "el fallo está en lo que haces cuando no hay máscara: con mask=None tu resultado "
            "tiene NaN, y con una máscara toda True, que no prohíbe nada, es el correcto. "
            "Cuando mask es None no se enmascara nada: ¿usas mask (en np.where o al indexar) "
            f"sin comprobar antes if mask is not None? ({FUNCTIONS[function].step})")


def locate(function, inputs, call):
    """``(finding id, Spanish message)`` for where ``function`` departs on ``inputs`` (a
    failing case), or None. ``call(probe_inputs)`` runs the student's function and returns
    its parts, or None when it raised."""
    locator = LOCATORS.get(function)
    if locator is None:
        return None
    none_mask = _none_mask(function, inputs, call)
    if none_mask is not None:
        return none_mask
    # An answer that is a whole known value explains everything, the arguments it then
    # ignores included (a block returning its first sublayer never reads W1…b2): said first.
    whole = WHOLE_ANSWERS.get(function)
    found = whole(inputs, call) if whole is not None else None
    if found is not None:
        return found
    # Then an argument the function never reads, which explains everything after it.
    probe = PROBES[function](inputs) if function in PROBES else inputs
    names = locate_ignored.ignored(function, probe, call)
    if names:
        return locate_ignored.message(function, names)
    return locator(inputs, call)


# Probes that need no answer on the failing case: they say where a function that raises there
# departs, measured on inputs of their own.
RAISED_LOCATORS = {
    "multihead": locate_multihead.by_head_count,
}


def locate_raised(function, inputs, call):
    """``(finding id, Spanish message)`` for a failing case of ``function`` that raised, or
    None: only a place that probes of their own measure (a number of heads that is not
    len(heads)), since the error itself explains the case."""
    locator = RAISED_LOCATORS.get(function)
    return None if locator is None else locator(inputs, call)
