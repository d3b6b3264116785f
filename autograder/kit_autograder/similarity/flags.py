"""The pairs far above what the class's own pairs share, for a person to look at.

Short functions look alike when written independently, and how alike depends on the part (a
post-LN block has few ways to be written, an answer about permutations many), so no score is
a flag by itself. Each part is read against its own distribution in this class: a pair's part
is *unusual* when at most ``PART_TAIL`` of the class's pairs score as high on it, and its
evidence is how rare that is, ``-log10(share)``. A pair is flagged when the evidence of its
unusual parts adds up to ``CUTOFF``: one unusual part happens to many pairs by chance, several
at once rarely. Two submissions that make the same uncommon mistake (the same catalogued or
located departure, in at most ``UNCOMMON_MISTAKE`` of the class) in a part where their code is
unusually alike get that mistake's rarity added: identical wrong answers say more than
identical right ones.

A flag never changes a grade and never reaches a student: it says where a person should look.
"""

import bisect
import math
from dataclasses import dataclass, field

from . import compare

PART_TAIL = 0.05
CUTOFF = 7.0
UNCOMMON_MISTAKE = 0.10


@dataclass
class PartFinding:
    part: str
    score: float  # the pair's similarity on this part, 0 to 1
    share: float  # the share of the class's pairs scoring at least as much
    evidence: float
    mistakes: list = field(default_factory=list)  # the uncommon mistakes both made here


@dataclass
class Pair:
    a: dict  # the kept submission ({"file", "stem", "parts"})
    b: dict
    findings: list  # PartFinding, strongest first

    @property
    def strength(self):
        return sum(f.evidence for f in self.findings)


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


def analyse(kept: list, mistakes: dict = None, *, cutoff=CUTOFF, part_tail=PART_TAIL):
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
        printed = {index: compare.fingerprint(part, entry["parts"][part])
                   for index, entry in enumerate(kept) if part in entry["parts"]}
        scored = compare.score_part(part, printed)
        compared[part] = scored.compared
        if not scored.compared:
            continue
        ranked = sorted(scored.pairs.values())
        for (i, j), score in scored.pairs.items():
            share = (len(ranked) - bisect.bisect_left(ranked, score)) / scored.compared
            if share > part_tail:
                continue
            evidence = -math.log10(max(share, 1 / scored.compared))
            both = sorted(set(mistakes.get(kept[i]["stem"], {}).get(part, ()))
                          & set(mistakes.get(kept[j]["stem"], {}).get(part, ())))
            rare = [m for m in both if holders[m] / graded <= UNCOMMON_MISTAKE]
            evidence += sum(-math.log10(holders[m] / graded) for m in rare)
            findings.setdefault((i, j), []).append(
                PartFinding(part, score, share, evidence, rare))
    pairs = [Pair(kept[i], kept[j], sorted(found, key=lambda f: -f.evidence))
             for (i, j), found in findings.items()]
    flagged = [pair for pair in pairs if pair.strength >= cutoff]
    flagged.sort(key=lambda pair: (-pair.strength, pair.a["file"], pair.b["file"]))
    return flagged, compared


def passages(pair: Pair, part: str):
    """The passages of ``part`` the two submissions share: spans in each one's text."""
    a = compare.fingerprint(part, pair.a["parts"][part])
    b = compare.fingerprint(part, pair.b["parts"][part])
    return compare.shared_passages(a, b)
