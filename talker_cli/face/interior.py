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


# Drawn larger than it was filmed, a filmed interior keeps its source's blur, magnified: GRID s1's
# faces (eye corners 63 px apart, MPEG-1) spread the light inside an open mouth by 0.12-0.16 of the
# skin's (standard deviation), three natural speakers filmed at 126-183 px by 0.23-0.32; the bank drawn
# at their size spread it by 0.10, a grey band where they showed teeth and the dark between them. From
# the bank's own size to twice it, the texture's light is spread further about its mean, up to
# SIZE_CONTRAST times (speech-c: 0.23 against her own 0.32; 3 times matched her, but scored lower by SSIM,
# which takes teeth drawn where hers are not as a loss).
SIZE_CONTRAST = 2.0


def at_size(texture: np.ndarray, scale: float) -> np.ndarray:
    """A filmed texture drawn `scale` times the size it was filmed at, with its light spread as a
    sharper filming would show it (SIZE_CONTRAST); its hue kept, pixel by pixel."""
    gain = 1 + (SIZE_CONTRAST - 1) * float(np.clip(scale - 1, 0.0, 1.0))
    if gain == 1:
        return texture
    light = luminance(texture)
    spread = np.maximum(float(light.mean()) + gain * (light - float(light.mean())), 0.0)
    return (texture * (spread / np.maximum(light, 1e-3))[..., None]).astype(np.float32)


@dataclass(frozen=True, eq=False)
class InteriorBank:
    """Filmed interiors in units of the light they were filmed in (light_units)."""
    textures: np.ndarray  # n x GRID_T x GRID_U x 3, float32
    openings: np.ndarray  # n, eye distances, increasing
    eye_px: float  # the filmed faces' eye-corner distance, pixels: the size the textures were filmed at

    def texture(self, opening: float, eye_px: float) -> np.ndarray:
        """The interior for an opening (eye distances) on a face whose eye corners are eye_px apart:
        the two nearest the opening, crossfaded, at that face's size (at_size)."""
        k = int(np.searchsorted(self.openings, opening))
        if k <= 0:
            chosen = self.textures[0]
        elif k >= len(self.openings):
            chosen = self.textures[-1]
        else:
            share = (opening - self.openings[k - 1]) / (self.openings[k] - self.openings[k - 1])
            chosen = (1 - share) * self.textures[k - 1] + share * self.textures[k]
        return at_size(chosen, eye_px / self.eye_px)


@lru_cache(maxsize=1)
def load_bank(path: Path = BANK_PATH) -> InteriorBank:
    with np.load(path) as data:
        order = np.argsort(data["openings"])
        textures = np.stack([light_units(t.astype(np.float32), skin)
                             for t, skin in zip(data["textures"][order], data["skins"][order])])
        return InteriorBank(textures=textures.astype(np.float32), openings=data["openings"][order].astype(np.float32),
                            eye_px=float(np.median(data["eye_px"])))
