"""A graded function that does not use an argument it receives: the first thing to say.

A notebook defines W1, X, d_k… as globals in its demo cells, and a function that reads the
global instead of its parameter (or a value written by hand) is right only where they happen
to agree. Each array argument is drawn afresh, the others kept, and the student's answer and
the reference's are compared before and after: when the reference's answer changes and the
student's does not, the function ignores that argument.
"""

import numpy as np

from kit_autograder.hidden_inputs import redrawn
from reference import attention as reference

from .functions import FUNCTIONS
from .probe_compare import agrees

# A fixed generator: the probe never quotes, and never needs, the case's own values.
PROBE_SEED = 8056


def _same(first, second):
    return all(np.shape(a) == np.shape(b) and np.array_equal(a, b, equal_nan=True)
               for a, b in zip(first, second))


def ignored(function, inputs, call):
    """The names of the array arguments ``function`` ignores on ``inputs``, in order; empty
    when it uses them all (or raises: nothing to compare)."""
    before = call(inputs)
    # NaN or infinities stay NaN whatever the input, and so do zeros (small values truncated
    # into an integer buffer, a ReLU on negative ones): no sign of what it reads.
    if before is None or not all(np.isfinite(part).all() for part in before) or all(
            not np.any(part) for part in before):
        return []
    expected = getattr(reference, function)(**inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    rng = np.random.default_rng(PROBE_SEED)
    names = []
    for name, value in inputs.items():
        new = redrawn(value, rng)
        if new is None:
            continue
        probe = dict(inputs, **{name: new})
        after = call(probe)
        changed = getattr(reference, function)(**probe)
        changed = changed if isinstance(changed, tuple) else (changed,)
        if after is not None and _same(after, before) and not all(
                agrees(a, b) for a, b in zip(changed, expected)):
            names.append(name)
    return names


def message(function, names):
    """``(finding id, Spanish message)`` for the arguments ``function`` ignores."""
    listed = ", ".join(f"`{name}`" for name in names)
    one = len(names) == 1
    return (f"{function}.located_ignored_arguments",
            f"el fallo está en lo que usa tu `{function}`: {'el argumento' if one else 'los argumentos'} "
            f"{listed} no {'cambia' if one else 'cambian'} nada de su resultado, así que no "
            f"{'lo usa' if one else 'los usa'}. ¿Usas una variable global del cuaderno con el "
            "mismo nombre, o un valor escrito a mano? La función tiene que calcular con lo que "
            f"recibe ({FUNCTIONS[function].step})")
