"""The photo's face as a deformable rig: blendshape weights -> a dense pixel displacement field.

Geometry comes from the 478 FaceMesh landmarks. Each blendshape is a smooth analytic displacement
in the mouth's (or an eye's) own frame, u along the lips and v down across them, in units of the
mouth's half width. The lower face moves below the lip seam only, so the lips part where the real
mouth would. Fields are linear in the weights and precomputed once over the face region; a blink's
lids are not (face/lids.py), and are drawn each frame from their geometry.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .easing import smoothstep
from .lids import Lids

# FaceMesh indices, left to right in the image.
UPPER_INNER = [78, 191, 80, 81, 82, 13, 312, 311, 310, 415, 308]
LOWER_INNER = [78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308]
LEFT_CORNER, RIGHT_CORNER = 61, 291
# The line the mouth opens along: the inner lips, closed at the mouth's outer corners, where the lips
# still part a little (FaceMesh's inner corners 78 and 308 lie a few pixels inside them).
UPPER_CUT = [LEFT_CORNER, *UPPER_INNER, RIGHT_CORNER]
LOWER_CUT = [LEFT_CORNER, *LOWER_INNER, RIGHT_CORNER]
UPPER_OUTER = [LEFT_CORNER, 185, 40, 39, 37, 0, 267, 269, 270, 409, RIGHT_CORNER]  # the lips' outer edges, left to right
LOWER_OUTER = [LEFT_CORNER, 146, 91, 181, 84, 17, 314, 405, 321, 375, RIGHT_CORNER]
UPPER_LIP_TOP, LOWER_LIP_BOTTOM, CHIN = 0, 17, 152
# Eyes as seen in the image: the subject's right eye is on the image's left.
EYES = {
    "Right": {"outer": 33, "inner": 133, "upper": 159, "brow": 107, "brow_mid": 105, "brow_outer": 70,
              "brow_low": 52},
    "Left": {"outer": 263, "inner": 362, "upper": 386, "brow": 336, "brow_mid": 334, "brow_outer": 300,
             "brow_low": 282},
}
# Each eye's lids between its corners, FaceMesh's contour (outer corner to inner).
LIDS = {
    "Right": ((246, 161, 160, 159, 158, 157, 173), (7, 163, 144, 145, 153, 154, 155)),
    "Left": ((466, 388, 387, 386, 385, 384, 398), (249, 390, 373, 374, 380, 381, 382)),
}

BASIS = (
    "lipgap", "chin", "close", "lowerDown", "upperUp", "funnel", "funnelOpen", "pucker", "smileLeft",
    "smileRight", "stretchLeft", "stretchRight", "brow", "blinkLeft", "blinkRight",
    # the emotions' shapes, both sides together
    "browDown", "browOuterUp", "eyeWide", "squint", "frown",
)

BLINKS = np.isin(BASIS, ("blinkLeft", "blinkRight"))  # drawn by the lids (face/lids.py), not by fields
MOUTH_SHAPES = np.array([BASIS.index(name) for name in (
    "lipgap", "chin", "close", "lowerDown", "upperUp", "funnel", "funnelOpen", "pucker", "smileLeft",
    "smileRight", "stretchLeft", "stretchRight", "frown")])


@dataclass(frozen=True, eq=False)
class MouthFrame:
    centre: np.ndarray
    ex: np.ndarray  # along the lips, towards the image's right
    ey: np.ndarray  # across the lips, downwards
    half_width_px: float
    upper_u: np.ndarray  # inner upper lip, sorted by u
    upper_v: np.ndarray
    lower_u: np.ndarray
    lower_v: np.ndarray
    upper_thickness: float  # in half widths
    lower_thickness: float
    chin_v: float
    sulcus_v: float  # below the lower lip (FaceMesh 18), where the chin begins
    rest_gap_px: float  # how far apart the inner lips are in the photo, at their widest
    centre_gap_px: float  # how far apart they are at the mouth's centre (FaceMesh 13-14)
    eye_px: float  # the distance between the outer eye corners (FaceMesh 33-263): the face's unit
    # Where the jaw parts from the skull between the inner lips: 0.5 midway; nearer 1 (the lower
    # lip) where the photo's upper teeth fill the opening, so they stay with the upper jaw.
    split: float = 0.5

    def to_uv(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rel = points - self.centre
        return rel @ self.ex / self.half_width_px, rel @ self.ey / self.half_width_px

    def seam_v(self, u: np.ndarray, split: float | None = None) -> np.ndarray:
        """The line the jaw parts along (split of the way from the upper inner lip to the lower; the
        photo's own split unless given: 0.5 is where closing lips meet)."""
        upper = np.interp(u, self.upper_u, self.upper_v)
        return upper + (self.split if split is None else split) * (np.interp(u, self.lower_u, self.lower_v) - upper)


def mouth_frame(landmarks: np.ndarray, split: float = 0.5) -> MouthFrame:
    left, right = landmarks[LEFT_CORNER], landmarks[RIGHT_CORNER]
    ex = (right - left) / np.linalg.norm(right - left)
    ey = np.array([-ex[1], ex[0]])
    half_width = float(np.linalg.norm(right - left) / 2)
    # u is 0 midway between the corners and +-1 at them; v is 0 between the inner lips' middles (13-14).
    # Measured from 13-14 along the lips too, a mouth whose middle landmarks sit off its centre (2.5% of
    # the half width on the Franck photo) still parted at one corner, a few pixels at a wide opening.
    middle = 0.5 * (landmarks[13] + landmarks[14])
    centre = middle + ex * float((0.5 * (left + right) - middle) @ ex)

    def uv(indices):
        rel = landmarks[indices] - centre
        u, v = rel @ ex / half_width, rel @ ey / half_width
        order = np.argsort(u)
        return u[order], v[order]

    upper_u, upper_v = uv(UPPER_INNER)
    lower_u, lower_v = uv(LOWER_INNER)
    rel = landmarks[[UPPER_LIP_TOP, LOWER_LIP_BOTTOM, CHIN, 13, 14, 18]] - centre
    v = rel @ ey / half_width
    gap_px = np.linalg.norm(landmarks[LOWER_INNER[1:-1]] - landmarks[UPPER_INNER[1:-1]], axis=1)
    return MouthFrame(
        centre=centre, ex=ex, ey=ey, half_width_px=half_width,
        upper_u=upper_u, upper_v=upper_v, lower_u=lower_u, lower_v=lower_v,
        upper_thickness=float(max(v[3] - v[0], 0.15)), lower_thickness=float(max(v[1] - v[4], 0.2)),
        chin_v=float(max(v[2], 0.8)), sulcus_v=float(v[5]), rest_gap_px=float(np.max(gap_px)),
        centre_gap_px=float(max((landmarks[14] - landmarks[13]) @ ey, 0.0)),
        eye_px=float(np.linalg.norm(landmarks[263] - landmarks[33])), split=split,
    )


CORNERS_IN = 0.12  # pixels each corner moves in per pixel the lower lip drops at the centre (with the
# interior's corner shade, painter.CORNER_SHADE, FaceMesh reads the open mouth about as wide as at rest,
# as filmed mouths read: bench/lip_split.py finds their corners 0-0.2 of the opening further out)
# How far to each side of the mouth's centre the jaw carries the chin (a Gaussian's width, in eye
# distances): the jaw is as wide as the face, not as the mouth (FaceMesh's jaw 172-397 is 1.25-1.3
# eye distances on six photos whose mouths are 2.8-3.9 half widths per eye distance); it was 1.7
# half widths, which on a narrow mouth (the Mona Lisa's) pulled the chin down into a V.
JAW_REACH = 0.58
CHEEK_SPREAD = 1.0  # half widths
CORNER_TAPER = 0.25  # half widths from each corner over which the lips' parting comes in
LIP_TAPER = 0.125  # and each lip's own motion
# The upper lip rises as a whole: filmed speakers' outer edge (the cupid's bow) rises 0.8-1.1 times as
# far as the inner edge on natural speech (0.2-0.5 on GRID s1), so the lip moves whole up to UPPER_WHOLE
# of its thickness above the seam and the skin above takes up the motion by UPPER_FADE. (0.8 and 2.0
# moved the bow half as far as the inner edge: a raised lip thinned into a line at its peaks.)
UPPER_WHOLE, UPPER_FADE = 1.6, 4.0
# Of the lower lip's drop, the share the chin's tip (FaceMesh 152) makes: in speech the lip drops by
# itself as much as by the jaw, and the skin from the fold below it (FaceMesh 18, which drops with the
# lip) to the chin is pressed together. bench/lip_split.py, per unit of opening: filmed chins drop 0.32
# (GRID s1, 36 clips) and 0.19 (a natural speaker) against their lower lips' 0.67-0.74; talker's whole
# jaw had carried the natural speaker's chin 0.61, its chin box losing to the unmoving photo. Half:
# natural gain 0.101 -> 0.115, 12 GRID clips 0.558 -> 0.570 (a third: 0.113 and 0.561).
CHIN_SHARE = 0.5
CHIN_FOLD = 0.3  # eye distances at least from the fold to where the chin's share is reached
CLOSING_PAST = 0.2  # of each lip's thickness past its inner edge that moves whole as the lips close
CLOSING_SPREAD = 3.0  # times the distance the lips close by, over which the skin beyond them takes it up


def mouth_basis(frame: MouthFrame, points: np.ndarray, side: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Displacements (N x 2 pixels, per unit weight) of the mouth blendshapes at `points`.

    side: +1 below the seam, -1 above; computed from the points unless given (lip landmarks
    sit on the seam, so the caller says which lip they belong to).
    """
    u, v = frame.to_uv(points)
    s = v - frame.seam_v(u)
    below = (s > 0) if side is None else (side > 0)
    above = ~below
    W = frame.half_width_px
    g_lip = np.clip(1 - u * u, 0, 1) ** 0.7
    # The lips part to a point at each corner, where filmed open mouths meet at an angle: by (1 - u^2)^0.7
    # alone the opening rose from nothing to a fifth of its middle within 0.05 half widths of a corner,
    # and with the corners drawn in (CORNERS_IN) a wide opening ended in a wall of cavity beside them.
    g_part = g_lip * smoothstep(0.0, CORNER_TAPER, 1 - np.abs(u))
    # Each lip's own motion (rolled down, raised, flared) comes in nearer the corner than the jaw's
    # parting: tapered as far, the lips shrank towards the corners and GRID s1's narrow openings read
    # smaller (bench/mouth.py's range); not tapered at all, a smile's upper lip lifted off its teeth
    # beside the corners, where the parting beneath had not opened them, and left a hole.
    g_own = g_lip * smoothstep(0.0, LIP_TAPER, 1 - np.abs(u))
    g_jaw = np.exp(-((u * W / (JAW_REACH * frame.eye_px)) ** 2))
    # Beyond the corners no lips part: the cheek stretches between skull and jaw, over a band across
    # the seam that widens away from the mouth (a sharp step there reads as a tear); towards the
    # corners, where the lips barely part, the lower lip stretches down into the chin over a longer
    # band for the same reason.
    cheek = CHEEK_SPREAD * np.clip(np.abs(u) - 1, 0, 1)
    corner = CHEEK_SPREAD * np.clip(np.abs(u) - 0.7, 0, 1)
    into_chin = smoothstep(-cheek, frame.lower_thickness * 1.2 + corner, s)
    # With the side given, the field is a lip's whole surface (face/layers.py) and the points past its
    # edge its smooth continuation: the jaw's share grows across the seam there as it does beyond the
    # corners, so that the surface has no step to fold over.
    jaw_side = below | (cheek > 0) if side is None else np.ones_like(below)
    neck_fade = 1 - smoothstep(frame.chin_v, frame.chin_v + 0.9, v)
    # The jaw carries the chin only part of the way the lower lip drops (CHIN_SHARE), from the fold
    # below the lower lip down to the chin's tip, over at least CHIN_FOLD eye distances: the skin
    # between is pressed together as the lip drops past the chin, and a shout's drop (0.32 eye
    # distances) over less would fold it.
    chin_tip = frame.sulcus_v + max(frame.chin_v - frame.sulcus_v, CHIN_FOLD * frame.eye_px / W)
    jaw_reach = 1 - (1 - CHIN_SHARE) * smoothstep(frame.sulcus_v, chin_tip, v)
    lower_lip = (1 - smoothstep(frame.lower_thickness * 0.8, frame.lower_thickness * 1.8, s)) * below
    upper_lip = (1 - smoothstep(frame.upper_thickness * UPPER_WHOLE, frame.upper_thickness * UPPER_FADE, -s)) * above
    near_mouth = np.exp(-((u / 1.4) ** 4)) * np.exp(-((s / (frame.lower_thickness + 0.6)) ** 2))
    # Lips closing meet midway between them, wherever the jaw parts (a smile's lips close over both
    # rows of teeth): within a band from the midline each side moves whole, and the skin beyond takes
    # up the motion. The band reaches at least each lip's inner edge: a mouth open wider than its lips
    # are thick, closed by a band measured from the midline alone, squeezed its lips and what lay
    # between them into the seam (a light streak of its teeth in the closed lips, which FaceMesh read
    # open: a filmed speaker's wide-open first frame shown closed in 0 of 11 closed frames, now 10).
    # Past the edges by 0.3 of the lips, a photo with its teeth just showing (speech-a) scored 0.004
    # lower by SSIM than by 0.2 (its speaker's lips stay apart where the track shuts them); by none,
    # a mouth opened 0.3 eye distances still read 0.15 open when shut.
    midline = frame.seam_v(u, split=0.5)
    mid = v - midline
    mid_below = (mid > 0) if side is None else (side > 0)
    half_gap = midline - frame.seam_v(u, split=0.0)  # from either inner lip to the midline
    upper_whole = np.maximum(0.8 * frame.upper_thickness, half_gap + CLOSING_PAST * frame.upper_thickness)
    lower_whole = np.maximum(0.8 * frame.lower_thickness, half_gap + CLOSING_PAST * frame.lower_thickness)
    # The skin beyond takes up the motion over at least CLOSING_SPREAD times the distance moved: over a
    # lip's thickness alone, beside a thin lip the map folded back on itself (rows drawn twice, every
    # pore and tooth edge a vertical streak above and below a smile's closed lips).
    lower_closing = (1 - smoothstep(lower_whole, lower_whole + np.maximum(frame.lower_thickness, CLOSING_SPREAD * half_gap),
                                     mid)) * mid_below
    upper_closing = (1 - smoothstep(upper_whole, upper_whole + np.maximum(1.2 * frame.upper_thickness, CLOSING_SPREAD * half_gap),
                                     -mid)) * ~mid_below
    ex, ey = frame.ex, frame.ey

    def along(dx, dy):  # mouth-frame components -> image pixels
        return np.outer(dx, ex) + np.outer(dy, ey)

    zero = np.zeros_like(u)
    # lipgap, chin, lowerDown, upperUp and funnelOpen move their part by one pixel at the mouth's centre per unit
    fields = {
        # as the jaw drops the lips round into an oval: the corners come in (filmed speakers' mouths
        # stay as wide when open as at rest, bench/mouth.py's width ratio)
        "lipgap": along(-CORNERS_IN * u * near_mouth, g_part * (1 - into_chin) * neck_fade * below),
        "chin": along(zero, g_jaw * into_chin * neck_fade * jaw_side * jaw_reach),
        "close": along(zero, g_lip * 0.5 * frame.rest_gap_px * (upper_closing - lower_closing)),
        "lowerDown": along(zero, g_own * lower_lip),
        "upperUp": along(zero, -g_own * upper_lip),
        "funnel": along(-0.12 * W * u * near_mouth, zero),  # the corners drawn in
        "funnelOpen": along(zero, np.sqrt(g_own) * (0.6 * lower_lip - 0.4 * upper_lip)),  # the lips flared apart
        "pucker": along(-0.28 * W * u * near_mouth, zero),
    }
    for name, sign in (("Left", 1.0), ("Right", -1.0)):  # subject's left is the image's right
        corner = np.exp(-(((u - sign) ** 2 + s**2) / (2 * 0.45**2)))
        fields[f"smile{name}"] = along(0.2 * W * sign * corner, -0.12 * W * corner)
        fields[f"stretch{name}"] = along(0.18 * W * sign * corner, 0.05 * W * corner)
        # corners drawn down and a little in: sadness, anger
        fields["frown"] = fields.get("frown", 0) + along(-0.06 * W * sign * corner, 0.24 * W * corner)
    return fields


# The lid skin that stretches over a closing eye: LID_SHARE of the lid's slide above its edge (the lid
# unfolds from just above the lashes; a band one and a half slides tall dragged a glasses rim above the
# eye down into a notch), and at most LID_BAND of the way up to the brow's lower edge.
LID_SHARE = 0.6
LID_BAND = 0.6
LASH_BAND = 0.12  # half eye widths above the lid's edge (FaceMesh's contour) that its lashes take


def eye_axes(landmarks: np.ndarray, idx: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """An eye's centre, its axis from the outer corner to the inner, the axis down across it, and half
    its width (pixels)."""
    outer, inner = landmarks[idx["outer"]], landmarks[idx["inner"]]
    ex = (inner - outer) / np.linalg.norm(inner - outer)
    ey = np.array([-ex[1], ex[0]])
    return 0.5 * (outer + inner), ex, (-ey if ey[1] < 0 else ey), float(np.linalg.norm(inner - outer) / 2)


def eye_basis(landmarks: np.ndarray, points: np.ndarray,
              lashes: dict[str, float] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Lids]]:
    """The brows (inner raise, lowering, outer raise), wide eyes and squinting lower lids with the cheek
    pushed up, as fields; and each eye's lids, which a blink closes (face/lids.py). lashes: how far
    each upper lid's lashes reach above its edge (eyes.lash_bands), LASH_BAND where not given."""
    fields = {name: np.zeros((len(points), 2)) for name in ("brow", "browDown", "browOuterUp", "eyeWide", "squint")}
    closing = {}
    for name, idx in EYES.items():
        centre, ex, ey, half = eye_axes(landmarks, idx)
        rel = points - centre
        u, v = rel @ ex / half, rel @ ey / half
        upper = float((landmarks[idx["upper"]] - centre) @ ey / half)
        profile = np.clip(1 - u * u, 0, 1)
        # Each lid where it is across the eye: FaceMesh's contour between the corners (not a curve
        # through the lid's middle point bent down to the corners). A shut eye (a gap under 0.15 half
        # widths at the middle) slides as if open that far.
        lids = []
        for contour in LIDS[name]:
            rel_lid = landmarks[[idx["outer"], *contour, idx["inner"]]] - centre
            lid_u, lid_v = rel_lid @ ex / half, rel_lid @ ey / half
            order = np.argsort(lid_u)
            lids.append(np.interp(u, lid_u[order], lid_v[order]) * (np.abs(u) < 1))
        lid_top, lid_bottom = lids
        gap = np.maximum(lid_bottom - lid_top, 0.15 * profile)
        # The lids meet two thirds of the way down: the upper one slides down over the eye, the lower
        # one rises a little, each stopping at the meeting line, where a closed eye has its lashes. The
        # upper lid is drawn as a lid: its lashes (LASH_BAND above its edge) move down whole, and the
        # skin above them, from an anchor down to the lashes, stretches to follow, every row below the
        # last (a band that slid as one folded over itself: the lid's crease drew a second eye in the
        # lid, and the lashes a zigzag). The anchor stops short of the brow (LID_BAND of the way up to
        # its lower edge): on large eyes a band sized by the slide alone reached the brow and dragged
        # it down into the eye.
        meet = lid_top + 0.65 * gap
        upper_slide = 0.65 * gap
        lower_slide = 0.35 * gap
        brow_low = float((landmarks[idx["brow_low"]] - centre) @ ey / half)
        band = np.minimum(LID_SHARE * upper_slide + 0.03, LID_BAND * max(upper - brow_low, 0.1) * profile + 0.03)
        lash = max((lashes or {}).get(name, LASH_BAND), 1.5 / half)
        anchor = lid_top - np.maximum(band, lash + 0.06)  # some skin above the lashes, even at the corners
        below_fade = smoothstep(lid_bottom, lid_bottom + 1.5 * lower_slide + 0.03, v)
        moves = np.flatnonzero((upper_slide > 0) & (v > anchor) & (below_fade < 1))
        closing[name] = Lids(points=moves, v=v[moves], lid_top=lid_top[moves], lid_bottom=lid_bottom[moves],
                             upper_slide=upper_slide[moves], lower_slide=lower_slide[moves], lash=lash,
                             anchor=anchor[moves], below_fade=below_fade[moves], half_px=half, ey=ey)
        up = smoothstep(meet - 0.03, meet, v) * (1 - below_fade)  # the lower lid, pushed up by a squint
        lifted = smoothstep(lid_top - band, lid_top, v) * (1 - smoothstep(meet, meet + 0.03, v))  # wide eyes' lid
        fields["eyeWide"] = fields["eyeWide"] - np.outer(0.45 * upper_slide * lifted * half, ey)
        below = np.exp(-(u * u + ((v - lid_bottom - 0.7) / 0.6) ** 2))  # the cheek under the eye
        fields["squint"] = fields["squint"] - np.outer((0.35 * lower_slide * up + 0.08 * below) * half, ey)

        def bump(landmark: str, reach: float) -> np.ndarray:
            dist2 = np.sum((points - landmarks[idx[landmark]]) ** 2, axis=1) / (reach * half) ** 2
            return np.exp(-dist2)

        fields["brow"] = fields["brow"] - np.outer(0.22 * half * bump("brow", 1.1), ey)
        inner_mid = np.maximum(bump("brow", 1.0), bump("brow_mid", 1.0))
        fields["browDown"] = fields["browDown"] + np.outer(0.32 * half * inner_mid, ey) + np.outer(0.1 * half * bump("brow", 1.0), ex)
        fields["browOuterUp"] = fields["browOuterUp"] - np.outer(0.3 * half * bump("brow_outer", 1.1), ey)
    return fields, closing


FIELD_FLOOR_PX = 1e-4  # pixels per unit weight: where a field moves less, it is left out (field_spans)


def field_spans(fields: np.ndarray) -> tuple[tuple[slice, slice], ...]:
    """Each field's rows and columns where it moves anything (over FIELD_FLOOR_PX): a mouth shape's
    field is a small part of the face's, and adding whole fields was half of a frame's motion."""
    spans = []
    for field in fields:
        rows, cols = np.nonzero(np.abs(field).max(axis=-1) > FIELD_FLOOR_PX)
        spans.append((slice(int(rows.min()), int(rows.max()) + 1), slice(int(cols.min()), int(cols.max()) + 1))
                     if len(rows) else (slice(0, 0), slice(0, 0)))
    return tuple(spans)


def weighted_fields(weights: np.ndarray, fields: np.ndarray, spans: tuple[tuple[slice, slice], ...]) -> np.ndarray:
    """sum_k weights[k] * fields[k] over the weights that are not zero (most shapes rest most of the
    time), each field over its own span (field_spans). Added one field at a time: a tensordot copied
    the chosen fields out each frame, and its BLAS threads waited on cores the encoder was using (a
    batch of short jobs 0.87x the time)."""
    import cv2

    total = np.zeros(fields.shape[1:], dtype=np.float32)
    for k in np.flatnonzero(weights):
        rows, cols = spans[k]
        if rows.stop == rows.start:
            continue  # a shape that moves nothing here (an eye's, on the lips)
        part = total[rows, cols]
        cv2.scaleAdd(fields[k, rows, cols], float(weights[k]), part, dst=part)  # in place: a view of total
    return total


@dataclass(frozen=True, eq=False)
class FaceRig:
    frame: MouthFrame
    landmarks: np.ndarray
    roi: tuple[int, int, int, int]  # x0, y0, x1, y1 of the region the fields cover
    fields: np.ndarray  # len(BASIS) x roi_h x roi_w x 2, float32 pixels per unit weight (none for blinks)
    lids: dict[str, Lids]  # each eye's, by blink shape ("blinkLeft", "blinkRight")

    def _closing(self, basis_weights: np.ndarray) -> list[tuple[Lids, float]]:
        """Each eye's lids with its blink weight, for the eyes that are closing."""
        weights = ((lids, float(basis_weights[BASIS.index(name)])) for name, lids in self.lids.items())
        return [(lids, weight) for lids, weight in weights if weight > 0]

    def displacement(self, basis_weights: np.ndarray) -> np.ndarray:
        total = weighted_fields(np.where(BLINKS, 0.0, basis_weights), self.fields, self.field_spans)
        flat = total.reshape(-1, 2)
        for lids, weight in self._closing(basis_weights):
            flat[lids.points] += lids.displacement(weight).astype(np.float32)
        return total

    def lid_edges(self, basis_weights: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """For each closing eye, the region's points (flat indices) its lids' edges cross, with each
        surface's motion there and its share of the pixel (Lids.edge_pixels)."""
        edges = []
        for lids, weight in self._closing(basis_weights):
            crossed, shifts, cover = lids.edge_pixels(weight)
            if len(crossed):
                edges.append((lids.points[crossed], shifts.astype(np.float32), cover.astype(np.float32)))
        return edges

    def lid_skin(self, basis_weights: np.ndarray) -> list[tuple[Lids, np.ndarray, np.ndarray]]:
        """For each closing eye, its lids, the region's points (flat indices) of its upper lid's
        stretched skin and how much of each is drawn smoothed along the lid (Lids.stretched_skin)."""
        skins = []
        for lids, weight in self._closing(basis_weights):
            inside, share = lids.stretched_skin(weight)
            if len(inside):
                skins.append((lids, lids.points[inside], share.astype(np.float32)))
        return skins

    def opening(self, basis_weights: np.ndarray, from_lips: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Upper and lower edges of the open mouth, left to right, where the interior is painted.

        From the seam between the photo's inner lips (from_lips False): above it the photo stays (its
        own teeth), below it everything moves with the jaw, so only the band opened below the seam
        is painted. From the photo's inner lips themselves (from_lips True): the whole interior is
        painted, for a photo whose open mouth shows no teeth.
        """
        edges, upper_fields, lower_fields = self._edge_fields[from_lips]
        weights = basis_weights.astype(np.float64)
        upper, lower = edges
        return upper + np.tensordot(weights, upper_fields, axes=1), lower + np.tensordot(weights, lower_fields, axes=1)

    @cached_property
    def field_spans(self) -> tuple[tuple[slice, slice], ...]:
        return field_spans(self.fields)

    @cached_property
    def _edge_fields(self) -> dict[bool, tuple[tuple[np.ndarray, np.ndarray], np.ndarray, np.ndarray]]:
        """For the seam and for the inner lips: the two edges and every basis shape's displacement of
        each, seen from above and from below (len(BASIS) x points x 2, zeros for shapes that do not
        move the mouth): computed once."""
        upper_lip = self.landmarks[UPPER_CUT].astype(np.float64)
        lower_lip = self.landmarks[LOWER_CUT].astype(np.float64)
        seam = upper_lip + self.frame.split * (lower_lip - upper_lip)
        out = {}
        for from_lips, (upper, lower) in ((False, (seam, seam)), (True, (upper_lip, lower_lip))):
            sides = []
            for side, points in ((-1.0, upper), (1.0, lower)):
                fields = mouth_basis(self.frame, points, side=np.full(len(points), side))
                sides.append(np.stack([fields.get(name, np.zeros_like(points)) for name in BASIS]))
            out[from_lips] = ((upper, lower), sides[0], sides[1])
        return out


def build_rig(landmarks: np.ndarray, image_size: tuple[int, int], split: float = 0.5,
              lashes: dict[str, float] | None = None) -> FaceRig:
    """The rig over the face's region; split: where the jaw parts between the inner lips (MouthFrame)."""
    width, height = image_size
    lo, hi = landmarks.min(axis=0), landmarks.max(axis=0)
    margin = 0.25 * (hi - lo)
    x0, y0 = np.floor(np.maximum(lo - margin, 0)).astype(int)
    x1, y1 = np.ceil(np.minimum(hi + margin * np.array([1, 1.6]), [width, height])).astype(int)
    ys, xs = np.mgrid[y0:y1, x0:x1]
    points = np.stack([xs.ravel(), ys.ravel()], axis=1).astype(np.float64)
    frame = mouth_frame(landmarks, split)
    eyes, lids = eye_basis(landmarks, points, lashes)
    named = mouth_basis(frame, points) | eyes
    none = np.zeros((y1 - y0, x1 - x0, 2))
    fields = np.stack([named[name].reshape(y1 - y0, x1 - x0, 2) if name in named else none for name in BASIS]).astype(np.float32)
    return FaceRig(frame=frame, landmarks=landmarks, roi=(int(x0), int(y0), int(x1), int(y1)), fields=fields,
                   lids={f"blink{name}": closing for name, closing in lids.items()})
