"""A TTS engine's pieces of speech joined into one Speech, with the engine's own phone timings.

Engines speak a sentence or a segment at a time; each piece comes with its IPA symbols and the
seconds each took (Piper's alignments, VITS's durations), or None when the engine has no timings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from ..artifacts import Phone, Speech, Word
from ..config import TtsConfig
from ..errors import InputError
from ..aligners.phonemes import ipa_durations_to_phones
from ..jobs.progress import Meter

Piece = tuple[np.ndarray, "list[tuple[str, float]] | None"]


def metered(pieces: Iterable[Piece], total: int, meter: Meter) -> Iterator[Piece]:
    """The pieces as the engine makes them, each reported done: how far the speaking has come."""
    meter("speak", 0, total, "parts")
    for done, piece in enumerate(pieces, 1):
        yield piece
        meter("speak", done, total, "parts")


def join_speech(pieces: Iterable[Piece], rate: int, config: TtsConfig, pause_s: float = 0.0) -> Speech:
    """Lead silence, the pieces (pause_s of silence between them), tail silence. Native phones and
    words when the pieces' timings gave any phone; pauses are silent phones."""
    silence = lambda seconds: np.zeros(int(seconds * rate), dtype=np.float32)  # noqa: E731
    audio, phones, word_spans, timed = [silence(config.lead_silence_s)], [], [], False
    t = len(audio[0]) / rate
    for i, (samples, symbols) in enumerate(pieces):
        if i and pause_s:
            audio.append(silence(pause_s))
            phones.append(Phone("SIL", t, t + len(audio[-1]) / rate))
            t += len(audio[-1]) / rate
        if symbols:
            piece_phones, spans = ipa_durations_to_phones(symbols, start_s=t)
            phones += piece_phones
            word_spans += spans
            timed = timed or bool(piece_phones)
        audio.append(samples)
        t += len(samples) / rate
    if len(audio) == 1:
        raise InputError("the text has nothing to say (no speakable words); pass words to speak")
    audio.append(silence(config.tail_silence_s))
    words = tuple(Word("", a, b) for a, b in word_spans)  # labelled from the script later
    return Speech(samples=np.concatenate(audio), sample_rate=rate, origin="tts",
                  native_phones=tuple(phones) if timed else None, native_words=words if timed and words else None)
