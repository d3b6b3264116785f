"""Exhaust memory: in a cell of the notebook, and inside a graded function."""
# %%
hoard = [np.ones(2**27) for _ in range(64)]  # 64 GiB, one GiB at a time

# %%
def attention(Q, K, V, mask=None):
    hoard = [np.ones(2**27) for _ in range(64)]
    return hoard[0], hoard[1]
