"""The runner: stages in order, each loaded, run and freed in turn; outputs committed at the end.

Nothing a stage loads survives it: the runner drops the stage's engine in `finally` and collects
garbage before the next stage starts, so the peak memory is the largest stage, not the sum.
A stage that reads nothing another makes (Stage.beside: the photo) runs in a thread beside the
stages after it, on its own view of the job, and is waited for before the first stage that reads
what it writes: the face is found while the speech is made. Only for a job alone: a batch's jobs
leave a stage together, so a photo without a face takes its job out before the speech is made.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import __version__
from ..artifacts import Artifacts
from ..errors import ResourceError, StageError, TalkerError, os_error
from .metering import StageMeter
from .outputs import OutputSet
from .job import Job, Stage
from .stages import render_stages
from .work_folder import work_folder

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
    reservation = job.run.reservations.get(device)
    if reservation is not None and reservation.ledger:
        stats = reservation.torch.cuda.memory_stats(reservation.torch.device(device))
        figures += (f", {stats.get('allocated_bytes.all.peak', 0) / 2**30:.2f} GiB allocated at the peak, "
                    f"{stats.get('reserved_bytes.all.current', 0) / 2**30:.2f} GiB reserved")
    return (f"stage {stage.name} ran out of GPU memory on {device} ({figures}): the plan was wrong; "
            "use a smaller preset, --mem-ratio, or the CPU for this stage")


def _as_talker_error(stage: Stage, job: Job, error: BaseException) -> TalkerError:
    if isinstance(error, TalkerError):
        return error
    if isinstance(error, MemoryError):
        return ResourceError(f"stage {stage.name} ran out of memory")
    if isinstance(error, OSError) and isinstance(os_error(error), ResourceError):
        return os_error(error)  # the disk filled up
    if _is_gpu_oom(error):
        return ResourceError(_oom_message(stage, job, job.stage_device(stage.name)))
    # a library failing inside a stage: say which stage, keep one line
    log.debug("stage %s failed", stage.name, exc_info=(type(error), error, error.__traceback__))
    return StageError(f"stage {stage.name} failed: {error.__class__.__name__}: {error}")


def _check_reads(stage: Stage, job: Job) -> dict[str, int]:
    """The slots a stage reads are filled; returns what the slots hold now, for _check_writes."""
    missing = [name for name in stage.reads if getattr(job.artifacts, name) is None]
    if missing:  # a bug in talker's stage order, said as such
        raise RuntimeError(f"stage {stage.name} reads {', '.join(missing)}, which no stage before it made")
    return job.artifacts.filled()


def _check_writes(stage: Stage, job: Job, before: dict[str, int]) -> None:
    """A stage filled only the slots it declares and changed none of the others."""
    after = job.artifacts.filled()
    changed = {name for name in set(before) | set(after) if before.get(name) != after.get(name)}
    if changed - set(stage.writes):
        raise RuntimeError(f"stage {stage.name} changed {', '.join(sorted(changed - set(stage.writes)))}, "
                           f"which it does not declare")


def _run_checked(stage: Stage, job: Job) -> dict[str, Any]:
    """Run a stage held to its declared slots. No stage batches its work, so a GPU out-of-memory
    is not retried smaller: the plan was wrong, and the error says so with its figures."""
    before = _check_reads(stage, job)
    details = stage.run(job) or {}
    _check_writes(stage, job, before)
    return details


def _run_one(stage: Stage, job: Job, load_seconds: float, shared_by: int) -> StageReport:
    device = job.stage_device(stage.name)
    reservation = job.run.reservations.get(device)
    meter = StageMeter()
    meter.start()
    if reservation is not None:
        reservation.stage_begin(stage.name, job.planned.get(stage.name, 0))
    try:
        details = _run_checked(stage, job)
    finally:
        ledger = reservation.stage_end() if reservation is not None else None
    m = meter.stop()
    if ledger is not None:
        details["vram"] = ledger.__dict__ | {"planner_error": ledger.planner_error}
    if shared_by > 1:
        details["model_shared_by_jobs"] = shared_by
    return StageReport(
        name=stage.name, ran=True, backend=stage.backend, model=stage.model, device=device,
        seconds=round(m.seconds + load_seconds / shared_by, 3), peak_rss_bytes=m.peak_rss_bytes,
        peak_vram_allocated_bytes=m.peak_vram_allocated_bytes, peak_vram_reserved_bytes=m.peak_vram_reserved_bytes,
        details=details,
    )


@dataclass
class JobResult:
    job: Job
    reports: list[StageReport] = field(default_factory=list)
    manifest: dict[str, Any] | None = None
    error: TalkerError | None = None


def _cached(stage: Stage, job: Job) -> tuple[str | None, Path | None]:
    """The stage's cache key for this job and the finished result under it, if any."""
    cache = job.run.cache
    parts = stage.cache_parts(job) if cache is not None else None
    if parts is None:
        return None, None
    key = cache.key(stage.name, parts)
    return key, cache.lookup(key)


def _restore_one(stage: Stage, job: Job, folder: Path) -> StageReport:
    started = time.perf_counter()
    before = _check_reads(stage, job)
    stage.restore(job, folder)  # a result from the work cache fills the same slots a run would
    _check_writes(stage, job, before)
    meta = job.run.cache.meta(folder)
    return StageReport(name=stage.name, ran=True, backend=meta["backend"], model=meta["model"],
                       device=job.stage_device(stage.name), seconds=round(time.perf_counter() - started, 3),
                       details={**meta["details"], "cached": True})


def _run_stage_over(stage: Stage, results: list[JobResult], on_stage: StageCallback | None) -> None:
    """Reuse finished results from the work cache; for the rest, load the stage once per placement
    (the device preflight gave it: jobs of a batch may differ), run it for each job there, free it.
    A job's failure stops only that job."""
    if on_stage:
        on_stage(stage.name, None)
    placements: dict[str, list[tuple[JobResult, str | None]]] = {}
    for result in results:
        folder = None
        try:
            key, folder = _cached(stage, result.job)
            report = _restore_one(stage, result.job, folder) if folder is not None else None
        except Exception as error:
            if folder is None:
                result.error = _as_talker_error(stage, result.job, error)
                continue
            # a damaged entry (a disk that filled, a file cut short) is made again, not a failed job
            log.warning("%s: the work cache's %s result at %s could not be read (%s: %s); the stage runs again",
                        result.job.output.name, stage.name, folder, type(error).__name__, error)
            report = None
        if report is None:
            placements.setdefault(result.job.stage_device(stage.name), []).append((result, key))
            continue
        result.reports.append(report)
        if on_stage:
            on_stage(stage.name, report)
    for pending in placements.values():
        _run_on_one_placement(stage, pending, on_stage)
    stage.after_all([r.job for r in results if r.error is None])


def _run_on_one_placement(stage: Stage, pending: list[tuple[JobResult, str | None]],
                          on_stage: StageCallback | None) -> None:
    """Load the stage for the first job (all of them place it on the same device), run it for
    each, record what is worth keeping in the work cache, free it."""
    started = time.perf_counter()
    try:
        try:
            stage.load(pending[0][0].job)
        except Exception as error:
            for result, _ in pending:
                result.error = _as_talker_error(stage, result.job, error)
            return
        load_seconds = time.perf_counter() - started
        for result, key in pending:
            try:
                report = _run_one(stage, result.job, load_seconds, len(pending))
            except Exception as error:
                result.error = _as_talker_error(stage, result.job, error)
                continue
            result.reports.append(report)
            if key is not None:
                meta = {"backend": report.backend, "model": report.model, "details": report.details}
                result.job.run.cache.store(key, meta, lambda folder, job=result.job: stage.save(job, folder))
            if on_stage:
                on_stage(stage.name, report)
    except Exception as error:
        for result, _ in pending:
            result.error = result.error or _as_talker_error(stage, result.job, error)
    finally:
        stage.unload()
        gc.collect()  # the stage's model and tensors go now; the VRAM reservation stays cached


@dataclass
class _Beside:
    """A stage running in a thread beside the stages after it, on a view of each job of its own (the
    job with empty artifacts), so no slot changes under another stage's feet."""

    stage: Stage
    pairs: list[tuple[JobResult, JobResult]]  # each job's result and its view's
    events: list[tuple[str, StageReport | None]]  # progress, shown when it is waited for
    thread: threading.Thread

    @classmethod
    def start(cls, stage: Stage, todo: list[JobResult]) -> _Beside:
        pairs = [(result, JobResult(replace(result.job, artifacts=Artifacts(), input_hashes={}))) for result in todo]
        events: list[tuple[str, StageReport | None]] = []
        views = [view for _, view in pairs]

        def work() -> None:
            try:
                _run_stage_over(stage, views, lambda *event: events.append(event))
            except BaseException as error:  # the runner's own failure: each job says so, none is left waiting
                for view in views:
                    view.error = view.error or _as_talker_error(stage, view.job, error)

        thread = threading.Thread(target=work, name=f"talker-{stage.name}", daemon=True)
        thread.start()
        return cls(stage, pairs, events, thread)

    def finish(self, on_stage: StageCallback | None) -> None:
        """Wait for it; fill each job's slots, hashes and reports from its view. Its error stands over
        a later stage's: run in order, that stage would not have run."""
        self.thread.join()
        if on_stage:  # progress lines are drawn from the runner's thread only
            for event in self.events:
                on_stage(*event)
        for result, view in self.pairs:
            for slot in self.stage.writes:
                setattr(result.job.artifacts, slot, getattr(view.job.artifacts, slot))
            result.job.input_hashes = {**view.job.input_hashes, **result.job.input_hashes}
            result.reports.extend(view.reports)
            if view.error is not None:
                result.error = view.error
                result.job.run.outputs.discard()


def beside_pays() -> bool:
    """A stage runs beside others only where a second core can take it (one core: it would only
    take turns with them)."""
    import os

    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    return len(cores) > 1


def run_jobs(jobs: Sequence[Job], stages: Sequence[Stage] | None = None,
             on_stage: StageCallback | None = None) -> list[JobResult]:
    """Run jobs stage by stage (all TTS, then all renders...), each model loaded once for all of
    them. Jobs must share a config. Each job's outputs appear complete or not at all."""
    stages = list(stages) if stages is not None else render_stages()
    results = [JobResult(job) for job in jobs]
    started = time.perf_counter()
    # One dict of reservations (device -> Reservation) shared by every job of the run.
    reservations: dict[str, Any] = jobs[0].run.reservations if jobs else {}
    try:
        with work_folder() as work_root:
            for index, result in enumerate(results):
                job = result.job
                job.run.reservations = reservations  # one reservation per device, for every job
                job.run.work_dir = Path(work_root) / str(index)
                job.run.work_dir.mkdir()
                try:
                    job.run.outputs = OutputSet(job.output_files())
                except TalkerError as error:
                    result.error = error
            running: list[_Beside] = []
            for stage in stages:
                # Waited for by the first stage that reads it; taken in as soon as it is done (a photo
                # without a face stops its job at the next stage).
                for beside in [b for b in running if set(b.stage.writes) & set(stage.reads) or not b.thread.is_alive()]:
                    beside.finish(on_stage)
                    running.remove(beside)
                alive = [r for r in results if r.error is None]
                todo = [r for r in alive if stage.applies(r.job)]
                for result in alive:
                    if result not in todo:
                        result.reports.append(StageReport(name=stage.name, ran=False))
                if todo and stage.beside and len(results) == 1 and beside_pays():
                    running.append(_Beside.start(stage, todo))
                    continue
                if todo:
                    _run_stage_over(stage, todo, on_stage)
                for result in todo:
                    if result.error is not None:
                        result.job.run.outputs.discard()
            for beside in running:
                beside.finish(on_stage)
            order = {stage.name: index for index, stage in enumerate(stages)}
            for result in results:
                result.reports.sort(key=lambda report: order.get(report.name, len(order)))
            for result in results:
                if result.error is None:
                    job = result.job
                    # Alone, a job's time is the wall time; in a batch, the stage time it was given.
                    seconds = (time.perf_counter() - started if len(results) == 1
                               else sum(r.seconds for r in result.reports))
                    manifest = build_manifest(job, result.reports, seconds)
                    try:
                        job.run.outputs.write_json("manifest", manifest)
                        job.run.outputs.commit()
                    except OSError as error:  # a full or read-only disk: this job fails, nothing half-written
                        job.run.outputs.discard()
                        result.error = os_error(error)
                        continue
                    result.manifest = manifest
        return results
    finally:
        for result in results:
            if result.manifest is None and result.job.run.outputs is not None:
                result.job.run.outputs.discard()
        for reservation in reservations.values():
            reservation.release()  # the memory goes back to the driver only now


def run_job(job: Job, stages: Sequence[Stage] | None = None, on_stage: StageCallback | None = None) -> dict[str, Any]:
    """Run every stage of one render job; returns the manifest. Leaves no output behind on failure."""
    result = run_jobs([job], stages, on_stage)[0]
    if result.error is not None:
        raise result.error
    return result.manifest


def build_manifest(job: Job, reports: list[StageReport], seconds: float) -> dict[str, Any]:
    video = job.artifacts.video
    script = job.artifacts.spoken
    speech = job.artifacts.voice
    duration = video.duration_s if video else speech.duration_s if speech else 0.0
    outputs = {k: str(v) for k, v in job.run.outputs.final.items()}
    render = job.config.render
    return {
        "talker_version": __version__,
        "output": outputs,
        "inputs": {
            "photo": str(job.photo) if job.photo else None, "audio": str(job.audio) if job.audio else None,
            "reply": job.reply, **job.input_hashes,
        },
        "language": {"code": job.language, "decided_by": job.language_decided_by},
        "spoken_text": script.text if script else None,
        "spoken_text_origin": script.origin if script else None,
        "prompt": job.artifacts.prompt,
        "controls": {"emotion": render.emotion, "emotion_changes": [list(c) for c in job.artifacts.emotion_changes or ()],
                     "head_motion": render.head_motion, "blink_rate": render.blink_rate,
                     "mouth_scale": render.mouth_open_scale, "crop": render.crop},
        "video": {
            "width": video.width, "height": video.height, "fps": video.fps,
            "frames": video.frame_count, "duration_s": round(video.duration_s, 3),
        } if video else None,
        "speech_s": round(duration, 3),
        "seconds": round(seconds, 3),
        "real_time_factor": round(seconds / duration, 3) if duration else None,
        "stages": [report.__dict__ for report in reports],
        "vram": job.vram,
        "video_bytes": job.run.outputs.temp("video").stat().st_size if video else None,
        "config": job.config.to_dict(),  # as asked; where each model stage ran is in placement
        "config_sha256": job.config.digest(),
        "placement": {stage: job.placed(stage).device for stage in ("asr", "llm", "tts")},
    }
