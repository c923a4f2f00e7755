"""A job as the runner holds it (Job, with its RunContext: what a run shares) and the stage every
stage of it is (Stage; ModelStage for the ASR, the LLM and the TTS)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..artifacts import Artifacts
from ..config import TalkerConfig
from .outputs import OutputSet
from .progress import Meter, no_meter


@dataclass
class RunContext:
    """Where a job runs, set up by the runner: its work folder, its outputs (under temporary names
    until the job succeeds), the GPU reservations a batch shares, and the work cache."""

    work_dir: Path = Path(".")
    outputs: OutputSet | None = None
    reservations: dict[str, Any] = field(default_factory=dict)  # device -> Reservation, shared in a batch
    cache: Any = None  # a WorkCache: finished stage results are reused from it and recorded in it
    meter: Meter = no_meter  # how far a long stage has come, for the user (progress.py)


@dataclass
class Job:
    """One job's inputs and what its stages decide and make: the config as asked, the placement of
    its model stages (preflight), its language, and its artifacts."""

    photo: Path | None  # None: animation files only (talker lipsync), no video
    output: Path  # the MP4; without a photo, the stem of the animation files
    config: TalkerConfig
    text: str | None = None
    audio: Path | None = None
    transcript: str | None = None  # the recording's words as the user knows them (--transcript)
    reply: bool = False
    run: RunContext = field(default_factory=RunContext)
    artifacts: Artifacts = field(default_factory=Artifacts)
    input_hashes: dict[str, str] = field(default_factory=dict)
    placement: dict[str, str] = field(default_factory=dict)  # model stage -> device, where preflight moved it
    reservation_plan: dict[str, int] = field(default_factory=dict)  # device -> bytes this job needs
    planned: dict[str, int] = field(default_factory=dict)  # stage -> planned peak bytes
    vram: dict[str, Any] = field(default_factory=dict)
    language: str = "en"  # ISO 639-1, decided before any stage (text) or by the ASR (recording)
    language_decided_by: str = ""

    def output_files(self) -> dict[str, Path]:
        """Every file this job writes (checked before any work, written by the stages)."""
        from ..exports import parse_formats
        from .outputs import output_files

        video = self.photo is not None
        speech = not video and (self.audio is None or self.reply)  # the voice of an animation is written too
        return output_files(self.output, parse_formats(self.config.output.formats), video=video, speech=speech)

    def placed(self, stage: str):
        """A model stage's settings as it runs: the config's, on the device preflight placed it on."""
        section = getattr(self.config, stage)
        return replace(section, device=self.placement[stage]) if stage in self.placement else section

    def stage_device(self, stage: str) -> str:
        """Where a stage runs, spelled as reservations are keyed: 'cuda' means 'cuda:0'."""
        device = self.placed(stage).device if stage in ("asr", "llm", "tts") else "cpu"
        return "cuda:0" if device == "cuda" else device


class Stage:
    """Base: a stage with no model. Model stages override load/unload and set backend/model."""

    name = ""
    backend = "builtin"
    model = ""
    reads: tuple[str, ...] = ()  # the artifact slots it needs filled
    writes: tuple[str, ...] = ()  # the only slots it may fill
    # It reads no slot and shares nothing with the stages after it: the runner may run it beside them
    # (pipeline._Beside), until a stage reads what it writes.
    beside = False

    def applies(self, job: Job) -> bool:
        return True

    def load(self, job: Job) -> None:
        pass

    def run(self, job: Job) -> dict[str, Any]:
        """Do the work; return extra figures for the manifest."""
        raise NotImplementedError

    def after_all(self, jobs: list[Job]) -> None:
        """Work that needs every job's answer, after the stage ran for all of them."""

    # A stage whose result is worth keeping says what decides it (cache_parts), and how to write
    # (save) and read back (restore) its result; the runner does the rest.
    def cache_parts(self, job: Job) -> dict[str, Any] | None:
        return None

    def save(self, job: Job, folder: Path) -> None:
        raise NotImplementedError

    def restore(self, job: Job, folder: Path) -> None:
        raise NotImplementedError

    def unload(self) -> None:
        pass


class ModelStage(Stage):
    """A stage with a model (ASR, LLM, TTS): its engine made and loaded once for the jobs of a
    placement, dropped at unload; a subclass says how to make the engine for a job."""

    engine: Any = None

    def make_engine(self, job: Job):
        raise NotImplementedError

    def load(self, job: Job) -> None:
        self.engine = self.make_engine(job)
        self.backend, self.model = self.engine.name, self.engine.model_path
        self.engine.load()

    def unload(self) -> None:
        self.engine = None
