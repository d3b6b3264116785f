"""The reference as it answers inside a student's function, in place of the student's own.

The reference is written for the lesson's 2-D arrays. A student's ``multihead`` may call
``attention`` on a stack of heads, ``(h, n, d_k)``, which their own attention handled through
numpy's broadcasting; the reference's ``K.T`` would reverse all three axes. Here the reference
answers such a call one head at a time, so that correct code loses nothing for its style.
"""

import numpy as np

from reference import attention as reference
from reference.attention import multihead  # noqa: F401  (stands in as it is)


def attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    if max(Q.ndim, K.ndim, V.ndim) <= 2:
        return reference.attention(Q, K, V, mask)
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    Q, K, V = (np.broadcast_to(a, lead + a.shape[-2:]) for a in (Q, K, V))
    masks = None if mask is None else np.broadcast_to(
        np.asarray(mask), lead + (Q.shape[-2], K.shape[-2]))
    answers = [reference.attention(Q[i], K[i], V[i], None if masks is None else masks[i])
               for i in np.ndindex(lead)]
    output = np.stack([a[0] for a in answers]).reshape(lead + answers[0][0].shape)
    weights = np.stack([a[1] for a in answers]).reshape(lead + answers[0][1].shape)
    return output, weights
