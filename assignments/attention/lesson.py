"""What the grading engine needs to know about lesson 055's graded functions.

The engine itself knows no lesson: it reads these tables (and the cases, the tolerances and
the reference) from the lesson's package.
"""

GRADED_FUNCTIONS = ("attention", "multihead", "positional_encoding", "transformer_block")

# Each function is graded in isolation: while testing it, the graded functions it calls are
# the reference's, so a mistake in `attention` costs only attention's points.
GRADED_DEPENDENCIES = {
    "attention": (),
    "multihead": ("attention",),
    "positional_encoding": (),
    "transformer_block": ("attention", "multihead"),
}

# What each function returns: the Spanish name of each part, as the feedback calls it.
# A tuple-returning function has several parts; the others have one.
RETURN_PARTS = {
    "attention": ("la salida", "los pesos"),
    "multihead": ("la salida",),
    "positional_encoding": ("pe", "omega"),
    "transformer_block": ("la salida",),
}

STEP_OF = {
    "attention": "paso 3",
    "multihead": "paso 6",
    "positional_encoding": "paso 7",
    "transformer_block": "paso 8",
}
