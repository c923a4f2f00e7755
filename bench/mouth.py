"""The mouth against real people filmed speaking: how far and when talker's mouth opens, frame by frame.

For every talking clip in CLIPS_DIR (video with its sound in one file: .mpg, .mp4, .mov, .mkv, .avi,
.webm), takes the clip's first frame as the photo and its sound as the recording, renders with
`talker render --photo FRAME --audio SOUND --fps CLIP_FPS`, and reads the inner-lip opening
(FaceMesh landmarks 13-14, over the distance between the eye corners 33-263) in every frame of both
videos:

  r              Pearson correlation of the two openings at lag 0
  best_r, lag    the best correlation with talker's video moved up to 3 frames either way; lag > 0:
                 talker's mouth is late by that many frames
  range_ratio    talker's opening range over the real one (95th minus 5th percentile)
  closed_shown   of the real clip's closed frames (opening < 0.03 eye distances), the share that
                 talker shows nearly closed (< 0.06)
  width_ratio    how wide talker's mouth is when open over how wide the real one is (the corners'
                 distance, FaceMesh 61-291, averaged over the frames each video shows open, >= 0.08):
                 the photo is the clip's own first frame, so above 1 the drawn mouth widens more
  real_range, talker_range   the two ranges, in eye distances

The summary gives the mean r, the median and the lowest range ratio, closed_shown over all
clips' closed frames together, and the median width ratio.

    python bench/mouth.py CLIPS_DIR [--json [--curves]] [--limit N] [--work DIR] [--known-words]
                          [-- TALKER RENDER FLAGS...]

--known-words renders each clip with its own words (`--transcript`, from NAME.txt or GRID's
NAME.align beside it) instead of what the ASR hears: the difference is what misheard words cost.

The clips are read where they are and never copied; --work keeps the renders (default: a temporary
folder). Flags after `--` go to `talker render` (e.g. -- --mouth-scale 1.2).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
VIDEO_SUFFIXES = {".mpg", ".mpeg", ".mp4", ".mov", ".mkv", ".avi", ".webm"}
CLOSED_REAL = 0.03  # a real mouth this open (in eye distances) is closed
CLOSED_SHOWN = 0.06  # talker's mouth under this counts as showing it closed
OPEN = 0.08  # a mouth this open (either video) counts for the width ratio
MAX_LAG = 3
sys.path.insert(0, str(ROOT))


def read_frames(path: Path) -> tuple[list[np.ndarray], float]:
    """Every frame of a video as RGB, and its frame rate."""
    import cv2

    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        raise SystemExit(f"cannot read video: {path}")
    fps = float(capture.get(cv2.CAP_PROP_FPS)) or 25.0
    frames = []
    while True:
        ok, bgr = capture.read()
        if not ok:
            break
        frames.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    capture.release()
    return frames, fps


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    keep = np.isfinite(a) & np.isfinite(b)
    if keep.sum() < 3 or np.std(a[keep]) == 0 or np.std(b[keep]) == 0:
        return float("nan")
    return float(np.corrcoef(a[keep], b[keep])[0, 1])


def _spread(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(np.percentile(x, 95) - np.percentile(x, 5)) if len(x) else float("nan")


def _open_width(opening: np.ndarray, width: np.ndarray) -> float:
    open_ = np.isfinite(opening) & np.isfinite(width) & (opening >= OPEN)
    return float(np.mean(width[open_])) if open_.any() else float("nan")


def compare(real: np.ndarray, talker: np.ndarray, real_width: np.ndarray | None = None,
            talker_width: np.ndarray | None = None) -> dict:
    """The figures of one clip from the two opening curves (frame by frame, same frame rate), and
    from the two width curves where given."""
    n = min(len(real), len(talker))
    real, talker = real[:n], talker[:n]
    by_lag = {}
    for lag in range(-MAX_LAG, MAX_LAG + 1):  # lag > 0: talker's frame t + lag matches the real frame t
        if lag >= 0:
            by_lag[lag] = _pearson(real[:n - lag], talker[lag:])
        else:
            by_lag[lag] = _pearson(real[-lag:], talker[:n + lag])
    lag = max(by_lag, key=lambda k: -np.inf if np.isnan(by_lag[k]) else by_lag[k])
    closed = np.isfinite(real) & np.isfinite(talker) & (real < CLOSED_REAL)
    real_range, talker_range = _spread(real), _spread(talker)
    return {
        "frames": n, "r": by_lag[0], "best_r": by_lag[lag], "lag": lag,
        "range_ratio": talker_range / real_range if real_range > 0 else float("nan"),
        "real_range": real_range, "talker_range": talker_range,
        "closed_frames": int(closed.sum()), "closed_shown": int((talker[closed] < CLOSED_SHOWN).sum()),
        "width_ratio": (_open_width(talker, talker_width[:n]) / _open_width(real, real_width[:n])
                        if real_width is not None and talker_width is not None else float("nan")),
    }


def known_words(clip: Path) -> str:
    """A clip's words: NAME.txt, or the words of GRID's NAME.align (start end word, pauses as sil/sp)."""
    text, align = clip.with_suffix(".txt"), clip.with_suffix(".align")
    if text.is_file():
        return " ".join(text.read_text(encoding="utf-8").split())
    if align.is_file():
        return " ".join(line.split()[2] for line in align.read_text().splitlines()
                        if len(line.split()) == 3 and line.split()[2] not in ("sil", "sp"))
    raise SystemExit(f"--known-words: neither {text.name} nor {align.name} beside {clip}")


def render_clip(clip: Path, work: Path, talker_flags: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Render the clip's first frame speaking its own sound; the real and rendered mouths, frames x
    (opening, width) each."""
    import cv2
    import imageio_ffmpeg

    frames, fps = read_frames(clip)
    if not frames:
        raise SystemExit(f"no frames in {clip}")
    photo, sound, video = work / f"{clip.stem}.png", work / f"{clip.stem}.wav", work / f"{clip.stem}.mp4"
    cv2.imwrite(str(photo), cv2.cvtColor(frames[0], cv2.COLOR_RGB2BGR))
    subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-loglevel", "error", "-y", "-i", str(clip), "-vn",
                    "-ac", "1", "-ar", "16000", str(sound)], check=True)
    video.unlink(missing_ok=True)
    talker = [str(Path(sys.executable).parent / "talker"), "render", "--photo", str(photo), "--audio", str(sound),
              "--fps", str(int(round(fps))), "-o", str(video), "--quiet", *talker_flags]
    done = subprocess.run(talker, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"talker render failed on {clip.name} (exit {done.returncode}): {done.stderr.strip()}")
    rendered, _ = read_frames(video)
    # Both videos read as talker's renderer reads its own probes (photo.read_mouth_openings): FaceMesh
    # tracking the face from frame to frame.
    from talker_cli.photo import read_mouths

    return read_mouths(frames), read_mouths(rendered)


def summary(rows: list[dict]) -> dict:
    ratios = np.array([row["range_ratio"] for row in rows])
    widths = np.array([row["width_ratio"] for row in rows])
    closed = sum(row["closed_frames"] for row in rows)
    return {
        "clips": len(rows),
        "mean_r": float(np.nanmean([row["r"] for row in rows])),
        "mean_best_r": float(np.nanmean([row["best_r"] for row in rows])),
        "median_lag": float(np.median([row["lag"] for row in rows])),
        "median_range_ratio": float(np.nanmedian(ratios)),
        "min_range_ratio": float(np.nanmin(ratios)),
        "max_range_ratio": float(np.nanmax(ratios)),
        "closed_shown": sum(row["closed_shown"] for row in rows) / closed if closed else float("nan"),
        "median_width_ratio": float(np.nanmedian(widths)) if np.isfinite(widths).any() else float("nan"),
    }


def main() -> None:
    argv = sys.argv[1:]
    talker_flags = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clips_dir", type=Path)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--limit", type=int, default=0, help="only the first N clips")
    parser.add_argument("--work", type=Path, help="keep the photos, sounds and renders here")
    parser.add_argument("--curves", action="store_true", help="with --json: each clip's two opening curves too")
    parser.add_argument("--known-words", action="store_true", help="render with each clip's own words (NAME.txt or NAME.align)")
    args = parser.parse_args(argv)
    clips = sorted(p for p in args.clips_dir.iterdir() if p.suffix.lower() in VIDEO_SUFFIXES)
    if args.limit:
        clips = clips[:args.limit]
    if not clips:
        raise SystemExit(f"no video clips in {args.clips_dir}")
    with tempfile.TemporaryDirectory(prefix="talker-mouth-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        rows = []
        for clip in clips:
            flags = [*talker_flags, "--transcript", known_words(clip)] if args.known_words else talker_flags
            real, talker = render_clip(clip, work, flags)
            rows.append({"clip": clip.name, **compare(real[:, 0], talker[:, 0], real[:, 1], talker[:, 1])})
            if args.curves:
                rows[-1]["curves"] = {name: np.round(values, 4).tolist() for name, values in (
                    ("real", real[:, 0]), ("talker", talker[:, 0]), ("real_width", real[:, 1]),
                    ("talker_width", talker[:, 1]))}
            if not args.json:
                print(f"  {clip.name}: r {rows[-1]['r']:.2f} range {rows[-1]['range_ratio']:.2f}", file=sys.stderr)
    result = {"clips_dir": str(args.clips_dir), "talker_flags": talker_flags, "known_words": args.known_words,
              "summary": summary(rows), "clips": rows}
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"{'clip':<16} {'frames':>6} {'r':>6} {'best_r':>7} {'lag':>4} {'range':>6} {'real':>6} {'talker':>7} "
          f"{'closed':>8} {'width':>6}")
    for row in rows:
        print(f"{row['clip']:<16} {row['frames']:>6} {row['r']:>6.2f} {row['best_r']:>7.2f} {row['lag']:>4} "
              f"{row['range_ratio']:>6.2f} {row['real_range']:>6.3f} {row['talker_range']:>7.3f} "
              f"{row['closed_shown']:>3}/{row['closed_frames']:<4} {row['width_ratio']:>6.2f}")
    s = result["summary"]
    print(f"\n{s['clips']} clips: mean r {s['mean_r']:.3f} (best within +-{MAX_LAG} frames {s['mean_best_r']:.3f}, "
          f"median lag {s['median_lag']:+.0f}), range ratio median {s['median_range_ratio']:.2f} "
          f"(min {s['min_range_ratio']:.2f}, max {s['max_range_ratio']:.2f}), closed frames shown closed "
          f"{s['closed_shown']:.3f}, open width ratio median {s['median_width_ratio']:.2f}")


if __name__ == "__main__":
    main()
