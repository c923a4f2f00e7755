"""talker from Python: the same jobs as `talker render` and `talker lipsync`, returning the manifest.

    import talker_cli

    manifest = talker_cli.render("face.jpg", "out.mp4", text="Hello there.", fps=25)
    track = talker_cli.lipsync("out/hello", audio="hello.wav", formats="arkit-json,glb")

Each takes the command's flags as keyword arguments (the names of `talker render --help`, with
underscores) and builds the JobRequest the command builds; run() takes a JobRequest itself. A job
that cannot run raises the TalkerError the command would have turned into its exit code (each error
carries it as .exit_code); nothing is printed. Like the commands, talker never reaches a model hub:
loading it sets the libraries' offline switches (HF_HUB_OFFLINE and the like) for the process.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import UsageError
from .jobs.job_request import FLAG_SETTINGS, JobRequest, settings_of

LIPSYNC_FLAGS = set(FLAG_SETTINGS) - {"max_side", "crop"}  # a lipsync job draws no video


def run(request: JobRequest, on_stage: Callable[[str, Any], None] | None = None, meter: Any = None) -> dict[str, Any]:
    """Run one job as the commands do: checked before any stage, its GPUs locked (waiting up to
    request.wait_s for another job's), offline. on_stage(name, report) is called as each stage ends;
    meter(stage, done, total, unit) as a stage makes progress (progress.Meter)."""
    from .gpu.locks import checked_wait, device_locks
    from .gpu.preflight import gpus_used
    from .jobs.pipeline import run_job
    from .offline import force_offline

    wait_s = checked_wait(request.wait_s)
    force_offline()
    job = request.job()
    if meter is not None:
        job.run.meter = meter
    with device_locks(gpus_used(job.config, request.audio is not None, request.reply), wait_s):
        return run_job(job, on_stage=on_stage)


def _request(known: set[str], flags: dict[str, Any], **fields: Any) -> JobRequest:
    """The JobRequest the command builds from these fields and settings (flags, of those known)."""
    unknown = sorted(set(flags) - known)
    if unknown:
        raise UsageError(f"unknown setting{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                         f"the settings are {', '.join(sorted(known))}")
    paths = {name: Path(fields[name]) for name in ("output", "photo", "text_file", "audio") if fields.get(name) is not None}
    return JobRequest(**{**fields, **paths}, settings=settings_of(**flags))


def render(photo: str | Path, output: str | Path, *, text: str | None = None, text_file: str | Path | None = None,
           audio: str | Path | None = None, transcript: str | None = None, reply: bool = False, preset: str = "cpu",
           wait_s: float = 0.0, force: bool = False, on_stage: Callable[[str, Any], None] | None = None,
           **flags: Any) -> dict[str, Any]:
    """The photo's face saying the text, the text file's text or the recording, as an MP4 at output
    (with the animation files the preset or formats= asks for beside it); the run's manifest.
    flags: fps, max_side, seed, formats, dat_frame_rate, emotion, head_motion, blink_rate, mouth_scale,
    crop, language, tts_model, tts_backend, speaker, asr_model, llm_model, mem_ratio."""
    return run(_request(set(FLAG_SETTINGS), flags, output=output, photo=photo, text=text, text_file=text_file,
                        audio=audio, transcript=transcript, reply=reply, preset=preset, wait_s=wait_s, force=force),
               on_stage)


def lipsync(output: str | Path, *, text: str | None = None, text_file: str | Path | None = None,
            audio: str | Path | None = None, transcript: str | None = None, reply: bool = False, preset: str = "cpu",
            wait_s: float = 0.0, force: bool = False, on_stage: Callable[[str, Any], None] | None = None,
            **flags: Any) -> dict[str, Any]:
    """Animation files only (no photo, no video), named from the stem output: OUT.blendshapes.json and
    the formats asked for, and OUT.wav when the speech is made from text; the run's manifest. flags:
    as render's, less max_side and crop."""
    return run(_request(LIPSYNC_FLAGS, flags, output=output, text=text, text_file=text_file, audio=audio,
                        transcript=transcript, reply=reply, preset=preset, wait_s=wait_s, force=force), on_stage)
