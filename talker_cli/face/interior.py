"""The inside of an open mouth taken from filmed mouths (sample-based, as Video Rewrite drew it): a
small bank of real interiors, teeth with their real shapes, light and gaps, the dark band between the
rows and the tongue as filmed, each resampled onto a grid between the inner lips. A frame takes the
bank's interiors nearest the opening it draws, warped into its own inner-lip outline and lit as the
photo's skin is lit.

The bank (talker_cli/data/mouth-bank.npz) is made by scripts/mouth_bank.py from GRID's speaker s1
(CC BY 4.0).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .rig import LOWER_CUT, UPPER_CUT, MouthFrame, mouth_frame

BANK_PATH = Path(__file__).resolve().parent.parent / "data" / "mouth-bank.npz"
GRID_U, GRID_T = 48, 20  # samples across the mouth (corner to corner) and down the opening
# Openings (inner lips 13-14, eye distances) the bank keeps one interior for: an ordinary vowel is
# 0.08-0.15, a shout 0.3.
BANK_OPENINGS = tuple(float(x) for x in np.round(np.arange(0.04, 0.33, 0.02), 3))


def luminance(rgb: np.ndarray) -> np.ndarray:
    return rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32)


def colourfulness(rgb: np.ndarray) -> float:
    """0 for a grey colour (a black-and-white photo's skin) to 1 for a coloured one: how much of a hue
    the mouth's inside takes."""
    chroma = float((rgb.max() - rgb.min()) / max(float(rgb.max()), 1.0))
    return min(chroma / 0.3, 1.0)


def sample(image: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The image's colours at these points (those inside the image)."""
    xy = np.round(points).astype(int)
    inside = (xy[:, 0] >= 0) & (xy[:, 0] < image.shape[1]) & (xy[:, 1] >= 0) & (xy[:, 1] < image.shape[0])
    return image[xy[inside, 1], xy[inside, 0]].astype(np.float32)


def skin_beside_mouth(image: np.ndarray, marks: np.ndarray, frame: MouthFrame | None = None) -> np.ndarray:
    """The skin's colour below the mouth's corners and on the chin: the light the mouth is in."""
    frame = frame or mouth_frame(marks)
    skin = np.concatenate([sample(image, marks[[i]] + frame.ey * d * frame.eye_px) for i in (61, 291) for d in (0.08, 0.14)]
                          + [sample(image, marks[[152, 18]])])
    return np.median(skin, axis=0) if len(skin) else np.array([190, 150, 130], np.float32)


def interior_coordinates(marks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each cell of the bank's grid (GRID_T x GRID_U) lies in an image whose landmarks are
    `marks`: u from the mouth's corner 61 to 291, t from the upper inner lip down to the lower one."""
    upper, lower = marks[UPPER_CUT].astype(np.float64), marks[LOWER_CUT].astype(np.float64)
    left, right = upper[0], upper[-1]
    along = (right - left) / max(np.linalg.norm(right - left), 1e-6)
    length = float(np.linalg.norm(right - left))

    def at(edge: np.ndarray, u: np.ndarray) -> np.ndarray:
        position = (edge - left) @ along / length
        order = np.argsort(position)
        return np.stack([np.interp(u, position[order], edge[order, k]) for k in (0, 1)], axis=1)

    u = np.linspace(0.0, 1.0, GRID_U)
    top, bottom = at(upper, u), at(lower, u)
    t = np.linspace(0.0, 1.0, GRID_T)[:, None, None]
    points = top[None] + t * (bottom - top)[None]
    return points[..., 0].astype(np.float32), points[..., 1].astype(np.float32)


# How much of the skin's colour cast is taken as the light's: the bank's texture over its own skin's
# cast, times the photo's, each to this power (the same speaker in the same light gets the bank back).
# All of it (1) takes the skin's own colour for the light's, and a yellow video's teeth (its skin's blue
# 0.45 of its red) come out blue under a pink skin; half leaves them green-yellow.
CAST = 0.7


def _cast(rgb: np.ndarray) -> np.ndarray:
    """A colour over its own luminance: the light's cast (1, 1, 1 for grey)."""
    return np.maximum(rgb, 1.0) / max(float(luminance(np.maximum(rgb, 1.0))), 1.0)


def light_units(texture: np.ndarray, skin: np.ndarray) -> np.ndarray:
    """A filmed texture in units of its skin's luminance, with its skin's cast (to the power CAST) taken out."""
    return texture / max(float(luminance(skin)), 1.0) / _cast(skin) ** CAST


def in_light(units: np.ndarray, skin: np.ndarray) -> np.ndarray:
    """Texture units (light_units) in a photo's light: its skin's luminance and cast (to the power CAST)."""
    return units * (float(luminance(skin)) * _cast(skin) ** CAST)


@dataclass(frozen=True, eq=False)
class InteriorBank:
    """Filmed interiors in units of the light they were filmed in (light_units)."""
    textures: np.ndarray  # n x GRID_T x GRID_U x 3, float32
    openings: np.ndarray  # n, eye distances, increasing

    def texture(self, opening: float) -> np.ndarray:
        """The interior for an opening (eye distances): the two nearest the opening, crossfaded."""
        k = int(np.searchsorted(self.openings, opening))
        if k <= 0:
            return self.textures[0]
        if k >= len(self.openings):
            return self.textures[-1]
        share = (opening - self.openings[k - 1]) / (self.openings[k] - self.openings[k - 1])
        return (1 - share) * self.textures[k - 1] + share * self.textures[k]


@lru_cache(maxsize=1)
def load_bank(path: Path = BANK_PATH) -> InteriorBank:
    with np.load(path) as data:
        order = np.argsort(data["openings"])
        textures = np.stack([light_units(t.astype(np.float32), skin)
                             for t, skin in zip(data["textures"][order], data["skins"][order])])
        return InteriorBank(textures=textures.astype(np.float32), openings=data["openings"][order].astype(np.float32))
