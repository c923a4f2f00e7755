"""ARKit JSON: every frame's 52 blendshape weights by name, the head's rotation and the visemes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..artifacts import BlendshapeTrack
from ..face.blendshapes import HEAD_AXES
from ..face.visemes import viseme_segments
from . import json_rows


def to_json(animation) -> str:
    """One frame per line. Written row by row with json's C encoder: an hour of frames is 70 MB of
    JSON, which the indenting (pure Python) encoder took 10 s and 650 MB to make."""
    track = animation.track
    head = track.head if track.head is not None else [[0.0, 0.0, 0.0]] * track.frame_count
    visemes = [[s.viseme, round(s.start_s, 4), round(s.end_s, 4)] for s in viseme_segments(animation.segments)]
    return "".join([
        "{\n",
        f'  "fps": {track.fps},\n',
        f'  "names": {json.dumps(list(track.names))},\n',
        f'  "frames": [\n    {json_rows(track.weights, 4)}\n  ],\n',
        f'  "head_rotation_deg": {{"axes": {json.dumps(list(HEAD_AXES))}, "frames": [\n',
        f"    {json_rows(head, 3)}\n  ]}},\n",
        f'  "visemes": [\n    {json_rows(visemes)}\n  ]\n',
        "}\n",
    ])


def read_track(path: Path) -> BlendshapeTrack:
    """A file to_json wrote, read back as the track it was made from (weights and head rotation; a file
    of the weights alone is a track without the head's motion)."""
    kept = json.loads(Path(path).read_text())
    head = kept.get("head_rotation_deg")
    return BlendshapeTrack(kept["fps"], tuple(kept["names"]), np.array(kept["frames"], np.float32),
                           head=np.array(head["frames"], np.float32) if head else None)
