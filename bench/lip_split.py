"""How the lips share an opening: for each clip in CLIPS_DIR whose first frame's lips are shut, every
frame's lip landmarks against the first frame's (the head's motion taken out by a similarity on the
eye corners, nose and face sides), regressed on how far the inner lips have parted.

    python bench/lip_split.py CLIPS_DIR [--json]

Run it on filmed speakers (../shared/mouth/grid-s1) and on a folder of talker's renders of them
(bench/appearance.py --work DIR keeps them): the slopes say how far each part of the mouth moves per
unit of opening, down positive, in eye-corner distances (FaceMesh 33-263), as bench/mouth.py measures.
A filmed upper lip rises about a third of the opening, the lower lip drops the rest; face/frames.py's
UPPER_SHARE comes from here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from appearance import STABLE, _aperture, _facemesh, _points  # noqa: E402
from mouth import VIDEO_SUFFIXES, read_frames  # noqa: E402

# FaceMesh points, and which way they are read: "dy" down, "dx" outwards from the mouth's centre.
PARTS = {
    "upper lip, outer edge (0)": (0, "dy"), "upper lip, inner edge (13)": (13, "dy"),
    "cupid's bow (37)": (37, "dy"), "lower lip, inner edge (14)": (14, "dy"),
    "lower lip, outer edge (17)": (17, "dy"), "below the lower lip (18)": (18, "dy"),
    "chin (152)": (152, "dy"), "corners (61, 291)": ((61, 291), "dy"), "corners outwards (61, 291)": ((61, 291), "dx"),
}
SHUT = 0.03  # eye distances between the inner lips: the first frame's mouth is shut


def clip_moves(frames: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """(openings, moves): each frame's opening over the first frame's and each part's move (frames x
    parts), in eye distances; None when the first frame's lips are apart or its face is not found."""
    import cv2

    with _facemesh(False) as mesh:
        points = [_points(mesh, frame) for frame in frames]
    first = points[0]
    if first is None or _aperture(first) > SHUT:
        return None
    eye = float(np.linalg.norm(first[263] - first[33]))
    ex = (first[263] - first[33]) / eye
    ey = np.array([-ex[1], ex[0]])
    centre = 0.5 * (first[61] + first[291])
    openings, moves = [], []
    for seen in points[1:]:
        if seen is None:
            continue
        matrix, _ = cv2.estimateAffinePartial2D(seen[STABLE], first[STABLE])
        onto = seen @ matrix[:, :2].T + matrix[:, 2]
        row = []
        for index, axis in PARTS.values():
            indices = index if isinstance(index, tuple) else (index,)
            step = [(onto[i] - first[i]) @ (ey if axis == "dy" else ex * np.sign((first[i] - centre) @ ex))
                    for i in indices]
            row.append(float(np.mean(step)) / eye)
        openings.append(_aperture(seen) - _aperture(first))
        moves.append(row)
    return np.array(openings), np.array(moves)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clips_dir", type=Path)
    parser.add_argument("--json", action="store_true", help="print the slopes as JSON")
    args = parser.parse_args()
    clips = sorted(p for p in args.clips_dir.iterdir() if p.suffix.lower() in VIDEO_SUFFIXES)
    openings, moves, used = [], [], 0
    for clip in clips:
        found = clip_moves(read_frames(clip)[0])
        if found is not None:
            openings.append(found[0])
            moves.append(found[1])
            used += 1
    if not used:
        raise SystemExit(f"no clip in {args.clips_dir} begins with its lips shut")
    x, y = np.concatenate(openings), np.concatenate(moves)
    rows = {name: {"slope": float(np.polyfit(x, y[:, k], 1)[0]), "r": float(np.corrcoef(x, y[:, k])[0, 1])}
            for k, name in enumerate(PARTS)}
    if args.json:
        print(json.dumps({"clips": used, "frames": int(len(x)), "parts": rows}, indent=1))
        return
    print(f"{used} clips, {len(x)} frames: each part's move per unit of opening (eye distances; down, outwards +)")
    print(f"{'part':30s} {'slope':>7s} {'r':>6s}")
    for name, row in rows.items():
        print(f"{name:30s} {row['slope']:+7.3f} {row['r']:+6.2f}")


if __name__ == "__main__":
    main()
