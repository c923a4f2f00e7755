"""The mouth's track against filmed speakers without drawing it: a quick loop for changes to the
visemes or the blendshapes, before bench/mouth.py draws and reads them.

Takes a run of bench/mouth.py kept with `--json --curves --work WORK_DIR` and, for each of its clips,
makes the track again with the current code from the clip's sound in WORK_DIR (transcript and phones
read once and kept there as NAME.phones.json; --fresh reads them again), maps the track's opening to
what FaceMesh read of that run's drawing by a straight line fitted per clip (the drawing's own gain and
offset), and scores it as bench/mouth.py scores a drawn video: r, range ratio, closed frames shown
closed. Seconds per set instead of minutes; the figures run a little above the drawn ones (r about
0.02 on GRID), so a change is judged by its difference from the unchanged code here, and believed
once bench/mouth.py has drawn it.

    python bench/mouth_track.py RUN.json WORK_DIR [--json] [--fresh]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mouth import compare, summary  # noqa: E402

from talker_cli.artifacts import BlendshapeTrack, Phone  # noqa: E402
from talker_cli.exports.arkit import read_track  # noqa: E402


def read_phones(sound: Path, kept: Path, fresh: bool, engines: dict) -> list[Phone]:
    """The clip's phones as `talker render --audio` finds them (bench/lipsync.py's path), kept beside the sound."""
    if kept.is_file() and not fresh:
        return [Phone(*row) for row in json.loads(kept.read_text())]
    from lipsync import analyze

    if not engines:
        from talker_cli.aligners.alignment import PocketsphinxAligner
        from talker_cli.listening.asr import make_asr
        from talker_cli.config import load_config

        engines["config"] = load_config("cpu", {})
        engines["asr"], engines["aligner"] = make_asr(engines["config"].asr), PocketsphinxAligner()
        engines["asr"].load()
        engines["aligner"].load()
    phones = analyze(sound, engines["config"], engines["asr"], engines["aligner"])["track"].phones
    kept.write_text(json.dumps([[p.label, p.start_s, p.end_s] for p in phones]))
    return list(phones)


def drawn_line(track: BlendshapeTrack, read: np.ndarray) -> tuple[float, float]:
    """Slope and offset from the run's track opening (its NAME.blendshapes.json) to what was read of its drawing."""
    from talker_cli.face.blendshapes import track_opening

    asked = track_opening(track)
    n = min(len(asked), len(read))
    keep = np.isfinite(read[:n])
    slope, offset = np.polyfit(asked[:n][keep], read[:n][keep], 1)
    return float(slope), float(offset)


def track_curve(phones: list[Phone], fps: int, frames: int) -> np.ndarray:
    """The current code's track opening, frame by frame, for these phones."""
    from talker_cli.config import RenderConfig, VisemeConfig
    from talker_cli.face.blendshapes import blendshape_track, track_opening
    from talker_cli.face.visemes import viseme_track

    visemes = VisemeConfig()
    track = blendshape_track(viseme_track(phones, visemes), frames / fps, visemes,
                             RenderConfig(fps=fps, blink_rate=0, head_motion=0))
    return track_opening(track)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="bench/mouth.py --json --curves output")
    parser.add_argument("work", type=Path, help="its --work folder")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--fresh", action="store_true", help="transcribe and align the sounds again")
    args = parser.parse_args()
    run = json.loads(args.run.read_text())
    engines: dict = {}
    rows = []
    for clip in run["clips"]:
        if "curves" not in clip:
            raise SystemExit(f"{args.run} has no curves: run bench/mouth.py with --json --curves")
        stem = Path(clip["clip"]).stem
        real, read = np.array(clip["curves"]["real"], float), np.array(clip["curves"]["talker"], float)
        saved = read_track(args.work / f"{stem}.blendshapes.json")
        phones = read_phones(args.work / f"{stem}.wav", args.work / f"{stem}.phones.json", args.fresh, engines)
        slope, offset = drawn_line(saved, read)
        opening = slope * track_curve(phones, saved.fps, len(real)) + offset
        rows.append({"clip": clip["clip"], **compare(real, opening[:len(real)])})
    result = {"run": str(args.run), "summary": summary(rows), "clips": rows}
    if args.json:
        print(json.dumps(result, indent=1))
        return
    s = result["summary"]
    print(f"{s['clips']} clips, track only: mean r {s['mean_r']:.3f} (best {s['mean_best_r']:.3f}), range ratio "
          f"median {s['median_range_ratio']:.2f} (min {s['min_range_ratio']:.2f}), closed frames shown closed "
          f"{s['closed_shown']:.3f}")


if __name__ == "__main__":
    main()
