"""Make docs/contact-sheet.png from a rendered MP4 and its blendshape track.

Picks the frames where the mouth is most closed (a lip closure), most open, most rounded and
where the eyes blink, and lays them side by side, full frame above and the mouth enlarged below.

    python scripts/contact_sheet.py out/demo.mp4 docs/contact-sheet.png
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from talker_cli.audio_io import ffmpeg_exe
from talker_cli.photo import find_landmarks


def read_frames(video: Path, width: int, height: int) -> np.ndarray:
    raw = subprocess.run(
        [ffmpeg_exe(), "-v", "error", "-i", str(video), "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"],
        capture_output=True, check=True,
    ).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3)


def main(video: Path, sheet: Path) -> None:
    manifest = json.loads(video.with_suffix(".json").read_text())
    track = json.loads(Path(str(video.with_suffix("")) + ".blendshapes.json").read_text())
    names = track["names"]
    weights = np.array(track["frames"])
    w, h = manifest["video"]["width"], manifest["video"]["height"]
    frames = read_frames(video, w, h)
    col = {n: weights[:, names.index(n)] for n in names}
    speaking = col["jawOpen"] > 0.05
    picks = {
        "rest": int(np.argmin(col["jawOpen"] + col["eyeBlinkLeft"])),
        "closed (M/B/P)": int(np.argmax(col["mouthClose"] * speaking)) if speaking.any() else 0,
        "open (AA)": int(np.argmax(col["jawOpen"] - col["mouthPucker"])),
        "rounded (OO)": int(np.argmax(col["mouthPucker"] + col["mouthFunnel"])),
        "blink": int(np.argmax(col["eyeBlinkLeft"])),
    }
    tile = 256
    canvas = Image.new("RGB", (tile * len(picks), tile * 2 + 24), "white")
    draw = ImageDraw.Draw(canvas)
    landmarks = find_landmarks(frames[picks["rest"]])
    lo, hi = landmarks.min(axis=0), landmarks.max(axis=0)
    side = float(max(hi - lo)) * 1.25
    centre = (lo + hi) / 2
    mouth = landmarks[[13, 14]].mean(axis=0)
    mouth_half = float(np.ptp(landmarks[[61, 291], 0])) * 1.1
    for i, (label, index) in enumerate(picks.items()):
        frame = Image.fromarray(frames[min(index, len(frames) - 1)])
        face_box = tuple(int(v) for v in (*(centre - side / 2), *(centre + side / 2)))
        mouth_box = tuple(int(v) for v in (*(mouth - mouth_half), *(mouth + mouth_half)))
        canvas.paste(frame.crop(face_box).resize((tile, tile), Image.LANCZOS), (i * tile, 24))
        canvas.paste(frame.crop(mouth_box).resize((tile, tile), Image.LANCZOS), (i * tile, 24 + tile))
        draw.text((i * tile + 6, 6), f"{label}  (frame {index})", fill="black")
    sheet.parent.mkdir(parents=True, exist_ok=True)
    canvas.save(sheet)
    print(f"wrote {sheet}: " + ", ".join(f"{k}={v}" for k, v in picks.items()))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
