"""The one place where the kit decides how close is close enough.

A correct implementation written another way (einsum, loops, -1e9 instead of -inf, its own
layer norm with the same epsilon) differs from the reference only by floating-point
reassociation, around 1e-12 here. Every catalogued mistake moves some entry by 1e-2 or
more. The tolerances sit far from both, so neither family can land on the wrong side.
"""

# An entry passes when |student - reference| <= ATOL + RTOL * |reference|, as in np.allclose.
RTOL = 1e-5
ATOL = 1e-6

# A row of attention weights "sums to 1" within this.
ROW_SUM_ATOL = 1e-6

# A masked (forbidden) key "gets zero weight" when its weight is below this.
MASKED_WEIGHT_ATOL = 1e-9
