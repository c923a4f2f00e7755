"""How wide filmed mouths are while they speak, against their first frame (the photo talker would be
given): the figures behind face/frames.py's TALKING_WIDTH and WIDTH_RELAX.

    python bench/mouth_width.py CLIPS_DIR [CLIPS_DIR ...]

For each clip, the mouth's width (FaceMesh's corners 61-291 over the eye corners 33-263, as a tracker
reads the video) in its first frame and on its open frames (inner lips over 0.06 eye distances apart);
then, over each folder's clips, the mean and spread of both, and the share of a first frame's distance
from the mean that carries into its talking width (the slope of one on the other; 0: every clip talks
at the same width, 1: each keeps its first frame's).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mouth import VIDEO_SUFFIXES, read_frames  # noqa: E402

OPEN = 0.06  # eye distances between the inner lips: the mouth is open


def clip_widths(path: Path) -> tuple[float, float] | None:
    """The first frame's width and the mean width of the open frames (None: no face, or never open)."""
    from talker_cli.photo import read_mouths

    mouths = read_mouths(read_frames(path)[0])
    first, open_ = mouths[0], mouths[:, 0] > OPEN
    if not np.isfinite(first).all() or not open_.any():
        return None
    return float(first[1]), float(np.mean(mouths[open_, 1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clips_dirs", nargs="+", type=Path)
    args = parser.parse_args()
    print("| clips | first frame's width | talking width | carried into the talking width |")
    print("|---|---|---|---|")
    for folder in args.clips_dirs:
        named = [(clip.name, w) for clip in sorted(folder.iterdir()) if clip.suffix in VIDEO_SUFFIXES
                 for w in [clip_widths(clip)] if w is not None]
        if not named:
            continue
        widths = [w for _, w in named]
        first, talking = np.array(widths).T
        carried = f"{np.polyfit(first, talking, 1)[0]:.2f}" if len(widths) > 2 else "-"
        print(f"| {folder.name} ({len(widths)}) | {first.mean():.3f} (sd {first.std():.3f}) | "
              f"{talking.mean():.3f} (sd {talking.std():.3f}) | {carried} |")
        if len(named) <= 5:  # a few speakers: each of them
            for clip, (f, t) in named:
                print(f"|   {clip} | {f:.3f} | {t:.3f} | |")


if __name__ == "__main__":
    main()
