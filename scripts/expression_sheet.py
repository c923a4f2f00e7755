"""Make docs/expressions.png: the face in each emotion, and the two crops of a photo.

Each emotion is drawn by the video's own renderer from a track holding that emotion at full
weight with the mouth at rest; the crops are the first frames of `--crop full` and `--crop face`.

    python scripts/expression_sheet.py samples/face.png docs/expressions.png
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from talker_cli.artifacts import BlendshapeTrack
from talker_cli.face.blendshapes import EMOTION_POSES, NAMES
from talker_cli.config import RenderConfig
from talker_cli.face.emotions import EMOTIONS
from talker_cli.photo import load_photo
from talker_cli.face.frames import FrameRenderer


def face_tile(frame: np.ndarray, landmarks: np.ndarray, tile: int) -> Image.Image:
    lo, hi = landmarks.min(axis=0), landmarks.max(axis=0)
    side = float(max(hi - lo)) * 1.3
    centre = (lo + hi) / 2
    box = tuple(int(v) for v in (*(centre - side / 2), *(centre + side / 2)))
    return Image.fromarray(frame).crop(box).resize((tile, tile), Image.LANCZOS)


def main(photo_path: Path, sheet: Path) -> None:
    config = RenderConfig(head_motion=0.0)
    photo = load_photo(photo_path, config)
    renderer = FrameRenderer(photo)
    tile = 224
    crops = [("crop full", load_photo(photo_path, config)), ("crop face", load_photo(photo_path, replace(config, crop="face")))]
    canvas = Image.new("RGB", (tile * max(len(EMOTIONS), 2), tile * 2 + 48), "white")
    draw = ImageDraw.Draw(canvas)
    for i, emotion in enumerate(EMOTIONS):
        track = BlendshapeTrack(25, NAMES, EMOTION_POSES[emotion][None].copy())
        canvas.paste(face_tile(renderer.render(track, 0), photo.landmarks_px, tile), (i * tile, 24))
        draw.text((i * tile + 6, 6), emotion, fill="black")
    for i, (label, cropped) in enumerate(crops):
        image = Image.fromarray(cropped.image_rgb)
        image.thumbnail((tile, tile), Image.LANCZOS)
        canvas.paste(image, (i * tile + (tile - image.width) // 2, 48 + tile))
        draw.text((i * tile + 6, 30 + tile), f"{label} ({cropped.image_rgb.shape[1]}x{cropped.image_rgb.shape[0]})", fill="black")
    sheet.parent.mkdir(parents=True, exist_ok=True)
    canvas.save(sheet)
    print(f"wrote {sheet}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
