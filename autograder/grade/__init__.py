"""`make grade`: grade a folder of submissions with the autograder zip, without Docker.

One submission goes through a short chain, each step a module with one job:

1. ``load``      read and validate the file (notebook or export zip); reject with a reason;
2. ``engine``    execute it in a forked child with time and memory limits (``kernel`` is what
                 the child runs: Otter's own notebook transformation and test classes);
   ``results``   score the kernel's verdicts with the zip's test files (Otter's classes);
3. ``verify``    re-check outside the kernel (a pluggable verifier; none by default);
4. ``diagnose``  per question, what failed and why, in Spanish;
5. ``results`` / ``feedback``  write final_grades.csv, results/<stem>.json, feedback/<stem>.md.

``batch`` runs the chain over a folder; ``python -m autograder.grade`` is its command line.
"""

import os

# Before numpy is first imported in this process: one BLAS thread per child, since the
# parallelism is one child per core; and the backend Jupyter's kernels use.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")

__all__ = ["grade_folder"]


def __getattr__(name):
    # Lazy, so that the command line can refuse bad arguments before Otter's slow imports.
    if name == "grade_folder":
        from .batch import grade_folder

        return grade_folder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
