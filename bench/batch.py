"""Batch benchmark: 20 short jobs, with models reused across jobs (talker batch) against reloaded
for every job (one talker render per job, in one process, so only the model loading differs).

    python bench/batch.py [--jobs 20] [--reply]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--reply", action="store_true", help="each job also asks the LLM")
    parser.add_argument("--preset", default="cpu")
    args = parser.parse_args()

    from talker_cli.batch import run_batch
    from talker_cli.batch_file import read_batch
    from talker_cli.cli import _force_offline
    from talker_cli.config import load_config
    from talker_cli.pipeline import run_job
    from talker_cli.stages import Job

    _force_offline()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copy(ROOT / "samples" / "face.png", folder / "face.png")
        rows = [{"photo": "face.png", "text": f"This is short job number {i}, rendered in a batch.",
                 "output": f"job{i:02d}.mp4", "reply": args.reply} for i in range(args.jobs)]
        (folder / "jobs.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        specs = read_batch(folder / "jobs.jsonl")

        # Warm-up: imports, and the LLM's one-off GGUF conversion, stay out of both figures.
        run_job(Job(photo=folder / "face.png", output=folder / "warm.mp4", config=load_config(args.preset),
                    text="Warm up.", reply=args.reply))

        started = time.perf_counter()
        (folder / "reused").mkdir()
        summary = run_batch(specs, folder / "reused", args.preset, force=True)  # no cached speech
        reused_s = time.perf_counter() - started
        assert summary["counts"]["ok"] == args.jobs, summary["counts"]

        (folder / "reloaded").mkdir()
        config = load_config(args.preset)
        started = time.perf_counter()
        for spec in specs:
            run_job(Job(photo=spec.photo, output=folder / "reloaded" / spec.output, config=config,
                        text=spec.text, reply=spec.reply))
        reloaded_s = time.perf_counter() - started

    print("| jobs | preset | reply | models | seconds | jobs per minute |")
    print("|---|---|---|---|---|---|")
    for label, seconds in (("reused (talker batch)", reused_s), ("reloaded per job", reloaded_s)):
        print(f"| {args.jobs} | {args.preset} | {args.reply} | {label} | {seconds:.1f} | {60 * args.jobs / seconds:.1f} |")
    print(f"\nreused / reloaded throughput: {reloaded_s / reused_s:.2f}x")


if __name__ == "__main__":
    main()
