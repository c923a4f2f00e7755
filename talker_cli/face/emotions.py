"""Emotions: `[happy]`-style tags in a script, their times in the speech, and per-frame weights.

A tag names one of EMOTIONS in square brackets and holds from where it stands until the next tag;
the job's emotion (--emotion) holds before the first. Only these names are tags: any other text in
brackets is spoken as written. Emotions blend into each other over BLEND_S.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where it is used: the config reads EMOTIONS on every start
    import numpy as np

    from ..artifacts import Word

EMOTIONS = ("neutral", "happy", "sad", "angry", "surprised")
BLEND_S = 0.3  # an emotion takes this long to replace the one before
_TAG = re.compile(r"\[\s*(" + "|".join(EMOTIONS) + r")\s*\]", re.IGNORECASE)


def split_tags(text: str) -> tuple[str, tuple[tuple[int, str], ...]]:
    """The text to speak without its emotion tags (the spaces around them folded), and each tag as
    (offset in that text of the first character after it, emotion)."""
    spoken: list[str] = []
    marks: list[tuple[int, str]] = []
    last = 0
    for match in _TAG.finditer(text):
        _append_folded(spoken, text[last:match.start()])
        marks.append((len("".join(spoken)), match.group(1).lower()))
        last = match.end()
    _append_folded(spoken, text[last:])
    clean = "".join(spoken).rstrip()
    return clean, tuple((min(offset, len(clean)), emotion) for offset, emotion in marks)


def _append_folded(spoken: list[str], piece: str) -> None:
    """Add text where a tag was removed: no leading space, and no double space across the gap."""
    so_far = "".join(spoken)
    if not so_far or so_far[-1] in " \t\n":
        piece = piece.lstrip(" \t")
    spoken.append(piece)


def mark_times(marks: Sequence[tuple[int, str]], text: str, words: Sequence[Word]) -> list[tuple[float, str]]:
    """Each tag's time: the start of the first word after it. Text written without spaces, or words
    that do not match the text's, are placed by their share of the characters over the spoken span."""
    from bisect import bisect_left

    leading = [(0.0, emotion) for offset, emotion in marks if offset == 0]  # the text starts with it: from the start
    marks = [(offset, emotion) for offset, emotion in marks if offset > 0]
    if not marks or not words:
        return leading
    starts = [m.start() for m in re.finditer(r"\S+", text)]  # each word's offset in the text
    if len(starts) == len(words) and len(starts) > 1:
        times = []
        for offset, emotion in marks:
            index = bisect_left(starts, offset)
            times.append((words[index].start_s if index < len(words) else words[-1].end_s, emotion))
        return leading + times
    first, last = words[0].start_s, words[-1].end_s
    share = lambda offset: offset / max(len(text), 1)  # noqa: E731
    return leading + [(first + (last - first) * share(offset), emotion) for offset, emotion in marks]


def emotion_weights(changes: Sequence[tuple[float, str]], initial: str, n_frames: int, fps: int) -> np.ndarray:
    """frames x len(EMOTIONS) weights summing to 1: `initial` from the start, each change from its
    time on, crossfaded linearly over BLEND_S centred on the change; a change at 0 s replaces `initial`."""
    import numpy as np

    t = (np.arange(n_frames) + 0.5) / fps
    for time_s, emotion in changes:
        if time_s <= 0:
            initial = emotion
    weights = np.zeros((n_frames, len(EMOTIONS)), dtype=np.float32)
    weights[:, EMOTIONS.index(initial)] = 1.0
    for time_s, emotion in sorted(c for c in changes if c[0] > 0):
        ramp = np.clip((t - time_s) / BLEND_S + 0.5, 0.0, 1.0).astype(np.float32)[:, None]
        target = np.zeros(len(EMOTIONS), dtype=np.float32)
        target[EMOTIONS.index(emotion)] = 1.0
        weights = weights * (1 - ramp) + target * ramp
    return weights
