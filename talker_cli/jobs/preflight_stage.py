"""The preflight stage: the job checked before any other stage (its settings, inputs and language),
its GPU stages planned, reserved, fallen back to the CPU or refused."""

from __future__ import annotations

import logging
from typing import Any

from ..errors import NoGpuError, ResourceError
from .input_stages import check_speech_length
from .job import Job, Stage

log = logging.getLogger("talker")


class PreflightStage(Stage):
    """Plans every GPU stage for this input, refuses what cannot fit, reserves what will be used.

    Runs before any other stage. Stages that cannot fit and may run on the CPU are moved there
    (said in the log and the manifest); with no GPU at all the whole job runs on the CPU.
    """

    name = "preflight"
    backend = "vram-planner"

    def __init__(self, probe=None, torch_module=None):
        self.probe = probe  # injectable: tests answer for the device
        self.torch_module = torch_module

    def run(self, job: Job) -> dict[str, Any]:
        from ..gpu.preflight import decide, plan_job, stage_devices, stages_that_run, uses_gpu

        size = check_job(job)
        wanted = [s for s, d in stage_devices(job.config).items() if uses_gpu(d) and s in stages_that_run(size)]
        if not wanted:
            job.vram = {"gpu": "not used"}
            return {"gpu": "not used"}
        from ..gpu.probe import probe_devices

        devices = (self.probe or probe_devices)()
        verdict = decide(plan_job(job.config, size), devices, job.config)
        job.vram = verdict_summary(verdict)
        if not verdict.fits:
            error = ResourceError if verdict.gpu_usable else NoGpuError
            raise error("; ".join([verdict.message, *verdict.suggestions]))
        for stage, why in verdict.fallbacks.items():
            log.warning("stage %s runs on the CPU: %s", stage, why)
            job.placement[stage] = "cpu"
        job.planned = {p.stage: p.peak_bytes for p in verdict.plans if p.stage not in verdict.fallbacks}
        job.reservation_plan = {d.device: d.reservation_bytes for d in verdict.devices if d.reservation_bytes}
        return {"verdict": verdict.message, "fallbacks": verdict.fallbacks}

    def after_all(self, jobs: list[Job]) -> None:
        """One reservation per device, sized for the largest job, shared by all of them."""
        from ..gpu.reservation import Reservation, sanitize_alloc_conf

        wanted: dict[str, int] = {}
        for job in jobs:
            for device, size in job.reservation_plan.items():
                wanted[device] = max(wanted.get(device, 0), size)
        if not wanted:
            return
        sanitize_alloc_conf()
        shared = jobs[0].run.reservations
        for device, size in wanted.items():
            reservation = Reservation(device, size, jobs[0].config.gpu.mem_ratio, torch=self.torch_module)
            reservation.make()
            shared[device] = reservation


def check_job(job: Job):
    """What every preflight checks before planning memory (render, lipsync, batch, Ray and check-gpu
    alike): the job's size, every model its stages load found, its text's language and voice.
    Returns the JobSize the plan is made for."""
    from ..gpu.preflight import locate_models, stages_that_run

    size = job_size(job)
    stages = stages_that_run(size)
    locate_models(job.config, stages - {"tts"})
    check_text_language(job)  # a text's voice, of its language (and its --speaker), located there
    if job.text is None:  # a reply to a recording: its language is heard later
        locate_models(job.config, stages & {"tts"}, job.language or "en")
    check_inputs(job)
    return size


def check_inputs(job: Job) -> None:
    """The inputs the stages will read, after the settings are known good: a photo or a recording this
    user cannot read, a photo that is not an image or too large to decode (its header says), and a
    text whose speech would run past the recording limit, are refused now: the photo is read beside
    the speech (jobs/pipeline.py), and its refusal should not wait for the speech to be made."""
    from ..photo import check_image
    from .input_files import check_file

    if job.photo is not None:
        check_image(job.photo)  # the file's own checks (input_files.check_file) first, then its header
    if job.audio is not None:
        check_file(job.audio, "audio file")
    if job.text is not None and not job.reply:  # a prompt is not spoken: its reply is bounded by its tokens
        check_speech_length(job.text, job.config.input.max_audio_s, "text")


def check_text_language(job: Job) -> None:
    """The job's language from the text (or as given), and its voice found and able to read the text:
    refused before any stage otherwise (a reply is checked when it is spoken)."""
    from ..language import as_spoken, decide_language
    from ..voices.tts import make_tts

    from ..face.emotions import split_tags

    if job.text is None:
        return
    text = split_tags(as_spoken(job.text))[0]
    job.language, job.language_decided_by = decide_language(text, job.config.input.language, job.output.name)
    if job.reply:
        from ..llms.llm import check_reply_language

        check_reply_language(job.config.llm, job.language)
    engine = make_tts(job.config.tts, job.language)
    engine.locate()
    if hasattr(engine, "check_language") and not job.reply:
        engine.check_language(text, job.language)


def job_size(job: Job):
    from ..audio_io import probe_duration_s
    from ..gpu.preflight import JobSize, text_size

    if job.audio is not None:
        return JobSize(audio_s=probe_duration_s(job.audio) if job.audio.is_file() else 0.0, reply=job.reply)
    return text_size(job.text or "", job.reply, job.config)


def verdict_summary(verdict) -> dict[str, Any]:
    from dataclasses import asdict

    return {
        "fits": verdict.fits, "gpu_usable": verdict.gpu_usable, "message": verdict.message,
        "devices": [asdict(d) for d in verdict.devices],
        "plans": [asdict(p) | {"peak_bytes": p.peak_bytes} for p in verdict.plans],
        "fallbacks": verdict.fallbacks, "suggestions": verdict.suggestions,
    }
