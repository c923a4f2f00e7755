"""Batch benchmark: 20 short jobs of one photo, with models reused across jobs (talker batch) against
reloaded for every job (one talker render per job, in one process, so only the model loading
differs), and against separate renders (one `talker render` process per job, as a script without
`talker batch` runs them: start-up, models, the photo's face and the mouth's calibration each time).

    python bench/batch.py [--jobs 20] [--reply] [--preset P] [--mode both|all|reused|reloaded|separate]

--mode both runs reused and reloaded; all adds separate; one name runs that side only (a large-model
run of both may not fit one sitting). The ratios are printed under the table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
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
    parser.add_argument("--mode", choices=("both", "all", "reused", "reloaded", "separate"), default="both")
    args = parser.parse_args()

    from talker_cli.jobs.batch import run_batch
    from talker_cli.jobs.batch_file import read_batch
    from talker_cli.cli import _force_offline
    from talker_cli.config import load_config
    from talker_cli.jobs.pipeline import run_job
    from talker_cli.jobs.stages import Job

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

        seconds = {}
        if args.mode in ("both", "all", "reused"):
            started = time.perf_counter()
            (folder / "reused").mkdir()
            summary = run_batch(specs, folder / "reused", args.preset, force=True)  # no cached speech
            seconds["reused (talker batch)"] = time.perf_counter() - started
            assert summary["counts"]["ok"] == args.jobs, summary["counts"]

        if args.mode in ("both", "all", "reloaded"):
            (folder / "reloaded").mkdir()
            config = load_config(args.preset)
            started = time.perf_counter()
            for number, spec in enumerate(specs, 1):
                run_job(Job(photo=spec.photo, output=folder / "reloaded" / spec.output, config=config,
                            text=spec.text, reply=spec.reply))  # no work cache
                print(f"reloaded: job {number}/{args.jobs} done at {time.perf_counter() - started:.1f} s",
                      file=sys.stderr, flush=True)
            seconds["reloaded per job"] = time.perf_counter() - started

        if args.mode in ("all", "separate"):
            (folder / "separate").mkdir()
            started = time.perf_counter()
            for number, spec in enumerate(specs, 1):
                command = [sys.executable, "-m", "talker_cli", "render", "--photo", str(spec.photo), "--text", spec.text,
                           "-o", str(folder / "separate" / spec.output), "--preset", args.preset, "--force", "--quiet"]
                subprocess.run(command + (["--reply"] if spec.reply else []), check=True, cwd=ROOT)
                print(f"separate: job {number}/{args.jobs} done at {time.perf_counter() - started:.1f} s",
                      file=sys.stderr, flush=True)
            seconds["separate renders"] = time.perf_counter() - started

    print("| jobs | preset | reply | models | seconds | jobs per minute |")
    print("|---|---|---|---|---|---|")
    for label, taken in seconds.items():
        print(f"| {args.jobs} | {args.preset} | {args.reply} | {label} | {taken:.1f} | {60 * args.jobs / taken:.1f} |")
    reused = seconds.get("reused (talker batch)")
    for label in ("reloaded per job", "separate renders"):
        if reused and label in seconds:
            print(f"\ntalker batch takes {reused / seconds[label]:.2f} of the time of {label} "
                  f"({seconds[label] / reused:.2f}x the throughput)")


if __name__ == "__main__":
    main()
