"""Useless stand-ins: the right shapes and wrong values."""
# %%
def attention(Q, K, V, mask=None):
    return np.zeros((Q.shape[0], V.shape[1])), np.zeros((Q.shape[0], K.shape[0]))

# %%
def multihead(X, heads, W_O, mask=None):
    return np.zeros((X.shape[0], W_O.shape[1]))

# %%
def positional_encoding(n_positions, d_model):
    return np.zeros((n_positions, d_model)), np.zeros((d_model + 1) // 2)

# %%
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    return np.zeros_like(x)

# %%
resultado = {"student_extension": {"assumption": None}}
