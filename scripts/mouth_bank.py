"""Build the bank of filmed mouth interiors (talker_cli/data/mouth-bank.npz) from videos of a speaker.

    python scripts/mouth_bank.py OUT.npz CLIP [CLIP ...]

In every frame FaceMesh finds the inner lips; where they are open, the inside of the mouth between them
is resampled onto a fixed grid: u across the mouth from one corner (61) to the other (291), t down
from the upper inner lip to the lower one. One texture is kept per step of opening (the widest spread
of openings, from one clip where it can), with what the renderer needs to choose and light it: the
opening and the width (inner lips 13-14 and corners 78-308, in eye distances), the skin's colour
beside the mouth and the face's size (its eye-corner distance in pixels). talker's bank is made from GRID's speaker s1 (CC BY 4.0; docs/README.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mouth import read_frames  # noqa: E402  (the mouth benchmark's reader of filmed clips)

from talker_cli.face.interior import (  # noqa: E402
    BANK_OPENINGS, interior_coordinates, skin_beside_mouth,
)

MIN_OPEN = 0.03  # eye distances: thinner openings show no inside worth keeping


def candidates(path: Path) -> list[dict]:
    """Every open frame of a clip, as a bank entry."""
    import cv2
    import mediapipe as mp

    found = []
    with mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1, refine_landmarks=True) as mesh:
        for image in read_frames(path)[0]:
            result = mesh.process(image).multi_face_landmarks
            if not result:
                continue
            h, w = image.shape[:2]
            points = np.array([(p.x * w, p.y * h) for p in result[0].landmark], np.float64)
            eye = np.linalg.norm(points[33] - points[263])
            opening = np.linalg.norm(points[13] - points[14]) / eye
            if opening < MIN_OPEN:
                continue
            map_x, map_y = interior_coordinates(points)
            texture = cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REPLICATE)
            found.append({"texture": texture, "opening": opening, "width": np.linalg.norm(points[78] - points[308]) / eye,
                          "skin": skin_beside_mouth(image, points), "clip": path.stem, "eye_px": eye})
    return found


STEP_NEAR = 0.01  # eye distances: an entry this near a step of opening stands for it


def choose(found: list[dict]) -> list[dict]:
    """One entry per step of opening, from the one clip that has the most steps (the steps it lacks
    from the others): neighbouring interiors then show the same teeth in the same place, so that the
    crossfade between two (interior.InteriorBank.texture) moves one set of teeth rather than drawing
    two at once, as one frame from each of nine clips did."""
    def steps(clip: str) -> int:
        openings = np.array([e["opening"] for e in found if e["clip"] == clip])
        return sum(1 for target in BANK_OPENINGS if np.min(np.abs(openings - target)) <= STEP_NEAR)

    clips = sorted({e["clip"] for e in found})
    main = max(clips, key=lambda clip: (steps(clip), max(e["opening"] for e in found if e["clip"] == clip)), default=None)
    chosen = []
    for target in BANK_OPENINGS:
        near = sorted(found, key=lambda e: (abs(e["opening"] - target) > STEP_NEAR, e["clip"] != main,
                                            abs(e["opening"] - target)))
        if near and abs(near[0]["opening"] - target) < 0.03:
            chosen.append(near[0])
    return chosen


def main() -> None:
    out, clips = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
    found = [entry for clip in clips for entry in candidates(clip)]
    chosen = choose(found)
    if not chosen:
        raise SystemExit("no open mouths found")
    np.savez_compressed(out, textures=np.stack([e["texture"] for e in chosen]).astype(np.uint8),
                        openings=np.array([e["opening"] for e in chosen], np.float32),
                        widths=np.array([e["width"] for e in chosen], np.float32),
                        skins=np.stack([e["skin"] for e in chosen]).astype(np.float32),
                        eye_px=np.array([e["eye_px"] for e in chosen], np.float32),
                        clips=np.array([e["clip"] for e in chosen]))
    print(f"{len(chosen)} interiors from {len({e['clip'] for e in chosen})} clips, openings "
          + " ".join(f"{e['opening']:.3f}" for e in chosen), file=sys.stderr)


if __name__ == "__main__":
    main()
