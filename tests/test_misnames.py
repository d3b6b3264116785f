"""The grade says only what it measured (issue 49.4): each mistake a held-out probe saw misnamed
or said vaguely, as a student's notebook cell, with its control, the same style written right,
which keeps every point and gets no diagnosis.

* multihead's locators assumed one `attention` call per head: vectorised or fused code was told
  «A tiene un número de columnas que no sale de las entradas», «sin suponer que d_k = d_v =
  d_model/h» or «mezcla sus valores», and heads summed and repeated «cada vuelta del bucle»;
* a scale mistake in attention was «un factor distinto de 1/√d_k», though the factor is
  measured: now its law of the sizes is said (√d_k, 2/d_k, a fixed number);
* RMSNorm, a LayerNorm over the whole matrix and dividing by the variance got one sentence;
  each is now told by its signature;
* a graded function's name redefined by a later cell, or its cell saved as Markdown, was
  never said (through make grade's engine, the only place that sees the notebook's cells).

In process, each cell is graded as the grader grades it: the lesson's judge on many draws of
every hidden case, the failing ones explained together, and the located place where the
explanation leaves a case unexplained.
"""

import inspect
import textwrap

import nbformat
import numpy as np
import pytest

from reference import attention as reference
from attention import locate
from attention.functions import FUNCTIONS
from draws import summaries
from kit_autograder.verdicts import summary
from kit_autograder.verdicts.in_process import run_in_process
from grading_harness import Notebooks, grade_here, read_records, write_folder

SEEDS = range(4)


def cell(source, name):
    """The student's function ``name`` defined by the notebook cell ``source``, with the
    notebook's given helpers and, for the functions that call them, the reference's."""
    namespace = {"np": np, "softmax": reference.softmax, "layer_norm": reference.layer_norm,
                 "attention": reference.attention, "multihead": reference.multihead}
    exec(textwrap.dedent(source), namespace)
    return namespace[name]


def read(function, fn, seeds=SEEDS):
    """``{seed: (failing cases, [Diagnosis])}``: what the feedback says of ``function`` on each
    draw, as the grader says it (grading._grade_function)."""
    spec = FUNCTIONS[function]
    parameters = tuple(inspect.signature(getattr(reference, function)).parameters)

    def call(name, probe):
        return run_in_process(fn, probe, len(spec.parts),
                              {n: getattr(reference, n) for n in spec.stand_ins},
                              parameters=parameters).parts

    found = {}
    for seed, (failing, diagnoses) in summaries(function, fn, seeds).items():
        if failing and not summary.explained_everywhere(diagnoses, failing):
            from draws import judged
            from attention.cases import cases_for
            items = [judged(function, fn, case, seed) for case in cases_for(function)]
            place = summary.located(locate.locate, function, [i for i in items if i.failures],
                                    call, locate.locate_raised)
            if place is not None:
                diagnoses = summary.with_located(diagnoses, place)
        found[seed] = (failing, diagnoses)
    return found


def texts(found):
    """Every draw's diagnoses, one text per draw; each draw must fail and say something."""
    assert all(failing for failing, _ in found.values()), "a draw let the mistake through"
    assert all(diagnoses for _, diagnoses in found.values()), "a draw said nothing"
    return [" ".join(d.message for d in diagnoses) for _, diagnoses in found.values()]


def ids(found):
    return {i for _, diagnoses in found.values() for d in diagnoses for i in d.ids}


def full_marks(function, fn):
    assert all(not failing for failing, _ in read(function, fn).values())


# --- attention: the scale's factor, measured --------------------------------------------------

ATTENTION = '''
def attention(Q, K, V, mask=None):
    d_k = K.shape[-1]
    scores = {scores}
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
'''


@pytest.mark.parametrize("scores, said", [
    ("Q @ K.T * np.sqrt(d_k)", "multiplicada por √d_k, no por 1/√d_k"),
    ("Q @ K.T / (d_k ** 1/2)", "multiplicada por 2/d_k, no por 1/√d_k"),
    ("Q @ K.T / np.sqrt(d_k * Q.shape[0])", "multiplicada por 1/√(n·d_k), no por 1/√d_k"),
])
def test_a_wrong_scale_says_its_factor_as_a_law_of_the_sizes(scores, said):
    found = read("attention", cell(ATTENTION.format(scores=scores), "attention"))
    assert ids(found) == {"attention.located_scale"}
    for text in texts(found):
        assert said in text and "un factor distinto" not in text


def test_a_scale_from_another_cells_d_k_says_the_fixed_number_and_asks_for_it():
    source = "D_K = 4\n" + ATTENTION.format(scores="Q @ K.T / np.sqrt(D_K)")
    found = read("attention", cell(source, "attention"))
    for text in texts(found):
        assert "un número fijo, 0,5" in text and "1/√4" in text and "(d_k = 4)" in text


def test_the_scale_written_right_in_the_same_style_keeps_every_point():
    full_marks("attention", cell(ATTENTION.format(scores="Q @ K.T / np.sqrt(d_k)"),
                                 "attention"))
    full_marks("attention", cell(ATTENTION.format(scores="Q @ K.T / (d_k ** (1/2))"),
                                 "attention"))
