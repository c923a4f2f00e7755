"""What the photo's eyes show that a blink needs: how far each upper lid's lashes reach above its
edge, read from the pixels (face/rig.py's blink moves them whole to where the lids meet)."""

from __future__ import annotations

import numpy as np

from .interior import luminance, sample
from .rig import EYES, LASH_BAND, LIDS, eye_axes


def lash_bands(image: np.ndarray, landmarks: np.ndarray) -> dict[str, float]:
    """How far each upper lid's lashes reach above its edge (FaceMesh's contour), in half eye widths:
    up the middle of the lid, to where the light climbs half way from the darkest at the edge to the
    lid's skin above; LASH_BAND where no dark line is there to read (or the lid runs off the image)."""
    bands = {}
    for name, idx in EYES.items():
        _, _, ey, half = eye_axes(landmarks, idx)
        reach, skin_from = int(0.6 * half), int(0.45 * half)  # the lid's skin: 0.45-0.6 half widths up
        runs = []
        for point in landmarks[list(LIDS[name][0][2:5])] if reach >= 4 else ():  # the upper lid's middle three
            profile = luminance(sample(image, point - np.arange(reach + 1)[:, None] * ey))
            if len(profile) < reach + 1:
                continue
            deepest = int(np.argmin(profile[:3]))
            darkest, skin = float(profile[deepest]), float(np.median(profile[min(skin_from, reach - 1):]))
            if skin - darkest < 0.1 * skin:
                continue
            light = np.flatnonzero(profile[deepest:] > (darkest + skin) / 2)
            runs.append(float(deepest + light[0]) if len(light) else float(reach))
        bands[name] = float(np.clip(np.median(runs) / half, 0.0, 0.3)) if runs else LASH_BAND
    return bands
