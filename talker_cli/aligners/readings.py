"""Of two readings of one recording (two ASR models' transcripts), the words that fit its sound best.

Whisper's small models mishear short, unusual sentences ("bin blue at f three soon" as "Bimplo
every soon"), and the mouth then follows phones that were never said. Where a second model reads
the recording differently, both readings are fitted to the audio by the aligner's acoustic model,
stretch by stretch (the first reading's words cut into stretches of at most MAX_SPAN_S at its widest
pauses, each word of the second going to the stretch its middle falls in), and each stretch keeps
the reading that fits best. Nothing is invented: every word is one of the two models'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..artifacts import Transcript, Word
from .alignment import tokenize
from .recording_alignment import plan_spans

Fit = Callable[[np.ndarray, str], float]  # how well a text fits a stretch of audio (higher is better)


@dataclass(frozen=True)
class Choice:
    transcript: Transcript
    stretches: int  # stretches where the readings differ
    taken: int  # of those, where the second reading fitted better


def _said(words: list[Word]) -> str:
    return " ".join(w.text for w in words)


def better_reading(samples: np.ndarray, rate: int, first: Transcript, second: Transcript, fit: Fit) -> Choice:
    """`first`, with each stretch where `second` reads differently and fits the audio better
    replaced by `second`'s words there."""
    duration_s = len(samples) / rate
    if not first.words or not second.words:
        return Choice(first, 0, 0)
    words, stretches, taken = [], 0, 0
    spans = plan_spans(first.words, duration_s)  # consecutive, from 0 to the end
    middles = [(w.start_s + w.end_s) / 2 for w in second.words]
    stretch_of = np.searchsorted([span.end_s for span in spans[:-1]], middles, side="right")
    for i, span in enumerate(spans):
        own = list(span.words)
        rival = [w for w, k in zip(second.words, stretch_of) if k == i]
        if tokenize(_said(own)) == tokenize(_said(rival)):  # the same words to the aligner
            words += own
            continue
        stretches += 1
        audio = samples[int(span.start_s * rate):int(np.ceil(span.end_s * rate))]
        if rival and fit(audio, _said(rival)) > fit(audio, _said(own)):
            words += rival
            taken += 1
        else:
            words += own
    if not taken:
        return Choice(first, stretches, 0)
    return Choice(Transcript(_said(words), tuple(words), first.language, first.no_speech_prob), stretches, taken)
