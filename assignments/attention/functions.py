"""The four functions students implement in lesson 055, as the grading engine sees them."""

from kit_autograder.lesson import GradedFunction

# Each function is graded in isolation: while it is graded, the graded functions it calls are
# the reference's (answered by the grader), so a mistake in `attention` costs only its points.
FUNCTIONS = {
    "attention": GradedFunction("attention", ("la salida", "los pesos"), (), "paso 3"),
    "multihead": GradedFunction("multihead", ("la salida",), ("attention",), "paso 6"),
    "positional_encoding": GradedFunction("positional_encoding", ("pe", "omega"), (), "paso 7"),
    "transformer_block": GradedFunction("transformer_block", ("la salida",),
                                        ("attention", "multihead"), "paso 8"),
}
