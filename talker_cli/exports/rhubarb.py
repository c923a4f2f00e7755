"""Rhubarb Lip Sync's mouth cues (TSV, JSON, XML, Moho DAT), so tools that read Rhubarb read talker.

The 15 OVR visemes map to Rhubarb's basic shapes A-F and its extended shapes G, H, X; times are in
centiseconds, as Rhubarb writes them, and the cues cover the whole sound, resting (X) at both ends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

# A: closed (P B M); B: slightly open, teeth together (most consonants, EE); C: open (EH, AE);
# D: wide open (AA); E: slightly rounded (AO, ER); F: puckered (UW, OW, W); G: F and V;
# H: long L; X: at rest.
OVR_TO_RHUBARB = {
    "sil": "X", "PP": "A", "FF": "G", "TH": "B", "DD": "B", "kk": "B", "CH": "B", "SS": "B", "nn": "B",
    "RR": "B", "aa": "D", "E": "C", "I": "B", "O": "E", "U": "F",
}
PRESTON_BLAIR = {"A": "MBP", "B": "etc", "C": "E", "D": "AI", "E": "O", "F": "U", "G": "FV", "H": "L", "X": "rest"}


@dataclass(frozen=True)
class MouthCue:
    start_cs: int  # centiseconds
    end_cs: int
    shape: str


def mouth_cues(segments, duration_s: float) -> list[MouthCue]:
    """Rhubarb shapes over [0, duration]: boundaries on the centisecond grid, equal neighbours joined."""
    end = max(1, int(round(duration_s * 100)))
    cues: list[MouthCue] = []
    t = 0
    for seg in segments:
        start, stop = int(round(seg.start_s * 100)), min(int(round(seg.end_s * 100)), end)
        if start > t:
            cues.append(MouthCue(t, start, "X"))
        start = max(start, t)
        if stop > start:
            cues.append(MouthCue(start, stop, OVR_TO_RHUBARB[seg.viseme]))
            t = stop
    if t < end:
        cues.append(MouthCue(t, end, "X"))
    joined: list[MouthCue] = []
    for cue in cues:
        if joined and joined[-1].shape == cue.shape:
            joined[-1] = MouthCue(joined[-1].start_cs, cue.end_cs, cue.shape)
        else:
            joined.append(cue)
    return joined


def _seconds(cs: int) -> str:
    return f"{cs / 100:.2f}"


def _cues(animation) -> list[MouthCue]:
    return mouth_cues(animation.segments, animation.duration_s)


def _sound_file(animation) -> str:
    return str(animation.sound_file.resolve()) if animation.sound_file is not None else ""


def to_tsv(animation) -> str:
    cues = _cues(animation)
    lines = [f"{_seconds(c.start_cs)}\t{c.shape}" for c in cues]
    lines.append(f"{_seconds(cues[-1].end_cs)}\tX")  # the end of the sound, mouth closed
    return "\n".join(lines) + "\n"


def to_json(animation) -> str:
    cues = _cues(animation)
    return json.dumps({
        "metadata": {"soundFile": _sound_file(animation), "duration": round(cues[-1].end_cs / 100, 2)},
        "mouthCues": [{"start": round(c.start_cs / 100, 2), "end": round(c.end_cs / 100, 2), "value": c.shape}
                      for c in cues],
    }, indent=2) + "\n"


def to_xml(animation) -> str:
    cues = _cues(animation)
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<rhubarbResult>", "  <metadata>",
             f"    <soundFile>{escape(_sound_file(animation))}</soundFile>",
             f"    <duration>{_seconds(cues[-1].end_cs)}</duration>", "  </metadata>", "  <mouthCues>"]
    lines += [f"    <mouthCue start={quoteattr(_seconds(c.start_cs))} end={quoteattr(_seconds(c.end_cs))}>{c.shape}</mouthCue>"
              for c in cues]
    lines += ["  </mouthCues>", "</rhubarbResult>"]
    return "\n".join(lines) + "\n"


def to_dat(animation) -> str:
    """Moho's switch data: 'MohoSwitch1', then 'FRAME SHAPE' lines (frames from 1, Preston Blair
    names); a shape starting in the same frame as the one before replaces it; rest at the end."""
    rate = animation.dat_frame_rate
    frame = lambda cs: 1 + int(rate * cs / 100)  # noqa: E731
    cues = _cues(animation)
    lines, last = ["MohoSwitch1"], 0
    for cue in cues:
        number = frame(cue.start_cs)
        if number == last:
            lines[-1] = f"{number} {PRESTON_BLAIR[cue.shape]}"
            continue
        lines.append(f"{number} {PRESTON_BLAIR[cue.shape]}")
        last = number
    end = frame(cues[-1].end_cs)
    lines.append(f"{end if end != last else end + 1} {PRESTON_BLAIR['X']}")
    return "\n".join(lines) + "\n"
