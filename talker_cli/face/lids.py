"""A blink as lids closing over the eye, not the eye squeezed shut.

The upper lid slides down over the eye: its lashes move whole to the lid's edge, the skin above them
stretches to follow, and below the edge the eye is what it was (the lid covers it; a field that moved
the eye down with the lid squeezed the iris into a slit at half a blink and left its catchlight at
the meeting line of a shut eye). The lower lid rises over the last part of the blink (by the square
of its weight) to meet the upper one. A lid's position is not linear in the blink's weight, so a blink
is not a fixed field scaled: each frame's is drawn from the lid's geometry (face/rig.py measures it).
The skin stretched over the eye is drawn smoothed along the lid, as a shut lid's skin shows no streaks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .easing import smoothstep


# A lid's skin stretched this many times its height is drawn smoothed along the lid: from STRETCH_FROM
# some of it, from STRETCH_FULL all of it, faded in over SKIN_FADE of the band from its anchor.
STRETCH_FROM = 1.5
STRETCH_FULL = 3.0
SKIN_FADE = 0.35
# How far the smoothing reaches along the lid (half eye widths, one standard deviation).
SKIN_SMOOTH = 0.12


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

    def stretched_skin(self, blink: float) -> tuple[np.ndarray, np.ndarray]:
        """The points (indices into `points`) of the upper lid's skin stretched over the eye, and how much
        each takes of the skin smoothed along the lid (0 to 1): a band stretched several times its
        height draws every lash tip, wrinkle and pore in it as a vertical streak, which a shut lid's
        skin does not show. Nothing until the skin stretches to STRETCH_FROM times its height, all of
        it from STRETCH_FULL; faded in from the anchor, where the lid's skin meets the still skin."""
        edge, _, _, _ = self._surfaces(blink)
        top = edge - self.lash  # where the lashes begin, below the stretched skin
        span = np.maximum(top - self.anchor, 1e-6)
        ratio = span / np.maximum(span - float(np.clip(blink, 0.0, 1.0)) * self.upper_slide, 1e-6)
        place = (self.v - self.anchor) / span
        weight = np.clip((ratio - STRETCH_FROM) / (STRETCH_FULL - STRETCH_FROM), 0.0, 1.0) * smoothstep(0.0, SKIN_FADE, place)
        inside = np.flatnonzero((self.v > self.anchor) & (self.v < top) & (weight > 0))
        return inside, weight[inside]

    def along_kernel(self) -> np.ndarray:
        """A Gaussian of SKIN_SMOOTH half eye widths along the eye's axis and none across it, as an
        image filter (square, odd, summing to 1)."""
        import cv2

        sigma = max(SKIN_SMOOTH * self.half_px, 0.5)
        reach = int(np.ceil(3 * sigma))
        line = np.zeros((2 * reach + 1, 2 * reach + 1), np.float32)
        line[reach] = np.exp(-0.5 * (np.arange(-reach, reach + 1) / sigma) ** 2)
        angle = float(np.degrees(np.arctan2(self.ey[0], self.ey[1])))  # the eye's axis against the image's rows
        kernel = cv2.warpAffine(line, cv2.getRotationMatrix2D((reach, reach), angle, 1.0), line.shape[::-1],
                                flags=cv2.INTER_LINEAR)
        return kernel / kernel.sum()

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
