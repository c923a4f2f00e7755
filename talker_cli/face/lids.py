"""A blink as lids closing over the eye, not the eye squeezed shut.

The upper lid slides down over the eye: its lashes move whole to the lid's edge, the skin above them
stretches to follow, and below the edge the eye is what it was (the lid covers it; a field that moved
the eye down with the lid squeezed the iris into a slit at half a blink and left its catchlight at
the meeting line of a shut eye). The lower lid rises over the last part of the blink (by the square
of its weight) to meet the upper one. A lid's position is not linear in the blink's weight, so a blink
is not a fixed field scaled: each frame's is drawn from the lid's geometry (face/rig.py measures it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Lids:
    """One eye's lids over the points a blink moves, in the eye's frame: v down across the eye, in half
    eye widths, and each point's lid geometry at its place along the eye."""
    points: np.ndarray  # indices into the rig's points (flattened region)
    v: np.ndarray
    lid_top: np.ndarray  # the upper lid's edge (FaceMesh's contour)
    lid_bottom: np.ndarray
    upper_slide: np.ndarray  # how far the upper lid comes down when shut
    lower_slide: np.ndarray  # how far the lower lid rises when shut
    lash: float  # the lashes' band above the upper lid's edge
    anchor: np.ndarray  # where the lid's skin stops stretching, short of the brow
    below_fade: np.ndarray  # the skin under the lower lid that stretches as it rises (0 to 1 from it)
    half_px: float
    ey: np.ndarray  # the eye's down axis in image pixels (unit)

    def _surfaces(self, blink: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The upper lid's edge and its surface's motion (above the edge), the lower lid's edge and
        its surface's motion (below it), in half eye widths down; the eye between does not move."""
        b = float(np.clip(blink, 0.0, 1.0))
        edge = self.lid_top + b * self.upper_slide
        slide = b * self.upper_slide
        # The lashes move whole by the slide; the skin from the anchor down to them stretches evenly.
        stretch = np.clip(self.v - self.anchor, 0.0, None) * slide / np.maximum(edge - self.lash - self.anchor, 1e-6)
        rise = b * b * self.lower_slide
        return edge, np.minimum(stretch, slide), self.lid_bottom - rise, -rise * (1 - self.below_fade)

    def displacement(self, blink: float) -> np.ndarray:
        """Pixels (points x 2) each point moves by at this blink weight (0 open, 1 shut)."""
        edge, upper, lower_edge, lower = self._surfaces(blink)
        down = np.where(self.v < edge, upper, np.where(self.v >= lower_edge, lower, 0.0))
        return np.outer(down * self.half_px, self.ey)

    def edge_pixels(self, blink: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The points a lid's edge crosses (indices into `points`), where each of the three surfaces
        (upper lid, eye, lower lid) would move them (3 x n x 2 pixels) and how much of each point's
        pixel each covers (3 x n): drawn by one surface alone, a lid's edge is a staircase."""
        edge, upper, lower_edge, lower = self._surfaces(blink)
        pixel = 1.0 / self.half_px
        upper_cover = np.clip((edge - self.v) / pixel + 0.5, 0.0, 1.0)
        lower_cover = np.minimum(np.clip((self.v - lower_edge) / pixel + 0.5, 0.0, 1.0), 1 - upper_cover)
        cover = np.stack([upper_cover, 1 - upper_cover - lower_cover, lower_cover])
        crossed = np.flatnonzero(cover.max(axis=0) < 1.0)
        downs = np.stack([upper[crossed], np.zeros(len(crossed)), lower[crossed]]) * self.half_px
        return crossed, downs[..., None] * self.ey, cover[:, crossed]
