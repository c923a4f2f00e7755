"""ARKit JSON: every frame's 52 blendshape weights by name, the head's rotation and the visemes."""

from __future__ import annotations

import json


def to_json(animation) -> str:
    track = animation.track
    head = track.head if track.head is not None else [[0.0, 0.0, 0.0]] * track.frame_count
    return json.dumps({
        "fps": track.fps,
        "names": list(track.names),
        "frames": [[round(float(v), 4) for v in row] for row in track.weights],
        "head_rotation_deg": {"axes": ["yaw", "pitch", "roll"],
                              "frames": [[round(float(v), 3) for v in row] for row in head]},
        "visemes": [[s.viseme, round(s.start_s, 4), round(s.end_s, 4)] for s in animation.segments],
    }, indent=2) + "\n"
