"""From plain data to verdicts: what each hidden case shows, and what it is worth.

Nothing here calls student code. A student's answer on a case arrives as an ``Outcome``
(float64 arrays, or a checked error report, or no answer at all), and the reference's answer
is computed here, in the grader. A case whose answer never arrived fails: the kernel's word
never stands in.
"""
