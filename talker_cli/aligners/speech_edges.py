"""Where speech starts and stops: the edges of a recording's silences put where its sound does.

Acoustic models let a phone take in the quiet before and after it (pocketsphinx starts the first
phone a median 20 ms early and ends the last 18 ms late on TIMIT), and the mouth then moves while
nothing is heard. Each edge between a silence and a sound, at the ends of the recording and around
pauses of PAUSE_S or more, is moved within REACH_S to where the sound's loudness crosses a level
between the quiet's floor and the sound's own: the first time it rises past it, the last time it is
above it. Pauses shorter than that are mostly stop closures and are left to the aligner.
"""

from __future__ import annotations

import numpy as np

from ..artifacts import Phone

HOP_S = 0.0025  # loudness every 2.5 ms
WINDOW_S = 0.010
REACH_S = 0.06  # an edge moves at most this far, and never past the middle of a neighbour
PAUSE_S = 0.3
FLOOR_AROUND_S = 1.0  # the quiet's floor is taken from this much sound either side of the edge
# Where between the floor (0) and the sound's loud part (1) its edge lies, in decibels: a sound
# fades out more slowly than it starts (on TIMIT, within 25 ms of the labels: starts 0.65 -> 0.79,
# ends 0.39 -> 0.49).
ONSET_LEVEL = 0.5
OFFSET_LEVEL = 0.6


def loudness_db(samples: np.ndarray, rate: int, first: int = 0, count: int | None = None) -> np.ndarray:
    """Mean power in decibels of a WINDOW_S window centred every HOP_S (frame k at k * HOP_S), frames
    first to first + count (all by default): only their samples are read, so an hour's edges cost no
    more each than a sentence's."""
    hop, width = max(int(round(HOP_S * rate)), 1), max(int(round(WINDOW_S * rate)), 1)
    stop = len(samples) if count is None else min(len(samples), (first + count) * hop)
    centres = np.arange(max(first, 0) * hop, stop, hop)
    if not centres.size:
        return np.zeros(0)
    lo = np.clip(centres - width // 2, 0, len(samples))
    hi = np.clip(centres + width // 2, 0, len(samples))
    part = np.asarray(samples[lo[0]:hi[-1]], dtype=np.float64)
    power = np.concatenate([[0.0], np.cumsum(part * part)])
    mean = (power[hi - lo[0]] - power[lo - lo[0]]) / np.maximum(hi - lo, 1)
    return 10 * np.log10(mean + 1e-10)


def snap_silence_edges(phones: list[Phone], samples: np.ndarray, rate: int) -> list[Phone]:
    """The phones with their recording-edge and long-pause silence boundaries moved onto the sound."""
    out = list(phones)
    if len(out) < 2 or not len(samples):
        return out
    last = len(out) - 1
    for i in range(1, len(out)):
        before, after = out[i - 1], out[i]
        if (before.label == "SIL") == (after.label == "SIL"):
            continue
        onset = before.label == "SIL"
        quiet, sound = (before, after) if onset else (after, before)
        at_end = (onset and i == 1) or (not onset and i == last)
        if not at_end and quiet.end_s - quiet.start_s < PAUSE_S:
            continue
        edge = after.start_s
        # the search keeps clear of the next boundaries, so no phone is emptied or reordered
        lo = max(edge - REACH_S, (before.start_s + before.end_s) / 2)
        hi = min(edge + REACH_S, (after.start_s + after.end_s) / 2)
        # the frames this edge reads: its neighbourhood and the whole sound beside it
        first = max(int(np.floor(min(edge - FLOOR_AROUND_S, sound.start_s) / HOP_S)), 0)
        stop = int(np.ceil(max(edge + FLOOR_AROUND_S, sound.end_s) / HOP_S))
        loud = loudness_db(samples, rate, first, stop - first + 1)
        times = (first + np.arange(len(loud))) * HOP_S
        near = np.flatnonzero((times >= lo) & (times <= hi))
        in_sound = (times >= sound.start_s) & (times < sound.end_s)
        around = np.abs(times - edge) <= FLOOR_AROUND_S
        if len(near) < 2 or not in_sound.any():
            continue
        floor = np.percentile(loud[around], 5)
        peak = np.percentile(loud[in_sound], 90)
        if peak - floor < 6.0:  # no sound stands out of the quiet here: nothing to go by
            continue
        level = floor + (ONSET_LEVEL if onset else OFFSET_LEVEL) * (peak - floor)
        above = np.flatnonzero(loud[near] >= level)
        if not above.size:
            continue
        moved = float(times[near[above[0]]] if onset else min(times[near[above[-1]]] + HOP_S, hi))
        out[i - 1] = Phone(before.label, before.start_s, moved)
        out[i] = Phone(after.label, moved, after.end_s)
    return out
