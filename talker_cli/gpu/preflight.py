"""Preflight: plan every GPU stage for this job, check it against the devices, decide.

The verdict says, per device, the reservation to make (the largest PyTorch stage plus a margin),
what engines that allocate outside PyTorch need beside it, and whether both fit in what the driver
reports free and under --mem-ratio. Stages that do not fit move to the CPU where their preset
allows it; otherwise the job is refused before any work, with what would fit instead.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..config import TalkerConfig
from .probe import GpuDevice
from .vram_plan import CUDA_CONTEXT_BYTES, GIB, ModelSpec, StagePlan, Workload, plan_stage, reservation_bytes

GPU_STAGES = ("asr", "llm", "tts")
CHARS_PER_TOKEN = 3.5  # English text through a BPE tokenizer
SPOKEN_CHARS_PER_S = 15.0  # speech transcribed to text
SLOW_SPOKEN_CHARS_PER_S = 10.0  # text read out slowly: the longest a TTS segment lasts
CHAT_TEMPLATE_TOKENS = 32


@dataclass(frozen=True)
class JobSize:
    """What decides a job's memory: how much text or audio, and whether the LLM answers."""

    text_chars: int = 0
    audio_s: float = 0.0
    reply: bool = False
    longest_segment_chars: int = 0  # the longest piece the TTS speaks at once; 0: not known


def text_size(text: str, reply: bool, config: TalkerConfig) -> JobSize:
    """A text job's size; a Coqui voice speaks it a segment at a time, so its longest one counts."""
    longest = 0
    if config.tts.backend == "coqui" and not reply and importlib.util.find_spec("pysbd"):
        from ..voices.coqui_tts import split_segments

        longest = max(map(len, split_segments(text)), default=0)
    return JobSize(text_chars=len(text), reply=reply, longest_segment_chars=longest)


def stage_devices(config: TalkerConfig) -> dict[str, str]:
    return {name: getattr(config, name).device for name in GPU_STAGES}


def uses_gpu(device: str) -> bool:
    return device.startswith("cuda")


def device_index(device: str) -> int:
    return int(device.split(":", 1)[1]) if ":" in device else 0


def stages_that_run(size: JobSize) -> set[str]:
    ran = {"llm"} if size.reply else set()
    ran |= {"asr"} if size.audio_s > 0 else set()
    ran |= {"tts"} if size.reply or size.audio_s == 0 else set()
    return ran


def gpus_used(config: TalkerConfig, audio: bool, reply: bool) -> list[str]:
    """The GPUs a job's running stages are placed on (their locks are taken, Ray gives it one)."""
    ran = stages_that_run(JobSize(audio_s=1.0 if audio else 0.0, reply=reply))
    return sorted({d for stage, d in stage_devices(config).items() if stage in ran and uses_gpu(d)})


def locate_models(config: TalkerConfig, stages: set[str], language: str = "en") -> None:
    """Every model the job's stages load is where they look (and a chosen speaker is in its model):
    a missing one is refused before any stage runs, whatever the device. The voice is the one of
    the job's language (a Mandarin text's --speaker is a Mandarin voice's name, not Piper's)."""
    from ..listening.asr import make_asr
    from ..llms.llm import make_llm
    from ..voices.tts import make_tts

    makers = {"asr": lambda: make_asr(config.asr), "llm": lambda: make_llm(config.llm), "tts": lambda: make_tts(config.tts, language)}
    for stage in sorted(stages):
        makers[stage]().locate()


def default_spec(stage: str, config: TalkerConfig) -> ModelSpec | None:
    """The shapes of the model a stage would load, read from its files; None for CPU-only engines."""
    from . import model_specs

    if stage == "llm":
        from ..llms.llm import make_llm
        from ..llms.models import header_file
        from ..llms.transformers_llm import refuse_quantized_gguf

        llm = make_llm(config.llm)
        llm.locate()
        if llm.name == "llama-cpp":
            return None  # llama.cpp runs on the CPU here
        path = Path(llm.model_path)
        if path.is_dir():
            spec = model_specs.spec_from_folder(path, config.llm.dtype)
            return replace(spec, quant_bits=int(config.llm.quantize[0])) if config.llm.quantize else spec
        refuse_quantized_gguf(path, config.llm.quantize)
        return model_specs.spec_from_gguf(header_file(path), config.llm.dtype)
    if stage == "asr":
        from ..listening.asr import make_asr

        asr = make_asr(config.asr)
        asr.locate()
        if config.asr.backend == "openai-whisper":
            dtype = "float16" if uses_gpu(config.asr.device) else "float32"
            return model_specs.spec_from_whisper_checkpoint(Path(asr.model_path), dtype)
        # both Whispers stay loaded in the stage where a second one may read (asr.py): planned together
        specs = [model_specs.spec_from_ctranslate2(Path(folder)) for folder in asr.paths.values()]
        return replace(specs[0], name="+".join(s.name for s in specs), external_bytes=sum(s.external_bytes for s in specs))
    if stage == "tts" and config.tts.backend == "coqui":
        from ..voices.coqui_tts import model_files

        return model_specs.spec_from_coqui_folder(*model_files(config.tts.voice))
    return None  # Piper runs on onnxruntime's CPU provider


def workload(stage: str, config: TalkerConfig, size: JobSize) -> Workload:
    if stage == "llm":
        chars = size.text_chars or size.audio_s * SPOKEN_CHARS_PER_S
        prompt = math.ceil((chars + len(config.llm.system_prompt)) / CHARS_PER_TOKEN) + CHAT_TEMPLATE_TOKENS
        return Workload(prompt_tokens=prompt, new_tokens=config.llm.max_new_tokens)
    if stage == "asr":
        return Workload(windows=max(1, math.ceil(size.audio_s / 30.0)), batch=1, new_tokens=224,
                        word_timing=config.asr.backend == "openai-whisper")
    if stage == "tts":
        from ..voices.coqui_tts import MAX_SEGMENT_CHARS

        # Speech is made a segment at a time: the longest possible segment, at a slow speaking rate.
        spoken = 0 if size.reply else (size.longest_segment_chars or size.text_chars)  # a reply's: not known yet
        chars = min(spoken or MAX_SEGMENT_CHARS, MAX_SEGMENT_CHARS)
        return Workload(speech_s=chars / SLOW_SPOKEN_CHARS_PER_S * max(config.tts.length_scale, 1.0))  # >1: slower
    return Workload()


SpecSource = Callable[[str, TalkerConfig], "ModelSpec | None"]


def plan_job(config: TalkerConfig, size: JobSize, spec_for: SpecSource = default_spec) -> list[StagePlan]:
    """Plans for the stages this job runs on a GPU."""
    plans = []
    for stage, device in stage_devices(config).items():
        if stage not in stages_that_run(size) or not uses_gpu(device):
            continue
        spec = spec_for(stage, config)
        if spec is not None:
            plans.append(plan_stage(spec, workload(stage, config, size), stage, device))
    return plans


@dataclass
class DeviceVerdict:
    device: str
    name: str
    total_bytes: int
    free_bytes: int
    used_by_others_bytes: int | None
    reservation_bytes: int
    external_bytes: int
    need_bytes: int  # reservation + engines outside PyTorch + the CUDA context
    cap_bytes: int
    fits: bool
    reason: str = ""


@dataclass
class Verdict:
    fits: bool
    gpu_usable: bool
    plans: list[StagePlan]  # every GPU stage's plan, including those moved to the CPU
    devices: list[DeviceVerdict] = field(default_factory=list)
    fallbacks: dict[str, str] = field(default_factory=dict)  # stage -> why it moved to the CPU
    suggestions: list[str] = field(default_factory=list)
    message: str = ""


def _check_device(plans: list[StagePlan], gpu: GpuDevice, config: TalkerConfig) -> DeviceVerdict:
    reserve = reservation_bytes(plans, config.gpu.margin)
    external = max((p.peak_bytes for p in plans if not p.torch_allocated), default=0)
    need = reserve + external + CUDA_CONTEXT_BYTES
    cap = int(config.gpu.mem_ratio * gpu.total_bytes)
    if reserve > cap:
        reason = f"needs {reserve / GIB:.2f} GiB, over the cap of {config.gpu.mem_ratio:.0%} ({cap / GIB:.2f} GiB)"
    elif need > gpu.free_bytes:
        reason = f"needs {need / GIB:.2f} GiB with the CUDA context, {gpu.free_bytes / GIB:.2f} GiB free"
    else:
        reason = ""
    return DeviceVerdict(gpu.label, gpu.name, gpu.total_bytes, gpu.free_bytes, gpu.used_by_others_bytes,
                         reserve, external, need, cap, not reason, reason)


def _allows_fallback(config: TalkerConfig, stage: str) -> bool:
    return bool(getattr(getattr(config, stage), "cpu_fallback", False))


def decide(all_plans: list[StagePlan], devices: list[GpuDevice], config: TalkerConfig) -> Verdict:
    plans = list(all_plans)
    if not plans:
        return Verdict(True, bool(devices), [], message="no stage of this job runs on a GPU")
    by_index = {d.index: d for d in devices}
    fallbacks: dict[str, str] = {}
    missing = [p for p in plans if device_index(p.device) not in by_index]
    for plan in missing:
        if not _allows_fallback(config, plan.stage):
            return Verdict(False, False, plans, message=(
                f"stage {plan.stage} is placed on {plan.device} but no such GPU is usable "
                f"({len(devices)} visible); check the driver and CUDA_VISIBLE_DEVICES, or use --preset cpu"))
        fallbacks[plan.stage] = f"{plan.device} is not usable"
    plans = [p for p in plans if p.stage not in fallbacks]
    verdicts: list[DeviceVerdict] = []
    for index in sorted({device_index(p.device) for p in plans}):
        on_device = [p for p in plans if device_index(p.device) == index]
        verdict = _check_device(on_device, by_index[index], config)
        # Move the largest stage that may run on the CPU until the rest fits.
        while not verdict.fits:
            movable = [p for p in on_device if _allows_fallback(config, p.stage)]
            if not movable:
                break
            largest = max(movable, key=lambda p: p.peak_bytes)
            fallbacks[largest.stage] = f"{largest.device}: {verdict.reason}"
            on_device.remove(largest)
            plans.remove(largest)
            if not on_device:
                verdict = replace(verdict, reservation_bytes=0, external_bytes=0, need_bytes=0, fits=True, reason="")
                break
            verdict = _check_device(on_device, by_index[index], config)
        verdicts.append(verdict)
    fits = all(v.fits for v in verdicts)
    result = Verdict(fits, bool(devices), list(all_plans), verdicts, fallbacks)
    if not fits:
        bad = next(v for v in verdicts if not v.fits)
        result.message = f"the job does not fit {bad.device} ({bad.name}): {bad.reason}"
        result.suggestions = suggestions(plans, bad, config)
    elif fallbacks:
        result.message = "fits with " + ", ".join(f"{s} on the CPU" for s in fallbacks)
    else:
        result.message = "fits"
    return result


def suggestions(plans: list[StagePlan], device: DeviceVerdict, config: TalkerConfig) -> list[str]:
    out = []
    llm = next((p for p in plans if p.stage == "llm"), None)
    if llm is not None and config.llm.quantize != "4bit":
        four_bit = llm.peak_bytes - llm.weights_bytes * 5 // 8  # most weights at ~4.5 of 16 bits
        out.append(f"[llm] quantize = \"4bit\" (bitsandbytes) would need about {four_bit / GIB:.2f} GiB "
                   f"instead of {llm.peak_bytes / GIB:.2f} GiB")
    for plan in plans:
        if not _allows_fallback(config, plan.stage):
            out.append(f"set [{plan.stage}] cpu_fallback = true (or device = \"cpu\") to run {plan.stage} on the CPU")
    if device.reservation_bytes < device.free_bytes:  # free <= total, so the ratio is under 1
        fitting_ratio = device.reservation_bytes / device.total_bytes
        out.append(f"--mem-ratio {min(1.0, fitting_ratio + 0.02):.2f} would allow the reservation")
    out.append("a smaller preset (for example --preset gpu-12gb, or --preset cpu)")
    return out
