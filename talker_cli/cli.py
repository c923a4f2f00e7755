"""The `talker` command line: a thin Typer layer over the pipeline.

Heavy libraries are imported inside command bodies so `talker --help` answers at once.
stdout carries only machine output (--json); progress and errors go to stderr.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer

from .errors import (
    ExitCode, NoGpuError, ResourceError, TalkerError, Terminated, os_error, stop_cleanly_on_sigterm,
)
from .jobs.progress import StageLines

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Turn a face photo plus text or speech into an MP4 of that face speaking, offline.",
)
log = logging.getLogger("talker")


# Options several commands share.
PRESET = typer.Option("cpu", "--preset", help="Preset name from presets/ or a .toml path.")
ASR_MODEL = typer.Option(None, "--asr-model", readable=False, help="ASR model: CTranslate2 Whisper folder, or openai-whisper .pt / name.")
LLM_MODEL = typer.Option(None, "--llm-model", readable=False, help="LLM: transformers folder, .gguf, or org/name in the Hugging Face cache.")
TTS_MODEL = typer.Option(
    None, "--tts-model", readable=False, help="TTS model (piper: VOICE.onnx; coqui: a folder or tts_models/... in Coqui's cache).")
MEM_RATIO = typer.Option(None, "--mem-ratio", help="The most of a card to reserve (0..1).")
WAIT = typer.Option(0.0, "--wait", help="Seconds to wait for a GPU another talker job holds.")
QUIET = typer.Option(False, "--quiet", "-q", help="No progress lines on stderr.")
FORMAT = typer.Option(
    None, "--format", help="Animation files to write beside the output, comma-separated: arkit-json, livelink, gltf, "
    "glb, rhubarb-tsv, rhubarb-json, rhubarb-xml, rhubarb-dat, vrm, srt, vtt (default: the preset's, arkit-json,srt).")
DAT_FRAME_RATE = typer.Option(None, "--dat-frame-rate", help="Frames per second of the rhubarb-dat (Moho) file, 24-100.")
EMOTION = typer.Option(None, "--emotion", help="neutral, happy, sad, angry or surprised; \\[happy]-style tags in the text change it.")
HEAD_MOTION = typer.Option(None, "--head-motion", help="Scale of the idle head motion; 0 keeps the head still (blinks go on).")
BLINK_RATE = typer.Option(None, "--blink-rate", help="Blinks per minute, on average; 0: none.")
MOUTH_SCALE = typer.Option(None, "--mouth-scale", help="Scale of the mouth's speech movement (1: as aligned).")
# What a render and a lipsync job share: the speech, its language, the voice, the run.
TEXT = typer.Option(None, "--text", help="Speak this text.")
TEXT_FILE = typer.Option(None, "--text-file", readable=False, help="Speak this UTF-8 file's text.")
AUDIO = typer.Option(None, "--audio", readable=False, help="Follow this recording (WAV, MP3, ...).")
TRANSCRIPT = typer.Option(None, "--transcript", help="The recording's words, when known: aligned instead of what the ASR hears.")
REPLY = typer.Option(False, "--reply", help="The LLM answers the text or transcript; the face says the answer.")
LANGUAGE = typer.Option(None, "--language", help="The job's language tag (en, zh, es, zh-TW, ...); default: from the text's script or the recording.")
SEED = typer.Option(None, "--seed", help="Seed of the idle motion (blinks, head motion).")
TTS_BACKEND = typer.Option(None, "--tts-backend", help="TTS engine: piper, coqui, espeak or kokoro (overrides the preset).")
SPEAKER = typer.Option(None, "--speaker", help="Voice of a multi-speaker model: its number or name.")
FORCE = typer.Option(False, "--force", help="Redo every stage; do not reuse cached speech, transcripts or replies.")
JSON_OUT = typer.Option(False, "--json", help="Print the run's manifest as JSON on stdout.")


def _interrupted(error: KeyboardInterrupt) -> None:
    terminated = isinstance(error, Terminated)
    typer.echo(f"talker: {'terminated' if terminated else 'interrupted'}; unfinished outputs were removed", err=True)
    raise typer.Exit(ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED)


def _force_offline() -> None:
    from .offline import force_offline

    stop_cleanly_on_sigterm()
    force_offline()


_VERBOSE = False
VERBOSE = typer.Option(False, "--verbose", "-v",
                       help="Debug log lines, and the traceback of an error (for a bug report); also TALKER_LOG=debug.")


@app.callback()
def _options(verbose: bool = VERBOSE) -> None:
    global _VERBOSE
    _VERBOSE = verbose


def _verbose() -> bool:
    return _VERBOSE or os.environ.get("TALKER_LOG", "").lower() == "debug"


def _setup_logging(quiet: bool) -> None:
    """talker's own lines at INFO (DEBUG with --verbose); the libraries' chatter only from WARNING up."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("talker: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    log.setLevel(logging.DEBUG if _verbose() else logging.WARNING if quiet else logging.INFO)


@contextmanager
def _command(quiet: bool, progress: "StageLines | None" = None):
    """A command's frame: offline, logging set up, and talker's errors turned into their exit codes
    (interrupts into 130/143) at the CLI boundary."""
    _force_offline()
    _setup_logging(quiet)
    try:
        yield
    except typer.Exit:
        raise
    except BaseException as error:  # every way out but success: one line and its code
        if progress:
            progress.close()
        if isinstance(error, KeyboardInterrupt):
            _interrupted(error)
        if not isinstance(error, Exception):
            raise
        _fail(error)
    if progress:
        progress.close()


def _fail(error: Exception) -> None:
    if _verbose():
        import traceback

        traceback.print_exception(error, file=sys.stderr)
    if isinstance(error, OSError):
        error = os_error(error)
    if isinstance(error, TalkerError):
        typer.echo(f"talker: error: {error}", err=True)
        raise typer.Exit(error.exit_code)
    message = " ".join(f"{type(error).__name__}: {error}".split())
    typer.echo(f"talker: error: internal error ({message}); run with --verbose and report the traceback", err=True)
    raise typer.Exit(ExitCode.INTERNAL)


@app.command()
def render(
    photo: Path = typer.Option(..., "--photo", readable=False, help="Face photo (JPEG, PNG, ...)."),
    output: Path = typer.Option(..., "--output", "-o", readable=False, help="The MP4 to write; its folder must exist."),
    text: Optional[str] = TEXT,
    text_file: Optional[Path] = TEXT_FILE,
    audio: Optional[Path] = AUDIO,
    transcript: Optional[str] = TRANSCRIPT,
    reply: bool = REPLY,
    language: Optional[str] = LANGUAGE,
    preset: str = PRESET,
    fps: Optional[int] = typer.Option(None, "--fps", help="Frames per second (overrides the preset)."),
    max_side: Optional[int] = typer.Option(None, "--max-side", help="Long side of the video in pixels."),
    seed: Optional[int] = SEED,
    formats: Optional[str] = FORMAT,
    dat_frame_rate: Optional[int] = DAT_FRAME_RATE,
    emotion: Optional[str] = EMOTION,
    head_motion: Optional[float] = HEAD_MOTION,
    blink_rate: Optional[float] = BLINK_RATE,
    mouth_scale: Optional[float] = MOUTH_SCALE,
    crop: Optional[str] = typer.Option(None, "--crop", help="face: frame the head and shoulders; full: the whole photo."),
    tts_model: Optional[Path] = TTS_MODEL,
    tts_backend: Optional[str] = TTS_BACKEND,
    speaker: Optional[str] = SPEAKER,
    asr_model: Optional[Path] = ASR_MODEL,
    llm_model: Optional[Path] = LLM_MODEL,
    mem_ratio: Optional[float] = MEM_RATIO,
    wait: float = WAIT,
    force: bool = FORCE,
    json_out: bool = JSON_OUT,
    quiet: bool = QUIET,
) -> None:
    """Render an MP4 of the photo's face saying the text or the recording."""
    progress = StageLines(quiet)
    with _command(quiet, progress):
        from .jobs.job_request import JobRequest, settings_of

        settings = settings_of(fps=fps, max_side=max_side, seed=seed, formats=formats, dat_frame_rate=dat_frame_rate,
                               emotion=emotion, head_motion=head_motion, blink_rate=blink_rate, mouth_scale=mouth_scale,
                               crop=crop, language=language, tts_model=tts_model, tts_backend=tts_backend,
                               speaker=speaker, asr_model=asr_model, llm_model=llm_model, mem_ratio=mem_ratio)
        manifest = _run_request(JobRequest(output=output, photo=photo, text=text, text_file=text_file, audio=audio,
                                           transcript=transcript, reply=reply, preset=preset, settings=settings, wait_s=wait, force=force),
                                progress)
    if json_out:
        typer.echo(json.dumps(manifest, indent=2))
    elif not quiet:
        log.info("wrote %s (%.1f s of video in %.1f s)", output, manifest["video"]["duration_s"], manifest["seconds"])


def _run_request(request, progress) -> dict:
    """One job from the command line, render or lipsync, run as the Python API runs it (api.run)."""
    from .api import run

    return run(request, on_stage=progress, meter=progress.meter)


@app.command()
def lipsync(
    output: Path = typer.Option(..., "--output", "-o", readable=False, help="Stem of the files to write (OUT.blendshapes.json, OUT.wav, ...); its folder must exist."),
    text: Optional[str] = TEXT,
    text_file: Optional[Path] = TEXT_FILE,
    audio: Optional[Path] = AUDIO,
    transcript: Optional[str] = TRANSCRIPT,
    reply: bool = REPLY,
    language: Optional[str] = LANGUAGE,
    preset: str = PRESET,
    fps: Optional[int] = typer.Option(None, "--fps", help="Frames per second of the track (overrides the preset)."),
    seed: Optional[int] = SEED,
    formats: Optional[str] = FORMAT,
    dat_frame_rate: Optional[int] = DAT_FRAME_RATE,
    emotion: Optional[str] = EMOTION,
    head_motion: Optional[float] = HEAD_MOTION,
    blink_rate: Optional[float] = BLINK_RATE,
    mouth_scale: Optional[float] = MOUTH_SCALE,
    tts_model: Optional[Path] = TTS_MODEL,
    tts_backend: Optional[str] = TTS_BACKEND,
    speaker: Optional[str] = SPEAKER,
    asr_model: Optional[Path] = ASR_MODEL,
    llm_model: Optional[Path] = LLM_MODEL,
    mem_ratio: Optional[float] = MEM_RATIO,
    wait: float = WAIT,
    force: bool = FORCE,
    json_out: bool = JSON_OUT,
    quiet: bool = QUIET,
) -> None:
    """Write animation files (blendshapes, mouth cues, glTF, ...) for text or a recording: no photo, no video.

    With a text, its speech is written as OUT.wav beside them."""
    progress = StageLines(quiet)
    with _command(quiet, progress):
        from .jobs.job_request import JobRequest, settings_of

        settings = settings_of(fps=fps, seed=seed, formats=formats, dat_frame_rate=dat_frame_rate, emotion=emotion,
                               head_motion=head_motion, blink_rate=blink_rate, mouth_scale=mouth_scale,
                               language=language, tts_model=tts_model, tts_backend=tts_backend, speaker=speaker,
                               asr_model=asr_model, llm_model=llm_model, mem_ratio=mem_ratio)
        manifest = _run_request(JobRequest(output=output, text=text, text_file=text_file, audio=audio,
                                           transcript=transcript, reply=reply, preset=preset, settings=settings, wait_s=wait, force=force), progress)
    if json_out:
        typer.echo(json.dumps(manifest, indent=2))
    elif not quiet:
        log.info("wrote %s (%.1f s of speech in %.1f s)", ", ".join(sorted(manifest["output"].values())),
                 manifest["speech_s"], manifest["seconds"])


def _gib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**30:.2f}"


def _print_check(verdict, devices) -> None:
    typer.echo("devices:")
    if not devices:
        typer.echo("  none usable (no driver, no GPU, or CUDA_VISIBLE_DEVICES hides them)")
    for d in devices:
        others = "" if d.used_by_others_bytes is None else f", {_gib(d.used_by_others_bytes)} GiB used by other processes"
        typer.echo(f"  {d.label}  {d.name}  {_gib(d.total_bytes)} GiB total, {_gib(d.free_bytes)} GiB free{others}  [{d.source}]")
    typer.echo("plan (GiB):")
    typer.echo(f"  {'stage':<6} {'device':<8} {'weights':>8} {'cache':>7} {'activ.':>7} {'peak':>7}  model / input")
    for p in verdict.plans:
        where = "" if p.torch_allocated else " (outside PyTorch)"
        typer.echo(f"  {p.stage:<6} {p.device:<8} {_gib(p.weights_bytes):>8} {_gib(p.cache_bytes):>7} "
                   f"{_gib(p.activation_bytes):>7} {_gib(p.peak_bytes):>7}  {p.model}, {p.detail}{where}")
    for d in verdict.devices:
        typer.echo(f"reservation on {d.device}: {_gib(d.reservation_bytes)} GiB (+{_gib(d.external_bytes)} GiB outside PyTorch, "
                   f"{_gib(d.need_bytes)} GiB with the CUDA context; cap {_gib(d.cap_bytes)} GiB)")
    for stage, why in verdict.fallbacks.items():
        typer.echo(f"fallback: {stage} on the CPU ({why})")
    typer.echo(f"verdict: {verdict.message}")
    for line in verdict.suggestions:
        typer.echo(f"  would fit: {line}")


@app.command("check-gpu")
def check_gpu(
    preset: str = PRESET,
    text: Optional[str] = typer.Option(None, "--text", help="Plan for this text."),
    text_file: Optional[Path] = typer.Option(None, "--text-file", readable=False, help="Plan for this file's text."),
    audio: Optional[Path] = typer.Option(None, "--audio", readable=False, help="Plan for this recording's length."),
    reply: bool = typer.Option(False, "--reply", help="Plan for an LLM reply too."),
    language: Optional[str] = LANGUAGE,
    mem_ratio: Optional[float] = MEM_RATIO,
    llm_model: Optional[Path] = LLM_MODEL,
    asr_model: Optional[Path] = ASR_MODEL,
    tts_model: Optional[Path] = TTS_MODEL,
    tts_backend: Optional[str] = TTS_BACKEND,
    json_out: bool = typer.Option(False, "--json", help="Print the plan and verdict as JSON."),
) -> None:
    """Plan a job's VRAM per stage and check it against the GPUs, without loading any model.

    Exit 0: the job fits. Exit 5: it does not (what would fit is listed). Exit 7: no GPU is usable.
    """
    with _command(quiet=True):
        from .gpu.probe import probe_devices
        from .jobs.job_request import JobRequest, settings_of
        from .gpu.preflight import decide, plan_job
        from .jobs.preflight_stage import check_job, verdict_summary

        settings = settings_of(llm_model=llm_model, asr_model=asr_model, tts_model=tts_model, tts_backend=tts_backend,
                               language=language, mem_ratio=mem_ratio)
        # The render's own checks (models found, the text's voice), on a job that writes nothing.
        job = JobRequest(output=Path("check-gpu"), text=text, text_file=text_file, audio=audio, reply=reply,
                         preset=preset, settings=settings).job(planned_only=True)
        config = job.config
        size = check_job(job)
        devices = probe_devices()
        verdict = decide(plan_job(config, size), devices, config)
    if json_out:
        summary = verdict_summary(verdict) | {"gpus": [d.__dict__ | {"device": d.label} for d in devices]}
        typer.echo(json.dumps(summary, indent=2))
    else:
        _print_check(verdict, devices)
    if not verdict.fits:
        raise typer.Exit(ResourceError.exit_code if verdict.gpu_usable else NoGpuError.exit_code)
    if verdict.plans and not verdict.gpu_usable:
        raise typer.Exit(NoGpuError.exit_code)


@app.command()
def batch(
    jobs_file: Path = typer.Argument(..., readable=False, help="Jobs, one per line: .jsonl, or .csv with a header."),
    out_dir: Path = typer.Option(..., "--out-dir", readable=False, help="Folder for the outputs and batch.json (created if missing)."),
    preset: str = typer.Option("cpu", "--preset", help="Preset for jobs that name none."),
    force: bool = typer.Option(False, "--force", help="Redo jobs whose outputs are already complete."),
    wait: float = WAIT,
    allow: list[Path] = typer.Option([], "--allow", help="Another folder the batch file's paths may point into."),
    metrics_file: Optional[Path] = typer.Option(None, "--metrics-file", readable=False, help="Write Prometheus metrics here."),
    ray_address: Optional[str] = typer.Option(None, "--ray", help="Run one Ray task per job: 'local', 'auto' or a cluster address."),
    json_out: bool = typer.Option(False, "--json", help="Print the batch summary as JSON on stdout."),
    quiet: bool = QUIET,
) -> None:
    """Render every job of a batch file. Exit 0: all done; 10: some failed; 11: all failed."""
    progress = StageLines(quiet)
    with _command(quiet, progress):
        from .jobs.batch import run_batch, summary_table
        from .jobs.batch_file import read_batch
        from .config import load_config
        from .gpu.locks import checked_wait, device_locks

        specs = read_batch(jobs_file, allow)
        from .jobs.batch import job_config

        for key in {(s.preset or preset, s.settings) for s in specs}:
            job_config(*key)  # an unknown preset or a bad setting fails the batch before any work
        from .jobs.batch import check_batch_paths

        check_batch_paths(specs, jobs_file, out_dir, preset, metrics_file)
        out_dir.mkdir(parents=True, exist_ok=True)
        if ray_address is not None:
            from .jobs.ray_runner import run_batch_on_ray

            # Ray places GPU jobs by its own GPU accounting; each worker's preflight reserves memory.
            summary = run_batch_on_ray(specs, out_dir.resolve(), preset, force, ray_address)
        else:
            from .gpu.preflight import gpus_used

            configs = {name: load_config(name) for name in {s.preset or preset for s in specs}}
            gpus = {d for s in specs for d in gpus_used(configs[s.preset or preset], s.audio is not None, s.reply)}
            with device_locks(sorted(gpus), checked_wait(wait)):
                summary = run_batch(specs, out_dir, preset, force=force, on_stage=progress, meter=progress.meter)
        if metrics_file is not None:
            from .jobs.metrics import write_metrics

            write_metrics(metrics_file, summary)
    if not quiet:
        typer.echo(summary_table(summary), err=True)
    if json_out:
        typer.echo(json.dumps({k: v for k, v in summary.items()}, indent=2, default=str))
    raise typer.Exit(summary["exit_code"])


@app.command()
def models(
    preset: str = typer.Option("cpu", "--preset", help="Preset whose model paths to look at."),
    json_out: bool = typer.Option(False, "--json", help="Print the list as JSON."),
) -> None:
    """List each backend: library installed, where it looks, what it found, the VRAM each model needs."""
    with _command(quiet=True):
        from .catalog import catalog
        from .config import load_config

        entries = catalog(load_config(preset))
    if json_out:
        typer.echo(json.dumps([e.__dict__ | {"found": [f.__dict__ for f in e.found]} for e in entries], indent=2))
        return
    for e in entries:
        state = "installed" if e.installed else f"not installed ({e.install})"
        typer.echo(f"{e.stage:<9} {e.backend:<15} {state}")
        for place in e.looks_in:
            typer.echo(f"{'':<9}   looks in {place}")
        for f in e.found:
            vram = "CPU" if f.vram_bytes is None else f"{_gib(f.vram_bytes)} GiB VRAM"
            typer.echo(f"{'':<9}   found {f.path}  [{vram}; {f.note}]")
        if not e.found:
            typer.echo(f"{'':<9}   found nothing")


@app.command()
def settings(preset: str = typer.Option("cpu", "--preset", help="Preset whose values to show.")) -> None:
    """List every setting a preset may hold: its table and key, this preset's value, what it allows."""
    with _command(quiet=True):
        from .config import RULES, load_config

        config = load_config(preset).to_dict()
    for key, rule in RULES.items():
        table, name = key.split(".")
        typer.echo(f"[{table}] {name} = {json.dumps(config[table][name])}  ({rule.what})")


@app.command()
def presets() -> None:
    """List the presets that ship with talker."""
    from .config import available_presets

    for name in available_presets():
        typer.echo(name)


def main() -> None:
    """Typer's own refusals (an unknown flag, a bad value) become one line and exit 2, like talker's."""
    import click

    # Typer 0.2x carries its own copy of click: its exceptions are not click's
    refusals = tuple({click.exceptions.ClickException, getattr(typer, "TyperException", click.exceptions.ClickException)})
    try:
        code = app(standalone_mode=False)
    except (click.exceptions.Abort, typer.Abort):
        typer.echo("talker: interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except KeyboardInterrupt as error:  # outside a command's own frame: its outputs, if any, are whole
        terminated = isinstance(error, Terminated)
        typer.echo(f"talker: {'terminated' if terminated else 'interrupted'}", err=True)
        sys.exit(ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED)
    except refusals as error:
        message = error.format_message() if hasattr(error, "format_message") else str(error)
        context = getattr(error, "ctx", None)
        hint = f"; see: {context.command_path} --help" if context is not None else ""
        if message.strip():  # no command at all: the help was printed already
            typer.echo(f"talker: error: {' '.join(message.split())}{hint}", err=True)
        sys.exit(ExitCode.USAGE)
    sys.exit(code or 0)


if __name__ == "__main__":
    main()
