"""Timed phonemes -> a viseme track, with Rhubarb Lip Sync's timing rules.

Viseme set: the 15 visemes of Oculus/OpenXR (sil PP FF TH DD kk CH SS nn RR aa E I O U).
Rules: HH takes the shape of the sound after it; pauses shorter than hold_pause_s keep the shape
before them; no shape is shorter than min_shape_s, and lip closures are never dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from .artifacts import Phone, VisemeSegment
from .config import VisemeConfig

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


def phones_to_segments(phones: Sequence[Phone]) -> list[VisemeSegment]:
    """Map each phone, fill gaps with silence, resolve HH, join equal neighbours."""
    raw: list[VisemeSegment] = []
    t = 0.0
    for phone in phones:
        if phone.start_s > t + 1e-6:
            raw.append(VisemeSegment("sil", t, phone.start_s))
        raw.append(VisemeSegment(ARPABET_TO_VISEME.get(phone.label, "sil"), phone.start_s, phone.end_s))
        t = max(t, phone.end_s)
    following = "sil"
    for i in range(len(raw) - 1, -1, -1):
        if raw[i].viseme == "":
            raw[i] = VisemeSegment(following, raw[i].start_s, raw[i].end_s)
        following = raw[i].viseme
    return _join_equal(raw)


def _join_equal(segments: Sequence[VisemeSegment]) -> list[VisemeSegment]:
    joined: list[VisemeSegment] = []
    for seg in segments:
        if seg.end_s - seg.start_s <= 0:
            continue
        if joined and joined[-1].viseme == seg.viseme:
            joined[-1] = VisemeSegment(seg.viseme, joined[-1].start_s, seg.end_s)
        else:
            joined.append(seg)
    return joined


def hold_short_pauses(segments: Sequence[VisemeSegment], hold_pause_s: float) -> list[VisemeSegment]:
    """A pause shorter than hold_pause_s inside speech keeps the shape before it."""
    out = list(segments)
    for i in range(1, len(out) - 1):
        seg = out[i]
        if seg.viseme == "sil" and seg.end_s - seg.start_s < hold_pause_s:
            out[i] = VisemeSegment(out[i - 1].viseme, seg.start_s, seg.end_s)
    return _join_equal(out)


def enforce_min_duration(segments: Sequence[VisemeSegment], min_shape_s: float) -> list[VisemeSegment]:
    """Lengthen short shapes by borrowing from a long neighbour; drop them when no neighbour can lend.

    A lip closure (PP) is never dropped: the eye checks that lips meet on P, B and M, so a closure
    takes the time it needs from its longer neighbour even when that leaves the neighbour short.
    """
    out = _join_equal(segments)
    for _ in range(4 * len(out) + 4):  # every pass lengthens one shape to the minimum or drops one
        short = [i for i, s in enumerate(out) if _length(s) < min_shape_s - 1e-9]
        if not short or len(out) < 2:
            return out
        i = min(short, key=lambda k: (out[k].viseme != "PP", _length(out[k])))
        seg = out[i]
        need = min_shape_s - _length(seg)
        before = out[i - 1] if i > 0 else None
        after = out[i + 1] if i + 1 < len(out) else None
        spare_before = _length(before) - min_shape_s if before else -1.0
        spare_after = _length(after) - min_shape_s if after else -1.0
        if max(spare_before, spare_after) >= need or seg.viseme == "PP":
            if after is not None and (before is None or spare_after >= spare_before):
                take = min(need, _length(after))
                out[i] = VisemeSegment(seg.viseme, seg.start_s, seg.end_s + take)
                out[i + 1] = VisemeSegment(after.viseme, after.start_s + take, after.end_s)
            else:
                take = min(need, _length(before))
                out[i] = VisemeSegment(seg.viseme, seg.start_s - take, seg.end_s)
                out[i - 1] = VisemeSegment(before.viseme, before.start_s, before.end_s - take)
        # Nobody can lend: the shape is absorbed by its longer neighbour.
        elif after is None or (before is not None and spare_before >= spare_after):
            out[i - 1] = VisemeSegment(before.viseme, before.start_s, seg.end_s)
            del out[i]
        else:
            out[i + 1] = VisemeSegment(after.viseme, seg.start_s, after.end_s)
            del out[i]
        out = _join_equal(out)
    return out


def _length(segment: VisemeSegment) -> float:
    return segment.end_s - segment.start_s


def viseme_track(phones: Sequence[Phone], config: VisemeConfig) -> list[VisemeSegment]:
    """The final shapes: no shape shorter than min_shape_s and every lip closure kept.

    Vowels are not moved earlier here, as Rhubarb does for its discrete mouths: the blendshape
    transitions (blendshapes.py) start each shape ahead of its sound, within anticipation_s. Moving
    them here as well lost 7 points of frame agreement with hand-labelled speech (bench/lipsync.py).
    """
    segments = phones_to_segments(phones)
    segments = hold_short_pauses(segments, config.hold_pause_s)
    return enforce_min_duration(segments, config.min_shape_s)
