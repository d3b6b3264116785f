"""Loop forever: in a cell, and inside a graded function."""
# %%
def positional_encoding(n_positions, d_model):
    while True:
        pass

# %%
while True:
    pass
