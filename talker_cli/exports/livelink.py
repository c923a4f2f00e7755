"""Live Link Face CSV, as the Live Link Face app records it and Unreal's importers read it.

Columns: Timecode (HH:MM:SS:FF.mmm), BlendShapeCount (61), the 52 ARKit shapes in PascalCase,
then the head's and each eye's yaw, pitch and roll in radians (the eyes do not move here).
"""

from __future__ import annotations

import csv
import io
import math

HEAD_AND_EYES = ("HeadYaw", "HeadPitch", "HeadRoll", "LeftEyeYaw", "LeftEyePitch", "LeftEyeRoll",
                 "RightEyeYaw", "RightEyePitch", "RightEyeRoll")


def header(names) -> list[str]:
    return ["Timecode", "BlendShapeCount"] + [n[0].upper() + n[1:] for n in names] + list(HEAD_AND_EYES)


def timecode(frame: int, fps: int) -> str:
    seconds, ff = divmod(frame, fps)
    minutes, ss = divmod(seconds, 60)
    hh, mm = divmod(minutes, 60)
    return f"{hh:02d}:{mm:02d}:{ss:02d}:{ff:02d}.000"


def to_csv(animation) -> str:
    track = animation.track
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header(track.names))
    count = len(track.names) + len(HEAD_AND_EYES)
    for frame, row in enumerate(track.weights):
        head = track.head[frame] if track.head is not None else (0.0, 0.0, 0.0)
        rotation = [round(math.radians(float(v)), 5) for v in head]
        writer.writerow([timecode(frame, track.fps), count, *(f"{float(v):.4f}" for v in row), *rotation, *[0.0] * 6])
    return out.getvalue()
