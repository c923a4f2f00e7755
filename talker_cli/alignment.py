"""Phoneme alignment stage: speech + its text -> timed ARPAbet phones and words.

Backends:
  native       the TTS engine's own phoneme durations (Piper reports them per phoneme)
  pocketsphinx forced alignment of the known text with the en-us acoustic model and CMU
               dictionary shipped in the pocketsphinx wheel; words missing from the dictionary
               get pronunciations from espeak-ng (bundled with piper-tts)
  mfa          Montreal Forced Aligner with a local dictionary and acoustic model (mfa.py)
  auto         native when the speech carries timings, else pocketsphinx
"""

from __future__ import annotations

import re
from typing import Protocol

import numpy as np

from .artifacts import Phone, PhoneTrack, Speech, Word
from .config import AlignmentConfig
from .errors import InputError, ModelMissingError, UsageError
from .phonemes import arpabet_label, ipa_durations_to_phones, merge_adjacent

ALIGN_RATE = 16000
_FRAME_S = 0.01  # pocketsphinx reports times in 10 ms frames


class Aligner(Protocol):
    name: str
    model_path: str

    def load(self) -> None: ...

    def align(self, speech: Speech, text: str) -> PhoneTrack: ...

    def unload(self) -> None: ...


def tokenize(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower())


def label_words(spans: list[Word] | tuple[Word, ...], text: str) -> tuple[Word, ...]:
    """Give the script's words to word spans found in the audio, when the counts agree."""
    tokens = text.split()
    if len(tokens) == len(spans):
        return tuple(Word(token, w.start_s, w.end_s) for token, w in zip(tokens, spans))
    return tuple(spans)


class NativeAligner:
    """Uses the timings the TTS engine reported while it spoke."""

    name = "native"
    model_path = ""

    def load(self) -> None:
        pass

    def align(self, speech: Speech, text: str) -> PhoneTrack:
        if not speech.native_phones:
            raise UsageError("alignment.backend 'native' needs a TTS engine that reports phoneme timings")
        words = label_words(speech.native_words or (), text)
        return PhoneTrack(phones=speech.native_phones, words=words, source="tts-native")

    def unload(self) -> None:
        pass


class PocketsphinxAligner:
    name = "pocketsphinx"

    def __init__(self) -> None:
        self.decoder = None
        self.phonemizer = None
        self.model_path = ""

    def load(self) -> None:
        try:
            from pocketsphinx import Decoder, get_model_path
        except ImportError:
            raise ModelMissingError("pocketsphinx is not installed; run: pip install pocketsphinx") from None
        self.model_path = str(get_model_path("en-us"))
        self.decoder = Decoder(lm=None, loglevel="FATAL")

    def _pronounce(self, word: str) -> str | None:
        """ARPAbet for a word the dictionary lacks, from espeak-ng's rules."""
        if self.phonemizer is None:
            try:
                from piper.phonemize_espeak import EspeakPhonemizer
            except ImportError:
                return None
            self.phonemizer = EspeakPhonemizer()
        symbols = [s for sentence in self.phonemizer.phonemize("en-us", word) for s in sentence]
        phones, _ = ipa_durations_to_phones([(s, 0.01) for s in symbols])
        labels = [p.label for p in phones if p.label != "SIL"]
        return " ".join(labels) if labels else None

    def align(self, speech: Speech, text: str) -> PhoneTrack:
        if speech.sample_rate != ALIGN_RATE:
            raise ValueError(f"the aligner needs {ALIGN_RATE} Hz audio, got {speech.sample_rate}")
        words = []
        for word in tokenize(text):
            if self.decoder.lookup_word(word) is None:
                pronunciation = self._pronounce(word)
                if pronunciation is None:
                    continue
                self.decoder.add_word(word, pronunciation, False)
            words.append(word)
        if not words:
            raise InputError("the text has no words the aligner can pronounce; pass English text")
        pcm = (np.clip(speech.samples, -1, 1) * 32767).astype("<i2").tobytes()
        self.decoder.set_align_text(" ".join(words))
        self._decode(pcm)  # word-level pass
        unaligned = InputError("the speech could not be aligned to its text; check that the text matches the audio")
        try:
            self.decoder.set_alignment()  # fails when the word-level pass found no path through the text
        except RuntimeError:
            raise unaligned from None
        self._decode(pcm)  # phone-level pass
        alignment = self.decoder.get_alignment()
        if alignment is None:
            raise unaligned
        phones, spans = [], []
        for word in alignment:
            start = word.start * _FRAME_S
            end = (word.start + word.duration) * _FRAME_S
            if not word.name.startswith(("<", "[")):
                spans.append(Word(re.sub(r"\(\d+\)$", "", word.name), start, end))
            for phone in word:
                a = phone.start * _FRAME_S
                phones.append(Phone(arpabet_label(phone.name), a, a + phone.duration * _FRAME_S))
        return PhoneTrack(phones=tuple(merge_adjacent(phones)), words=label_words(spans, text), source="pocketsphinx")

    def _decode(self, pcm: bytes) -> None:
        self.decoder.start_utt()
        self.decoder.process_raw(pcm, no_search=False, full_utt=True)
        self.decoder.end_utt()

    def unload(self) -> None:
        self.decoder = None
        self.phonemizer = None


def make_aligner(config: AlignmentConfig, speech: Speech) -> Aligner:
    backend = config.backend
    if backend == "auto":
        backend = "native" if speech.native_phones else "pocketsphinx"
    if backend == "native":
        return NativeAligner()
    if backend == "pocketsphinx":
        return PocketsphinxAligner()
    if backend == "mfa":
        from .mfa import MfaAligner

        return MfaAligner(config.mfa_dictionary, config.mfa_acoustic_model)
    raise UsageError(f"unknown alignment backend '{config.backend}'; choose one of: auto, native, pocketsphinx, mfa")
