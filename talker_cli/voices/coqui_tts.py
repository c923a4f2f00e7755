"""Coqui TTS backend (the coqui-tts package): end-to-end VITS-family models from a local folder.

A model folder holds config.json and a checkpoint (.pth), with speakers.pth / speakers.json /
speaker_ids.json beside them for multi-speaker models; a Coqui model name (tts_models/en/vctk/vits)
is looked up where Coqui keeps its downloads ($TTS_HOME, else $XDG_DATA_HOME/tts, else
~/.local/share/tts). Nothing is downloaded.

Long text is split at sentence boundaries (pysbd, then at commas or spaces past MAX_SEGMENT_CHARS)
and synthesized one segment at a time, so memory follows the longest segment, not the text. VITS
reports how many frames each input token took; for phoneme models that is the engine's own phone
timing, passed on like Piper's.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

import numpy as np

from ..artifacts import Speech
from ..config import TtsConfig
from ..jobs.progress import Meter, no_meter
from ..errors import ModelMissingError, UsageError
from ..gpu.model_specs import read_checkpoint_shapes
from ..offline import coqui_home
from .speech_join import join_speech, metered

log = logging.getLogger(__name__)

INSTALL = "pip install 'talker[coqui]'"
MAX_SEGMENT_CHARS = 300  # about 20 s of speech: bounds the waveform decoder's activations
SENTENCE_PAUSE_S = 0.2
CHECKPOINT_NAMES = ("model.pth", "model_file.pth", "best_model.pth", "model_file.pth.tar")
SPEAKER_FILES = ("speakers.pth", "speakers.json", "speaker_ids.json")
SPECIAL_TOKENS = ("<BLNK>", "<PAD>", "<BOS>", "<EOS>")


def resolve_model_folder(name: str) -> Path:
    """A folder path as given, or a Coqui model name as its download folder."""
    if not name:
        raise ModelMissingError("the coqui TTS backend needs a model: pass --tts-model DIR (config.json + checkpoint)")
    if name.startswith("tts_models/"):
        return coqui_home() / name.replace("/", "--")
    return Path(name).expanduser()


def model_files(name: str) -> tuple[Path, Path]:
    """The model folder and its checkpoint, or an error naming where it looked and the flag."""
    folder = resolve_model_folder(name)
    if not (folder / "config.json").is_file():
        raise ModelMissingError(f"Coqui TTS model not found at {folder} (needs config.json); pass --tts-model DIR")
    return folder, checkpoint_in(folder)


def checkpoint_in(folder: Path) -> Path:
    for name in CHECKPOINT_NAMES:
        if (folder / name).is_file():
            return folder / name
    found = sorted(folder.glob("*.pth"))
    found = [p for p in found if p.name not in SPEAKER_FILES]
    if not found:
        raise ModelMissingError(f"no Coqui checkpoint (*.pth) in {folder}; pass --tts-model DIR")
    return found[-1]


def speaker_table(folder: Path) -> dict[str, int] | None:
    """A multi-speaker model's speaker names and ids, read from its speakers file."""
    for name in SPEAKER_FILES:
        path = folder / name
        if path.is_file():
            table = json.loads(path.read_text()) if path.suffix == ".json" else read_checkpoint_shapes(path)
            if table and all(isinstance(v, dict) for v in table.values()):  # d-vectors: clip -> {name, ...}
                table = {n: i for i, n in enumerate(sorted({v["name"] for v in table.values()}))}
            return table
    return None


def chosen_speaker(names: dict[str, int] | None, config: TtsConfig, folder: Path) -> int | None:
    """The speaker id asked for by name or number; None for a single-speaker model."""
    if not names:
        return None
    wanted = config.speaker_name
    if wanted:
        if wanted not in names:
            raise UsageError(f"speaker '{wanted}' is not in {folder}; it has: {', '.join(sorted(names)[:20])}")
        return names[wanted]
    if config.speaker not in names.values():
        raise UsageError(f"speaker {config.speaker} is not in {folder}; it has ids 0..{len(names) - 1}")
    return config.speaker


def split_segments(text: str, max_chars: int = MAX_SEGMENT_CHARS) -> list[str]:
    """Sentences, with any sentence over max_chars cut at its last comma or space that fits."""
    import pysbd

    segments = []
    for sentence in pysbd.Segmenter(language="en", clean=False).segment(text):
        rest = " ".join(sentence.split())
        while len(rest) > max_chars:
            head = rest[:max_chars]
            cut = max(head.rfind(", "), head.rfind("; "))
            cut = cut + 1 if cut > max_chars // 3 else head.rfind(" ")
            cut = cut if cut > 0 else max_chars
            segments.append(rest[:cut].strip())
            rest = rest[cut:].strip()
        if re.search(r"\w", rest):
            segments.append(rest)
    return segments


def merge_special_tokens(symbols: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Blank/pad/BOS/EOS tokens carry time but no sound of their own: give it to the symbol before
    (or, at the start, after), so IPA pairs split by interspersed blanks read as pairs again."""
    merged: list[tuple[str, float]] = []
    carry = 0.0
    for symbol, duration in symbols:
        if symbol in SPECIAL_TOKENS:
            if merged:
                merged[-1] = (merged[-1][0], merged[-1][1] + duration)
            else:
                carry += duration
            continue
        merged.append((symbol, duration + carry))
        carry = 0.0
    return merged


class CoquiTts:
    name = "coqui"

    def __init__(self, config: TtsConfig):
        self.config = config
        self.meter: Meter = no_meter  # how far the speaking has come (progress.py)
        self.folder = resolve_model_folder(config.voice)
        self.model_path = str(self.folder)
        self.model = None
        self.model_config = None

    def locate(self) -> None:
        """The files and the speaker, checked without loading the model: refused before any work."""
        folder, _ = model_files(self.config.voice)
        chosen_speaker(speaker_table(folder), self.config, folder)

    def languages(self) -> list[str]:
        """The languages this voice speaks (ISO 639-1), read from its config.json without loading it:
        its datasets' languages, its phonemizer's language, or its Coqui model name
        (tts_models/LANG/...); English when it names none, as Coqui's English voices do."""
        try:
            config = json.loads((self.folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ModelMissingError(f"Coqui model {self.folder}: config.json cannot be read ({error})") from None
        named = [d.get("language") for d in config.get("datasets") or [] if isinstance(d, dict)]
        named.append(config.get("phoneme_language"))
        parts = self.config.voice.split("/")
        if len(parts) > 2 and parts[0] == "tts_models":
            named.append(parts[1])
        codes: list[str] = []
        for value in named:
            code = str(value or "").replace("_", "-").split("-")[0].lower()
            if 2 <= len(code) <= 3 and code not in codes:  # "multilingual" is not a language
                codes.append(code)
        return codes or ["en"]

    def check_language(self, text: str, language: str = "") -> None:
        """The job's language is one this voice speaks, and the text is written in its script."""
        from ..language import check_voice_speaks

        speaks = self.languages()
        check_voice_speaks(text, language if language in speaks else speaks[0], self.folder.name, language)

    def load(self) -> None:
        folder, checkpoint = model_files(self.config.voice)
        try:
            import torch
            from TTS.config import load_config
            from TTS.tts.models import setup_model
        except (ImportError, OSError) as error:  # OSError: a torchaudio built for another torch
            raise ModelMissingError(f"coqui-tts cannot be loaded ({error}); run: {INSTALL} "
                                    "with the torchaudio of your torch's release") from None
        config = load_config(str(folder / "config.json"))
        if config.model != "vits":
            raise UsageError(f"Coqui model {folder} is a '{config.model}' model; talker runs end-to-end VITS models")
        if config.use_phonemes and config.phonemizer in (None, "espeak") and not shutil.which("espeak-ng"):
            raise ModelMissingError(f"Coqui model {folder} phonemizes with espeak-ng, which is not installed; "
                                    "run: apt-get install espeak-ng")
        self._point_at_local_files(config, folder)
        model = setup_model(config)
        model.load_checkpoint(config, str(checkpoint), eval=True)
        model.disc = None  # the training discriminator: not used to synthesize
        model.length_scale = self.config.length_scale
        self.model = model.to(torch.device(self.config.device))
        self.model_config = config
        self.speaker_id = self._speaker_id()

    @staticmethod
    def _point_at_local_files(config, folder: Path) -> None:
        """Configs name their speaker files where they were trained; use the ones in the folder."""
        for name in SPEAKER_FILES:
            if (folder / name).is_file():
                for section in (config, config.model_args):
                    if hasattr(section, "speakers_file"):
                        section.speakers_file = str(folder / name)
                config.model_args.use_speaker_embedding = True
                break

    def _speaker_id(self) -> int | None:
        manager = getattr(self.model, "speaker_manager", None)
        if not getattr(self.model, "num_speakers", 0) or manager is None:
            return None
        return chosen_speaker(manager.name_to_id, self.config, self.folder)

    def synthesize(self, text: str) -> Speech:
        phonemes = self.model_config.use_phonemes  # a character voice's durations time letters, not sounds
        segments = split_segments(text)
        pieces = ((audio, symbols if phonemes else None)
                  for audio, symbols in metered(map(self._synthesize_segment, segments), len(segments), self.meter))
        return join_speech(pieces, self.model_config.audio.sample_rate, self.config, pause_s=SENTENCE_PAUSE_S)

    def _synthesize_segment(self, segment: str) -> tuple[np.ndarray, list[tuple[str, float]]]:
        """One segment -> float32 samples, and each input token with the seconds VITS gave it."""
        import torch

        tokenizer = self.model.tokenizer
        ids = tokenizer.text_to_ids(segment)
        device = next(self.model.parameters()).device
        aux = {"x_lengths": torch.tensor([len(ids)], device=device),
               "speaker_ids": None if self.speaker_id is None else torch.tensor([self.speaker_id], device=device)}
        with torch.inference_mode():
            out = self.model.inference(torch.tensor([ids], device=device), aux_input=aux)
        audio = out["model_outputs"][0, 0].float().cpu().numpy()
        frames = out["durations"][0, 0].float().cpu().numpy()
        del out
        seconds_per_frame = len(audio) / max(float(frames.sum()), 1.0) / self.model_config.audio.sample_rate
        symbols = [(tokenizer.characters.id_to_char(i), float(f) * seconds_per_frame) for i, f in zip(ids, frames)]
        return np.clip(audio, -1.0, 1.0).astype(np.float32), merge_special_tokens(symbols)

    def unload(self) -> None:
        self.model = None
        self.model_config = None
