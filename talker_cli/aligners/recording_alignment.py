"""Alignment of a recording that ends in a result for any speech in it.

The recording is cut into spans at pauses between the ASR's words, none longer than MAX_SPAN_S,
so memory stays flat and time grows linearly with length. Each span goes down a chain until one
path serves it, and the track says which path served which span:

  forced      the span's words force-aligned to its audio: by pocketsphinx in English, by warping a
              synthesis of the words onto it in other languages (on failure the span is cut in two
              at its widest pause and each half tried again)
  recognized  a word that still fails: the phones heard in its audio, with no transcript
  anchored    nothing heard either: the word's pronunciation spread over the ASR's timing of it

A pause the forced path leaves inside speech is listened to as well: where the phone recognizer hears
a vowel in it as loud as the recording's own vowels, the ASR dropped a word there ("place blue [at] v
three soon") or the forced path squeezed a word into the wrong place, and the phones heard stand in
for it (recognized), so the mouth speaks where the voice does instead of resting shut.

The engine does the acoustic work (alignment.PocketsphinxAligner, alignment.EspeakWarpAligner); this
module only decides spans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..artifacts import AlignedSpan, Phone, PhoneTrack, Speech, Word
from ..audio_io import level_dbfs
from ..errors import InputError
from .phonemes import VOWELS, merge_adjacent
from .speech_edges import snap_silence_edges

MAX_SPAN_S = 20.0  # the longest stretch aligned at once
MIN_SPLIT_S = 0.1  # a failed span is not cut into pieces shorter than this
# An inner pause is listened to from this length; a vowel heard in it counts when it is within
# UNHEARD_VOWEL_DB of the recording's median vowel. Vowels the recognizer finds in breath, lip
# noise or room noise are 20-40 dB quieter than the speech's; those of a dropped word within 10.
MIN_UNHEARD_S = 0.08
UNHEARD_VOWEL_DB = 15.0


class AlignmentFailed(Exception):
    """The engine found no path through a span's words; the chain tries a smaller span."""


class SpanEngine(Protocol):
    def dictionary_words(self, text: str) -> list[str]: ...

    def pronounce(self, word: str) -> list[str]: ...

    def force(self, samples: np.ndarray, words: list[str], offset_s: float) -> tuple[list[Phone], list[Word]]: ...

    def recognize(self, samples: np.ndarray, offset_s: float) -> list[Phone]: ...


@dataclass(frozen=True)
class Span:
    start_s: float
    end_s: float
    words: tuple[Word, ...]  # the words said in it, timed by the ASR (0, 0 when untimed)

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


def anchor_words(engine: SpanEngine, text: str, anchors: tuple[Word, ...]) -> tuple[Word, ...]:
    """The ASR's words as the engine's dictionary words, keeping their times; the text's words,
    untimed, when there are no anchors."""
    if not anchors:
        return tuple(Word(token, 0.0, 0.0) for token in engine.dictionary_words(text))
    return tuple(Word(token, w.start_s, w.end_s) for w in anchors for token in engine.dictionary_words(w.text))


def timed(span: Span) -> bool:
    return any(w.end_s > 0 for w in span.words)


def bisect(span: Span) -> tuple[Span, Span]:
    """Cut a span of two or more timed words at its widest pause, preferring the middle of it."""
    words = span.words
    middle = (span.start_s + span.end_s) / 2

    def score(i: int) -> float:
        gap = words[i + 1].start_s - words[i].end_s
        cut = (words[i].end_s + words[i + 1].start_s) / 2
        return gap - abs(cut - middle) / max(span.duration_s, 1e-6)  # a pause, and not at an edge

    i = max(range(len(words) - 1), key=score)
    cut = min(max((words[i].end_s + max(words[i + 1].start_s, words[i].end_s)) / 2, span.start_s), span.end_s)
    return Span(span.start_s, cut, words[: i + 1]), Span(cut, span.end_s, words[i + 1:])


def plan_spans(words: tuple[Word, ...], duration_s: float, max_span_s: float = MAX_SPAN_S) -> list[Span]:
    """The whole recording as consecutive spans of at most max_span_s, cut between words."""
    pending, spans = [Span(0.0, duration_s, words)], []
    while pending:
        span = pending.pop()
        if span.duration_s > max_span_s and len(span.words) > 1 and timed(span):
            first, second = bisect(span)
            pending += [second, first]
        else:
            spans.append(span)
    return spans


def spread_pronunciation(engine: SpanEngine, word: Word) -> list[Phone]:
    """A word's phones over its ASR timing, vowels held twice as long as consonants."""
    labels = engine.pronounce(word.text)
    if not labels or word.end_s <= word.start_s:
        return []
    weights = np.array([2.0 if label in VOWELS else 1.0 for label in labels])
    edges = word.start_s + np.concatenate([[0.0], np.cumsum(weights)]) / weights.sum() * (word.end_s - word.start_s)
    return [Phone(label, float(a), float(b)) for label, a, b in zip(labels, edges[:-1], edges[1:])]


class _Chain:
    def __init__(self, engine: SpanEngine, speech: Speech):
        self.engine = engine
        self.speech = speech
        self.phones: list[Phone] = []
        self.words: list[Word] = []
        self.served: list[AlignedSpan] = []

    def audio(self, start_s: float, end_s: float) -> np.ndarray:
        rate = self.speech.sample_rate
        return self.speech.samples[int(round(start_s * rate)):int(round(end_s * rate))]

    def keep(self, span: Span, source: str, phones: list[Phone], words: list[Word] | tuple[Word, ...]) -> None:
        clamp = lambda t: min(max(t, span.start_s), span.end_s)  # noqa: E731
        self.phones += [Phone(p.label, clamp(p.start_s), clamp(p.end_s)) for p in phones]
        self.words += [Word(w.text, clamp(w.start_s), clamp(w.end_s)) for w in words]
        if self.served and self.served[-1].source == source:  # one record for a run of one path
            span = Span(self.served[-1].start_s, span.end_s, ())
            self.served.pop()
        self.served.append(AlignedSpan(round(span.start_s, 3), round(span.end_s, 3), source))

    def serve(self, span: Span) -> None:
        if span.words:
            try:
                phones, words = self.engine.force(self.audio(span.start_s, span.end_s),
                                                  [w.text for w in span.words], span.start_s)
                return self.keep(span, "forced", phones, words or span.words)  # an engine that times no word keeps the ASR's
            except AlignmentFailed:
                halves = bisect(span) if len(span.words) > 1 and timed(span) else ()
                if halves and min(h.duration_s for h in halves) >= MIN_SPLIT_S:
                    self.serve(halves[0])
                    return self.serve(halves[1])
        heard = self.recognize(span)
        if any(p.label != "SIL" for p in heard):
            return self.keep(span, "recognized", heard, span.words)
        spread = [p for w in span.words for p in spread_pronunciation(self.engine, w)]
        self.keep(span, "anchored" if spread else "silence", spread, span.words)

    def hear_inner_pauses(self, phones: list[Phone]) -> list[Phone]:
        """The phones with every inner pause where a loud vowel is heard replaced by what is heard."""
        vowel_db = [level_dbfs(self.audio(p.start_s, p.end_s)) for p in phones if p.label in VOWELS]
        if not vowel_db:
            return phones
        median_db, out = float(np.median(vowel_db)), []
        for i, phone in enumerate(phones):
            inner = 0 < i < len(phones) - 1 and phone.label == "SIL"
            heard = self.recognize(Span(phone.start_s, phone.end_s, ())) \
                if inner and phone.end_s - phone.start_s >= MIN_UNHEARD_S else []
            if any(p.label in VOWELS and level_dbfs(self.audio(p.start_s, p.end_s)) >= median_db - UNHEARD_VOWEL_DB
                   for p in heard):
                out += [Phone(p.label, max(p.start_s, phone.start_s), min(p.end_s, phone.end_s)) for p in heard]
                self.mark(phone.start_s, phone.end_s, "recognized")
            else:
                out.append(phone)
        return [p for p in merge_adjacent(out) if p.end_s > p.start_s]

    def mark(self, start_s: float, end_s: float, source: str) -> None:
        """Record that `source` served start_s..end_s, inside what other paths served (a pause may
        straddle two of their records: spans are cut in pauses); equal neighbours join, as keep's do."""
        start_s, end_s = round(start_s, 3), round(end_s, 3)
        pieces = [AlignedSpan(r.start_s, min(r.end_s, start_s), r.source) for r in self.served if r.start_s < start_s]
        pieces.append(AlignedSpan(start_s, end_s, source))
        pieces += [AlignedSpan(max(r.start_s, end_s), r.end_s, r.source) for r in self.served if r.end_s > end_s]
        self.served = []
        for piece in pieces:
            if self.served and self.served[-1].source == piece.source:
                piece = AlignedSpan(self.served.pop().start_s, piece.end_s, piece.source)
            self.served.append(piece)

    def recognize(self, span: Span) -> list[Phone]:
        heard = []
        for start in np.arange(span.start_s, span.end_s, MAX_SPAN_S):
            end = min(start + MAX_SPAN_S, span.end_s)
            try:
                heard += self.engine.recognize(self.audio(start, end), float(start))
            except AlignmentFailed:
                continue
        return heard


def align_recording(speech: Speech, text: str, anchors: tuple[Word, ...], engine: SpanEngine) -> PhoneTrack:
    """Timed phones and words for a recording of `text`, whose words the ASR timed as `anchors`."""
    words = anchor_words(engine, text, anchors)
    chain = _Chain(engine, speech)
    for span in plan_spans(words, speech.duration_s):
        chain.serve(span)
    if not any(p.label in VOWELS for p in chain.phones):  # speech has vowels; a tone or a click does not
        if speech.origin == "recording":
            raise InputError("no speech was found in the recording (no vowel was heard); pass a recording of speech")
        raise InputError("no speech was found in the synthesized speech (no vowel was heard); check the TTS voice")
    phones = chain.hear_inner_pauses(merge_adjacent(sorted(chain.phones, key=lambda p: p.start_s)))
    phones = snap_silence_edges(phones, speech.samples, speech.sample_rate)
    return PhoneTrack(tuple(phones), tuple(chain.words), "pocketsphinx", tuple(chain.served))
