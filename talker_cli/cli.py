"""The `talker` command line: a thin Typer layer over the pipeline.

Heavy libraries are imported inside command bodies so `talker --help` answers at once.
stdout carries only machine output (--json); progress and errors go to stderr.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Optional

import typer

from .errors import EXIT_INTERRUPTED, InputError, TalkerError, UsageError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Turn a face photo plus text or speech into an MP4 of that face speaking, offline.",
)
log = logging.getLogger("talker")


def _force_offline() -> None:
    # No code path may reach a model hub: the libraries are told so before they are imported.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**20:.0f} MiB"


class Progress:
    """One line per stage on stderr: Rich when stderr is a terminal, plain log lines otherwise."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.console = None
        self.status = None
        if not quiet and sys.stderr.isatty():
            from rich.console import Console

            self.console = Console(stderr=True)

    def __call__(self, name: str, report) -> None:
        if self.quiet:
            return
        if report is None:
            if self.console is not None:
                self.status = self.console.status(f"{name}…")
                self.status.start()
            return
        if self.status is not None:
            self.status.stop()
            self.status = None
        vram = f", peak VRAM {_mib(report.peak_vram_allocated_bytes)}" if report.peak_vram_allocated_bytes is not None else ""
        line = f"{name:<10} {report.seconds:7.2f} s  peak RSS {_mib(report.peak_rss_bytes)}{vram}  [{report.backend}]"
        if self.console is not None:
            self.console.print(f"[green]✓[/green] {line}", highlight=False)
        else:
            log.info("stage %s", line)

    def close(self) -> None:
        if self.status is not None:
            self.status.stop()


def _setup_logging(quiet: bool) -> None:
    """talker's own lines at INFO; the libraries' chatter only from WARNING up."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("talker: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    log.setLevel(logging.WARNING if quiet else logging.INFO)


def _fail(error: TalkerError) -> None:
    typer.echo(f"talker: error: {error}", err=True)
    raise typer.Exit(error.exit_code)


def _read_text_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"text file not found: {path}") from None
    except UnicodeDecodeError:
        raise InputError(f"text file is not UTF-8 text: {path}") from None
    except OSError as error:
        raise InputError(f"cannot read text file {path}: {error.strerror}") from None


def _flag_overrides(**flags) -> dict:
    """Command-line flags as preset tables: they win over the preset."""
    table_of = {
        "fps": ("render", "fps"), "max_side": ("render", "max_side"), "seed": ("render", "seed"),
        "tts_model": ("tts", "voice"), "asr_model": ("asr", "model"), "llm_model": ("llm", "model"),
    }
    tables: dict = {}
    for key, value in flags.items():
        if value is not None:
            table, name = table_of[key]
            tables.setdefault(table, {})[name] = str(value) if isinstance(value, Path) else value
    return tables


@app.command()
def render(
    photo: Path = typer.Option(..., "--photo", help="Face photo (JPEG, PNG, ...)."),
    output: Path = typer.Option(..., "--output", "-o", help="The MP4 to write; its folder must exist."),
    text: Optional[str] = typer.Option(None, "--text", help="The face says this text."),
    text_file: Optional[Path] = typer.Option(None, "--text-file", help="The face says this UTF-8 file's text."),
    audio: Optional[Path] = typer.Option(None, "--audio", help="The face says this recording (WAV, MP3, ...)."),
    reply: bool = typer.Option(False, "--reply", help="The LLM answers the text or transcript; the face says the answer."),
    preset: str = typer.Option("cpu", "--preset", help="Preset name from presets/ or a .toml path."),
    fps: Optional[int] = typer.Option(None, "--fps", help="Frames per second (overrides the preset)."),
    max_side: Optional[int] = typer.Option(None, "--max-side", help="Long side of the video in pixels."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the idle motion (blinks, head sway)."),
    tts_model: Optional[Path] = typer.Option(None, "--tts-model", help="TTS model path (Piper: VOICE.onnx)."),
    asr_model: Optional[Path] = typer.Option(None, "--asr-model", help="ASR model path (CTranslate2 Whisper folder)."),
    llm_model: Optional[Path] = typer.Option(None, "--llm-model", help="LLM path (transformers folder or .gguf)."),
    json_out: bool = typer.Option(False, "--json", help="Print the run's manifest as JSON on stdout."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines on stderr."),
) -> None:
    """Render an MP4 of the photo's face saying the text or the recording."""
    _force_offline()
    _setup_logging(quiet)
    progress = Progress(quiet)
    try:
        from .config import load_config
        from .pipeline import run_job
        from .stages import Job

        sources = [s for s in (text, text_file, audio) if s is not None]
        if len(sources) != 1:
            raise UsageError("give exactly one of --text, --text-file or --audio")
        overrides = _flag_overrides(fps=fps, max_side=max_side, seed=seed, tts_model=tts_model,
                                    asr_model=asr_model, llm_model=llm_model)
        config = load_config(preset, overrides)
        if text_file is not None:
            text = _read_text_file(text_file)
        job = Job(photo=photo, output=output, config=config, text=text, audio=audio, reply=reply)
        manifest = run_job(job, on_stage=progress)
    except TalkerError as error:
        progress.close()
        _fail(error)
    except KeyboardInterrupt:
        progress.close()
        typer.echo("talker: interrupted; no output was written", err=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    progress.close()
    if json_out:
        typer.echo(json.dumps(manifest, indent=2))
    elif not quiet:
        log.info("wrote %s (%.1f s of video in %.1f s)", output, manifest["video"]["duration_s"], manifest["seconds"])


@app.command()
def presets() -> None:
    """List the presets that ship with talker."""
    from .config import available_presets

    for name in available_presets():
        typer.echo(name)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
