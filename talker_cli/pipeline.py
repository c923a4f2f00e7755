"""The runner: stages in order, each loaded, run and freed in turn; outputs committed at the end.

Nothing a stage loads survives it: the runner drops the stage's engine in `finally` and collects
garbage before the next stage starts, so the peak memory is the largest stage, not the sum.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .errors import StageError, TalkerError
from .metering import StageMeter
from .outputs import OutputSet
from .stages import Job, Stage, render_stages

log = logging.getLogger("talker")


@dataclass
class StageReport:
    name: str
    ran: bool
    backend: str = ""
    model: str = ""
    device: str = "cpu"
    seconds: float = 0.0
    peak_rss_bytes: int = 0
    peak_vram_allocated_bytes: int | None = None
    peak_vram_reserved_bytes: int | None = None
    details: dict[str, Any] = field(default_factory=dict)


StageCallback = Callable[[str, StageReport | None], None]


def _run_stage(stage: Stage, job: Job) -> StageReport:
    meter = StageMeter()
    meter.start()
    try:
        stage.load(job)
        details = stage.run(job)
    except TalkerError:
        raise
    except MemoryError:
        raise StageError(f"stage {stage.name} ran out of memory") from None
    except Exception as error:  # a library failing inside a stage: say which stage, keep one line
        log.debug("stage %s failed", stage.name, exc_info=True)
        raise StageError(f"stage {stage.name} failed: {error.__class__.__name__}: {error}") from error
    finally:
        stage.unload()
        gc.collect()
    m = meter.stop()
    return StageReport(
        name=stage.name, ran=True, backend=stage.backend, model=stage.model, device=stage.device,
        seconds=round(m.seconds, 3), peak_rss_bytes=m.peak_rss_bytes,
        peak_vram_allocated_bytes=m.peak_vram_allocated_bytes, peak_vram_reserved_bytes=m.peak_vram_reserved_bytes,
        details=details or {},
    )


def run_job(job: Job, stages: Sequence[Stage] | None = None, on_stage: StageCallback | None = None) -> dict[str, Any]:
    """Run every stage of a render job; returns the manifest. Leaves no output behind on failure."""
    stages = list(stages) if stages is not None else render_stages()
    job.outputs = OutputSet(job.output)
    reports: list[StageReport] = []
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="talker-") as work_dir:
            job.work_dir = Path(work_dir)
            for stage in stages:
                if not stage.applies(job):
                    reports.append(StageReport(name=stage.name, ran=False))
                    continue
                if on_stage:
                    on_stage(stage.name, None)
                report = _run_stage(stage, job)
                reports.append(report)
                if on_stage:
                    on_stage(stage.name, report)
            manifest = build_manifest(job, reports, time.perf_counter() - started)
            job.outputs.write_json("manifest", manifest)
            job.outputs.commit()
        return manifest
    except BaseException:
        job.outputs.discard()
        raise


def build_manifest(job: Job, reports: list[StageReport], seconds: float) -> dict[str, Any]:
    video = job.artifacts.get("video")
    script = job.artifacts.get("script")
    outputs = {k: str(v) for k, v in job.outputs.final.items()}
    return {
        "talker_version": __version__,
        "output": outputs,
        "inputs": {
            "photo": str(job.photo), "audio": str(job.audio) if job.audio else None,
            "reply": job.reply, **job.input_hashes,
        },
        "spoken_text": script.text if script else None,
        "spoken_text_origin": script.origin if script else None,
        "prompt": job.artifacts.get("prompt"),
        "video": {
            "width": video.width, "height": video.height, "fps": video.fps,
            "frames": video.frame_count, "duration_s": round(video.duration_s, 3),
        } if video else None,
        "seconds": round(seconds, 3),
        "real_time_factor": round(seconds / video.duration_s, 3) if video else None,
        "stages": [report.__dict__ for report in reports],
        "config": job.config.to_dict(),
        "config_sha256": hashlib.sha256(repr(job.config.to_dict()).encode()).hexdigest(),
    }
