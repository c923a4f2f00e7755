"""The inside of the mouth, drawn where the lips part. Where the photo shows no teeth, filmed mouths'
insides (face/interior.py) stretched into the drawn inner lips, in the photo's light, with the
cavity and tongue opening between the rows past the widest filmed mouth and the tongue's tip between
the teeth for TH. Under a photo's own teeth (kept by face/layers.py), the lower part of a filmed
mouth as open, lit as the photo's teeth. Colours and light come from the photo itself: its skin
beside the mouth, its own teeth, its lips, and the side its light falls from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .interior import GRID_T, GRID_U, colourfulness, in_light, light_units, load_bank, luminance, sample, skin_beside_mouth
from .rig import (LEFT_CORNER, LOWER_CUT, LOWER_INNER, LOWER_OUTER, RIGHT_CORNER, UPPER_CUT, UPPER_INNER, UPPER_OUTER,
                  FaceRig, MouthFrame)

LOWER_LIGHT = 0.88  # the lower row, under the upper one, is that much darker than the photo's upper teeth
# Between closed lips the photo's shadow is a line darker than the lips: as the lips part it would stay
# on their edges as a dark rim around the teeth, so the interior covers it.
# Where the shadow ends: half way up from its darkest to the lip's own light, when the lip is at least
# SHADOW_CONTRAST lighter than it, within SHADOW_SHARE of the lip's thickness and SHADOW_REACH.
SHADOW_CONTRAST = 0.1
SHADOW_SHARE = 0.35
SHADOW_REACH = 0.05  # eye-corner distances: an open mouth's dark inside, a pixel or two past FaceMesh's inner lip
SEAM_OPEN = 0.03  # eye-corner distances apart, the lips have left the shadow between them behind
INTERIOR_FADE = 0.04  # eye distances past its start over which the painted interior comes in
# Towards the corners the cheeks shade the inside, half as dark again at the very corner, from CORNER_FROM
# of the way out (the bank's inside is lit as filmed up to there). Black at the corner, it drew a dark
# dot there and an interior wider than filmed mouths show theirs (bench/appearance.py, 12 GRID clips:
# gain 0.33 black, 0.35 half, 0.37 unshaded); half keeps FaceMesh reading the open mouth as wide as at
# rest, as filmed mouths read (tests/test_mouth.py), with the corners coming in (rig.CORNERS_IN).
CORNER_SHADE = 0.5
CORNER_FROM = 0.7


# The cavity and the tongue, as shares of the lips' colour channel by channel: redder than the lips,
# the cavity much darker. A photo without colour (a black-and-white print) gets them without the hue.
CAVITY_TINT = np.array([0.34, 0.17, 0.18], np.float32)
TONGUE_TINT = np.array([1.05, 0.78, 0.8], np.float32)
# How light the cavity is where it is lightest, in the skin's luminance beside the mouth: the darkest
# quarter of filmed open mouths is 0.2-0.5 of it (GRID's s1 0.48, three clips of natural speech
# 0.21-0.35), where the lips' tint alone painted 0.07-0.17, a black hole; now 0.14-0.3, shaded by depth.
CAVITY_LIGHT = 0.3


def _upper_decile(values: np.ndarray) -> float:
    """np.percentile(values, 90), by one partial sort: np.percentile's own set-up cost a frame with a
    band under the photo's teeth a fifth of its drawing."""
    at = 0.9 * (len(values) - 1)
    below = int(at)
    above = min(below + 1, len(values) - 1)
    part = np.partition(values, (below, above))
    return float(part[below] + (at - below) * (part[above] - part[below]))


def _tint(rgb: np.ndarray, tint: np.ndarray) -> np.ndarray:
    """`tint`, with its hue in proportion to how coloured `rgb` (the lips, the skin) is: none for grey."""
    grey = float(luminance(tint))
    return (grey + colourfulness(rgb) * (tint - grey)).astype(np.float32)


# Where the jaw parts between the inner lips of a photo whose upper teeth fill its opening (a smile):
# near the lower lip, so the upper teeth stay with the skull as the jaw drops. (Parted instead at the
# dark line between the rows where a photo shows both, the lower ones going with the jaw, a natural
# speaker's open mouth scored 0.003 higher by SSIM, but its opening's range read 0.89 of the filmed
# one, 0.93 split here: bench/mouth.py's figures come first.)
TEETH_SPLIT = 0.85
# Where the photo shows a dark line under its upper teeth (between the rows of a smile, or above the
# lower lip's inside), the jaw parts there instead: what lies below goes with the jaw, so its lower
# teeth drop with it and its upper teeth are not stretched into a second row. A dark line: a valley
# down the opening's middle, SPLIT_RANGE of the way down, under DARK_LINE of the light on both sides
# of it (a natural speaker's line between her rows 0.76 of it, another's under her upper teeth 0.54).
DARK_LINE = 0.8
SPLIT_RANGE = (0.3, 0.9)
# The light of the band opened at a photo's dark line is at most this share of the skin's beside the
# mouth: the darkest quarter of filmed open mouths is 0.2-0.5 of it (CAVITY_LIGHT), where a thin line's
# median, part teeth, read over half of it on 27 of 44 photos with a line (a grey band).
GAP_LIGHT_MAX = 0.5
TEETH_CHROMA = 0.4  # teeth are pale: (max - min) / max of their colour under this, lips and tongue over it
# The opening's edge is drawn as soft as the photo's camera drew sharp edges at the mouth (a one-pixel
# edge on a soft photo is a cut-out, with black spikes at the corners where filmed open mouths show a
# soft shadow), and as soft as a lip's rounded inner edge is: EDGE_ROUND eye distances, a millimetre or
# so (bench/appearance.py, natural speech: gain 0.121 drawn a pixel wide, 0.132 at the camera's blur
# alone, 0.143 with the lip's edge; 12 GRID clips 0.579, 0.584, 0.586; twice the lip's edge read the
# same within a clip's noise).
EDGE_ROUND = 0.012
EDGE_BLUR_MIN = 0.5  # pixels: the softness of an edge drawn a pixel wide
EDGE_GRADIENT_MIN = 8.0  # Sobel's gradient (grey levels): under it the mouth's box has no edge to read
SOBEL_SPREAD = float(np.sqrt(0.5 + 1 / 12))  # Sobel's [1 2 1] / 4 smoothing and the pixel's width (std, px)


@dataclass(frozen=True)
class PhotoMouth:
    """What the photo's own mouth shows, read once from its pixels."""
    shows_teeth: bool  # teeth between the inner lips (a smile): they are kept, not painted over
    teeth_split: float  # where the jaw parts between the inner lips (0 upper, 1 lower) when it shows teeth
    open_gap_px: float  # the lips' opening at the centre when the mouth is open at rest (else 0)
    teeth_rgb: np.ndarray  # the photo's teeth (when it shows them: they light the lower row painted under them)
    skin_rgb: np.ndarray  # the skin beside the mouth: the light the mouth is in
    lip_rgb: np.ndarray
    light_slope: float  # how much brighter the image's right side of the mouth is than its left
    # How far the photo's dark mouth (its lip seam, an open mouth's inside) reaches beyond each inner
    # lip landmark, in pixels: FaceMesh's inner lip lies a pixel or two inside the real lip's edge.
    dark_above: np.ndarray
    dark_below: np.ndarray
    # Under a photo's own teeth: how far the dark below the jaw's split reaches down (pixels, per
    # inner-lip point pair), the gap between the rows or above the lower lip. It is the mouth's inside
    # seen through a slit, so it joins the opening; carried down with the jaw it drew a black rim along
    # the lower lip of every open frame.
    dark_under_split: np.ndarray
    # The colour of the dark line the jaw parts at under the photo's upper teeth (the gap between its
    # rows, or above a lower lip that hides the lower teeth), else None: the band opened there is the
    # mouth's inside seen through that gap, as dark and as coloured as it, whatever drops with the jaw
    # below it (a natural speaker's filmed band 0.40 of her cheek's light, her photo's gap 0.36; the
    # filmed lower row lit as her teeth drew it at 0.57, a second row of teeth, and between a smile's
    # two rows a grey band; the cavity's tint, 0.18-0.51).
    gap_rgb: np.ndarray | None = None
    # How soft the opening's edge is drawn (pixels, the standard deviation of a Gaussian blur): the
    # camera's blur at the mouth and the lip's rounded edge (edge_blur).
    edge_blur_px: float = EDGE_BLUR_MIN


def camera_blur(image: np.ndarray, marks: np.ndarray, unit: float) -> float:
    """How soft the photo's sharpest edges around the mouth are, as the standard deviation (pixels) of
    a Gaussian blur over a sharp step: at the strongest half of the edges Canny finds, the gradient's
    fall when the image is blurred by 1 px more (Zhuo and Sim's defocus estimate), less the gradient
    operator's and the pixel's own spread. 0 where no edge is found."""
    import cv2

    centre, reach = marks[[LEFT_CORNER, RIGHT_CORNER, 13, 14]].mean(axis=0), 0.6 * unit  # 13-14: the lips' middle
    x0, y0 = (max(int(c - r), 0) for c, r in zip(centre, (reach, 0.6 * reach)))
    x1, y1 = int(centre[0] + reach), int(centre[1] + 0.6 * reach)
    grey = cv2.cvtColor(np.ascontiguousarray(image[y0:y1, x0:x1]), cv2.COLOR_RGB2GRAY)
    if min(grey.shape) < 8:
        return 0.0

    def gradient(x: np.ndarray) -> np.ndarray:
        return np.hypot(cv2.Sobel(x, cv2.CV_32F, 1, 0), cv2.Sobel(x, cv2.CV_32F, 0, 1))

    sharp = gradient(grey.astype(np.float32))
    # Canny's thresholds from the box's own gradients: fixed ones found no edge on a blurred photo
    high = float(np.percentile(sharp, 95))
    if high < EDGE_GRADIENT_MIN:
        return 0.0  # no edge to read
    edges = cv2.Canny(grey, 0.4 * high, high, L2gradient=True) > 0
    if edges.sum() < 8:
        return 0.0
    strong = edges & (sharp >= np.median(sharp[edges]))
    ratio = sharp[strong] / np.maximum(gradient(cv2.GaussianBlur(grey.astype(np.float32), (0, 0), 1.0))[strong], 1e-3)
    spread = 1.0 / np.sqrt(np.maximum(ratio ** 2 - 1, 1e-3))  # the edge's own, seen through Sobel and the pixel
    return float(np.sqrt(max(float(np.median(spread)) ** 2 - SOBEL_SPREAD ** 2, 0.0)))


def edge_blur(image: np.ndarray, marks: np.ndarray, unit: float) -> float:
    """The opening's edge softness (pixels): the camera's blur and the lip's rounded edge together."""
    return max(float(np.hypot(camera_blur(image, marks, unit), EDGE_ROUND * unit)), EDGE_BLUR_MIN)


def read_mouth(image: np.ndarray, marks: np.ndarray, frame: MouthFrame) -> PhotoMouth:
    """The photo's mouth read at its landmarks, in the mouth's frame (rig.mouth_frame)."""
    ex, ey, unit = frame.ex, frame.ey, frame.eye_px
    # Between the inner lips, what is bright is teeth.
    upper, lower = marks[UPPER_INNER[2:-2]], marks[LOWER_INNER[2:-2]]
    inside = np.concatenate([sample(image, upper + f * (lower - upper)) for f in np.linspace(0.2, 0.8, 7)])
    skin_rgb = skin_beside_mouth(image, marks, frame)
    skin_light = float(luminance(skin_rgb))
    # Teeth: as bright as filmed teeth are beside the skin (0.70-1.11 of it), and pale, where lips and
    # tongue are red (an absolute floor of 110 missed a dim video's teeth, 0.94 of its skin at 86), pale
    # in the photo's own light: their colour with the skin's cast taken out, as the bank's is
    # (interior.light_units). Read as they were, the teeth of two portraits in warm light (a dark-skinned
    # woman's, a man's yellowish ones) had 0.47 and 0.40 of chroma at their palest tenth, were taken for
    # lips, and a shout drew a black hole over them; in their light 0.11.
    pale = light_units(inside, skin_rgb)
    chroma = (pale.max(axis=1) - pale.min(axis=1)) / np.maximum(pale.max(axis=1), 1e-6) if len(inside) else np.zeros(0)
    bright = inside[(luminance(inside) > 0.7 * skin_light) & (chroma < TEETH_CHROMA)] if len(inside) else inside
    widest = float(np.max(np.linalg.norm(lower - upper, axis=1)))
    shows_teeth = widest > 0.02 * unit and len(bright) >= max(3, len(inside) // 5)
    teeth_split, gap_rgb = TEETH_SPLIT, None
    if shows_teeth:  # the darkest line down the opening's middle, if dark beside what is above and below it
        down = np.linspace(0.05, 0.95, 19)
        profile = np.array([np.median(luminance(sample(image, upper + f * (lower - upper)))) for f in down])
        within = np.flatnonzero((down >= SPLIT_RANGE[0] - 1e-9) & (down <= SPLIT_RANGE[1] + 1e-9))
        k = int(within[np.argmin(profile[within])])
        if profile[k] < DARK_LINE * min(profile[:k].max(), profile[k + 1:].max()):
            teeth_split = float(down[k])
            gap_rgb = np.median(sample(image, upper + down[k] * (lower - upper)), axis=0).astype(np.float32)
            # A thin line's pixels are part teeth: no lighter than the dark of filmed open mouths
            gap_rgb *= min(1.0, GAP_LIGHT_MAX * skin_light / max(float(luminance(gap_rgb)), 1.0))

    sides = [sample(image, marks[[i]] + ex * s * 0.1 * unit) for i, s in ((61, -1), (291, 1))]
    left_light, right_light = (float(luminance(x).mean()) if len(x) else skin_light for x in sides)

    lips = np.concatenate([sample(image, marks[[0, 17]] + (marks[[13, 14]] - marks[[0, 17]]) * f)
                           for f in (0.35, 0.5, 0.65)])

    def shadow(inner: np.ndarray, outer: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """How far the photo's dark (the seam's shadow, an open mouth's inside) reaches beyond each
        inner-lip point into its lip: to where the light climbs half way from the darkest at the lip's
        edge to the lip's own middle (its body), within SHADOW_SHARE of the lip's thickness there. A
        threshold set by the skin instead took a dark lipstick's whole upper lip for shadow, and the
        interior painted over it. Smoothed along the lip so the painted edge stays smooth."""
        outer_u, outer_v = frame.to_uv(outer)
        order = np.argsort(outer_u)
        inner_u, inner_v = frame.to_uv(inner)
        thickness = np.abs(inner_v - np.interp(inner_u, outer_u[order], outer_v[order])) * frame.half_width_px
        runs = []
        for point, lip_px in zip(inner, thickness):
            reach = int(min(SHADOW_REACH * unit, SHADOW_SHARE * lip_px))
            if reach < 1:
                runs.append(0.0)
                continue
            profile = luminance(sample(image, point + np.arange(0, int(lip_px / 2) + 2)[:, None] * direction))
            if len(profile) < int(lip_px / 2) + 2:
                runs.append(0.0)  # the lip runs off the image
                continue
            deepest = int(np.argmin(profile[:3]))
            darkest, body = float(profile[deepest]), float(np.median(profile[-3:]))
            if body - darkest < SHADOW_CONTRAST * body:
                runs.append(0.0)  # no dark line at this lip's edge
                continue
            half = (darkest + body) / 2
            light = np.flatnonzero(profile[deepest + 1:reach + 1] > half) + deepest + 1
            if not len(light):
                runs.append(float(reach))
                continue
            k = int(light[0])  # where it crossed half way, to a fraction of a pixel
            runs.append(min(k - 1 + (half - profile[k - 1]) / max(profile[k] - profile[k - 1], 1e-6), float(reach)))
        run = np.array(runs, np.float32)
        padded = np.pad(run, 1, mode="edge")
        return (0.25 * padded[:-2] + 0.5 * padded[1:-1] + 0.25 * padded[2:]).astype(np.float32)

    upper_cut, lower_cut = marks[UPPER_CUT].astype(np.float64), marks[LOWER_CUT].astype(np.float64)
    under_split = (shadow(upper_cut + teeth_split * (lower_cut - upper_cut), marks[LOWER_OUTER].astype(np.float64), ey)
                   if shows_teeth else np.zeros(len(LOWER_CUT), np.float32))
    return PhotoMouth(
        dark_under_split=under_split, gap_rgb=gap_rgb,
        dark_above=shadow(upper_cut, marks[UPPER_OUTER].astype(np.float64), -ey),
        dark_below=shadow(lower_cut, marks[LOWER_OUTER].astype(np.float64), ey),
        shows_teeth=bool(shows_teeth),
        teeth_split=teeth_split,
        open_gap_px=frame.centre_gap_px if frame.centre_gap_px > 0.03 * unit else 0.0,
        teeth_rgb=np.median(bright, axis=0) if shows_teeth else np.zeros(3, np.float32),
        skin_rgb=skin_rgb.astype(np.float32),
        lip_rgb=np.median(lips, axis=0) if len(lips) else np.array([170, 90, 90], np.float32),
        light_slope=float(np.clip((right_light - left_light) / max(left_light + right_light, 1.0), -0.4, 0.4)),
        edge_blur_px=edge_blur(image, marks, unit),
    )


class MouthPainter:
    """Paints one frame's interior (paint()) from what the photo's mouth showed."""

    def __init__(self, look: PhotoMouth, rig: FaceRig):
        import cv2

        self.cv2 = cv2
        self.rig = rig
        self.look = look
        cavity = look.lip_rgb * _tint(look.lip_rgb, CAVITY_TINT)
        self.cavity_rgb = cavity * (CAVITY_LIGHT * float(luminance(look.skin_rgb)) / max(float(luminance(cavity)), 1.0))
        self.tongue_rgb = np.clip(look.lip_rgb * _tint(look.lip_rgb, TONGUE_TINT), 0, 255)
        self.bank = load_bank()
        self.colour = colourfulness(look.skin_rgb)

    @property
    def photo_teeth(self) -> bool:
        return self.look.shows_teeth

    def paint(self, frame: np.ndarray, upper: np.ndarray, lower: np.ndarray, tongue: float = 0.0,
              hole: tuple[np.ndarray, tuple[int, int]] | None = None) -> None:
        """Paint the interior between the two edges (left to right, image pixels) into `frame`.
        tongue: the track's tongueOut, which raises the tongue's tip to the teeth and past them.
        hole: where the lips drawn forward left the mouth open (a mask and its box's top-left corner
        in the frame); the interior fills it, instead of the polygon between the edges."""
        cv2 = self.cv2
        mouth_frame = self.rig.frame
        across, unit, half = mouth_frame.ey, mouth_frame.eye_px, mouth_frame.half_width_px
        # Where the lips press together (mouthClose) the edges cross: nothing to paint there.
        lower = upper + np.maximum((lower - upper) @ across, 0.0)[:, None] * across
        gap = float(np.max((lower - upper) @ across))
        # A mouth barely open shows its interior faintly: lips a pixel apart are not a dark slot. A
        # photo open at rest shows its own mouth until what is painted is wider than its own opening
        # (the whole opening), and the interior comes in from there: painted at once, it took over a
        # GRID photo's own teeth and dark. Under a photo's own teeth the band opened below them is
        # painted from the start: stretched instead, the photo drew its upper teeth twice.
        # Lips shut but a hair apart in the photo (under 0.03 eye distances, not open at rest) keep
        # that hair at rest: the interior had come in faintly over it, so the frame at rest was not
        # the photo.
        start = 0.01 * unit if self.photo_teeth else max(0.01 * unit, self.look.open_gap_px or self.rig.frame.rest_gap_px)
        if gap <= start:
            return  # closed, or no wider than the photo's own mouth, which shows
        # The photo's dark line between closed lips, or the dark inside of a mouth open at rest, would
        # frame the teeth in black: the interior covers it, coming in as the mouth opens.
        if not self.photo_teeth:
            coming = min(gap / (SEAM_OPEN * unit), 1.0)
            upper = upper - (coming * self.look.dark_above)[:, None] * across
            lower = lower + (coming * self.look.dark_below)[:, None] * across
        lo = np.floor(np.minimum(upper.min(0), lower.min(0))).astype(int) - 2
        hi = np.ceil(np.maximum(upper.max(0), lower.max(0))).astype(int) + 3
        lo = np.maximum(lo, 0)
        hi = np.minimum(hi, [frame.shape[1], frame.shape[0]])
        if np.any(hi - lo < 2):
            return
        rows, cols = hi[1] - lo[1], hi[0] - lo[0]
        if hole is None:  # the polygon between the edges
            ss = 4  # supersampled polygon edges for smooth lips
            mask = np.zeros((rows * ss, cols * ss), dtype=np.uint8)
            outline = np.round((np.vstack([upper, lower[::-1]]) - lo) * ss * 4).astype(np.int32)  # 2 fraction bits
            cv2.fillPoly(mask, [outline], 255, cv2.LINE_AA, shift=2)
            mouth = cv2.resize(mask, (cols, rows), interpolation=cv2.INTER_AREA).astype(np.float32) / 255
        else:  # where the lips drawn forward parted
            mask, (hx, hy) = hole
            mouth = np.zeros((rows, cols), np.float32)
            sy0, sx0 = max(lo[1], hy), max(lo[0], hx)
            sy1, sx1 = min(hi[1], hy + mask.shape[0]), min(hi[0], hx + mask.shape[1])
            if sy1 > sy0 and sx1 > sx0:
                mouth[sy0 - lo[1]:sy1 - lo[1], sx0 - lo[0]:sx1 - lo[0]] = mask[sy0 - hy:sy1 - hy, sx0 - hx:sx1 - hx]

        # Each pixel's place in the mouth: u along the lips (half widths from the centre), t down
        # across the opening (0 at the upper edge, 1 at the lower), h the opening there.
        ys, xs = np.mgrid[lo[1]:hi[1], lo[0]:hi[0]].astype(np.float32)
        u = ((xs - mouth_frame.centre[0]) * mouth_frame.ex[0] + (ys - mouth_frame.centre[1]) * mouth_frame.ex[1]) / half
        top = np.interp(xs[0], upper[:, 0], upper[:, 1]).astype(np.float32)[None, :]
        bottom = np.interp(xs[0], lower[:, 0], lower[:, 1]).astype(np.float32)[None, :]
        h = np.maximum(bottom - top, 0.5)
        t = np.clip((ys - top) / h, 0.0, 1.0)

        def soft(x: np.ndarray) -> np.ndarray:  # a one-pixel anti-aliased edge at x = 0
            return np.clip(x + 0.5, 0.0, 1.0)

        # The filmed mouth drawn: as open as this one, or under a photo's own teeth as open as the
        # photo's mouth and the band together.
        filmed_opening = (self.look.open_gap_px + gap) / unit if self.photo_teeth else gap / unit
        # The cavity and the tongue: between filmed rows wider apart than any filmed mouth, and for
        # TH's tongue.
        interior = tongue_shape = None
        if filmed_opening > float(self.bank.openings[-1]) or tongue > 0.2:
            # The cavity: dark, darkest deep in the middle and at the corners, where the cheeks shade it.
            depth = 0.45 + 0.55 * np.abs(2 * t - 1) ** 2
            cavity = self.cavity_rgb * (depth * (1 - 0.5 * np.clip(np.abs(u), 0, 1) ** 3))[..., None]
            # The tongue: its back low in the mouth, its tip raised towards the teeth by tongueOut.
            arch = np.clip(1 - u * u, 0.0, 1.0)
            tongue_top = bottom - h * (0.5 + 0.8 * min(tongue, 0.5)) * np.exp(-((u / 0.55) ** 2))
            tongue_shape = soft(ys - tongue_top) * arch ** 0.5
            tongue_shade = 0.55 + 0.45 * np.clip((ys - tongue_top) / (0.25 * h + 1), 0, 1) ** 0.5
            interior = cavity + (tongue_shape * 0.9)[..., None] * (self.tongue_rgb * tongue_shade[..., None] - cavity)
        if self.photo_teeth:
            # The band opened under the photo's own upper teeth: of the filmed mouth, the share between
            # what the photo's own mouth shows above and below the split (the dark under the upper row,
            # and the lower teeth where the photo's lower lip hid them), so no second upper row is drawn.
            own = self.look.open_gap_px / (self.look.open_gap_px + gap)
            band_t = own * self.look.teeth_split + (1 - own) * t
            # Over a dark gap the filmed rows take its colour; the cavity and tongue that open between
            # them at a shout keep their own (taken into the gap's colour too, they were a flat grey
            # slab under a black band).
            cavity = interior if self.look.gap_rgb is not None else None
            interior = self._filmed(upper, xs, ys, band_t, filmed_opening, None if cavity is not None else interior, None)
            # in the light of the photo's own teeth: the filmed row's brightest that much darker than they
            shown = luminance(interior[mouth > 0.5])
            if len(shown):
                lightest = _upper_decile(shown)
                if self.look.gap_rgb is None:
                    interior = interior * (LOWER_LIGHT * float(luminance(self.look.teeth_rgb)) / max(lightest, 1.0))
                else:  # the gap's colour, in the filmed band's light and shade
                    interior = self.look.gap_rgb * np.clip(luminance(interior) / max(lightest, 1.0), 0.0, 1.0)[..., None]
            if cavity is not None:
                interior = interior + self._between(band_t, filmed_opening)[..., None] * (cavity - interior)
        else:
            interior = self._filmed(upper, xs, ys, t, filmed_opening, interior, tongue_shape if tongue > 0.2 else None)
        interior = interior * (1 + self.look.light_slope * np.clip(u, -1, 1))[..., None]
        alpha = (mouth * float(np.clip((gap - start) / (INTERIOR_FADE * unit), 0.0, 1.0)))[..., None]
        region = frame[lo[1]:hi[1], lo[0]:hi[0]].astype(np.float32)
        frame[lo[1]:hi[1], lo[0]:hi[0]] = (region + alpha * (interior - region)).round().clip(0, 255).astype(np.uint8)
        self._soften_edge(frame, alpha[..., 0], lo, hi)

    def _soften_edge(self, frame: np.ndarray, alpha: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        """The painted opening's edge as soft as the photo would show it (edge_blur_px): the frame
        around the edge (alpha: how much of each pixel of the box lo..hi the interior covers) replaced
        by its blur, wholly at the edge and less and less to a blur width or two either side, so the
        lips' own texture away from it stays as the photo has it."""
        cv2, sigma = self.cv2, self.look.edge_blur_px
        if sigma <= EDGE_BLUR_MIN or not alpha.any():
            return  # as soft as the edge is drawn already, or nothing painted
        margin = int(np.ceil(3 * sigma))
        x0, y0 = max(int(lo[0]) - margin, 0), max(int(lo[1]) - margin, 0)
        x1, y1 = min(int(hi[0]) + margin, frame.shape[1]), min(int(hi[1]) + margin, frame.shape[0])
        cover = np.zeros((y1 - y0, x1 - x0), np.float32)
        cover[lo[1] - y0:hi[1] - y0, lo[0] - x0:hi[0] - x0] = alpha
        near = cv2.GaussianBlur(cover, (0, 0), sigma)
        at_edge = np.clip(4 * near * (1 - near), 0.0, 1.0)[..., None]
        region = frame[y0:y1, x0:x1].astype(np.float32)
        blurred = cv2.GaussianBlur(region, (0, 0), sigma)
        frame[y0:y1, x0:x1] = (region + at_edge * (blurred - region)).round().clip(0, 255).astype(np.uint8)

    def _filmed(self, upper: np.ndarray, xs: np.ndarray, ys: np.ndarray, t: np.ndarray, opening: float,
                deep: np.ndarray | None, tongue_shape: np.ndarray | None) -> np.ndarray:
        """The bank's filmed interior for this opening, stretched from the drawn corners across and
        from the upper edge down (t), in the photo's light; the tongue's tip over it for TH. Wider
        than any filmed opening, the rows keep their filmed height under each lip and the cavity and
        tongue (deep) open between them, as a shout shows them, rather than teeth stretched long."""
        cv2 = self.cv2
        left, right = upper[0], upper[-1]
        along = (right - left) / max(float(np.linalg.norm(right - left)), 1e-6)
        across = (xs - left[0]) * along[0] + (ys - left[1]) * along[1]
        map_u = (across / max(float(np.linalg.norm(right - left)), 1.0) * (GRID_U - 1)).astype(np.float32)
        from_edge = np.minimum(t, 1 - t) / self._rows_share(opening)
        t_filmed = np.where(t < 0.5, np.minimum(from_edge, 0.5), 1 - np.minimum(from_edge, 0.5))
        map_t = (t_filmed * (GRID_T - 1)).astype(np.float32)
        # Drawn at this face's size (interior.at_size), except in the band under a photo's own teeth:
        # there the spread went into the dark between the rows (its lightest is the photo's teeth), and
        # a tracker read a natural speaker's opening range 0.89 of the filmed one against 0.92.
        texture = self.bank.texture(opening, self.bank.eye_px if self.photo_teeth else self.rig.frame.eye_px)
        # The filmed hue relative to the skin, as much as the photo has colour: none in a grey photo.
        grey = luminance(texture)[..., None]
        texture = grey + self.colour * (texture - grey)
        inside = cv2.remap(texture, map_u, map_t, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        inside = in_light(inside, self.look.skin_rgb)
        # Towards the corners the cheeks shade the inside (the bank's corners are the lips meeting, lit):
        # without it a tracker finds the corners of the open mouth a tenth further in than at rest.
        corner = np.clip((np.abs(2 * map_u / (GRID_U - 1) - 1) - CORNER_FROM) / (1 - CORNER_FROM), 0, 1)
        inside = inside * (1 - CORNER_SHADE * corner ** 2)[..., None]
        if deep is not None and self._rows_share(opening) < 1.0:
            inside = inside + self._between(t, opening)[..., None] * (deep - inside)
        if tongue_shape is not None:
            inside = inside + (tongue_shape * 0.9)[..., None] * (self.tongue_rgb - inside)
        return inside

    def _rows_share(self, opening: float) -> float:
        """Of an opening (eye distances), the share the filmed rows fill: all of it up to the bank's
        widest, beyond that their filmed height."""
        return min(1.0, float(self.bank.openings[-1]) / max(opening, 1e-6))

    def _between(self, t: np.ndarray, opening: float) -> np.ndarray:
        """How much of each place t down the opening is the cavity between the filmed rows (0 where
        the rows fill the opening)."""
        return np.clip((np.minimum(t, 1 - t) / self._rows_share(opening) - 0.5) / 0.25, 0.0, 1.0)
