"""The only numbers a student reads back from their own code: the case's own sizes.

A graded function's error report (the sizes NumPy printed) and the shapes of the arrays it
returns are numbers the student's code chose, and code that kept a hidden input can spell its
digits into them: ``raise ValueError("operands could not be broadcast together with shapes
(1,3,1,0) ...")``, or ``np.zeros((0, 7777, 4904))``. So every such number goes through one
``CaseSizes``, which shows it only when it is one of the sizes the case itself declares:

* each axis length and the number of dimensions of every input array;
* the length of every input list or tuple (the heads of ``multihead``), and every integer
  argument (``d_model``);
* 0 and 1, which every shape may have;
* and sizes a lesson derives from those and names in its own notation (``h·d_v``).

Any other number reads as ``OTHER_SIZE``. A shown number is then something the case's
description and the notebook's shapes already give away, never a digit of a value.

What a student's code can still choose is *which* of those sizes an error shows: at most
log2(len(sizes) + 1) bits for each number a message shows, and a message shows at most two
shapes of ``MAX_SHOWN_DIMENSIONS`` numbers; with the kind of error and its class, a failing
call on this kind of case can say some forty bits (one input value to six digits), a
submission a few hundred (docs/security.md counts them), where it used to say twelve numbers
of four digits each. Since every submission gets inputs of its own (hidden_inputs.py), those bits describe
inputs that no later submission is given.
"""

import numpy as np

OTHER_SIZE = "otro tamaño"
MAX_SHOWN_DIMENSIONS = 4
MAX_DEPTH = 8  # how deep inputs nest (lists of tuples of arrays); deeper adds no sizes


class CaseSizes:
    """The sizes one call's inputs declare, and the one way a student's number is shown."""

    def __init__(self, sizes=()):
        self._sizes = frozenset(int(size) for size in sizes)

    @classmethod
    def of(cls, *values):
        """The sizes declared by ``values``: a case's inputs (a dict), a call's args..."""
        found = {0, 1}
        for value in values:
            _collect(value, found, 0)
        return cls(found)

    def with_derived(self, sizes):
        """These sizes and ``sizes``, which a lesson computed from them and names."""
        return CaseSizes(self._sizes | {int(size) for size in sizes})

    def allows(self, number):
        return (isinstance(number, (int, np.integer)) and not isinstance(number, bool)
                and int(number) in self._sizes)

    def number(self, number):
        """``number`` as the student reads it: its digits if it is a size, else OTHER_SIZE."""
        return str(int(number)) if self.allows(number) else OTHER_SIZE

    def shape(self, shape):
        """A shape the student's code produced: ``(4, otro tamaño)``; dimensions beyond
        MAX_SHOWN_DIMENSIONS are not shown (their count is a number too)."""
        shape = list(shape)
        shown = [self.number(size) for size in shape[:MAX_SHOWN_DIMENSIONS]]
        if len(shape) > MAX_SHOWN_DIMENSIONS:
            shown.append("…")
        return "(" + ", ".join(shown) + ("," if len(shown) == 1 else "") + ")"

    def __contains__(self, number):
        return self.allows(number)

    def __repr__(self):
        return f"CaseSizes({sorted(self._sizes)})"


NO_SIZES = CaseSizes()  # shows no number at all: what a caller that names no case gets


def _collect(value, found, depth):
    if depth > MAX_DEPTH or value is None or isinstance(value, (bool, np.bool_)):
        return
    if isinstance(value, (int, np.integer)):
        found.add(int(value))
    elif isinstance(value, np.ndarray):
        found.add(value.ndim)
        found.update(int(size) for size in value.shape)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, found, depth + 1)
    elif isinstance(value, (list, tuple)):
        found.add(len(value))
        for item in value:
            _collect(item, found, depth + 1)
