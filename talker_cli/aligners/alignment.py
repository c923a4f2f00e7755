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

import math
import re
from pathlib import Path
from typing import Protocol

import numpy as np

from ..artifacts import AlignedSpan, Phone, PhoneTrack, Speech, Word
from ..config import AlignmentConfig
from ..errors import InputError, ModelMissingError, UsageError
from .phonemes import arpabet_label, ipa_labels
from .recording_alignment import AlignmentFailed, align_recording

ALIGN_RATE = 16000
# Forced alignment analyses a frame every 5 ms (pocketsphinx's default is 10 ms; its models' 3-state
# phones then last at least 15 ms instead of 30): on TIMIT, boundaries within 25 ms 0.764 -> 0.796 and
# viseme frame agreement 0.739 -> 0.758 (bench/lipsync.py). Phone recognition keeps 10 ms frames, for
# which its phone language model was made.
ALIGN_FRAME_RATE = 200
RECOGNIZE_FRAME_RATE = 100
_WINDOW_S = 0.025625  # pocketsphinx's analysis window (410 samples at 16 kHz)
_MIN_SPAN_S = 0.05  # a few frames: less audio than this holds no phone


class Aligner(Protocol):
    name: str
    model_path: str

    def load(self) -> None: ...

    def align(self, speech: Speech, text: str, anchors: tuple[Word, ...] = ()) -> PhoneTrack: ...

    def unload(self) -> None: ...


# A word as it is said: a number with its currency sign, decimals, thousands, percent or ending ($5, 3.5,
# 1,500, 50%, 1990s, 10th), a sign said as a word (Whisper writes "50" and "%" as two words), or letters
# with an apostrophe, Latin letters only (espeak-ng's English reads 你好 as "Chinese letter"). Whisper
# writes numbers as digits; taken apart, "$5" and "50%" lost their "dollars" and "percent", whose
# sound then went to the words beside them or to a pause.
_LETTER = "a-z\u00df-\u00f6\u00f8-\u024f"
_TOKEN = re.compile(
    rf"[$€£¥]?\d+(?:[.,:]\d+)*(?:%|[{_LETTER}]+)?|[.,]\d+|[$€£¥%&@+#]|[{_LETTER}0-9]+(?:'[{_LETTER}]+)?")
_CURRENCY = {"$": "dollar", "€": "euro", "£": "pound", "¥": "yen"}
_YEAR = re.compile(r"(1[1-9]|20)(\d\d)(s?)")
_TIME = re.compile(r"(\d{1,2}):(\d\d)")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def said_as(token: str) -> list[str]:
    """How a token may be said, most likely first: "$5" as "5 dollars"; ".5" (Whisper writes 3.5 as
    "3" and ".5") as "point 5" or, the end of a time (9.30), as "30"; ",000" (8,000 cut in two) as
    "thousand", ",500" as "thousand 500"; "3:00" as "3 o'clock" or "3" and "3:05" as "3 oh 5"
    (espeak-ng says "three zero zero", "three zero five"); a four-digit number as a number and as a
    year ("1999": "19 99", "1800": "18 hundred"), but 2000-2009 as a number only."""
    if token[0] in _CURRENCY and len(token) > 1:
        unit = _CURRENCY[token[0]]
        return [f"{token[1:]} {unit}{'' if token[1:] == '1' or unit == 'yen' else 's'}"]
    if token[0] == ".":
        return [f"point {token[1:]}", token[1:]]
    if token[0] == ",":  # the thousands of a number Whisper cut in two: "8" ",000", "1" ",500"
        return [f"thousand {token[1:].lstrip('0')}".strip()]
    time = _TIME.fullmatch(token)
    if time and time[2] == "00":
        return [f"{time[1]} o'clock", time[1]]
    if time and time[2][0] == "0":
        return [f"{time[1]} oh {time[2][1]}"]
    year = _YEAR.fullmatch(token)
    if not year or (year[1] == "20" and year[2] < "10"):
        return [token]
    return [token, f"{year[1]} {'hundred' if year[2] == '00' else year[2]}{year[3]}"]


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

    def align(self, speech: Speech, text: str, anchors: tuple[Word, ...] = ()) -> PhoneTrack:
        if not speech.native_phones:
            raise UsageError("alignment.backend 'native' needs a TTS engine that reports phoneme timings")
        words = label_words(speech.native_words or (), text)
        spans = (AlignedSpan(0.0, round(speech.duration_s, 3), "tts-native"),)
        return PhoneTrack(phones=speech.native_phones, words=words, source="tts-native", spans=spans)

    def unload(self) -> None:
        pass


class PocketsphinxAligner:
    """Forced alignment and phone recognition with the en-us model shipped in the pocketsphinx wheel.

    `align` runs the recording chain (recording_alignment.py) over spans anchored on the ASR's
    words; `force` and `recognize` are the two things it can do with one span of audio.
    """

    name = "pocketsphinx"

    def __init__(self) -> None:
        self.decoder = None
        self.recognizer = None
        self.phonemizer = None
        self.model_path = ""

    def load(self) -> None:
        try:
            from pocketsphinx import Decoder, get_model_path
        except ImportError:
            raise ModelMissingError("pocketsphinx is not installed; run: pip install pocketsphinx") from None
        self.model_path = str(get_model_path("en-us"))
        # bestpath=False: the lattice best-path search after the word-level pass fails on about one
        # real utterance in eight ("Failed to stop utterance processing"); the Viterbi path it keeps
        # instead aligns as well.
        self.decoder = Decoder(lm=None, loglevel="FATAL", bestpath=False, frate=ALIGN_FRAME_RATE)

    def pronounce(self, word: str) -> list[str]:
        """ARPAbet of a word: the dictionary's, else espeak-ng's rules; [] when neither knows it."""
        known = self.decoder.lookup_word(word)
        if known is not None:
            return known.split()
        return self._rules(said_as(word)[0])

    def _rules(self, text: str) -> list[str]:
        if self.phonemizer is None:
            try:
                from piper.phonemize_espeak import EspeakPhonemizer
            except ImportError:
                return []
            self.phonemizer = EspeakPhonemizer()
        symbols = [s for sentence in self.phonemizer.phonemize("en-us", text) for s in sentence]
        return ipa_labels(symbols)

    def dictionary_words(self, text: str) -> list[str]:
        """The text's words the aligner can say, each added to the dictionary when it lacks them (with
        each way it may be said: the alignment takes the one heard)."""
        words = []
        for word in tokenize(text):
            if self.decoder.lookup_word(word) is None:
                readings = [phones for phones in map(self._rules, said_as(word)) if phones]
                if not readings:
                    continue
                for k, phones in enumerate(readings):
                    self.decoder.add_word(word if k == 0 else f"{word}({k + 1})", " ".join(phones), False)
            words.append(word)
        return words

    def align(self, speech: Speech, text: str, anchors: tuple[Word, ...] = ()) -> PhoneTrack:
        if speech.sample_rate != ALIGN_RATE:
            raise ValueError(f"the aligner needs {ALIGN_RATE} Hz audio, got {speech.sample_rate}")
        track = align_recording(speech, text, anchors, self)
        return PhoneTrack(track.phones, label_words(track.words, text), track.source, track.spans)

    def force(self, samples: np.ndarray, words: list[str], offset_s: float) -> tuple[list[Phone], list[Word]]:
        """Forced alignment of known words to one span of audio; AlignmentFailed when there is no path."""
        pcm = _pcm16(samples)
        try:
            self._word_pass(pcm, words)
            self.decoder.set_alignment()  # fails when that pass found no path through the words
            self._decode(self.decoder, pcm)  # phone-level pass
            alignment = self.decoder.get_alignment()
        except RuntimeError as error:
            raise AlignmentFailed(str(error)) from None
        if alignment is None:
            raise AlignmentFailed("no alignment")
        phones, spans = [], []
        for word in alignment:
            if not word.name.startswith(("<", "[")):
                start = _frame_time(word.start, offset_s, ALIGN_FRAME_RATE)
                end = _frame_time(word.start + word.duration, offset_s, ALIGN_FRAME_RATE)
                spans.append(Word(re.sub(r"\(\d+\)$", "", word.name), start, end))
            for phone in word:
                a = _frame_time(phone.start, offset_s, ALIGN_FRAME_RATE)
                b = _frame_time(phone.start + phone.duration, offset_s, ALIGN_FRAME_RATE)
                phones.append(Phone(arpabet_label(phone.name), a, b))
        return phones, spans

    def fit(self, samples: np.ndarray, text: str) -> float:
        """How well a text fits one span of audio: the score of pocketsphinx's best path through its
        words (log units, 0 at best; the same audio's readings compare by it); -inf when none."""
        words = self.dictionary_words(text)
        if not words:
            return -math.inf
        try:
            self._word_pass(_pcm16(samples), words)
        except (AlignmentFailed, RuntimeError):
            return -math.inf
        hypothesis = self.decoder.hyp()
        if hypothesis is None or hypothesis.score <= 0:
            return -math.inf
        return float(self.decoder.get_logmath().log(hypothesis.score))

    def recognize(self, samples: np.ndarray, offset_s: float) -> list[Phone]:
        """Phones heard in one span of audio, with no transcript (pocketsphinx's allphone mode)."""
        if self.recognizer is None:
            from pocketsphinx import Decoder

            phone_lm = str(Path(self.model_path).parent / "en-us-phone.lm.bin")
            self.recognizer = Decoder(allphone=phone_lm, lm=None, loglevel="FATAL", bestpath=False,
                                      frate=RECOGNIZE_FRAME_RATE)
        pcm = _pcm16(samples)
        try:
            self._decode(self.recognizer, pcm)
        except RuntimeError as error:
            raise AlignmentFailed(str(error)) from None
        at = lambda frame: _frame_time(frame, offset_s, RECOGNIZE_FRAME_RATE)  # noqa: E731
        return [Phone(arpabet_label(s.word), at(s.start_frame), at(s.end_frame + 1)) for s in self.recognizer.seg()]

    def _word_pass(self, pcm: bytes, words: list[str]) -> None:
        """pocketsphinx's search for the best path through these words (the first of forced alignment)."""
        self.decoder.set_align_text(" ".join(words))
        self._decode(self.decoder, pcm)

    @staticmethod
    def _decode(decoder, pcm: bytes) -> None:
        decoder.start_utt()
        decoder.process_raw(pcm, no_search=False, full_utt=True)
        decoder.end_utt()

    def unload(self) -> None:
        self.decoder = None
        self.recognizer = None
        self.phonemizer = None


def _pcm16(samples: np.ndarray) -> bytes:
    if len(samples) < _MIN_SPAN_S * ALIGN_RATE:
        raise AlignmentFailed(f"a span of {len(samples) / ALIGN_RATE:.3f} s is too short to align")
    return (np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()


def _frame_time(frame: int, offset_s: float, frame_rate: int) -> float:
    """A phone's first frame -> the time of the change it marks. Frame k's window starts at k hops and
    is _WINDOW_S long: a change between frames k-1 and k lies between their windows' centres,
    _WINDOW_S / 2 - hop / 2 after k hops (on TIMIT, the bias of the boundaries went -8.2 -> -0.4 ms)."""
    hop = 1.0 / frame_rate
    return offset_s + frame * hop + (_WINDOW_S - hop) / 2


class EspeakWarpAligner:
    """A recording in a language with no acoustic model here. Each span's words are spoken by
    espeak-ng in the language and its phone timings carried onto the recording by time warping
    (synthesis_alignment); a word that still cannot be timed gets its pronunciation spread over the
    ASR's timing of it (the recording chain's last path)."""

    name = "espeak-warp"

    def __init__(self, language: str):
        self.language = language
        self.model_path = f"espeak-ng voice for {language}"
        self.said = None  # Whisper's encoder, for the warp to match what is said

    def load(self) -> None:
        from ..config import TtsConfig
        from ..voices.espeak_tts import EspeakTts
        from ..listening.whisper_frames import WhisperFrames

        # Silence around the words, for the silence at a span's edges to be matched to (none: the
        # first and last sounds were stretched over it, 4 points fewer boundaries on real speech).
        self.voice = EspeakTts(TtsConfig(lead_silence_s=0.3, tail_silence_s=0.3), self.language)
        try:
            self.voice.load()
        except UsageError:  # a language espeak-ng has no voice for (Whisper heard one in noise): no warp
            self.voice = None
            return
        self.said = WhisperFrames()
        self.said.load()
        self.model_path = f"espeak-ng voice for {self.language}, matched with Whisper base's encoder"

    def dictionary_words(self, text: str) -> list[str]:
        # A number is a word: espeak-ng reads digits in the language (Whisper writes 10分, a las 8).
        return [text.strip()] if any(c.isalnum() for c in text) else []

    def pronounce(self, word: str) -> list[str]:
        from ..voices.espeak_tts import pronounce

        return pronounce(word, self.language)

    def force(self, samples: np.ndarray, words: list[str], offset_s: float) -> tuple[list[Phone], list[Word]]:
        """The words spoken by espeak-ng, its phone timings carried onto the span by time warping
        (synthesis_alignment). The words keep the ASR's times unless the voice timed each of them."""
        from ..audio_io import resample
        from ..language import join_words
        from .synthesis_alignment import MAX_WARP_S, RATE, align_to_synthesis

        if self.voice is None:
            raise AlignmentFailed(f"espeak-ng has no voice for {self.language}")
        if len(samples) > MAX_WARP_S * RATE:  # the warp's table grows with the square of the span
            raise AlignmentFailed(f"a span over {MAX_WARP_S:.0f} s is not warped whole")
        try:
            voice = self.voice.synthesize(join_words(words))
        except InputError as error:  # nothing speakable in these words
            raise AlignmentFailed(str(error)) from None
        timed = voice.native_words or ()
        labelled = tuple(Word(text, w.start_s, w.end_s) for text, w in zip(words, timed)) if len(timed) == len(words) else ()
        phones = voice.native_phones or ()  # its pauses too: a pause in the words is a rest of the mouth
        if not any(p.label != "SIL" for p in phones):
            raise AlignmentFailed(f"espeak-ng gave no phones for {' '.join(words)!r}")
        return align_to_synthesis(samples, resample(voice.samples, voice.sample_rate, RATE), phones, labelled, offset_s,
                                  self.said)

    def recognize(self, samples: np.ndarray, offset_s: float) -> list[Phone]:
        raise AlignmentFailed(f"no phone recognizer for {self.language}")

    def align(self, speech: Speech, text: str, anchors: tuple[Word, ...] = ()) -> PhoneTrack:
        try:
            track = align_recording(speech, text, anchors, self)
        except InputError as error:
            if self.voice is not None or not text.strip():
                raise
            from ..language import LANGUAGE_NAMES  # words in a language no voice here says, not noise

            heard = f"{LANGUAGE_NAMES[self.language]} ({self.language})" if self.language in LANGUAGE_NAMES else self.language
            raise InputError(f"no speech was found in the recording that talker can time: Whisper heard it as {heard}, "
                             "a language espeak-ng has no voice for (noise is often heard as one); if it is speech, "
                             "pass --language CODE") from error
        return PhoneTrack(track.phones, track.words, self.name, track.spans)

    def unload(self) -> None:
        if self.said is not None:
            self.said.unload()
        self.said = None


def make_aligner(config: AlignmentConfig, speech: Speech, language: str = "en") -> Aligner:
    backend = config.backend
    if backend == "auto" and not speech.native_phones and language != "en":
        return EspeakWarpAligner(language)
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
