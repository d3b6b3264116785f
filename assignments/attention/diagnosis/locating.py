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

import itertools
from dataclasses import dataclass, field

import numpy as np

from kit_autograder import hidden_inputs
from reference import attention as reference

from .. import locate, locate_ignored
from .. import locate_attention as la
from .. import locate_block as lb
from .. import locate_multihead as lm
from .. import locate_positional as lp
from .. import tolerances
from ..probe_compare import agrees


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
    second: list = None  # rows_either: the other answer a row may be


@dataclass
class Step:
    place: tuple  # (finding id, the locator's Spanish place); None: stop, saying nothing
    tests: list = field(default_factory=list)
    whole: bool = False  # the place is the whole message already (locate.none_mask_place)

    @property
    def message(self):
        # As the grade's locators say a place (locate_attention.locate, locate_multihead.locate).
        if self.place is None:
            return None
        return self.place[1] if self.whole else f"el fallo está en {self.place[1]}"


def steps(function, inputs):
    """The ladder of locating steps for ``function`` on one public case's ``inputs``, in the
    order locate.locate tries them: a mask used when there is none, a whole wrong answer, an
    argument never read, then the function's own locator."""
    own = {"attention": _attention, "multihead": _multihead, "transformer_block": _block,
           "positional_encoding": _positional}
    if function not in own:
        return []
    whole = {"multihead": lambda i: _multihead_whole(lm._fresh(i)), "transformer_block":
             lambda i: _block_whole(lb._probe(i))}.get(function, lambda i: [])
    return (_none_mask(function, inputs) + whole(inputs) + _ignored(function, inputs)
            + own[function](inputs))


def _ignored(function, inputs):
    """locate_ignored.ignored on locate.PROBES's probe: the arguments whose redrawing
    changes the reference's answer and leaves the student's bit for bit the same. One step per
    such argument (the others moving the answer), then a stop: two or more are left unsaid
    rather than said in part."""
    probe = locate.PROBES[function](inputs) if function in locate.PROBES else inputs
    rng = np.random.default_rng(locate_ignored.PROBE_SEED)
    expected = _parts(function, probe)
    redrawn = {}
    for name, value in probe.items():
        new = hidden_inputs.redrawn(value, rng)
        if new is None:
            continue
        changed = dict(probe, **{name: new})
        if not all(agrees(a, b) for a, b in zip(_parts(function, changed), expected)):
            redrawn[name] = changed
    base = Test(probe, "informative")
    names = list(redrawn)
    found = []
    for chosen in names:
        tests = [base] + [Test(redrawn[name], "identical" if name == chosen else "changed",
                               other=0) for name in names]
        found.append(Step(locate_ignored.message(function, [chosen]), tests, whole=True))
    found += [Step(None, [base] + [Test(redrawn[name], "identical", other=0) for name in pair])
              for pair in itertools.combinations(names, 2)]
    return found


def _parts(function, inputs):
    answer = getattr(reference, function)(**inputs)
    return answer if isinstance(answer, tuple) else (answer,)


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
PLACES = (
    # multihead's whole answers; attention's steps; multihead's steps
    lm.RESIDUAL_INSIDE, lm.ALWAYS_CAUSAL, lm.TRANSPOSED_OUTPUT, lm.NORMALISED_OUTPUT,
    lm.CONCATENATION_ONLY, lm.ELEMENTWISE_W_O, lm.REVERSED_W_O,
    la.ONE_KEY, la.SCORES_AS_WEIGHTS, la.ROWS_MISSING, la.SOFTMAX_TWICE, la.QUERIES_AS_KEYS,
    la.ALWAYS_CAUSAL, la.NO_EXPONENTIAL,
    la.WEIGHTS_TIMES_V, la.MASK_NAN_MARKED, la.MASK_NAN, la.MASK_TRANSPOSED,
    la.UNMASKED_WEIGHTS, la.MASK, la.FORBIDDEN_DOMINATE, la.LARGE_SCORES,
    lm.MASK_TRANSPOSED, lm.MASK, lm.HEAD_SOFTMAX_AXIS, lm.HEADS_AXIS, lm.AFTER_HEADS,
    lm.EACH_HEAD,
    lm.CONCATENATION, lm.OTHER_HEADS, lm.SHARED_WEIGHTS, lm.SPLITTING, lm.OUTPUT_PROJECTION,
    # the block's whole answers, then its steps
    lb.RETURNS_FIRST_SUBLAYER, lb.RETURNS_BEFORE_LAST_NORM, lb.INPUT_ADDED_AFTER,
    lb.B2_AFTER_LAST_NORM, lb.NORM_BEFORE_SUM, lb.POSITIONS_ADDED, lb.INPUT_NORMALISED,
    lb.ALWAYS_CAUSAL, lb.FIRST_ROW_OF_ATTENTION, lb.W_O_TWICE,
    lb.ZERO_TOKENS, lb.NORM_SHIFT, lb.NORM_NOT_FINITE, lb.NORM_INSIDE, lb.NOTHING_ADDED,
    lb.RMS_NORM, lb.NORM_WHOLE_MATRIX, lb.NORM_BY_VARIANCE, lb.ATTENTION_MASK,
    lb.ATTENTION_SUBLAYER, lb.FFN_LAST_TOKEN, lb.FFN_SOME_TOKENS, lb.FFN_ACTIVATION,
    lb.FFN_INPUT, lb.FFN_INSIDE, lb.SECOND_RESIDUAL, lb.CHAINING, lb.MASK_WITH_BOTH,
    # the positional encoding's whole forms
    lp.ROWS_REVERSED_PLACE, lp.POS_AND_I_SWAPPED_PLACE, lp.ROWS_AND_COLUMNS_SWAPPED_PLACE,
    lp.FLAT_INTERLEAVED_PLACE)


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
    found.append(Step(la.SCORES_AS_WEIGHTS, [Test(probe, part=0), Test(
        probe, answer=[output, scores], part=1)]))
    # The rows after the first k left at 0 in both parts (a return inside the loop).
    found += [Step(la.ROWS_MISSING, [Test(probe, answer=[
        np.where(np.arange(len(output))[:, None] < k, output, 0.0),
        np.where(np.arange(len(weights))[:, None] < k, weights, 0.0)])])
        for k in range(1, len(weights))]
    found.append(Step(la.SOFTMAX_TWICE, [Test(probe, part=1, answer=[
        output, reference.softmax(weights, axis=-1)])]))
    found += [Step(rounded_place(digits), [Test(probe, "departs", part=1), Test(
        probe, part=1, answer=[output, np.round(weights, digits)])])
        for digits in ROUNDED_DIGITS]
    if Q.shape == K.shape:
        found.append(Step(la.QUERIES_AS_KEYS, [Test(probe, part=1, answer=[
            output, reference.softmax(Q @ Q.T / np.sqrt(K.shape[-1]))])]))
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


# Weights rounded to more decimals than these stay within the judge's tolerance of the right
# ones (locate_attention._rounded_digits finds no departure there).
ROUNDED_DIGITS = (1, 2)


def rounded_place(digits):
    return la.ROUNDED[0], la.ROUNDED[1].format(digits=digits)


# --- multihead (locate_multihead.locate, in its order) -------------------------------------------


def _multihead(inputs):
    mask, heads = inputs.get("mask"), list(inputs["heads"])
    unmasked = lm._fresh(inputs)
    found = []
    if mask is not None:
        allowed = np.asarray(mask, dtype=bool)
        if allowed.ndim == 2 and allowed.shape[0] == allowed.shape[1] and not np.array_equal(
                allowed, allowed.T):
            with np.errstate(invalid="ignore"):
                transposed = [reference.multihead(**dict(inputs, mask=allowed.T))]
            found.append(Step(lm.MASK_TRANSPOSED, [Test(unmasked), Test(answer=transposed)]))
        found.append(Step(lm.MASK, [Test(unmasked)]))
    # Each head alone, with W_O = I, in order: the first that departs is the place.
    together = lm._padded(unmasked, heads)
    several = lm._padded(unmasked, lm.several_heads(heads))
    over_heads = Test(several, answer=[lm.over_the_heads(several)])
    for index, head in enumerate(heads):
        alone = lm._padded(unmasked, [head])
        again = lm._padded(lm._fresh(inputs, lm.PROBE_SEED + 1), [head])
        found += [Step(lm.HEAD_SOFTMAX_AXIS, [Test(alone, answer=[lm.over_the_queries(alone)])]),
                  Step(lm.HEADS_AXIS, [Test(alone, answer=[lm.weights_of_one(alone)]),
                                       over_heads])]
        # Roles swapped are code shared by every head: the first head shows them (the data
        # file stays small), a later one is said at «cada cabeza».
        found += [Step(lm.roles_place(roles), [Test(alone, answer=[answer])])
                  for answer, roles in (lm.roles_forms(alone) if index == 0 else [])]
        found += [Step(lm.AFTER_HEADS, [Test(alone, "monotone", min_values=lm.MIN_VALUES),
                                        Test(again, "monotone", min_values=lm.MIN_VALUES)]),
                  Step(lm.EACH_HEAD, [Test(alone, "differs")])]
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
    """locate_multihead.whole_answer: whole wrong forms of the answer on the unmasked probe."""
    return [Step(place, [Test(probe, answer=[value])])
            for value, place in lm.whole_forms(probe) if value is not None]


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


# --- transformer_block (locate_block.locate, in its order) ---------------------------------------


def _block_whole(probe):
    """locate_block.whole_answer: whole wrong forms of the block on its fresh probe."""
    return [Step(place, [Test(probe, answer=[value])])
            for value, place in lb.whole_forms(probe) if value is not None]


def _block(inputs):
    found = []
    x = np.asarray(inputs["x"], dtype=np.float64)
    zero = np.all(x == 0, axis=1)
    if zero.any():  # locate_block._zero_tokens
        noise = lb.NUDGE * np.random.default_rng(lb.PROBE_SEED).normal(size=x.shape)
        found.append(Step(lb.ZERO_TOKENS, [Test(dict(inputs, x=np.where(zero[:, None], noise,
                                                                         x)))]))
    probe = lb._probe(inputs)
    off = {name: lb._switched_off(probe, names) for name, names in lb.PROBES.items()}
    both, ffn, attention = (Test(off[name]) for name in ("both_off", "ffn_off", "attention_off"))
    both_off, ffn_off, attention_off = off["both_off"], off["ffn_off"], off["attention_off"]
    # Both sublayers off: the residuals and the two LayerNorms (locate_block._normalisation).
    shifted = dict(both_off, x=both_off["x"] + lb.SHIFT, b2=both_off["b2"] + lb.SHIFT)
    shifted_right = reference.transformer_block(**shifted)
    found.append(Step(lb.NORM_SHIFT, [both, Test(shifted, "differs"), Test(
        shifted, "differs", answer=[shifted_right + lb.SHIFT])]))
    # Only where that probe departs: LayerNorm(x) is itself, within the tolerance, its own
    # RMSNorm or its own division by the variance.
    departs = Test(both_off, "departs")
    found += [Step(lb.NORM_NOT_FINITE, [Test(both_off, "not_finite")]),
              Step(lb.NORM_INSIDE, [departs, Test(both_off, answer=[both_off["x"]])]),
              Step(lb.NOTHING_ADDED, [departs, Test(both_off, answer=[
                  np.zeros_like(both_off["x"])])])]
    forms = [(lb.RMS_NORM, lb._rms), (lb.NORM_BY_VARIANCE, lb._by_variance)]
    if len(both_off["x"]) > 1:
        forms.insert(1, (lb.NORM_WHOLE_MATRIX, lb._whole))
    for place, norm in forms:
        for eps in tolerances.LAYER_NORM_EPS:
            once = norm(both_off["x"], eps)
            found += [Step(place, [departs, Test(both_off, answer=[candidate])]) for candidate in (
                once, norm(once, eps), norm(reference.layer_norm(both_off["x"], eps), eps))]
    # Other departures there (an offset, the wrong axis, another scale) are measured by the
    # locator's readings of the rows, not by an answer: nothing is said.
    found.append(Step(None, [departs]))
    # The first sublayer alone departs.
    first = [both, Test(ffn_off, "departs"), attention]
    if inputs.get("mask") is not None:
        found.append(Step(lb.ATTENTION_MASK, first + [Test(dict(ffn_off, mask=None))]))
    found.append(Step(lb.ATTENTION_SUBLAYER, first))
    # The second sublayer alone departs (locate_block._second_sublayer, on a fresh probe).
    second = [both, ffn, Test(attention_off, "departs")]
    right = reference.transformer_block(**attention_off)
    without = reference.transformer_block(**lb._switched_off(attention_off, lb.FFN))
    if len(right) > 1:
        last = np.vstack([right[:-1], without[-1:]])
        found += [Step(lb.FFN_LAST_TOKEN, second + [Test(attention_off, answer=[last])]),
                  Step(lb.FFN_SOME_TOKENS, second + [Test(attention_off, "rows_either",
                                                          answer=[right], second=[without])])]
    no_w1 = lb._switched_off(attention_off, ("W1",))
    found += [Step(lb.FFN_ACTIVATION, second + [Test(no_w1),
                                                Test(lb.linear_probe(attention_off))]),
              Step(lb.FFN_INPUT, second + [Test(no_w1)]),
              Step(lb.FFN_INSIDE, second + [Test(lb._switched_off(attention_off, ("W1", "W2")))]),
              Step(lb.SECOND_RESIDUAL, second),
              Step(lb.CHAINING, [both, Test(ffn_off, "departs"), Test(attention_off, "departs")])]
    # Every sublayer probe agrees: a departure that needs both at once, with the mask.
    if inputs.get("mask") is not None:
        found.append(Step(lb.MASK_WITH_BOTH, [both, ffn, attention, Test(probe, "departs"),
                                              Test(dict(probe, mask=None))]))
    return found


# --- positional_encoding (locate_positional.locate: its whole forms of pe) -----------------------


def _positional(inputs):
    """The pe of a layout or an angle swapped, on the case itself; a case of one position on
    more positions, or said to be the place when the function is right there."""
    found = []
    if inputs["n_positions"] == 1:
        longer = dict(inputs, n_positions=lp.ROWS_OF_ONE_POSITION_PROBE)
        found.append(Step(lp.ONE_POSITION, [Test(longer)], whole=True))
        inputs = longer
    expected_pe, expected_omega = reference.positional_encoding(**inputs)
    forms = [(expected_pe[::-1] if inputs["n_positions"] > 1 else None,
              lp.ROWS_REVERSED_PLACE)] + lp.swapped_forms(inputs, expected_omega)
    return found + [Step(place, [Test(inputs, part=0, answer=[value, expected_omega])])
                    for value, place in forms if value is not None]
