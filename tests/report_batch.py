"""A batch whose content is known, for the class report's tests: the bundled demo plus mutants.

Every mutant starts from the demo's correct notebook, without step 4's experiment
(``grading_harness.without_experiment``), and changes one thing: a graded function's
cell becomes a catalogued mistake (``Misconception.source()``), a mistake the catalog does not
know, or an extra cell that goes over a limit or ends the process. ``EXPECTED`` says what each
file was built to show, so the tests can check the page against the intent as well as against
the CSV and the feedback. Kept small on purpose: each notebook costs a sandbox run.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from attention.misconceptions import get as misconception
from grading_harness import inject, with_extra_cell, without_experiment
from test_batch import memory_in_subprocesses

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "assignments" / "attention" / "examples"

# Seconds for a notebook's cells and MB per job: the demo's notebooks finish in about 2 s and
# peak near 230 MB, so these only stop the two files built to go over them.
TIMEOUT_S = 15
MEMORY_MB = 600

# A weight scale no catalogued mistake uses (not 1, 1/d_k, 1/√m...): the diagnosis can only
# give a generic hint, which is the catalog's blind spot the report counts.
UNCATALOGUED_ATTENTION = '''\
def attention(Q, K, V, mask=None):
    scores = 0.37 * Q @ K.T / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
'''

INFINITE_LOOP = "while True:\n    pass\n"

# file -> (catalogued mistakes injected, hand-written cells replacing a graded function,
#          extra cell appended at the end)
MUTANTS = {
    "sin_raiz_a.ipynb": (["attention.no_sqrt_dk"], {}, None),
    "sin_raiz_b.ipynb": (["attention.no_sqrt_dk", "positional_encoding.sin_cos_swapped"], {},
                         None),
    "cabezas_sin_mascara.ipynb": (["multihead.mask_not_passed"], {}, None),
    "pre_ln.ipynb": (["transformer_block.pre_ln"], {}, None),
    "escala_rara.ipynb": ([], {"attention": UNCATALOGUED_ATTENTION}, None),
    "memoria.ipynb": ([], {}, memory_in_subprocesses(400)),
    "bucle_infinito.ipynb": ([], {}, INFINITE_LOOP),
    "os_exit.ipynb": ([], {}, "import os\nos._exit(0)\n"),
}

# What the batch was built to show, independently of how it was graded.
EXPECTED = {
    "submissions": len(list(DEMO.iterdir())) + len(MUTANTS),
    "ungradable": {"rota.ipynb"},
    # The demo's parcial.ipynb forgets the mask in multihead too.
    "mistakes": {
        "attention.no_sqrt_dk": {"sin_raiz_a.ipynb", "sin_raiz_b.ipynb"},
        "multihead.mask_not_passed": {"cabezas_sin_mascara.ipynb", "parcial.ipynb"},
        "positional_encoding.sin_cos_swapped": {"sin_raiz_b.ipynb"},
        "transformer_block.pre_ln": {"pre_ln.ipynb"},
    },
    "blind_spot": {"escala_rara.ipynb"},
    "limits": {"memoria.ipynb": "memoria", "bucle_infinito.ipynb": "tiempo"},
    "flagged_at_least": {"memoria.ipynb", "bucle_infinito.ipynb", "os_exit.ipynb"},
}


def write_batch(folder: Path):
    """The demo and the mutants in ``folder``; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in DEMO.iterdir():
        shutil.copy(path, folder / path.name)
    correct = without_experiment(nbformat.read(DEMO / "correcta.ipynb", as_version=4))
    for name, (mistakes, cells, extra) in MUTANTS.items():
        notebook = correct
        for mistake_id in mistakes:
            entry = misconception(mistake_id)
            notebook = inject(notebook, entry.function, entry.source())
        for function, source in cells.items():
            notebook = inject(notebook, function, source)
        data = nbformat.writes(notebook).encode("utf-8")
        (folder / name).write_bytes(data if extra is None else with_extra_cell(data, extra))
    return folder


def grade(folder, out, autograder_zip, jobs=2):
    """``make grade``'s command line on ``folder``; the completed process."""
    command = [sys.executable, "-m", "kit_autograder.batch", "--autograder", str(autograder_zip),
               "--submissions", str(folder), "--out", str(out), "--jobs", str(jobs),
               "--timeout", str(TIMEOUT_S), "--memory-mb", str(MEMORY_MB)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
