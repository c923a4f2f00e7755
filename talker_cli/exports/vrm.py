"""VRM 1.0 expression tracks as JSON: per frame, the weight of each preset expression a VRM model
defines (the five vowels, blink, and the emotions), ready for expressionManager.setValue.

The vowels are timed from the visemes by the same rules as the ARKit mouth, with their own table:
VRM's mouth shapes are Japanese vowels, not jaw and lip muscles.
"""

from __future__ import annotations

import json

import numpy as np

VOWELS = ("aa", "ih", "ou", "ee", "oh")
EMOTION_PRESETS = {"happy": "happy", "angry": "angry", "sad": "sad", "surprised": "surprised", "neutral": "neutral"}


def _vowels(**values: float) -> np.ndarray:
    return np.array([values.get(v, 0.0) for v in VOWELS], dtype=np.float32)


VISEME_VOWELS = {
    "sil": _vowels(), "PP": _vowels(), "FF": _vowels(ih=0.2), "TH": _vowels(ih=0.3, aa=0.1),
    "DD": _vowels(ih=0.3, aa=0.15), "kk": _vowels(aa=0.25, ih=0.15), "CH": _vowels(ou=0.45, ih=0.1),
    "SS": _vowels(ih=0.45), "nn": _vowels(ih=0.25, aa=0.1), "RR": _vowels(ou=0.4, oh=0.2),
    "aa": _vowels(aa=1.0), "E": _vowels(ee=0.9), "I": _vowels(ih=0.9), "O": _vowels(oh=0.9), "U": _vowels(ou=0.9),
    "W": _vowels(ou=0.5),  # W's own pose inside U, lips nearly shut (face/visemes.PHONE_SHAPES)
    "ER": _vowels(ou=0.3, aa=0.2),  # an r-coloured vowel's pose inside RR (face/visemes.PHONE_SHAPES)
    "AH": _vowels(aa=0.7),  # the mid-central vowel's pose inside aa (face/visemes.PHONE_SHAPES)
    "breath": _vowels(aa=0.3),  # the lips parted in a pause (face/blendshapes.with_breaths)
}


def expression_tracks(animation) -> dict[str, np.ndarray]:
    from ..face.blendshapes import INDEX, closure_frames, smoothed_targets
    from ..face.emotions import EMOTIONS

    track = animation.track
    n = track.frame_count
    vowels = smoothed_targets(animation.segments, animation.duration_s, track.fps, animation.visemes, VISEME_VOWELS)
    vowels = np.clip(vowels[:n] * animation.mouth_scale, 0.0, 1.0)
    for frames in closure_frames(animation.segments, track.fps, n):
        vowels[frames] = 0.0  # lips shut: no vowel shows
    vowels[track.weights[:n, INDEX["mouthClose"]] >= 0.9] = 0.0  # nor where the closure's shape reaches
    tracks = {name: vowels[:, i] for i, name in enumerate(VOWELS)}
    tracks["blink"] = 0.5 * (track.weights[:, INDEX["eyeBlinkLeft"]] + track.weights[:, INDEX["eyeBlinkRight"]])
    emotions = track.emotions if track.emotions is not None else np.eye(len(EMOTIONS), dtype=np.float32)[[0] * n]
    for i, emotion in enumerate(EMOTIONS):
        tracks[EMOTION_PRESETS[emotion]] = emotions[:, i]
    tracks["relaxed"] = np.zeros(n, dtype=np.float32)
    return tracks


def to_json(animation) -> str:
    track = animation.track
    tracks = expression_tracks(animation)
    # one expression per line, by json's C encoder (the indenting one is slow on an hour of frames)
    lines = [f"    {json.dumps(name)}: {json.dumps(np.round(values.astype(np.float64), 4).tolist())}"
             for name, values in tracks.items()]
    head = {"specVersion": "1.0", "fps": track.fps, "frameCount": track.frame_count}
    return json.dumps(head, indent=2)[:-2] + ',\n  "expressions": {\n' + ",\n".join(lines) + "\n  }\n}\n"
