"""Hide forbidden calls inside a graded function: __import__, eval and getattr on dunders."""
# %%
def multihead(X, heads, W_O, mask=None):
    loader = __import__("import" + "lib")
    reference = loader.import_module("refer" + "ence")
    return eval("reference.multihead")(X, heads, W_O, mask)


def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    builtins = getattr(transformer_block, "__glo" + "bals__")["__builtins__"]
    return builtins["eval"]("__import__('reference').transformer_block")(
        x, heads, W_O, W1, b1, W2, b2, mask)
