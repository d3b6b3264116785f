"""The pairs far above what the class's own pairs share, for a person to look at.

Short functions look alike when written independently, and how alike depends on the part (a
post-LN block has few ways to be written, an answer about permutations many), so no score is
a flag by itself: each part is read against its own distribution in this class.

* A pair's part is *unusual* when at most ``PART_TAIL`` of the class's pairs score as high on
  it. Its evidence is how unlikely that score is in this class: ``-log10`` of the share of
  pairs scoring as high, and beyond the class's top pairs, where a share stops saying how far
  above the rest a pair is, the tail of the class's distribution carried on: the pairs above
  its top ``TAIL_FIT`` share, fitted with an exponential whose scale is their median excess
  (robust to the few copies among them).
* A pair's strength weighs what the evidence of its unusual parts adds up to against the
  class's other pairs (``strengths``): how many pairs reach each total falls off as a power of
  ten per unit, and that line, fitted on the class's own pairs below its top ones, says how
  many pairs of a class like this one would be this alike by chance, ``10 ** -strength``. A
  class of 1,000 has half a million pairs, and more of them alike by chance than one of 70:
  the line says so, and the same strength means the same there.
* Two submissions that make the same uncommon mistake (the same catalogued or located
  departure, in at most ``UNCOMMON_MISTAKE`` of the class) in a part where their code is
  unusually alike get that mistake's rarity added: identical wrong answers say more than
  identical right ones.

A pair is listed from ``CUTOFF`` (the setting, ``SIMILARITY_CUTOFF=``): on sixteen planted
classes of 70 (``tests/similarity_class.py``), no independent pair reached 0.2 and a class had
at most three above -0.5, while most copies lie far above (docs/instructors.md). A flag never changes a grade and never
reaches a student: it says where a person should look.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from . import compare

PART_TAIL = 0.01
TAIL_FIT = 0.05
FIT_RANKS = (0.02, 0.5)  # of the pairs with some evidence
FIT_FIRST = 20
MIN_FIT_PAIRS = 200
MIN_PART_FIT = 1000
SMALL_CLASS_MARGIN = 1.0
MIN_FITTED = 10  # values needed to fit a tail; fewer: the share alone
CUTOFF = -0.5
UNCOMMON_MISTAKE = 0.10


@dataclass
class PartFinding:
    part: str
    score: float  # the pair's score on this part (shared weight times its share)
    share: float  # the share of the class's pairs scoring at least as much
    evidence: float
    mistakes: list = field(default_factory=list)  # the uncommon mistakes both made here
    compared: int = 0  # the class's pairs with this part on both sides


@dataclass
class Pair:
    a: dict  # the kept submission ({"file", "stem", "parts", "names"})
    b: dict
    findings: list  # PartFinding, strongest first
    strength: float = 0.0  # against the class's pairs (``strengths``)

    @property
    def evidence(self):
        return sum(f.evidence for f in self.findings)


def cutoff_setting(text):
    """``SIMILARITY_CUTOFF=`` as a number (a decimal comma too), or None when empty: the
    default. Anything else is a ValueError whose message is the line to print."""
    text = str(text or "").strip()
    if not text:
        return None
    try:
        value = float(text.replace(",", "."))
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ValueError(f"SIMILARITY_CUTOFF={text}: not a number; give the strength from which "
                         f"similar submissions are listed, such as {CUTOFF:g}, the default "
                         "(docs/instructors.md)")
    return value


def mistakes_of(record) -> dict:
    """``{graded function: {mistake id}}``: the catalogued mistakes a record's verdicts name,
    and the departures its diagnoses located."""
    found = {}
    for verdict in record.verdicts:
        if not verdict.public and verdict.misconceptions:
            found.setdefault(verdict.question, set()).update(verdict.misconceptions)
    for function, diagnoses in record.diagnoses.items():
        for diagnosis in diagnoses:
            if diagnosis.located or diagnosis.kind == "misconception":
                found.setdefault(function, set()).update(diagnosis.ids)
    return found


def _tail(ranked: np.ndarray, compared: int):
    """``(threshold, excesses)``: the class's top ``TAIL_FIT`` of ``compared`` values (those
    not in ``ranked``, sorted, are 0) and how far each is above the threshold; no excesses
    for a part fewer than ``MIN_PART_FIT`` pairs compared (under about 45 students: a few
    identical helpers among pairs that share nothing else would be read as a tail), or when
    that top reaches into the pairs that share nothing."""
    top = int(math.ceil(TAIL_FIT * compared))
    if compared < MIN_PART_FIT or top > len(ranked):
        return 0.0, ranked[:0]
    threshold = float(ranked[-top])
    return threshold, ranked[ranked > threshold] - threshold


def _beyond(values, compared, threshold, excess):
    """``-log10`` of the share of the class's ``compared`` values at least each of ``values``,
    the tail beyond ``threshold`` carried on by an exponential of the excesses' median scale
    (the median: a few copies among them do not move it); None when too few to fit."""
    if len(excess) < MIN_FITTED:
        return None
    scale = max(float(np.median(excess)) / math.log(2), 1e-12)
    return -math.log10(len(excess) / compared) + (values - threshold) / (scale * math.log(10))


def evidence(scores: np.ndarray, compared: int, part_tail=None):
    """``(at, share, evidence)`` for the pairs of a part in its tail: their indexes in
    ``scores`` (the pairs that share anything, among the ``compared`` pairs of the part), the
    share of pairs scoring as high and the evidence of that."""
    part_tail = PART_TAIL if part_tail is None else part_tail
    ranked = np.sort(scores)
    # In a small class, the top pair of a part is unusual whatever its share.
    tail = int(math.floor(max(part_tail, 1 / compared) * compared))
    if tail < 1 or not len(ranked):
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
    lowest = ranked[-min(tail, len(ranked))]
    at = np.flatnonzero(scores >= lowest)
    share = (len(ranked) - np.searchsorted(ranked, scores[at], side="left")) / compared
    keep = share <= max(part_tail, 1 / compared)
    at, share = at[keep], share[keep]
    found = -np.log10(np.maximum(share, 1 / compared))
    threshold, excess = _tail(ranked, compared)
    fitted = _beyond(scores[at], compared, threshold, excess)
    if fitted is not None:
        found = np.where(scores[at] > threshold, np.maximum(found, fitted), found)
    return at, share, found


def strengths(totals: np.ndarray, compared: int, parts: int = 1, found=None) -> np.ndarray:
    """Each pair's strength, ``-log10`` of how many pairs of a class like this one would add up
    as much evidence by chance, read from the class's own pairs: how many reach each total
    falls off as a power of ten per unit of total, and that line, fitted on the pairs ranked
    ``FIT_RANKS`` among those with any evidence (below the top, where copies are), is carried
    up to each pair's total.

    A class with fewer than ``MIN_FIT_PAIRS`` pairs with evidence (under about 50 students)
    has no such line to read: its strength is the total less what chance explains among its
    ``compared`` pairs and the ways of choosing ``found`` unusual parts (each pair's) among
    its ``parts``, less ``SMALL_CLASS_MARGIN``: only a pair alike in many parts is listed."""
    found = np.ones(len(totals)) if found is None else np.asarray(found, dtype=float)
    choices = np.array([math.lgamma(parts + 1) - math.lgamma(k + 1) - math.lgamma(parts - k + 1)
                        for k in np.minimum(found, parts)]) / math.log(10)
    plain = totals - math.log10(compared) - choices - SMALL_CLASS_MARGIN
    if len(totals) < MIN_FIT_PAIRS:
        return plain
    ranked = np.sort(totals)[::-1]
    first = max(FIT_FIRST, int(FIT_RANKS[0] * len(ranked)))
    last = int(FIT_RANKS[1] * len(ranked))
    slope, intercept = np.polyfit(ranked[first - 1:last], np.log10(np.arange(first, last + 1)), 1)
    if not slope < 0:
        return plain
    return -(intercept + slope * totals)


def analyse(kept: list, mistakes: dict = None, *, cutoff=CUTOFF, part_tail=None):
    """``(flagged pairs, strongest first; {part: pairs compared})`` for the kept submissions;
    ``mistakes``: ``{stem: {function: {mistake id}}}`` from the records."""
    mistakes = mistakes or {}
    parts = sorted({part for entry in kept for part in entry["parts"]})
    holders = {}  # mistake id -> how many submissions made it
    for found in mistakes.values():
        for ids in found.values():
            for mistake in ids:
                holders[mistake] = holders.get(mistake, 0) + 1
    graded = max(1, len(mistakes))
    findings, compared = {}, {}
    for part in parts:
        printed = {index: compare.features(part, entry["parts"][part],
                                           frozenset(entry.get("names", {}).get(part, ())))
                   for index, entry in enumerate(kept) if part in entry["parts"]}
        scored = compare.score_part(part, printed)
        compared[part] = scored.compared
        if not scored.compared or not len(scored.scores):
            continue
        where, shares, found = evidence(scored.scores, scored.compared, part_tail)
        for n, at in enumerate(where.tolist()):
            i, j = int(scored.keys[at] >> 32), int(scored.keys[at] & 0xFFFFFFFF)
            both = sorted(set(mistakes.get(kept[i]["stem"], {}).get(part, ()))
                          & set(mistakes.get(kept[j]["stem"], {}).get(part, ())))
            rare = [m for m in both if holders[m] / graded <= UNCOMMON_MISTAKE]
            bonus = sum(-math.log10(holders[m] / graded) for m in rare)
            findings.setdefault((i, j), []).append(PartFinding(
                part, float(scored.scores[at]), float(shares[n]), float(found[n]) + bonus,
                rare, scored.compared))
    pairs = [Pair(kept[i], kept[j], sorted(found, key=lambda f: -f.evidence))
             for (i, j), found in findings.items()]
    if pairs:
        compared_pairs = max(len(pairs), len(kept) * (len(kept) - 1) // 2)
        totals = np.array([pair.evidence for pair in pairs])
        counts = [len(pair.findings) for pair in pairs]
        for pair, strength in zip(pairs, strengths(totals, compared_pairs, len(parts),
                                                   counts).tolist()):
            pair.strength = strength
    flagged = [pair for pair in pairs if pair.strength >= cutoff]
    flagged.sort(key=lambda pair: (-pair.strength, pair.a["file"], pair.b["file"]))
    return flagged, compared


def passages(pair: Pair, part: str):
    """The passages of ``part`` the two submissions share: spans in each one's text."""
    names = [frozenset(side.get("names", {}).get(part, ())) for side in (pair.a, pair.b)]
    return compare.shared_passages(part, pair.a["parts"][part], pair.b["parts"][part], *names)
