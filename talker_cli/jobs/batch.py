"""`talker batch`: many render jobs, models loaded once per stage per group of jobs, nothing lost.

Jobs sharing a preset run together stage by stage (all TTS, then all renders...) in chunks, so
memory stays bounded. A failing job is recorded with its error and exit code and the others go on.
A re-run skips jobs whose outputs are complete and made from the same inputs and config.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .batch_file import JobSpec
from ..config import TalkerConfig, load_config
from ..errors import ExitCode, TalkerError, UsageError
from ..photo import file_sha256
from .progress import Meter, no_meter
from .input_stages import read_text_file, text_sha256

log = logging.getLogger("talker")
# Jobs held in memory together between stages, each stage's model loaded once for them: at most
# CHUNK_JOBS, and at most CHUNK_SPEECH_S of the speech their texts will make (16 jobs of a minute; a
# recording or a reply, whose length is not known before its stages, counts as UNKNOWN_SPEECH_S).
# Short jobs share one load of each model; long ones are held a few at a time.
CHUNK_JOBS = 64
CHUNK_SPEECH_S = 960.0
UNKNOWN_SPEECH_S = 60.0


def expected_hashes(spec: JobSpec, text: str | None) -> dict[str, str]:
    hashes = {"photo_sha256": file_sha256(spec.photo)} if spec.photo is not None and spec.photo.is_file() else {}
    if text is not None:
        hashes["text_sha256"] = text_sha256(text)
    elif spec.audio is not None and spec.audio.is_file():
        hashes["audio_sha256"] = file_sha256(spec.audio)
        if spec.transcript is not None:  # other words for the same recording are another job
            hashes["transcript_sha256"] = text_sha256(spec.transcript)
    return hashes


def is_complete(files: dict[str, Path], config: TalkerConfig, hashes: dict[str, str]) -> bool:
    """Every file of the job and its manifest are there, the MP4 (if any) has the size the manifest
    recorded, and the manifest was made from these inputs with this config."""
    if not all(path.is_file() for path in files.values()):
        return False
    try:
        manifest = json.loads(files["manifest"].read_text())
    except (OSError, json.JSONDecodeError):
        return False
    recorded = manifest.get("inputs", {})
    video = files.get("video")
    return (
        (video is None or manifest.get("video_bytes") == video.stat().st_size)
        and manifest.get("config_sha256") == config.digest()
        and all(recorded.get(k) == v for k, v in hashes.items())
    )


def _read_text(spec: JobSpec, max_chars: int) -> str | None:
    if spec.text_file is not None:
        return read_text_file(spec.text_file, max_chars)
    return spec.text


SUMMARY_NAME = "batch.json"


def job_config(preset: str, settings: tuple[tuple[str, str, object], ...] = ()) -> TalkerConfig:
    """A batch job's config: its preset, with the settings of its columns (language, format, ...)."""
    tables: dict[str, dict[str, object]] = {}
    for table, key, value in settings:
        tables.setdefault(table, {})[key] = value
    return load_config(preset, tables or None)


def spec_job(spec: JobSpec, out_dir: Path, config: TalkerConfig, text: str | None = None, cache=None):
    from .job import Job, RunContext

    return Job(photo=spec.photo, output=out_dir / spec.output, config=config, text=text, audio=spec.audio,
               transcript=spec.transcript, reply=spec.reply, run=RunContext(cache=cache))


def check_batch_paths(specs: list[JobSpec], jobs_file: Path, out_dir: Path, default_preset: str,
                      metrics_file: Path | None) -> None:
    """Every file the batch writes (each job's four, the summary, the metrics) is its own and none is an
    input of any job, the batch file or a preset: checked before any work."""
    from ..config import preset_path
    from .outputs import check_paths

    outputs = [(f"the {kind} of line {spec.line}", path) for spec in specs for kind, path in
               spec_job(spec, out_dir, job_config(spec.preset or default_preset, spec.settings)).output_files().items()]
    outputs += [("the batch summary", out_dir / SUMMARY_NAME)]
    outputs += [("the metrics file", metrics_file)] if metrics_file is not None else []
    folder = metrics_file.parent if metrics_file is not None else out_dir
    if not folder.is_dir() and os.path.abspath(folder) != os.path.abspath(out_dir):  # out_dir is made
        raise UsageError(f"the metrics file's folder does not exist: {folder}; create it first")
    inputs = [jobs_file] + [preset_path(name) for name in {s.preset or default_preset for s in specs}]
    inputs += [path for s in specs for path in (s.photo, s.text_file, s.audio)]
    check_paths(outputs, inputs)


def run_batch(specs: list[JobSpec], out_dir: Path, default_preset: str, force: bool = False,
              on_stage=None, stages_factory=None, summary_file: bool = True, meter: Meter = no_meter) -> dict[str, Any]:
    """Every job of the batch, grouped by config; meter (progress.Meter) hears how many are done."""
    from .pipeline import run_jobs
    from .job import Job
    from .stages import render_stages

    from .work_cache import WorkCache

    started = time.perf_counter()
    cache = WorkCache(read=not force)  # finished stages of interrupted jobs are reused from it
    rows: list[dict[str, Any]] = []
    groups: dict[tuple, list[tuple[JobSpec, Job]]] = {}
    configs = {key: job_config(*key) for key in {(s.preset or default_preset, s.settings) for s in specs}}
    for spec in specs:
        row = {"line": spec.line, "output": str(out_dir / spec.output), "status": "pending"}
        rows.append(row)
        group = (spec.preset or default_preset, spec.settings)
        config = configs[group]
        try:
            text = _read_text(spec, config.input.max_chars)
        except TalkerError as error:
            row.update(status="failed", exit_code=error.exit_code, error=str(error))
            continue
        job = spec_job(spec, out_dir, config, text, cache)
        if not force and is_complete(job.output_files(), config, expected_hashes(spec, text)):
            row.update(status="skipped", reason="complete output from the same inputs and config")
            continue
        groups.setdefault(group, []).append((spec, job))
    by_line = {row["line"]: row for row in rows}
    done = sum(row["status"] != "pending" for row in rows)  # refused or skipped before any stage
    meter("jobs", done, len(rows), "jobs")
    for members in groups.values():
        for chunk in chunks(members):
            stages = (stages_factory or render_stages)()
            for (spec, _), result in zip(chunk, run_jobs([job for _, job in chunk], stages, on_stage)):
                row = by_line[spec.line]
                if result.error is not None:
                    row.update(status="failed", exit_code=result.error.exit_code, error=str(result.error))
                else:
                    row.update(status="ok", exit_code=0, seconds=result.manifest["seconds"],
                               video_s=result.manifest["speech_s"], stages=result.manifest["stages"])
                done += 1
                meter("jobs", done, len(rows), "jobs")
    summary = summarize(rows, time.perf_counter() - started)
    if summary_file:
        write_summary(out_dir / SUMMARY_NAME, summary)
    return summary


def chunks(members: list[tuple[JobSpec, Any]]) -> Iterator[list[tuple[JobSpec, Any]]]:
    """The group's jobs in order, in chunks of at most CHUNK_JOBS and CHUNK_SPEECH_S of speech (a job
    longer than that alone)."""
    chunk: list[tuple[JobSpec, Any]] = []
    held = 0.0
    for member in members:
        seconds = expected_speech_s(member[1])
        if chunk and (len(chunk) >= CHUNK_JOBS or held + seconds > CHUNK_SPEECH_S):
            yield chunk
            chunk, held = [], 0.0
        chunk.append(member)
        held += seconds
    if chunk:
        yield chunk


def expected_speech_s(job) -> float:
    """How much speech a job will hold between its stages: its text's, told before any voice; a
    recording's or a reply's is not known until its stages run."""
    from ..language import speech_seconds

    if job.audio is not None or job.reply or not job.text:
        return UNKNOWN_SPEECH_S
    return speech_seconds(job.text)


def summarize(rows: list[dict[str, Any]], seconds: float, **extra: Any) -> dict[str, Any]:
    """A batch's summary, however it ran: its jobs' rows, how many ended each way, the exit code."""
    counts = {s: sum(1 for r in rows if r["status"] == s) for s in ("ok", "skipped", "failed")}
    return {"jobs": rows, "counts": counts, "seconds": round(seconds, 3), **extra, "exit_code": exit_code(counts)}


def exit_code(counts: dict[str, int]) -> int:
    if counts["failed"] == 0:
        return 0
    return ExitCode.ALL_FAILED if counts["ok"] + counts["skipped"] == 0 else ExitCode.SOME_FAILED


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    temp = path.with_name(f".{path.name}.partial-{os.getpid()}")
    slim = {**summary, "jobs": [{k: v for k, v in r.items() if k != "stages"} for r in summary["jobs"]]}
    temp.write_text(json.dumps(slim, indent=2) + "\n")
    os.replace(temp, path)


def summary_table(summary: dict[str, Any]) -> str:
    lines = [f"{'line':>5}  {'status':<8} {'code':>4}  output / error"]
    for row in summary["jobs"]:
        detail = row.get("error") or row.get("reason") or f"{row.get('video_s', 0):.1f} s of video in {row.get('seconds', 0):.1f} s"
        lines.append(f"{row['line']:>5}  {row['status']:<8} {row.get('exit_code', 0):>4}  {Path(row['output']).name}: {detail}")
    c = summary["counts"]
    lines.append(f"{c['ok']} ok, {c['skipped']} skipped, {c['failed']} failed in {summary['seconds']:.1f} s")
    return "\n".join(lines)
