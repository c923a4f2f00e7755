"""Prometheus text format for node_exporter's textfile collector, written atomically."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any


def _line(name: str, value: float, **labels: str) -> str:
    if labels:
        inner = ",".join(f'{k}="{str(v).replace(chr(34), "")}"' for k, v in sorted(labels.items()))
        return f"{name}{{{inner}}} {value:g}"
    return f"{name} {value:g}"


def prometheus_text(summary: dict[str, Any]) -> str:
    """summary: the batch summary (jobs with status and manifests' stage figures)."""
    lines = [
        "# HELP talker_jobs Jobs of the last talker run, by outcome.",
        "# TYPE talker_jobs gauge",
    ]
    counts = summary["counts"]
    for status in ("ok", "skipped", "failed"):
        lines.append(_line("talker_jobs", counts.get(status, 0), status=status))
    lines += ["# HELP talker_stage_seconds Seconds spent per stage over the run's jobs.",
              "# TYPE talker_stage_seconds gauge"]
    seconds: dict[str, float] = {}
    vram: dict[str, int] = {}
    for job in summary["jobs"]:
        for stage in job.get("stages", []):
            if not stage["ran"]:
                continue
            seconds[stage["name"]] = seconds.get(stage["name"], 0.0) + stage["seconds"]
            if stage.get("peak_vram_allocated_bytes"):
                vram[stage["device"]] = max(vram.get(stage["device"], 0), stage["peak_vram_allocated_bytes"])
    lines += [_line("talker_stage_seconds", round(v, 3), stage=k) for k, v in sorted(seconds.items())]
    lines += ["# HELP talker_peak_vram_bytes Peak VRAM allocated by a stage, per device.",
              "# TYPE talker_peak_vram_bytes gauge"]
    lines += [_line("talker_peak_vram_bytes", v, device=k) for k, v in sorted(vram.items())]
    lines += ["# HELP talker_run_seconds Wall time of the last run.", "# TYPE talker_run_seconds gauge",
              _line("talker_run_seconds", round(summary["seconds"], 3)),
              "# HELP talker_last_run_timestamp_seconds When the last run ended.",
              "# TYPE talker_last_run_timestamp_seconds gauge",
              _line("talker_last_run_timestamp_seconds", round(time.time(), 3))]
    return "\n".join(lines) + "\n"


def write_metrics(path: Path, summary: dict[str, Any]) -> None:
    temp = path.with_name(f".{path.name}.partial-{os.getpid()}")
    temp.write_text(prometheus_text(summary))
    os.replace(temp, path)
