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
from .errors import ResourceError, StageError, TalkerError
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


def _is_gpu_oom(error: BaseException) -> bool:
    # torch.cuda.OutOfMemoryError, recognised without importing torch
    return type(error).__name__ == "OutOfMemoryError"


def _oom_message(stage: Stage, job: Job, device: str) -> str:
    planned = job.planned.get(stage.name)
    figures = f"planned {planned / 2**30:.2f} GiB" if planned else "no plan"
    reservation = job.reservations.get(device)
    if reservation is not None and reservation.ledger:
        stats = reservation.torch.cuda.memory_stats(reservation.torch.device(device))
        figures += (f", {stats.get('allocated_bytes.all.peak', 0) / 2**30:.2f} GiB allocated at the peak, "
                    f"{stats.get('reserved_bytes.all.current', 0) / 2**30:.2f} GiB reserved")
    return (f"stage {stage.name} ran out of GPU memory on {device} ({figures}): the plan was wrong; "
            "use a smaller preset, --mem-ratio, or the CPU for this stage")


def _attempt(stage: Stage, job: Job) -> dict[str, Any]:
    try:
        stage.load(job)
        return stage.run(job) or {}
    finally:
        stage.unload()
        gc.collect()  # the stage's model and tensors go now; the VRAM reservation stays cached


def _run_stage(stage: Stage, job: Job) -> StageReport:
    device = job.stage_device(stage.name)
    reservation = job.reservations.get(device)
    meter = StageMeter()
    meter.start()
    if reservation is not None:
        reservation.stage_begin(stage.name, job.planned.get(stage.name, 0))
    retried = False
    try:
        while True:
            try:
                details = _attempt(stage, job)
                break
            except Exception as error:
                batch = getattr(stage, "batch_size", 0)
                if _is_gpu_oom(error) and batch > 1 and not retried:
                    stage.batch_size = batch // 2  # one retry at half the batch
                    retried = True
                    log.warning("stage %s ran out of GPU memory; retrying once at batch %d", stage.name, stage.batch_size)
                    continue
                raise
    except TalkerError:
        raise
    except MemoryError:
        raise ResourceError(f"stage {stage.name} ran out of memory") from None
    except Exception as error:  # a library failing inside a stage: say which stage, keep one line
        if _is_gpu_oom(error):
            raise ResourceError(_oom_message(stage, job, device)) from None
        log.debug("stage %s failed", stage.name, exc_info=True)
        raise StageError(f"stage {stage.name} failed: {error.__class__.__name__}: {error}") from error
    finally:
        ledger = reservation.stage_end() if reservation is not None else None
    m = meter.stop()
    if retried:
        details["retried_at_batch"] = stage.batch_size
    if ledger is not None:
        details["vram"] = ledger.__dict__ | {"planner_error": ledger.planner_error}
    return StageReport(
        name=stage.name, ran=True, backend=stage.backend, model=stage.model, device=device,
        seconds=round(m.seconds, 3), peak_rss_bytes=m.peak_rss_bytes,
        peak_vram_allocated_bytes=m.peak_vram_allocated_bytes, peak_vram_reserved_bytes=m.peak_vram_reserved_bytes,
        details=details,
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
    finally:
        for reservation in job.reservations.values():
            reservation.release()  # the memory goes back to the driver only now


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
        "vram": job.vram,
        "config": job.config.to_dict(),
        "config_sha256": hashlib.sha256(repr(job.config.to_dict()).encode()).hexdigest(),
    }
