"""The grade's locating probes, derived from a public case, for the notebook to locate as the
grade does (kit_autograder/build/checks_data.py evaluates them; public_checks.py reads them).

The locators (locate_attention.py, locate_multihead.py) call the student's function again on
probes built from a failing case and compare each answer with the reference's on the same
probe. Those that are deterministic functions of the case's inputs (a fixed generator, never
the student's answer) are listed here, built by the locators' own helpers, as a ladder of
steps: a step holds when every one of its tests does, and the first that holds is the place,
in the locator's own words (its constants, never retyped). A test compares the student's
answer on a probe with an answer computed here at build time (the reference's, on the probe
or on a variant of it: the mask transposed, a softmax applied twice), or with the student's
own answer on another probe (a head that moves when other heads change).

Steps the locators reach only by fitting (a scale measured as a law of the sizes, a factor
fitted on the scores) are left out: the notebook then says no place rather than a wrong one.
Runs at build time only: nothing of this module ships, only its answers and words do.
"""

from dataclasses import dataclass, field

import numpy as np

from reference import attention as reference

from .. import locate
from .. import locate_attention as la
from .. import locate_multihead as lm
from .. import tolerances


@dataclass
class Test:
    """One measurement: the student's answer on ``probe`` (None: the case's own inputs)
    ``holds`` against ``answer`` (parts; None: the reference's on ``probe``), on ``part`` only
    when given, a value of part ``leak_part`` on ``leaks`` (where a mask forbids) above
    ``leak_atol`` counting as a departure. ``same``
    and ``moved`` compare with the student's own answer on the probe of test ``other`` of the
    same step, on ``columns`` only."""

    probe: dict = None
    holds: str = "matches"
    answer: list = None
    part: int = None
    leaks: np.ndarray = None
    leak_part: int = 1  # attention's weights, the part a mask governs
    leak_atol: float = tolerances.MASKED_WEIGHT_ATOL
    other: int = None
    columns: tuple = None
    min_values: int = None


@dataclass
class Step:
    place: tuple  # (finding id, the locator's Spanish place)
    tests: list = field(default_factory=list)
    whole: bool = False  # the place is the whole message already (locate.none_mask_place)

    @property
    def message(self):
        # As the grade's locators say a place (locate_attention.locate, locate_multihead.locate).
        return self.place[1] if self.whole else f"el fallo está en {self.place[1]}"


def steps(function, inputs):
    """The ladder of locating steps for ``function`` on one public case's ``inputs``, in the
    order locate.locate tries them: a mask used when there is none, then the function's own."""
    if function == "attention":
        return _none_mask(function, inputs) + _attention(inputs)
    if function == "multihead":
        return _none_mask(function, inputs) + _multihead(inputs)
    return []


def _none_mask(function, inputs):
    """locate._none_mask: with mask=None the answer has NaN, and with a mask that forbids
    nothing it is the reference's."""
    if function not in locate.MASK_SHAPES or inputs.get("mask") is not None:
        return []
    open_mask = dict(inputs, mask=np.ones(locate.MASK_SHAPES[function](inputs), dtype=bool))
    return [Step(locate.none_mask_place(function), [Test(None, "not_finite"), Test(open_mask)],
                 whole=True)]


# Every place a step may say: the locators' own constants (tests/test_public_checks.py checks
# that each step's words are one of them).
PLACES = (lm.RESIDUAL_INSIDE, lm.ALWAYS_CAUSAL, lm.TRANSPOSED_OUTPUT, lm.NORMALISED_OUTPUT,
          lm.CONCATENATION_ONLY, lm.ELEMENTWISE_W_O, lm.REVERSED_W_O, la.ONE_KEY, la.SCORES_AS_WEIGHTS, la.SOFTMAX_TWICE, la.ALWAYS_CAUSAL,
          la.NO_EXPONENTIAL, la.WEIGHTS_TIMES_V, la.MASK_NAN_MARKED, la.MASK_NAN,
          la.MASK_TRANSPOSED, la.UNMASKED_WEIGHTS, la.MASK, la.FORBIDDEN_DOMINATE,
          la.LARGE_SCORES, lm.MASK_TRANSPOSED, lm.MASK, lm.HEAD_SOFTMAX_AXIS, lm.AFTER_HEADS,
          lm.EACH_HEAD, lm.CONCATENATION, lm.OTHER_HEADS, lm.SHARED_WEIGHTS, lm.SPLITTING,
          lm.OUTPUT_PROJECTION)


# --- attention (locate_attention.locate, in its order) -------------------------------------------


def _attention(inputs):
    mask = inputs.get("mask")
    found = []
    if np.shape(inputs["K"])[0] == 1:
        found.append(Step(la.ONE_KEY, [Test(la._with_more_keys(inputs))]))
    moderate, large = la._moderate(inputs)
    probe = dict(moderate, mask=None)
    Q, K, V = probe["Q"], probe["K"], probe["V"]
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    output, weights = reference.attention(**probe)
    found += [
        Step(la.SCORES_AS_WEIGHTS, [Test(probe, part=0), Test(probe, answer=[output, scores],
                                                              part=1)]),
        Step(la.SOFTMAX_TWICE, [Test(probe, part=1, answer=[
            output, reference.softmax(weights, axis=-1)])]),
    ]
    if mask is None:
        causal = np.tril(np.ones(scores.shape, dtype=bool))
        found.append(Step(la.ALWAYS_CAUSAL, [Test(probe, part=1, answer=list(
            reference.attention(Q, K, V, causal)))]))
    positive = la._positive(probe)
    sums = (positive["Q"] @ positive["K"].T / np.sqrt(K.shape[-1])).sum(axis=-1, keepdims=True)
    if (sums > tolerances.ATOL).all():
        plain = positive["Q"] @ positive["K"].T / np.sqrt(K.shape[-1]) / sums
        found.append(Step(la.NO_EXPONENTIAL, [Test(positive, part=1, answer=[output, plain])]))
    found.append(Step(la.WEIGHTS_TIMES_V, [Test(probe, part=1), Test(probe, "differs", part=0)]))
    right = Test(probe)  # right without the mask, at moderate scores: what is left
    if mask is not None:
        small = la._small(moderate)
        allowed = np.asarray(mask, dtype=bool)
        small_output, small_weights = reference.attention(**small)
        marked = np.where(allowed, small_weights, np.nan)
        found += [Step(la.MASK_NAN_MARKED, [right, Test(small, part=1,
                                                        answer=[small_output, marked])]),
                  Step(la.MASK_NAN, [right, Test(small, "not_finite")])]
        if allowed.shape[0] == allowed.shape[1] and not np.array_equal(allowed, allowed.T):
            found.append(Step(la.MASK_TRANSPOSED, [right, Test(small, answer=list(
                reference.attention(**dict(small, mask=allowed.T))))]))
        unmasked = reference.attention(**dict(small, mask=None))[1]
        found += [Step(la.UNMASKED_WEIGHTS, [right, Test(small, answer=[small_output, unmasked])]),
                  Step(la.MASK, [right, Test(small, "differs", leaks=~allowed)])]
    if large:
        quiet = [right] + ([Test(la._small(moderate), leaks=~np.asarray(mask, dtype=bool))]
                           if mask is not None else [])
        if mask is not None:
            found.append(Step(la.FORBIDDEN_DOMINATE, quiet + [Test(dict(inputs, mask=None))]))
        found.append(Step(la.LARGE_SCORES, quiet))
    return found


# --- multihead (locate_multihead.locate, in its order) -------------------------------------------


def _softmax_over_queries(probe):
    """The one-head ``probe``'s answer with its weights normalised over the queries
    (locate_multihead._softmax_over_queries)."""
    ((W_Q, W_K, W_V),) = probe["heads"]
    X = np.asarray(probe["X"], dtype=np.float64)
    scores = (X @ W_Q) @ (X @ W_K).T / np.sqrt(np.shape(W_K)[1])
    if probe.get("mask") is not None:
        scores = np.where(np.asarray(probe["mask"], dtype=bool), scores, -np.inf)
    return [reference.softmax(scores, axis=0) @ (X @ W_V) @ probe["W_O"]]


def _multihead(inputs):
    mask, heads = inputs.get("mask"), list(inputs["heads"])
    unmasked = lm._fresh(inputs)
    found = _multihead_whole(unmasked)
    if mask is not None:
        allowed = np.asarray(mask, dtype=bool)
        if allowed.ndim == 2 and allowed.shape[0] == allowed.shape[1] and not np.array_equal(
                allowed, allowed.T):
            with np.errstate(invalid="ignore"):
                transposed = [reference.multihead(**dict(inputs, mask=allowed.T))]
            found.append(Step(lm.MASK_TRANSPOSED, [Test(unmasked), Test(answer=transposed)]))
        found.append(Step(lm.MASK, [Test(unmasked)]))
    # Each head alone, with W_O = I, in order: the first that departs is the place.
    for index, head in enumerate(heads):
        alone = lm._padded(unmasked, [head])
        again = lm._padded(lm._fresh(inputs, lm.PROBE_SEED + 1), [head])
        found += [Step(lm.HEAD_SOFTMAX_AXIS, [Test(alone, answer=_softmax_over_queries(alone))]),
                  Step(lm.AFTER_HEADS, [Test(alone, "monotone", min_values=lm.MIN_VALUES),
                                        Test(again, "monotone", min_values=lm.MIN_VALUES)]),
                  Step(lm.EACH_HEAD, [Test(alone, "differs")])]
    together = lm._padded(unmasked, heads)
    if len(heads) > 1:
        # Every head right alone and wrong together (_heads_step, in its order).
        found += [Step(lm.CONCATENATION, [Test(together, "permuted")]),
                  Step(lm.OTHER_HEADS, [Test(together, "differs"),
                                        Test(lm._padded(unmasked, [heads[0]] * len(heads)))])]
        found += _shared_weights(unmasked, heads, together)
        found.append(Step(lm.SPLITTING, [Test(together, "differs")]))
    found.append(Step(lm.OUTPUT_PROJECTION, [Test(together), Test(unmasked, "differs")]))
    return found


def _multihead_whole(probe):
    """locate_multihead.whole_answer: whole wrong forms of the answer on the unmasked probe,
    in its order."""
    X = np.asarray(probe["X"], dtype=np.float64)
    W_O = np.asarray(probe["W_O"], dtype=np.float64)
    expected = reference.multihead(**probe)
    concat = lm._concatenation(probe)
    forms = [(lm.RESIDUAL_INSIDE, expected + X),
             (lm.ALWAYS_CAUSAL, reference.multihead(**dict(probe, mask=lm._causal(len(X))))),
             (lm.TRANSPOSED_OUTPUT, expected.T)]
    forms += [(lm.NORMALISED_OUTPUT, reference.layer_norm(expected, eps))
              for eps in tolerances.LAYER_NORM_EPS]
    forms.append((lm.CONCATENATION_ONLY, concat))
    try:
        forms.append((lm.ELEMENTWISE_W_O, concat * W_O))
    except ValueError:  # shapes that do not broadcast: no such form here
        pass
    if W_O.shape[1] == concat.shape[0]:
        forms.append((lm.REVERSED_W_O, W_O @ concat))
    return [Step(place, [Test(probe, answer=[answer])]) for place, answer in forms]


def _shared_weights(unmasked, heads, together):
    """SHARED_WEIGHTS as locate_multihead._weights_shared measures it: head ``i``'s block moves
    when the other heads' W_Q and W_K are redrawn, and no head's block moves when the others'
    W_V are (one step per head that may move)."""
    rng = np.random.default_rng(lm.PROBE_SEED + 2)
    blocks, start = [], 0
    for _, _, W_V in heads:
        blocks.append((start, start + np.shape(W_V)[1]))
        start += np.shape(W_V)[1]
    redrawn = []
    for i in range(len(heads)):
        def redraw(which):
            return [head if j == i else tuple(rng.normal(size=np.shape(W)) if k in which else W
                                              for k, W in enumerate(head))
                    for j, head in enumerate(heads)]
        redrawn.append((lm._padded(unmasked, redraw((0, 1))), lm._padded(unmasked, redraw((2,)))))
    still = [Test(values, "same", other=0, columns=blocks[i])
             for i, (_, values) in enumerate(redrawn)]
    return [Step(lm.SHARED_WEIGHTS, [Test(together, "differs"),
                                     Test(scores, "moved", other=0, columns=blocks[i])] + still)
            for i, (scores, _) in enumerate(redrawn)]
