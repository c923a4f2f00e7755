"""espeak-ng as the offline voice of every language it knows, timed by its own phoneme events.

The library (Debian's libespeak-ng1, installed with espeak-ng) is driven through its C API: a
synchronous synthesis whose callback receives the audio and, for each phoneme, an event with its
IPA and its sample position, so the speech carries native phone timings like Piper's. Mandarin is
spoken from pinyin with tone numbers (pypinyin, whose phrase dictionary settles most polyphonic
characters) by the cmn-latn-pinyin voice: the cmn voice reads many Hanzi wrongly. Japanese is spoken
from the kana of its reading (OpenJTalk's dictionary): espeak-ng reads kana only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re

import numpy as np

from ..artifacts import Speech
from ..config import TtsConfig
from ..jobs.progress import Meter, no_meter
from ..errors import InputError, ModelMissingError, UsageError
from .speech_join import join_speech, metered

_SYNCHRONOUS = 2  # AUDIO_OUTPUT_SYNCHRONOUS: samples come to the callback
_PHONEME_EVENTS, _PHONEME_IPA, _DONT_EXIT = 0x0001, 0x0002, 0x8000
_EVENT_END, _EVENT_WORD, _EVENT_PHONEME = 0, 1, 7
_POS_CHARACTER, _CHARS_UTF8 = 1, 1
_IPA_OUTPUT = 0x02  # espeak_TextToPhonemes: IPA instead of espeak's own phoneme names
# Languages whose espeak-ng voice is not named by the language's code
VOICES = {"zh": "cmn-latn-pinyin"}
ENGLISH = "en-us"  # the voice of English words inside a text of another script


class _Id(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class _Event(ctypes.Structure):  # espeak_EVENT in speak_lib.h
    _fields_ = [("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint), ("text_position", ctypes.c_int),
                ("length", ctypes.c_int), ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                ("user_data", ctypes.c_void_p), ("id", _Id)]


_Callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))
_library = None  # the library keeps one global state per process: initialised once


def voice_for(language: str) -> str:
    return VOICES.get(language, language)


def _espeak():
    """The library, initialised for synchronous synthesis with IPA phoneme events; its sample rate."""
    global _library
    if _library is None:
        name = ctypes.util.find_library("espeak-ng") or "libespeak-ng.so.1"
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            raise ModelMissingError("the espeak-ng library is not installed; run: apt-get install espeak-ng") from None
        lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
        lib.espeak_TextToPhonemes.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_int]
        rate = lib.espeak_Initialize(_SYNCHRONOUS, 0, None, _PHONEME_EVENTS | _PHONEME_IPA | _DONT_EXIT)
        if rate <= 0:
            raise ModelMissingError("espeak-ng could not start (its data folder is missing); reinstall espeak-ng")
        _library = (lib, rate)
    return _library


def pronounce(text: str, language: str) -> list[str]:
    """A word's phones (ARPAbet) in the language, from espeak-ng's rules (espeak_TextToPhonemes, IPA)."""
    from ..aligners.phonemes import ipa_labels

    return ipa_labels(list(ipa_of(text, voice_for(language))))


def ipa_of(text: str, voice: str) -> str:
    """The text's pronunciation by espeak-ng's rules for the voice, as IPA sounds (no stress marks);
    "" for a voice espeak-ng does not have."""
    lib, _ = _espeak()
    if lib.espeak_SetVoiceByName(voice.encode()) != 0:
        return ""
    source = ctypes.create_string_buffer(spelled_for(voice, text).encode())
    cursor = ctypes.c_void_p(ctypes.addressof(source))
    ipa = []
    while cursor.value:  # one clause at a time; the cursor moves on, and is NULL at the end
        clause = lib.espeak_TextToPhonemes(ctypes.byref(cursor), _CHARS_UTF8, _IPA_OUTPUT)
        if not clause:
            break
        ipa.append(clause.decode("utf-8", "replace"))
    return _sounds(" ".join(ipa), voice)


def spelled_for(voice: str, text: str) -> str:
    """The text as the voice reads it right: Mandarin as pinyin, Japanese as the kana of its reading."""
    if voice == "cmn-latn-pinyin":
        return to_pinyin(text)
    if voice == "ja":
        return to_kana(text)
    return text


def to_kana(text: str) -> str:
    """Japanese -> the katakana of how it is said, from OpenJTalk's dictionary (pyopenjtalk-plus):
    kanji read in context (今日は -> キョーワ), the particles は and へ said wa and e. espeak-ng's own
    Japanese reads kana only, letter by letter, and spells each kanji out as "Chinese letter"."""
    try:
        import pyopenjtalk
    except ImportError:
        raise ModelMissingError("Japanese needs pyopenjtalk-plus (OpenJTalk's reading of kanji); "
                                "run: pip install pyopenjtalk-plus") from None
    return pyopenjtalk.g2p(text, kana=True)


def to_pinyin(text: str) -> str:
    """Hanzi -> pinyin syllables with tone numbers (neutral tone 5), as mandarin.py reads them: numbers
    as said (espeak-ng read 2019年 as èr qiān shí jiǔ nián and the % of 50% in English), polyphones in
    context."""
    from .mandarin import to_pinyin as reading

    return reading(text)


class EspeakTts:
    name = "espeak-ng"

    def __init__(self, config: TtsConfig, language: str = "en"):
        self.config = config
        self.meter: Meter = no_meter  # how far the speaking has come (progress.py)
        self.language = language
        self.voice = config.voice if config.backend == "espeak" and config.voice else voice_for(language)
        self.model_path = f"espeak-ng voice {self.voice}"
        self.speaks = self.voice.split("-")[0] if self.voice != "cmn-latn-pinyin" else "zh"

    def locate(self) -> None:
        lib, _ = _espeak()
        if lib.espeak_SetVoiceByName(self.voice.encode()) != 0:  # a language or voice name it does not know
            raise UsageError(f"espeak-ng has no voice {self.voice!r} (for language {self.language}); pass a "
                             "language code it knows (espeak-ng --voices lists them)")

    def check_language(self, text: str, language: str = "") -> None:
        from ..language import check_voice_speaks, without_latin_words

        # Latin words are spoken by the English voice
        check_voice_speaks(without_latin_words(text, self.speaks), self.speaks, f"espeak-ng {self.voice}", language)

    def load(self) -> None:
        self.locate()

    def synthesize(self, text: str) -> Speech:
        """The text in the voice's language; Latin words inside a text of another script (English
        words in Chinese) are English, spoken by espeak-ng's English voice in their place."""
        runs = self.runs(text)
        pieces = list(metered((self._speak(voice, run) for voice, run in runs), len(runs), self.meter))
        if not any(symbols for _, symbols in pieces):
            raise InputError("the text has nothing to say (no speakable words); pass words to speak")
        return join_speech(pieces, _espeak()[1], self.config)

    def runs(self, text: str) -> list[tuple[str, str]]:
        """(voice, text) in the text's order: Latin runs go to English where the language is not
        written in Latin letters; the rest to the language's own voice."""
        from ..language import LATIN_RUN, written_in_latin

        if written_in_latin(self.speaks):
            return [(self.voice, text)]
        parts = [p for p in LATIN_RUN.split(text) if p.strip()]
        return [(ENGLISH if LATIN_RUN.fullmatch(p) else self.voice, p) for p in parts] or [(self.voice, text)]

    def _speak(self, voice: str, text: str) -> tuple[np.ndarray, list[tuple[str, float]]]:
        """One synthesis call: its samples and its (IPA code point, seconds) timings."""
        lib, rate = _espeak()
        lib.espeak_SetVoiceByName(voice.encode())
        lib.espeak_SetParameter(1, int(round(175 / self.config.length_scale)), 0)  # espeakRATE, words a minute
        spoken = spelled_for(voice, text)
        chunks, marks = [], []  # marks: (sample, IPA or " " at a word start)

        def on_audio(wav, count, events):
            if wav and count > 0:
                chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).astype(np.float32) / 32768.0)
            i = 0
            while events[i].type != _EVENT_END:
                event = events[i]
                if event.type == _EVENT_WORD:
                    marks.append((event.sample, " "))
                elif event.type == _EVENT_PHONEME:
                    marks.append((event.sample, bytes(event.id.string).split(b"\0")[0].decode("utf-8", "replace")))
                i += 1
            return 0

        callback = _Callback(on_audio)  # referenced until synthesis returns
        lib.espeak_SetSynthCallback(callback)
        data = spoken.encode("utf-8")
        if lib.espeak_Synth(data, len(data) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None) != 0:
            raise UsageError(f"espeak-ng could not speak the text with the voice {voice}")
        samples = np.concatenate(chunks) if chunks else np.zeros(0, np.float32)
        if not any(ipa.strip() for _, ipa in marks):
            return samples, []
        return samples, _symbols(marks, samples, rate, voice)

    def unload(self) -> None:
        pass


def _sounds(ipa: str, voice: str = "") -> str:
    """espeak-ng's IPA as sounds only: its retroflex spelling "s." made IPA, its Mandarin aspiration
    (written "h": Mandarin's own h is "χ") made the diacritic it is, so "th" is one aspirated t and not
    t then h; stress, syllable marks and tone numbers left out."""
    ipa = re.sub(r"([sz])\.", lambda m: {"s": "ʂ", "z": "ʐ"}[m.group(1)], ipa)
    if voice.startswith("cmn"):
        ipa = ipa.replace("h", "ʰ")
    return re.sub(r"[ˈˌ.'\d]", "", ipa)


_PAUSE_LEVEL = 0.01  # an unnamed event 40 dB under the utterance's loudness is silence (espeak-ng's are digital silence)


def _symbols(marks: list[tuple[int, str]], samples: np.ndarray, rate: int, voice: str = "") -> list[tuple[str, float]]:
    """Phoneme events -> one (IPA code point, seconds) per code point, the event's time shared among
    its code points; a word's start is a space (no pause unless one is there). An event with no IPA
    is a pause ("_") where espeak-ng is silent; where it is not (Mandarin tones, a Spanish hiatus, a
    Russian soft sign's glide), its time lengthens the sound before it."""
    rms = lambda part: float(np.sqrt(np.mean(part ** 2))) if len(part) else 0.0  # noqa: E731
    loudness = rms(samples)
    symbols = []
    for (start, ipa), (end, _) in zip(marks, marks[1:] + [(len(samples), "")]):
        seconds = max(end - start, 0) / rate
        silent = end > start and rms(samples[start:end]) < _PAUSE_LEVEL * loudness
        points = list(_sounds(ipa, voice)) or ["_" if silent else "ː"]
        symbols += [(point, seconds / len(points)) for point in points]
    lead = marks[0][0] / rate if marks else 0.0
    return ([(" ", lead)] if lead > 0 else []) + symbols
