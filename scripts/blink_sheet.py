"""Contact sheets of a blink: for each photo, the eyes open, half shut and shut, the whole face above
and the eyes enlarged below, as talker renders them.

    python scripts/blink_sheet.py OUT_DIR PHOTO [PHOTO ...] [--taller-eyes F]

Writes OUT_DIR/blink-STEM.png for each photo. --taller-eyes F first draws each eye of the photo F
times taller (a wide-eyed face, as a cartoon's: where a blink's lid must not drag the brow) and
sheets that photo instead (OUT_DIR/blink-STEM-taller-eyes.png).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from talker_cli.artifacts import BlendshapeTrack
from talker_cli.config import RenderConfig
from talker_cli.face.blendshapes import INDEX, NAMES
from talker_cli.face.frames import FrameRenderer
from talker_cli.photo import find_landmarks, load_photo

TILE = 240


def taller_eyes(image: np.ndarray, factor: float) -> np.ndarray:
    """The photo (RGB) with each eye, and a little of the skin round it, drawn `factor` times taller."""
    import cv2

    marks = find_landmarks(image)
    result = image.astype(np.float32)
    for a, b in ((33, 133), (263, 362)):
        centre, width = (marks[a] + marks[b]) / 2, float(np.linalg.norm(marks[a] - marks[b]))
        r = int(0.75 * width)
        x0, y0 = int(centre[0] - r), int(centre[1] - r)
        taller = cv2.resize(image[y0:y0 + 2 * r, x0:x0 + 2 * r], None, fx=1.0, fy=factor, interpolation=cv2.INTER_CUBIC)
        cut = (taller.shape[0] - 2 * r) // 2
        ys, xs = np.mgrid[0:2 * r, 0:2 * r]
        mask = np.clip((1 - np.hypot((xs - r) / r, (ys - r) / (0.6 * r))) / 0.3, 0, 1)[..., None]
        result[y0:y0 + 2 * r, x0:x0 + 2 * r] = mask * taller[cut:cut + 2 * r] + (1 - mask) * result[y0:y0 + 2 * r, x0:x0 + 2 * r]
    return result.astype(np.uint8)


def sheet(photo_path: Path) -> Image.Image:
    photo = load_photo(photo_path, RenderConfig())
    renderer = FrameRenderer(photo)
    shut = {"open": 0.0, "half": 0.5, "shut": 1.0}
    weights = np.zeros((len(shut), len(NAMES)), np.float32)
    weights[:, INDEX["eyeBlinkLeft"]] = weights[:, INDEX["eyeBlinkRight"]] = list(shut.values())
    track = BlendshapeTrack(25, NAMES, weights)
    landmarks = photo.landmarks_px
    lo, hi = landmarks.min(axis=0), landmarks.max(axis=0)
    side, centre = float(max(hi - lo)) * 1.3, (lo + hi) / 2
    eyes = landmarks[[33, 263]].mean(axis=0)
    half = float(np.linalg.norm(landmarks[33] - landmarks[263])) * 0.75
    canvas = Image.new("RGB", (TILE * len(shut), TILE + TILE // 2 + 22), "white")
    draw = ImageDraw.Draw(canvas)
    for i, label in enumerate(shut):
        frame = Image.fromarray(renderer.render(track, i))
        face_box = tuple(int(round(v)) for v in (*(centre - side / 2), *(centre + side / 2)))
        eyes_box = tuple(int(round(v)) for v in (eyes[0] - half, eyes[1] - half / 2, eyes[0] + half, eyes[1] + half / 2))
        canvas.paste(frame.crop(face_box).resize((TILE, TILE), Image.LANCZOS), (i * TILE, 22))
        canvas.paste(frame.crop(eyes_box).resize((TILE, TILE // 2), Image.LANCZOS), (i * TILE, TILE + 22))
        draw.text((i * TILE + 6, 5), label, fill="black")
    return canvas


def main(out_dir: Path, photos: list[Path], factor: float | None) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for path in photos:
            target, source = out_dir / f"blink-{path.stem}.png", path
            if factor:
                source = Path(scratch) / f"{path.stem}-taller-eyes.png"
                Image.fromarray(taller_eyes(np.asarray(Image.open(path).convert("RGB")), factor)).save(source)
                target = out_dir / f"blink-{path.stem}-taller-eyes.png"
            sheet(source).save(target)
            print(target)


if __name__ == "__main__":
    args = sys.argv[1:]
    factor = None
    if "--taller-eyes" in args:
        at = args.index("--taller-eyes")
        factor = float(args[at + 1])
        args = args[:at] + args[at + 2:]
    if len(args) < 2:
        sys.exit(__doc__)
    main(Path(args[0]), [Path(p) for p in args[1:]], factor)
