"""The smooth step the face's fields, lids and time curves ease with."""

from __future__ import annotations

import numpy as np


def smoothstep(edge0: float | np.ndarray, edge1: float | np.ndarray, x: np.ndarray) -> np.ndarray:
    """0 up to edge0, 1 from edge1, and a cubic with flat ends between."""
    t = np.clip((x - edge0) / np.maximum(edge1 - edge0, 1e-6), 0.0, 1.0)
    return t * t * (3 - 2 * t)
