"""The inside of the mouth, painted between the deformed inner lips: cavity, teeth, tongue."""

from __future__ import annotations

import numpy as np

from ..artifacts import FacePhoto
from .rig import FaceRig


class MouthPainter:
    """Paints the inside of the mouth between the deformed inner lips: dark cavity, teeth, tongue."""

    def __init__(self, photo: FacePhoto, rig: FaceRig):
        import cv2

        self.cv2 = cv2
        self.rig = rig
        self.teeth_rgb = self._teeth_colour(photo.image_rgb, rig)
        # Teeth already in the photo stay put above the seam and move down with the jaw below
        # it; painted teeth are only needed when the photo's lips are closed.
        self.paint_teeth = rig.frame.rest_gap_px < 0.15 * rig.frame.half_width_px

    @staticmethod
    def _teeth_colour(image: np.ndarray, rig: FaceRig) -> np.ndarray:
        """Use the photo's own teeth where they show, else an ivory white."""
        upper = rig.landmarks[[80, 81, 82, 13, 312, 311, 310]]
        lower = rig.landmarks[[88, 178, 87, 14, 317, 402, 318]]
        samples = []
        for a, b in zip(upper, lower):
            for f in np.linspace(0.25, 0.75, 5):
                x, y = (a + f * (b - a)).round().astype(int)
                if 0 <= y < image.shape[0] and 0 <= x < image.shape[1]:
                    samples.append(image[y, x])
        default = np.array([228, 222, 208], dtype=np.float32)
        if not samples:
            return default
        bright = np.array(samples, dtype=np.float32)
        bright = bright[bright.mean(axis=1) > 150]
        return bright.mean(axis=0) if len(bright) >= 3 else default

    def paint(self, frame: np.ndarray, upper: np.ndarray, lower: np.ndarray) -> None:
        cv2 = self.cv2
        across = self.rig.frame.ey
        # Where the lips press together (mouthClose) the edges cross: nothing to paint there.
        lower = upper + np.maximum((lower - upper) @ across, 0.0)[:, None] * across
        gap = float(np.max((lower - upper) @ across))
        if gap <= 0.5:
            return  # closed: the photo's own mouth shows
        alpha_max = float(np.clip(gap / 3.0, 0.0, 1.0))
        lo = np.floor(np.minimum(upper.min(0), lower.min(0))).astype(int) - 2
        hi = np.ceil(np.maximum(upper.max(0), lower.max(0))).astype(int) + 3
        lo = np.maximum(lo, 0)
        hi = np.minimum(hi, [frame.shape[1], frame.shape[0]])
        if np.any(hi - lo < 2):
            return
        size = (hi[1] - lo[1], hi[0] - lo[0])
        ss = 4  # supersampled polygon edges for smooth lips
        scale = lambda pts: np.round((pts - lo) * ss * 4).astype(np.int32)  # noqa: E731  (2 fraction bits)
        mask = np.zeros((size[0] * ss, size[1] * ss), dtype=np.uint8)
        cv2.fillPoly(mask, [scale(np.vstack([upper, lower[::-1]]))], 255, cv2.LINE_AA, shift=2)
        mouth = cv2.resize(mask, (size[1], size[0]), interpolation=cv2.INTER_AREA).astype(np.float32) / 255

        teeth = np.zeros_like(mask)
        tooth_depth = min(0.45 * gap, 0.32 * self.rig.frame.half_width_px) if self.paint_teeth else 0.0
        low_depth = min(0.2 * gap, 0.15 * self.rig.frame.half_width_px) if self.paint_teeth else 0.0
        band = np.vstack([upper, (upper + [0, tooth_depth])[::-1]])
        cv2.fillPoly(teeth, [scale(band)], 255, cv2.LINE_AA, shift=2)
        cv2.fillPoly(teeth, [scale(np.vstack([lower, (lower - [0, low_depth])[::-1]]))], 200, cv2.LINE_AA, shift=2)
        teeth = cv2.resize(teeth, (size[1], size[0]), interpolation=cv2.INTER_AREA).astype(np.float32) / 255

        ys = np.linspace(0, 1, size[0])[:, None, None]
        cavity = np.array([52, 18, 22], dtype=np.float32) * (0.6 + 0.4 * ys)
        tongue_y = lower.mean(0)[1] - 0.25 * gap - lo[1]
        xs = np.arange(size[1])[None, :] - (0.5 * (upper[0, 0] + upper[-1, 0]) - lo[0])
        yy = np.arange(size[0])[:, None] - tongue_y
        tongue = np.exp(-((xs / (0.55 * self.rig.frame.half_width_px)) ** 2 + (yy / (0.3 * gap + 1)) ** 2))
        interior = cavity + tongue[..., None] * (np.array([150, 62, 70], np.float32) - cavity) * 0.8
        corner_shade = np.clip(1 - np.abs(xs) / (self.rig.frame.half_width_px * 1.1), 0.35, 1.0)[..., None]
        interior = interior + teeth[..., None] * (self.teeth_rgb * corner_shade - interior)
        alpha = (mouth * alpha_max)[..., None]
        region = frame[lo[1]:hi[1], lo[0]:hi[0]].astype(np.float32)
        frame[lo[1]:hi[1], lo[0]:hi[0]] = (region + alpha * (interior - region)).round().clip(0, 255).astype(np.uint8)
