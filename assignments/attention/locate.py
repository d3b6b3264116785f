"""Where a function that no catalogued mistake explains first departs from the reference.

The catalogue (mutants.py, misconceptions.py) names mistakes it has seen. For the others, the
engine calls the lesson's ``locate`` on one failing case: the student's function is called
again on probes built from that case (a part switched off, the mask removed, one head alone;
the positional encoding's own answer split into ω, sines, cosines and rows), each answer is
compared with the reference's on the same probe, and the first step of the notebook's formula
where they part is said. One module per function; none quotes a value of the hidden case.
"""

from . import locate_attention, locate_block, locate_multihead, locate_positional

LOCATORS = {
    "attention": locate_attention.locate,
    "multihead": locate_multihead.locate,
    "positional_encoding": locate_positional.locate,
    "transformer_block": locate_block.locate,
}


def locate(function, inputs, call):
    """``(finding id, Spanish message)`` for where ``function`` departs on ``inputs`` (a
    failing case), or None. ``call(probe_inputs)`` runs the student's function and returns
    its parts, or None when it raised."""
    locator = LOCATORS.get(function)
    return None if locator is None else locator(inputs, call)
