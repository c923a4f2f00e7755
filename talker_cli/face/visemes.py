"""Timed phonemes -> a viseme track, with Rhubarb Lip Sync's timing rules.

Viseme set: the 15 visemes of Oculus/OpenXR (sil PP FF TH DD kk CH SS nn RR aa E I O U).
Rules: HH takes the shape of the sound after it; pauses shorter than hold_pause_s keep the shape
before them; no shape is shorter than min_shape_s, and lip closures are never dropped and last at
least min_closure_s.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..aligners.phonemes import VOWELS
from ..artifacts import Phone, VisemeSegment

if TYPE_CHECKING:  # the settings are read, not built, here
    from ..config import VisemeConfig

VISEMES = ("sil", "PP", "FF", "TH", "DD", "kk", "CH", "SS", "nn", "RR", "aa", "E", "I", "O", "U")

ARPABET_TO_VISEME = {
    "SIL": "sil",
    "P": "PP", "B": "PP", "M": "PP",
    "F": "FF", "V": "FF",
    "TH": "TH", "DH": "TH",
    "T": "DD", "D": "DD",
    "K": "kk", "G": "kk", "NG": "kk",
    "CH": "CH", "JH": "CH", "SH": "CH", "ZH": "CH",
    "S": "SS", "Z": "SS",
    "N": "nn", "L": "nn",
    "R": "RR", "ER": "RR",
    "AA": "aa", "AE": "aa", "AH": "aa", "AY": "aa", "AW": "aa",
    "EH": "E", "EY": "E",
    "IH": "I", "IY": "I", "Y": "I",
    "AO": "O", "OW": "O", "OY": "O",
    "UH": "U", "UW": "U", "W": "U",
    "HH": "",  # filled from the next sound
}
# Diphthongs that end in rounded lips ("now", "go") are drawn with their glide's pose over their last
# 40%, as Rhubarb Lip Sync times diphthongs: filmed speakers' lips round, or close, before the next
# sound. The viseme stays the diphthong's (a split viseme track agreed less with hand labels,
# bench/lipsync.py). Those that glide towards I (AY, EY, OY) stay whole: in fast speech the glide
# falls short of its target, and drawn to it the mouth opened less than filmed speakers' (bench/mouth.py).
ROUNDING_GLIDES = {"AW": "U", "OW": "U"}
GLIDE_FROM = 0.6
# Sounds drawn with a mouth pose of their own inside their viseme: filmed speakers' lips nearly shut
# for W (as for R), where U's are open, and an exported track keeps W as U, its viseme in every set.
# The r-coloured vowel (ER, "her") and an R after a vowel ("heart", "four") are not rounded shut as
# an R before a vowel is ("red", "green"): their lips stay open with the vowel's. The mid-central
# vowel AH ("but", "the", "a") opens the jaw less than the open vowels AA and AE ("hot", "hat"),
# with which every viseme set groups it.
PHONE_SHAPES = {"W": "W", "ER": "ER", "AH": "AH"}


def phones_to_segments(phones: Sequence[Phone]) -> list[VisemeSegment]:
    """Map each phone, fill gaps with silence, resolve HH, join equal neighbours."""
    raw: list[VisemeSegment] = []
    t, previous = 0.0, "SIL"
    for phone in phones:
        if phone.start_s > t + 1e-6:
            raw.append(VisemeSegment("sil", t, phone.start_s))
        viseme = ARPABET_TO_VISEME.get(phone.label, "sil")
        if phone.label in ROUNDING_GLIDES:
            turn = phone.start_s + GLIDE_FROM * (phone.end_s - phone.start_s)
            raw += [VisemeSegment(viseme, phone.start_s, turn),
                    VisemeSegment(viseme, turn, phone.end_s, ROUNDING_GLIDES[phone.label])]
        else:
            shape = "ER" if phone.label == "R" and previous in VOWELS else PHONE_SHAPES.get(phone.label, "")
            raw.append(VisemeSegment(viseme, phone.start_s, phone.end_s, shape))
        previous = phone.label
        t = max(t, phone.end_s)
    following = VisemeSegment("sil", 0.0, 0.0)
    for i in range(len(raw) - 1, -1, -1):
        if raw[i].viseme == "":
            raw[i] = replace(following, start_s=raw[i].start_s, end_s=raw[i].end_s)
        following = raw[i]
    for i, seg in enumerate(raw):  # beside an open vowel AH is part of one open stretch, as its viseme is
        if seg.shape == "AH" and any(0 <= j < len(raw) and raw[j].viseme == "aa" and raw[j].shape != "AH"
                                     for j in (i - 1, i + 1)):
            raw[i] = replace(seg, shape="")
    return _join_equal(raw)


def _join_equal(segments: Sequence[VisemeSegment]) -> list[VisemeSegment]:
    joined: list[VisemeSegment] = []
    for seg in segments:
        if seg.end_s - seg.start_s <= 0:
            continue
        if joined and (joined[-1].viseme, joined[-1].shape) == (seg.viseme, seg.shape):
            joined[-1] = replace(seg, start_s=joined[-1].start_s)
        else:
            joined.append(seg)
    return joined


def viseme_segments(segments: Sequence[VisemeSegment]) -> list[VisemeSegment]:
    """The track as visemes only, as exports name it: a pose inside a viseme (W, a rounding glide) is
    not a viseme of its own, so equal neighbours join."""
    return _join_equal([VisemeSegment(s.viseme, s.start_s, s.end_s) for s in segments])


def hold_short_pauses(segments: Sequence[VisemeSegment], hold_pause_s: float) -> list[VisemeSegment]:
    """A pause shorter than hold_pause_s inside speech keeps the shape before it."""
    out = list(segments)
    for i in range(1, len(out) - 1):
        seg = out[i]
        if seg.viseme == "sil" and seg.end_s - seg.start_s < hold_pause_s:
            out[i] = replace(out[i - 1], start_s=seg.start_s, end_s=seg.end_s)
    return _join_equal(out)


LIP_CONTACTS = ("PP", "FF")  # shapes the eye checks the lips for: never dropped for being short


def enforce_min_duration(segments: Sequence[VisemeSegment], min_shape_s: float,
                         min_closure_s: float | None = None) -> list[VisemeSegment]:
    """Lengthen short shapes by borrowing from their neighbours (half from each where both can lend,
    so the shape stays centred on its sound; else from the one that can); drop them when none can.

    A lip closure (PP) is never dropped: the eye checks that lips meet on P, B and M, so a closure
    takes the time it needs from its longer neighbour even when that leaves the neighbour short, and
    its minimum is min_closure_s (min_shape_s when not given). Nor is the lower lip's contact with the
    upper teeth (FF): filmed speakers' lips close on F and V too, however short ("seven").
    The shortest short shape goes first (closures before all others). A heap finds it and a linked
    list keeps the neighbours, so an hour of speech takes as long per second as a sentence.
    """
    out = _join_equal(segments)
    n = len(out)
    if n < 2:
        return out
    kind = [(s.viseme, s.shape) for s in out]
    start, end = [s.start_s for s in out], [s.end_s for s in out]
    before, after = list(range(-1, n - 1)), [*range(1, n), -1]
    alive, count = [True] * n, n

    def length(k: int) -> float:
        return end[k] - start[k]

    def minimum(k: int) -> float:
        return min_closure_s if kind[k][0] == "PP" and min_closure_s is not None else min_shape_s

    def short(k: int) -> bool:
        return length(k) < minimum(k) - 1e-9

    def key(k: int) -> tuple[bool, float]:
        return kind[k][0] != "PP", length(k)

    queue = [(key(k), k) for k in range(n) if short(k)]
    heapq.heapify(queue)

    def unlink(k: int) -> None:
        nonlocal count
        a, b = before[k], after[k]
        if a >= 0:
            after[a] = b
        if b >= 0:
            before[b] = a
        alive[k], count = False, count - 1

    def settle(changed: set[int]) -> None:
        """What joining equal neighbours does to the whole list, done where it changed: empty shapes
        go, equal neighbours become one (the left one stays); the changed shorts are queued again.
        Shapes never change, only lengths: neighbours are new only around a removed shape, and both
        of those are in `changed`, left to right."""
        for k in sorted(changed):
            if alive[k] and length(k) <= 0:
                changed |= {before[k], after[k]} - {-1}
                unlink(k)
        for k in sorted(changed):
            while alive[k] and after[k] >= 0 and kind[after[k]] == kind[k]:
                end[k] = end[after[k]]
                unlink(after[k])
            if alive[k] and short(k):
                heapq.heappush(queue, (key(k), k))

    for _ in range(4 * n + 4):  # every pass lengthens one shape to the minimum or drops one
        while queue and not (alive[queue[0][1]] and short(queue[0][1]) and queue[0][0] == key(queue[0][1])):
            heapq.heappop(queue)  # an entry made stale by a change to its shape
        if not queue or count < 2:
            break
        i = heapq.heappop(queue)[1]
        need = minimum(i) - length(i)
        b, a = before[i], after[i]
        spare_before = length(b) - minimum(b) if b >= 0 else -1.0
        spare_after = length(a) - minimum(a) if a >= 0 else -1.0
        if min(spare_before, spare_after) >= need / 2:  # both lend half: the shape stays centred on its sound
            start[i], end[b] = start[i] - need / 2, end[b] - need / 2
            end[i], start[a] = end[i] + need / 2, start[a] + need / 2
        elif max(spare_before, spare_after) >= need or kind[i][0] in LIP_CONTACTS:
            if a >= 0 and (b < 0 or spare_after >= spare_before):
                take = min(need, length(a))
                end[i] += take
                start[a] += take
            else:
                take = min(need, length(b))
                start[i] -= take
                end[b] -= take
        # Nobody can lend: the shape is absorbed by its longer neighbour.
        elif a < 0 or (b >= 0 and spare_before >= spare_after):
            end[b] = end[i]
            unlink(i)
        else:
            start[a] = start[i]
            unlink(i)
        settle({k for k in (b, i, a) if k >= 0})
    result, k = [], next(k for k in range(n) if alive[k] and before[k] < 0)
    while k >= 0:
        viseme, shape = kind[k]
        result.append(VisemeSegment(viseme, start[k], end[k], shape))
        k = after[k]
    return result


def _length(segment: VisemeSegment) -> float:
    return segment.end_s - segment.start_s


def viseme_track(phones: Sequence[Phone], config: VisemeConfig) -> list[VisemeSegment]:
    """The final shapes: no shape shorter than min_shape_s, and every lip closure kept and at least
    min_closure_s long.

    Vowels are not moved earlier here, as Rhubarb does for its discrete mouths: the blendshape
    transitions (blendshapes.py) start each shape ahead of its sound, within anticipation_s. Moving
    them here as well lost 7 points of frame agreement with hand-labelled speech (bench/lipsync.py).
    """
    segments = phones_to_segments(phones)
    segments = hold_short_pauses(segments, config.hold_pause_s)
    return enforce_min_duration(segments, config.min_shape_s, config.min_closure_s)
