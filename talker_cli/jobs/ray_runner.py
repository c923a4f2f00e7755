"""`talker batch --ray ADDRESS`: one Ray task per job, past one machine.

Each task renders its job in a Ray worker with the same code as a local batch (skip when complete,
temporary names, work cache). Its GPU request comes from the planner: a job whose preset places a
stage it runs on a GPU asks Ray for one GPU, so Ray never puts two such jobs on one card; the
worker's own preflight then reserves the memory that job needs. "local" starts a Ray instance on
this machine. On a real cluster every node needs talker installed and the inputs and --out-dir on
shared storage.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from .batch import SUMMARY_NAME, run_batch, summarize, write_summary
from .batch_file import JobSpec
from ..errors import ModelMissingError, UsageError


def gpus_for(spec: JobSpec, default_preset: str) -> int:
    from ..config import load_config
    from ..gpu.preflight import gpus_used

    return int(bool(gpus_used(load_config(spec.preset or default_preset), spec.audio is not None, spec.reply)))


def _render_one(spec: JobSpec, out_dir: str, default_preset: str, force: bool) -> dict[str, Any]:
    from ..errors import stop_cleanly_on_sigterm
    from ..offline import force_offline

    stop_cleanly_on_sigterm()
    force_offline()
    summary = run_batch([spec], Path(out_dir), default_preset, force=force, summary_file=False)
    row = summary["jobs"][0]
    row["node"] = os.uname().nodename
    return row


def run_batch_on_ray(specs: list[JobSpec], out_dir: Path, default_preset: str, force: bool,
                     address: str) -> dict[str, Any]:
    try:
        import ray
    except ImportError:
        raise ModelMissingError("ray is not installed; run: pip install 'talker[ray]'") from None
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline: no usage reports
    started = time.perf_counter()
    try:
        ray.init(address=None if address == "local" else address, include_dashboard=False,
                 log_to_driver=False, ignore_reinit_error=True)
    except (ConnectionError, ValueError, RuntimeError) as error:
        raise UsageError(f"cannot reach the Ray cluster at {address!r}: {error}") from None
    try:
        task = ray.remote(_render_one)
        futures = [task.options(num_gpus=gpus_for(spec, default_preset), num_cpus=1)
                   .remote(spec, str(out_dir), default_preset, force) for spec in specs]
        rows = ray.get(futures)
    finally:
        ray.shutdown()
    rows.sort(key=lambda r: r["line"])
    summary = summarize(rows, time.perf_counter() - started, engine=f"ray ({address})")
    write_summary(out_dir / SUMMARY_NAME, summary)
    return summary
