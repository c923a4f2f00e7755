"""Contact sheets of the mouth: for each photo, the face at rest, closed (M, B, P), mid open (E) and
wide open (AA, as shouted), the whole face above and the mouth enlarged below, as talker renders them.

    python scripts/mouth_sheet.py OUT_DIR PHOTO [PHOTO ...]

Writes OUT_DIR/mouth-STEM.png for each photo (docs/ holds the ones the README shows; docs/README.md
says where each photo comes from).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from talker_cli.artifacts import BlendshapeTrack
from talker_cli.config import RenderConfig
from talker_cli.face.blendshapes import INDEX, NAMES, VISEME_POSES
from talker_cli.face.frames import WIDTH_EASE_S, FrameRenderer
from talker_cli.photo import load_photo

TILE = 200


def poses() -> dict[str, np.ndarray]:
    wide = VISEME_POSES["aa"].copy()
    wide[INDEX["jawOpen"]] = min(1.0, 1.8 * wide[INDEX["jawOpen"]])
    return {"rest": VISEME_POSES["sil"], "closed (M/B/P)": VISEME_POSES["PP"], "mid (E)": VISEME_POSES["E"],
            "wide (AA, shouted)": wide}


def sheet(photo_path: Path) -> Image.Image:
    photo = load_photo(photo_path, RenderConfig())
    renderer = FrameRenderer(photo)
    shapes = poses()
    # The rest before speaking, then each pose as it is drawn once speaking has begun (the mouth's
    # width has relaxed towards the talking width by then: face/frames.py)
    lead = int(np.ceil(WIDTH_EASE_S * 25)) + 1
    rows = [shapes["rest"]] + [shapes["closed (M/B/P)"]] * lead + list(shapes.values())[1:]
    track = BlendshapeTrack(25, NAMES, np.stack(rows).astype(np.float32))
    drawn_at = [0] + [lead + 1 + k for k in range(len(shapes) - 1)]
    landmarks = photo.landmarks_px
    lo, hi = landmarks.min(axis=0), landmarks.max(axis=0)
    side, centre = float(max(hi - lo)) * 1.3, (lo + hi) / 2
    mouth = landmarks[[13, 14]].mean(axis=0)
    half = float(np.ptp(landmarks[[61, 291], 0])) * 0.95
    canvas = Image.new("RGB", (TILE * len(shapes), TILE * 2 + 22), "white")
    draw = ImageDraw.Draw(canvas)
    for i, label in enumerate(shapes):
        frame = Image.fromarray(renderer.render(track, drawn_at[i]))
        face_box = tuple(int(round(v)) for v in (*(centre - side / 2), *(centre + side / 2)))
        mouth_box = tuple(int(round(v)) for v in (mouth[0] - half, mouth[1] - half, mouth[0] + half, mouth[1] + half))
        canvas.paste(frame.crop(face_box).resize((TILE, TILE), Image.LANCZOS), (i * TILE, 22))
        canvas.paste(frame.crop(mouth_box).resize((TILE, TILE), Image.LANCZOS), (i * TILE, TILE + 22))
        draw.text((i * TILE + 6, 5), label, fill="black")
    return canvas


def main(out_dir: Path, photos: list[Path]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in photos:
        target = out_dir / f"mouth-{path.stem}.png"
        sheet(path).save(target)
        print(target)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
