"""Blendshape track + photo -> frames: warp the face, paint the mouth interior, move the head over a
still background.

Frames are made one at a time (render(i)), so memory does not grow with the length of the video.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..artifacts import BlendshapeTrack, FacePhoto
from ..photo import read_mouth_openings
from .blendshapes import FUNNEL_OPENING, INDEX, JAW_OPENING, LOWER_LIP_DROP, NAMES, UPPER_LIP_RAISE, lip_opening
from .calibration import AS_DRAWN, OpeningCurve, calibrate
from .easing import smoothstep
from .eyes import lash_bands
from .glasses import find_rims
from .layers import build_layers, draw_lips
from .lids import Lids
from .painter import SEAM_OPEN, MouthPainter, read_mouth
from .rig import BASIS, LEFT_CORNER, MOUTH_SHAPES, RIGHT_CORNER, MouthFrame, build_rig, mouth_basis, mouth_frame


# The widest the lips are drawn apart, in eye distances, whatever a photo's calibration asks (a face a
# tracker reads as barely open, a painting, would have its jaw dropped by an eye distance): a shout.
MAX_DRAWN_OPENING = 0.45
# How filmed speakers' lips share an opening (bench/lip_split.py: each lip's landmarks against the
# clip's closed first frame, over the inner lips' parting): the upper lip's inner edge rises 0.26-0.32
# of it and the lower lip drops the rest (GRID s1, 40 clips: 0.32 / 0.68; a natural speaker: 0.26 /
# 0.74). The jaw alone parting them left the upper lip where it was, 0.018 eye distances lower than
# filmed upper lips on open frames.
UPPER_SHARE = 0.28


@dataclass(frozen=True)
class MouthScale:
    """What the track's mouth weights become in this photo: the face's unit (the eye-corner distance)
    in pixels, how far the photo's lips are apart at the mouth's centre (0 when closed): the
    opening the track's weights start from, and how far to draw the lips apart for an opening to be
    seen as asked (calibration.py)."""
    eye_px: float
    rest_gap_px: float = 0.0
    curve: OpeningCurve = AS_DRAWN


# Before the mouth first moves, a photo open at rest keeps its own opening: filmed speakers whose first
# frame is open hold it through the silence before they speak (GRID s1's four such clips, 0.33-0.7 s;
# talker had shut it on the first frame). From the track's first movement (which itself leads the
# sound: visemes.lookahead_s, the breath before speaking) the photo's opening gives way to the track
# over this long; the frames before it are the photo, still.
LEAD_HOLD_S = 0.15
SPEECH_MOVES = ("jawOpen", "mouthClose", "mouthFunnel", "mouthPucker", "mouthLowerDownLeft", "mouthLowerDownRight",
                "mouthUpperUpLeft", "mouthUpperUpRight")


def _first_move(track: BlendshapeTrack) -> int | None:
    """The first frame in which the mouth moves for speech (None: it never does)."""
    columns = [list(track.names).index(name) for name in SPEECH_MOVES if name in track.names]
    moving = np.flatnonzero((track.weights[:, columns] > 0.01).any(axis=1))
    return int(moving[0]) if len(moving) else None


def _ease(t: np.ndarray) -> np.ndarray:
    return smoothstep(0.0, 1.0, t).astype(np.float32)


def lead_hold(track: BlendshapeTrack) -> np.ndarray:
    """Per frame, how much of the photo's own opening is kept: 1 before the track's first movement for
    speech, easing to 0 over LEAD_HOLD_S from it. Speech that begins at once (its movement leads the
    sound into the first frame) still begins on the photo's opening, held whole in the first frame,
    and the track takes over from there (a natural speaker's clip, speech from its first frame, had
    opened on her lips shut over the teeth her photo shows: its first frame 0.85 of the photo by
    SSIM, now 0.99). None at all for a still pose (one frame, as the calibration's probes: what it
    asks is drawn) or a track that never moves (the lips meet, as at rest)."""
    onset = _first_move(track)
    if onset is None or len(track.weights) == 1:
        return np.zeros(len(track.weights), np.float32)
    begin = max(onset - 1, 0)  # the last frame held whole
    return _ease(1 - (np.arange(len(track.weights)) - begin) / max(LEAD_HOLD_S * track.fps, 1.0))


# While speaking, a mouth that is wide or narrow at rest (a smile, pursed lips) relaxes towards the width
# filmed speakers talk with. FaceMesh's corners (61-291) over the eye corners' distance, on open frames:
# GRID s1 talks at 0.588 whatever its first frame's width (40 clips: 0.32 of a clip's rest width away
# from the mean carries into its talking width), three natural speakers at 0.652, 0.592 and 0.580 from
# rest widths of 0.719, 0.638 (smiles) and 0.487 (pursed). talker held the photo's width: the smiles
# talked 5-8% too wide, the pursed mouth 14% too narrow.
TALKING_WIDTH = 0.60
WIDTH_RELAX = 0.7  # of the way from the photo's width to TALKING_WIDTH
WIDTH_RELAX_MAX = 0.15  # at most this share of the photo's width, either way
WIDTH_EASE_S = 0.5  # from the first movement for speech: the video still begins on the photo


def speaking(track: BlendshapeTrack) -> np.ndarray:
    """Per frame, 0 before the mouth first moves for speech, easing to 1 over WIDTH_EASE_S from there."""
    onset = _first_move(track)
    if onset is None:
        return np.zeros(len(track.weights), np.float32)
    return _ease((np.arange(len(track.weights)) - onset) / max(WIDTH_EASE_S * track.fps, 1.0))


def talking_pucker(frame: MouthFrame, landmarks: np.ndarray) -> float:
    """The pucker weight (negative: widening) that moves the photo's mouth corners WIDTH_RELAX of the way
    to TALKING_WIDTH (by the rig's own pucker field at the corners)."""
    width_px = 2 * frame.half_width_px
    change = np.clip(WIDTH_RELAX * (TALKING_WIDTH * frame.eye_px / width_px - 1), -WIDTH_RELAX_MAX, WIDTH_RELAX_MAX)
    corners = landmarks[[LEFT_CORNER, RIGHT_CORNER]].astype(np.float64)
    moved = mouth_basis(frame, corners, side=np.array([-1.0, -1.0]))["pucker"]  # pixels per unit weight
    per_unit = float((moved[1] - moved[0]) @ frame.ex)  # the width's change per unit: negative, narrowing
    return float(change * width_px / per_unit) if per_unit < 0 else 0.0


def basis_weights(track: BlendshapeTrack, frame: int, scale: MouthScale, hold: float = 0.0) -> np.ndarray:
    """The rig's basis weights for one frame of the track. The lips part by what the track asks for
    (blendshapes.lip_opening) in this face's pixels: a photo open at rest is opened further from its
    own opening, or closed where the track asks for less (at rest, real lips meet: a smile's lips
    close over its teeth, which show again as the mouth opens), except for the share `hold` of its
    opening kept before the mouth first moves (lead_hold)."""
    w = dict(zip(track.names, track.weights[frame]))
    both = lambda name: 0.5 * (w[f"{name}Left"] + w[f"{name}Right"])  # noqa: E731
    close = w["mouthClose"]
    lower, upper = both("mouthLowerDown"), both("mouthUpperUp")
    asked = float(lip_opening(w["jawOpen"], close, lower, upper, w["mouthFunnel"]))
    drawn = min(scale.curve(asked), MAX_DRAWN_OPENING)
    unit = scale.eye_px * (drawn / asked if asked > 1e-6 else 1.0)  # the drawn eye distance
    jaw_px = JAW_OPENING * w["jawOpen"] * unit
    gap_px, rest = jaw_px * (1 - close), scale.rest_gap_px
    closing = (1 - hold) * (rest - gap_px) / rest if gap_px < rest else 0.0  # the share of the photo's opening to close
    parting, dropping = max(gap_px - rest, 0.0), max(jaw_px - rest, 0.0)
    values = {
        "lipgap": (1 - UPPER_SHARE) * parting, "chin": (1 - UPPER_SHARE) * dropping, "close": max(close, closing),
        "lowerDown": LOWER_LIP_DROP * lower * unit, "upperUp": UPPER_LIP_RAISE * upper * unit + UPPER_SHARE * parting,
        "funnel": w["mouthFunnel"], "funnelOpen": FUNNEL_OPENING * w["mouthFunnel"] * unit,
        "pucker": w["mouthPucker"],
        "smileLeft": w["mouthSmileLeft"], "smileRight": w["mouthSmileRight"],
        "stretchLeft": w["mouthStretchLeft"], "stretchRight": w["mouthStretchRight"],
        "brow": w["browInnerUp"], "blinkLeft": w["eyeBlinkLeft"], "blinkRight": w["eyeBlinkRight"],
        "browDown": both("browDown"), "browOuterUp": both("browOuterUp"), "eyeWide": both("eyeWide"),
        "squint": max(both("eyeSquint"), both("cheekSquint")), "frown": both("mouthFrown"),
    }
    return np.array([values[name] for name in BASIS], dtype=np.float32)


HEAD_RADIUS = 0.5  # from the neck's pivot to the face, in face widths: a turn of the head moves the face by this
HEAD_EASE_S = 0.5  # seconds over which the head's motion comes in from the photo's own pose


def head_offset(head_deg: np.ndarray) -> tuple[float, float, float]:
    """The track's (yaw, pitch, roll) as the photo can show it: roll in degrees, and the face's
    shift (dx, dy) in face widths that a small turn and nod make."""
    yaw, pitch, roll = (float(v) for v in head_deg)
    return roll, HEAD_RADIUS * float(np.sin(np.radians(yaw))), HEAD_RADIUS * float(np.sin(np.radians(pitch)))


# FaceMesh's face oval, around the face: the head's matte is an ellipse fitted around it.
FACE_OVAL = [10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152,
             148, 176, 149, 150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109]


def head_matte(landmarks: np.ndarray, size: tuple[int, int]) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """Where the head moves: 1 over the face and hair, fading to 0 over the neck and the background
    around it (a feathered ellipse from the face's outline), and the box (x0, y0, x1, y1) it covers.
    Inside the feather the head's motion fades out, so the background never moves and nothing is
    uncovered: a pixel or two of stretch over tens of pixels."""
    width, height = size
    oval = landmarks[FACE_OVAL]
    lo, hi = oval.min(axis=0), oval.max(axis=0)
    centre = np.array([(lo[0] + hi[0]) / 2, lo[1] + 0.42 * (hi[1] - lo[1])])  # raised: the hair is above
    half = np.array([0.5 * (hi[0] - lo[0]) * 1.3, 0.5 * (hi[1] - lo[1]) * 1.35])
    inner, outer = 0.85, 1.25  # the matte is 1 inside inner, 0 outside outer (in ellipse radii)
    x0, y0 = np.floor(np.maximum(centre - outer * half, 0)).astype(int)
    x1, y1 = np.ceil(np.minimum(centre + outer * half, [width, height])).astype(int)
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    radius = np.sqrt(((xs - centre[0]) / half[0]) ** 2 + ((ys - centre[1]) / half[1]) ** 2)
    t = np.clip((outer - radius) / (outer - inner), 0.0, 1.0)
    return (t * t * (3 - 2 * t)).astype(np.float32), (int(x0), int(y0), int(x1), int(y1))


def _feather(length: int, share: float) -> np.ndarray:
    """1 in the middle, falling smoothly to 0 over `share` of the length at each end."""
    t = np.clip(np.minimum(np.arange(length) + 0.5, length - np.arange(length) - 0.5) / max(share * length, 1.0), 0, 1)
    return t * t * (3 - 2 * t)


CLOSE = BASIS.index("close")
CLOSING_BELOW = 0.2  # eye distances under the lower lip (FaceMesh 17) that closing lips are drawn forward to
CLOSING_BESIDE = 0.33  # of the mouth's half width beside each corner that closing lips are drawn forward to
CLOSING_OVERLAP = 0.15  # lips closing over a photo's teeth move this much further: pressed, they overlap
PUCKER = BASIS.index("pucker")


class FrameRenderer:
    """Holds the rig, the head's matte and the grids; render(i) makes frame i of the track.

    Only the head's box is drawn: the rest of the frame is the still photo. Everything that does not
    change between frames (grids, the matte, the mouth's fields on the lips) is computed here, once.
    """

    def __init__(self, photo: FacePhoto, curve: OpeningCurve | None = None):
        """curve: this photo's opening curve as calibrated before (the work cache keeps it by the
        photo's content); without one the renderer calibrates it (0.2-0.5 s)."""
        import cv2

        self.cv2 = cv2
        # per track, computed once: the share of the photo's opening held, and how far speaking has begun
        self._held: tuple[BlendshapeTrack | None, np.ndarray, np.ndarray] = (None, np.zeros(0), np.zeros(0))
        # One thread: ffmpeg encodes beside the drawing, and OpenCV's own thread pool only fought it
        # for the cores (bench/render.py: drawing and encoding about 20% faster at 60 s on 2 cores).
        cv2.setNumThreads(1)
        self.photo = photo
        self._lid_smooth: dict[int, tuple[np.ndarray, tuple[int, int]]] = {}  # by eye, at its first blink
        height, width = photo.image_rgb.shape[:2]
        look = read_mouth(photo.image_rgb, photo.landmarks_px, mouth_frame(photo.landmarks_px))
        self.rig = build_rig(photo.landmarks_px, (width, height), split=look.teeth_split if look.shows_teeth else 0.5,
                             lashes=lash_bands(photo.image_rgb, photo.landmarks_px))
        self.painter = MouthPainter(look, self.rig)
        self.scale = MouthScale(eye_px=self.rig.frame.eye_px, rest_gap_px=look.open_gap_px)
        self.talking_pucker = talking_pucker(self.rig.frame, photo.landmarks_px)
        self.pivot = photo.landmarks_px[[33, 263, 152]].mean(axis=0)  # rotate about the lower face
        self.face_width = float(np.ptp(photo.landmarks_px[:, 0]))
        matte, (x0, y0, x1, y1) = head_matte(photo.landmarks_px, (width, height))
        rx0, ry0, rx1, ry1 = self.rig.roi  # the face's fields lie inside the drawn box
        self.box = (min(x0, rx0), min(y0, ry0), max(x1, rx1), max(y1, ry1))
        bx0, by0, bx1, by1 = self.box
        self.matte = np.zeros((by1 - by0, bx1 - bx0), np.float32)
        self.matte[y0 - by0:y1 - by0, x0 - bx0:x1 - bx0] = matte
        ys, xs = np.mgrid[by0:by1, bx0:bx1].astype(np.float32)
        self.grid_x, self.grid_y = xs, ys
        self.matte_x, self.matte_y = self.matte * xs, self.matte * ys
        self.roi_in_box = (slice(ry0 - by0, ry1 - by0), slice(rx0 - bx0, rx1 - bx0))
        # Glasses' rims over the lids stay on the head as the lids and brows move under them: the face
        # is drawn from the photo with the rims filled in, and the rims over it (face/glasses.py).
        self.rims = find_rims(photo.image_rgb, photo.landmarks_px)
        if self.rims is not None:
            gx0, gy0, gx1, gy1 = self.rims.box
            gx0, gy0, gx1, gy1 = max(gx0, bx0), max(gy0, by0), min(gx1, bx1), min(gy1, by1)
            self.rims_in_box = (slice(gy0 - by0, gy1 - by0), slice(gx0 - bx0, gx1 - bx0))
            if gx1 <= gx0 or gy1 <= gy0:
                self.rims = None  # outside the head's box: nothing of the face is drawn there
        self.face_rgb = photo.image_rgb if self.rims is None else self.rims.face
        # The photo's dark between closed lips belongs to the interior (its own teeth are kept whole).
        keep_dark = 0.0 if look.shows_teeth else 1.0
        self.layers = build_layers(self.rig.frame, photo.landmarks_px, (width, height), look.shows_teeth,
                                   keep_dark * look.dark_above,
                                   look.dark_under_split if look.shows_teeth else look.dark_below)
        lx0, ly0, lx1, ly1 = self.layers.box
        lx0, ly0, lx1, ly1 = max(lx0, bx0), max(ly0, by0), min(lx1, bx1), min(ly1, by1)
        self.lips_box = (lx0, ly0, lx1, ly1)
        self.lips_in_box = (slice(ly0 - by0, ly1 - by0), slice(lx0 - bx0, lx1 - bx0))
        # The lips' drawing fades into the rest of the face over the box's outer margin, where both
        # maps agree to a pixel.
        fy = _feather(ly1 - ly0, 0.2)
        fx = _feather(lx1 - lx0, 0.2)
        self.lips_feather = np.minimum(fy[:, None], fx[None, :]).astype(np.float32)
        # Closing lips move themselves and the skin just beyond them: drawn forward down to CLOSING_BELOW
        # under the lower lip, not over the whole box, made for a jaw dropped wide (half the rows).
        below = int(np.ceil(photo.landmarks_px[17, 1] + CLOSING_BELOW * self.rig.frame.eye_px))
        self.closing_rows = slice(0, max(min(below, ly1) - ly0, 2))
        # ... and across, from a third of the mouth's half width outside one corner to the other's: the
        # lips close only between the corners (the rest of the box is made for a wide jaw's cheeks).
        corners = photo.landmarks_px[[LEFT_CORNER, RIGHT_CORNER], 0]
        reach = CLOSING_BESIDE * self.rig.frame.half_width_px
        start = max(int(np.floor(corners.min() - reach)) - lx0, 0)
        self.closing_cols = slice(start, max(min(int(np.ceil(corners.max() + reach)), lx1) - lx0, start + 2))
        closing_feather = _feather(self.closing_rows.stop, 0.2)
        across = _feather(self.closing_cols.stop - self.closing_cols.start, 0.15)
        self.closing_feather = np.minimum(closing_feather[:, None], across[None, :]).astype(np.float32)
        # Last, as the probes are drawn by render() itself, with the lips drawn as asked until now.
        self.scale = replace(self.scale, curve=curve or calibrate(self._drawn_open, read_mouth_openings))

    def _in_box(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows and columns in the drawn box of the rig's points (flat indices into its region)."""
        rx0, ry0, rx1, ry1 = self.rig.roi
        rows, cols = np.unravel_index(points, (ry1 - ry0, rx1 - rx0))
        return rows + self.roi_in_box[0].start, cols + self.roi_in_box[1].start

    def _smooth_lid_skin(self, frame: np.ndarray, map_x: np.ndarray, map_y: np.ndarray, lids: Lids,
                         points: np.ndarray, share: np.ndarray) -> None:
        """A lid's stretched skin (its points in the rig's region), each pixel mixed by its share with
        the photo smoothed along the lid, read where the pixel's colour comes from."""
        rows, cols = self._in_box(points)
        smooth, (sx, sy) = self._along_lid(lids)
        source_x = (map_x[rows, cols] - sx).astype(np.float32)[None]
        source_y = (map_y[rows, cols] - sy).astype(np.float32)[None]
        smoothed = self.cv2.remap(smooth, source_x, source_y, self.cv2.INTER_LINEAR,
                                  borderMode=self.cv2.BORDER_REPLICATE)[0].astype(np.float32)
        x0, y0 = self.box[:2]
        drawn = frame[rows + y0, cols + x0].astype(np.float32)
        frame[rows + y0, cols + x0] = np.clip(drawn + share[:, None] * (smoothed - drawn) + 0.5, 0, 255).astype(np.uint8)

    def _along_lid(self, lids: Lids) -> tuple[np.ndarray, tuple[int, int]]:
        """The photo around an eye smoothed along its lid (Lids.along_kernel), and the crop's top-left
        corner: made at the eye's first blink."""
        key = id(lids)
        if key not in self._lid_smooth:
            cv2 = self.cv2
            kernel = lids.along_kernel()
            reach = kernel.shape[0] // 2
            # The crop: the lid's points in the photo, with room for the kernel and the head's motion.
            rows, cols = self._in_box(lids.points)
            rows, cols = rows + self.box[1], cols + self.box[0]
            margin = reach + int(0.5 * lids.half_px)
            height, width = self.photo.image_rgb.shape[:2]
            x0, y0 = max(int(cols.min()) - margin, 0), max(int(rows.min()) - margin, 0)
            x1, y1 = min(int(cols.max()) + margin + 1, width), min(int(rows.max()) + margin + 1, height)
            crop = np.ascontiguousarray(self.face_rgb[y0:y1, x0:x1])
            self._lid_smooth[key] = (cv2.filter2D(crop, -1, kernel, borderType=cv2.BORDER_REFLECT), (x0, y0))
        return self._lid_smooth[key]

    def _blend_lid_edge(self, frame: np.ndarray, map_x: np.ndarray, map_y: np.ndarray, shift: np.ndarray,
                        points: np.ndarray, shifts: np.ndarray, cover: np.ndarray) -> None:
        """The pixels a lid's edge crosses, each the mix of the surfaces that share it (upper lid, eye,
        lower lid) by how much of it each covers, read from where each surface's motion takes it."""
        rows, cols = self._in_box(points)
        still_x = map_x[rows, cols] + shift.reshape(-1, 2)[points, 0]  # the point before the face moved
        still_y = map_y[rows, cols] + shift.reshape(-1, 2)[points, 1]
        colours = self.cv2.remap(self.face_rgb, (still_x - shifts[..., 0]).astype(np.float32),
                                 (still_y - shifts[..., 1]).astype(np.float32), self.cv2.INTER_LINEAR,
                                 borderMode=self.cv2.BORDER_REFLECT)
        x0, y0 = self.box[:2]
        frame[rows + y0, cols + x0] = np.clip((cover[..., None] * colours).sum(axis=0) + 0.5, 0, 255).astype(np.uint8)

    def _draw_rims(self, frame: np.ndarray, map_x: np.ndarray, map_y: np.ndarray) -> None:
        """The glasses' rims drawn over the frame where the head has carried them (map_x, map_y: where
        each pixel of the rims' box comes from in the photo by the head's motion alone)."""
        cv2 = self.cv2
        gx0, gy0 = self.rims.box[:2]
        cover = cv2.remap(self.rims.cover, map_x - gx0, map_y - gy0, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                          borderValue=0)
        if not cover.any():
            return
        rims = cv2.remap(self.photo.image_rgb, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        x0, y0 = self.box[:2]
        rows, cols = self.rims_in_box
        region = frame[rows.start + y0:rows.stop + y0, cols.start + x0:cols.stop + x0]
        region[:] = cv2.blendLinear(rims, region, cover, 1 - cover)

    def _drawn_open(self, opening: float) -> np.ndarray:
        """The still face with its lips drawn `opening` eye distances apart by the jaw."""
        weights = np.zeros((1, len(NAMES)), dtype=np.float32)
        weights[0, INDEX["jawOpen"]] = opening / JAW_OPENING
        return self.render(BlendshapeTrack(25, NAMES, weights), 0)

    def head_transform(self, track: BlendshapeTrack, index: int) -> np.ndarray:
        """The head's motion in this frame as a 2 x 3 affine map of photo pixels. The video begins on the
        photo itself, not a degree off it: the motion comes in over the first HEAD_EASE_S (drawn from
        the first frame's pose instead, the head sat a degree or two to one side of the photo's for
        the whole video, and the mouth read 0.2 less often closed on filmed speakers' clips)."""
        if track.head is None:
            return self.cv2.getRotationMatrix2D(tuple(map(float, self.pivot)), 0.0, 1.0)
        ease = float(np.clip(index / max(HEAD_EASE_S * track.fps, 1.0), 0.0, 1.0))
        angle, dx, dy = head_offset(track.head[index] * ease * ease * (3 - 2 * ease))
        forward = self.cv2.getRotationMatrix2D(tuple(map(float, self.pivot)), angle, 1.0)
        forward[:, 2] += (dx * self.face_width, dy * self.face_width)
        return forward

    def _lips_forward(self, frame: np.ndarray, weights: np.ndarray, still_x: np.ndarray, still_y: np.ndarray,
                      gap: float, closing: bool) -> tuple[np.ndarray, tuple[int, int]]:
        """The lips drawn forward into the frame's lips box (layers.draw_lips) from where each of its
        pixels lies in the still photo; returns the hole they leave for the painter (a mask and its
        top-left corner). Closing over a photo open at rest, what lies between the lips (its own teeth
        too) stays where it was and nothing is left to paint: closed by the backward map, it slid
        together with the lips and its middle, the dark of the opening, went first (a GRID photo's
        darkest there 78 -> 90 half way shut, a webcam speaker's 28 -> 56: a pale, shut mouth)."""
        cv2 = self.cv2
        parted = float(np.clip(gap / (SEAM_OPEN * self.rig.frame.eye_px), 0.0, 1.0))
        rows, cols, feather = ((self.closing_rows, self.closing_cols, self.closing_feather) if closing
                               else (slice(None), slice(None), self.lips_feather))
        still_x, still_y = np.ascontiguousarray(still_x[rows, cols]), np.ascontiguousarray(still_y[rows, cols])
        if closing and self.painter.photo_teeth:
            # Lips pressed shut over teeth overlap: the close field follows each lip's gap smoothly and falls
            # short of the photo's own by up to 5% beside the corners, where the photo between showed as a
            # dark seam (a mouth opened 0.3 eye distances read 0.053 open at M/B/P; 0.014 with this).
            weights = weights.copy()
            weights[CLOSE] *= 1 + CLOSING_OVERLAP
        lips, hole = draw_lips(self.layers, self.photo.image_rgb, weights, still_x, still_y, parted, cv2,
                               near=closing)
        if closing:
            if not self.painter.photo_teeth:  # (over teeth the lips are drawn over the photo where it is already)
                inside = cv2.remap(self.photo.image_rgb, still_x, still_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
                lips = cv2.blendLinear(inside, lips, hole, 1 - hole)
            hole = np.zeros_like(hole)
        lx0, ly0 = self.lips_box[0] + (cols.start or 0), self.lips_box[1]
        ly1, lx1 = ly0 + lips.shape[0], lx0 + lips.shape[1]
        frame[ly0:ly1, lx0:lx1] = cv2.blendLinear(lips, frame[ly0:ly1, lx0:lx1], feather, 1 - feather)
        return hole * feather, (lx0, ly0)

    def render(self, track: BlendshapeTrack, index: int) -> np.ndarray:
        cv2 = self.cv2
        if self._held[0] is not track:
            self._held = (track, lead_hold(track), speaking(track))
        weights = basis_weights(track, index, self.scale, float(self._held[1][index]))
        weights[PUCKER] += self._held[2][index] * self.talking_pucker
        forward = self.head_transform(track, index)
        # Where each output pixel of the box comes from in the still photo: the head's inverse motion,
        # faded out by the matte (m * (inverse(p) - p), linear in p), minus the face's own deformation.
        (a, b, c), (d, e, f) = cv2.invertAffineTransform(forward)
        # (OpenCV's scaleAdd, in place and in float32: numpy's expression took twice as long over a
        # close-up's box, 2.6 ms of a 28 ms frame at 1024 px)
        map_x, map_y = cv2.scaleAdd(self.matte_x, a - 1, self.grid_x), cv2.scaleAdd(self.matte_x, d, self.grid_y)
        for plane, weight_x, weight_y in ((self.matte_y, b, e - 1), (self.matte, c, f)):
            cv2.scaleAdd(plane, weight_x, map_x, dst=map_x)
            cv2.scaleAdd(plane, weight_y, map_y, dst=map_y)
        # The face field is evaluated at the output pixel: the head moves by a pixel or two, the
        # field varies over tens of pixels, so the error is far below a pixel.
        still_x, still_y = map_x[self.lips_in_box].copy(), map_y[self.lips_in_box].copy()
        if self.rims is not None:  # where the head alone brings each pixel of the rims' box from
            rims_x, rims_y = map_x[self.rims_in_box].copy(), map_y[self.rims_in_box].copy()
        shift = self.rig.displacement(weights)
        map_x[self.roi_in_box] -= shift[..., 0]
        map_y[self.roi_in_box] -= shift[..., 1]
        frame = self.photo.image_rgb.copy()
        x0, y0, x1, y1 = self.box
        frame[y0:y1, x0:x1] = cv2.remap(self.face_rgb, map_x, map_y, cv2.INTER_LINEAR,
                                        borderMode=cv2.BORDER_REFLECT)
        for lids, points, share in self.rig.lid_skin(weights):
            self._smooth_lid_skin(frame, map_x, map_y, lids, points, share)
        for points, shifts, cover in self.rig.lid_edges(weights):
            self._blend_lid_edge(frame, map_x, map_y, shift, points, shifts, cover)
        if self.rims is not None:
            self._draw_rims(frame, rims_x, rims_y)
        edges = self.rig.opening(weights, from_lips=not self.painter.photo_teeth)
        gap = float(np.max((edges[1] - edges[0]) @ self.rig.frame.ey))
        # Lips parted wider than the photo's own are drawn forward, cut apart along the inner lips, and so
        # are lips closing over a photo open at rest: what lies between them, its own teeth too, stays
        # where it is as they meet over it. (Squeezed together with the lips by the backward map, a
        # photo's teeth went into the seam, and FaceMesh read two natural speakers' closures shut in 53
        # of their 59 closed frames, 56 drawn forward.) For a photo with teeth, `gap` is the band under
        # the split, and it closes while the lips' close weight holds and no band opens.
        moving = bool(weights[MOUTH_SHAPES].any())
        rest_gap = self.rig.frame.rest_gap_px
        if self.painter.photo_teeth:
            closing = moving and self.painter.look.open_gap_px > 0 and weights[CLOSE] * rest_gap > 0.5 and gap <= 0.5
        else:
            closing = moving and self.painter.look.open_gap_px > 0 and gap < rest_gap - 0.5
        hole = None
        if closing or (moving and gap > rest_gap + 0.5):
            hole = self._lips_forward(frame, weights, still_x, still_y, gap, closing)
        upper, lower = (cv2.transform(p[None].astype(np.float32), forward)[0] for p in edges)
        tongue = float(track.weights[index, track.names.index("tongueOut")]) if "tongueOut" in track.names else 0.0
        self.painter.paint(frame, upper.astype(np.float64), lower.astype(np.float64), tongue, hole)
        return frame
