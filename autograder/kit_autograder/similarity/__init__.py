"""Similarity across a class, for a person to review: never in feedback, never a grade (issue 50).

``parts``: what each student wrote (graded functions, helper code, written answers, the
challenge's texts), with what every student received taken out, kept in ``OUT/similarity/``
at grading time; ``compare``: every pair's similarity per part, through an index of
fingerprints; ``flags``: the pairs far above the class's own distribution; ``section``: the
class report's section and ``similarity.csv``.
"""
