"""Timed phonemes -> a viseme track, with Rhubarb Lip Sync's timing rules.

Viseme set: the 15 visemes of Oculus/OpenXR (sil PP FF TH DD kk CH SS nn RR aa E I O U).
Rules: HH takes the shape of the sound after it; pauses shorter than hold_pause_s keep the shape
before them; no shape is shorter than min_shape_s; a vowel starts forming up to anticipation_s
early while the mouth is not busy with a lip consonant or is at rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from .artifacts import Phone, VisemeSegment
from .config import VisemeConfig

VISEMES = ("sil", "PP", "FF", "TH", "DD", "kk", "CH", "SS", "nn", "RR", "aa", "E", "I", "O", "U")
VOWEL_VISEMES = {"aa", "E", "I", "O", "U"}
LIP_VISEMES = {"PP", "FF", "CH", "U", "O"}  # shapes the lips must reach: no anticipation over them

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
    """Lengthen short shapes by borrowing from a long neighbour; drop them when no neighbour can lend."""
    out = list(segments)
    while True:
        short = [i for i, s in enumerate(out) if s.end_s - s.start_s < min_shape_s - 1e-9]
        if not short or len(out) < 2:
            return out
        i = min(short, key=lambda k: out[k].end_s - out[k].start_s)
        seg = out[i]
        need = min_shape_s - (seg.end_s - seg.start_s)
        before = out[i - 1] if i > 0 else None
        after = out[i + 1] if i + 1 < len(out) else None
        spare_before = (before.end_s - before.start_s - min_shape_s) if before else -1.0
        spare_after = (after.end_s - after.start_s - min_shape_s) if after else -1.0
        if max(spare_before, spare_after) >= need:
            if spare_after >= spare_before:
                out[i] = VisemeSegment(seg.viseme, seg.start_s, seg.end_s + need)
                out[i + 1] = VisemeSegment(after.viseme, after.start_s + need, after.end_s)
            else:
                out[i] = VisemeSegment(seg.viseme, seg.start_s - need, seg.end_s)
                out[i - 1] = VisemeSegment(before.viseme, before.start_s, before.end_s - need)
            continue
        # Nobody can lend: the shape is absorbed by its longer neighbour.
        if after is None or (before is not None and spare_before >= spare_after):
            out[i - 1] = VisemeSegment(before.viseme, before.start_s, seg.end_s)
        else:
            out[i + 1] = VisemeSegment(after.viseme, seg.start_s, after.end_s)
        del out[i]
        out = _join_equal(out)


def anticipate_vowels(segments: Sequence[VisemeSegment], anticipation_s: float) -> list[VisemeSegment]:
    """Start a vowel shape early over a preceding rest or tongue consonant (never a lip shape)."""
    out = list(segments)
    for i in range(1, len(out)):
        seg, prev = out[i], out[i - 1]
        if seg.viseme not in VOWEL_VISEMES or prev.viseme in LIP_VISEMES | VOWEL_VISEMES:
            continue
        # Up to half of the preceding shape, so it stays visible.
        shift = min(anticipation_s, 0.5 * (prev.end_s - prev.start_s))
        if shift <= 0:
            continue
        out[i - 1] = VisemeSegment(prev.viseme, prev.start_s, prev.end_s - shift)
        out[i] = VisemeSegment(seg.viseme, seg.start_s - shift, seg.end_s)
    return out


def viseme_track(phones: Sequence[Phone], config: VisemeConfig) -> list[VisemeSegment]:
    segments = phones_to_segments(phones)
    segments = hold_short_pauses(segments, config.hold_pause_s)
    segments = enforce_min_duration(segments, config.min_shape_s)
    return anticipate_vowels(segments, config.anticipation_s)
