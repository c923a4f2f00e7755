"""The mouth drawn forward, cut along the inner lips: the upper lip (with everything above it) and the
lower lip (with the jaw below it) are two surfaces, each moved as a whole by its own displacement
field, and where they part there is a hole that the mouth's interior fills.

A backward map (each output pixel takes the displacement found at its own place) drags the skin
under the lower lip up into an opening and draws shelves and walls at its sides. Here each surface's
forward map q -> q + d(q) is inverted for every output pixel p, as a mesh drawn forward would be: down
each column exactly (the lower lip stretches into the chin many times over, where fixed-point and
Newton steps never settle), across by a fixed-point step; a pixel belongs to a surface when the point
it comes from lies on that surface's side of the cut. Everything is dense, over a box around the
mouth: a frame costs one interpolation per lip and a few small remaps, not a triangle rasterizer.
The renderer draws the lips this way while they are parted wider than the photo's own, and while they
close over a photo open at rest, over whatever it shows between them (its teeth too), which stays where
it was.

The photo's own interior (the shadow between closed lips, teeth between parted ones) lies between
the two cuts. Where it shows teeth, the part above the jaw's split stays with the skull and the part
below it goes with the lower lip; the gap that opens between them is the painter's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from .rig import BASIS, LEFT_CORNER, LOWER_CUT, RIGHT_CORNER, UPPER_CUT, MouthFrame, field_spans, mouth_basis, weighted_fields

FIELD_STEP = 2
QUERY_STEP = 3  # each lip's inverse map is found on every third pixel, the offsets interpolated between
X_STEPS, X_TOLERANCE = 6, 0.4  # steps more across, for the pixels the first step misses by more (px)
JUMP_PX = 1.0  # ... except where two nodes' offsets differ by more than this: there at every pixel
READ_ROW = 4096  # points read per row of a map (OpenCV's maps are under 32767 wide)
NEAR_STEPS = 3  # fixed-point steps of _invert_near
FAR = 1e4  # pixels: a signed distance that means "wholly on this side"
LIFT_REACH = 0.15  # of the box's height: how far above its photo place the upper lip may bare the teeth


@dataclass(frozen=True, eq=False)
class MouthLayers:
    """The two lips' fields and cuts over a box of the photo around the mouth (x0, y0, x1, y1)."""
    box: tuple[int, int, int, int]
    # Both lips' motion side by side (upper, then lower: len(BASIS) x h x 2w x 2, pixels per unit
    # weight), on every FIELD_STEP-th pixel of the box: the fields vary over tens of pixels.
    fields: np.ndarray
    # Side by side, upper lip then lower (h x 2w x 2): each lip's cut as a signed distance in pixels,
    # positive towards the opening (below the upper cut, above the lower), without the photo's dark
    # between the lips; and how far that dark reaches (pixels): it joins the opening as the lips part
    # (draw_lips' `parted`), and stays on the lips while they are nearly shut, so that they meet.
    # Beyond the mouth's corners no lips part: the two fields are the same there, the upper lip's
    # layer ends at the lips' line and the lower one's covers it all (FAR: wholly on one side).
    cuts: np.ndarray
    upper_cut: np.ndarray  # the upper lip's cut alone (h x w): a photo's own teeth lie below it
    # Below the line where the jaw parts between the photo's inner lips (pixels, positive below):
    # a photo's own teeth above it stay with the skull, below it they go with the jaw.
    split: np.ndarray
    photo_teeth: bool

    @cached_property
    def field_spans(self) -> tuple[tuple[slice, slice], ...]:
        return field_spans(self.fields)


def _edge(frame: MouthFrame, points: np.ndarray, offsets: np.ndarray, direction: float) -> tuple[np.ndarray, np.ndarray]:
    """A lip's cut (UPPER_CUT or LOWER_CUT) as v(u) in the mouth's frame, moved `offsets` pixels away
    from the opening (direction -1: up, for the upper lip)."""
    u, v = frame.to_uv(points)
    v = v + direction * offsets / frame.half_width_px
    order = np.argsort(u)
    return u[order], v[order]


def build_layers(frame: MouthFrame, landmarks: np.ndarray, image_size: tuple[int, int], photo_teeth: bool,
                 dark_above: np.ndarray, dark_below: np.ndarray) -> MouthLayers:
    """The lips' layers over the mouth's box. dark_above, dark_below: how far (pixels, per inner-lip
    landmark) the photo's dark between the lips reaches beyond each inner lip: it belongs to the
    interior, so the lips part without a dark rim."""
    width, height = image_size
    W = frame.half_width_px
    corners = landmarks[[LEFT_CORNER, RIGHT_CORNER]]
    # The box reaches past the corners, and below the lower lip past as far as the jaw drops it (in eye
    # distances, frames.MAX_DRAWN_OPENING: a narrow mouth's jaw drops as far as a wide one's) into the
    # chin, which moves with the jaw as one: at the box's edges the layers and the rest of the face,
    # drawn by the backward map, agree.
    side, above, below = max(1.2 * W, 0.3 * frame.eye_px), 0.15 * frame.eye_px, 0.6 * frame.eye_px
    lo = np.array([corners[:, 0].min() - side, landmarks[[0, 61, 291], 1].min() - above])
    hi = np.array([corners[:, 0].max() + side, landmarks[17, 1] + below])
    x0, y0 = np.floor(np.maximum(lo, 0)).astype(int)
    x1, y1 = np.ceil(np.minimum(hi, [width, height])).astype(int)
    ys, xs = np.mgrid[y0:y1, x0:x1]
    points = np.stack([xs.ravel(), ys.ravel()], axis=1).astype(np.float64)
    u, v = frame.to_uv(points)
    within = np.abs(u) < 1.0
    natural = mouth_basis(frame, points)
    upper = mouth_basis(frame, points, side=-np.ones(len(points)))
    lower = mouth_basis(frame, points, side=np.ones(len(points)))
    shape = (y1 - y0, x1 - x0, 2)

    def stack(fields: dict[str, np.ndarray]) -> np.ndarray:
        out = []
        for name in BASIS:
            if name in fields:  # beyond the corners the two lips are one surface: the natural field
                out.append(np.where(within[:, None], fields[name], natural[name]).reshape(shape))
            else:
                out.append(np.zeros(shape))
        return np.stack(out).astype(np.float32)

    up_u, up_v = _edge(frame, landmarks[UPPER_CUT].astype(np.float64), np.zeros(len(UPPER_CUT)), -1.0)
    low_u, low_v = _edge(frame, landmarks[LOWER_CUT].astype(np.float64), np.zeros(len(LOWER_CUT)), 1.0)
    below_upper = (v - np.interp(u, up_u, up_v)) * W
    above_lower = (np.interp(u, low_u, low_v) - v) * W
    order_up, order_low = np.argsort(frame.to_uv(landmarks[UPPER_CUT])[0]), np.argsort(frame.to_uv(landmarks[LOWER_CUT])[0])
    dark_up = np.where(within, np.interp(u, up_u, np.asarray(dark_above, float)[order_up]), 0.0)
    dark_low = np.where(within, np.interp(u, low_u, np.asarray(dark_below, float)[order_low]), 0.0)
    # Where the jaw parts between the lips, along the cuts to the corners (beyond them, the lips' line).
    top = np.interp(u, *_edge(frame, landmarks[UPPER_CUT].astype(np.float64), np.zeros(len(UPPER_CUT)), -1.0))
    bottom = np.interp(u, *_edge(frame, landmarks[LOWER_CUT].astype(np.float64), np.zeros(len(LOWER_CUT)), 1.0))
    seam = (v - (top + frame.split * (bottom - top))) * W
    if photo_teeth:  # the jaw parts at the split: what lies below it is the lower lip's
        above_lower = -seam
    upper_cut = np.where(within, below_upper, np.where(seam > 0, FAR, -FAR))
    # Beyond the corners the lower lip's layer covers everything (the upper one is drawn over it above
    # the lips' line, with the same field there): no pixel can fall between them.
    lower_cut = np.where(within, above_lower, -FAR)
    plane = lambda a: a.reshape(shape[:2]).astype(np.float32)  # noqa: E731
    coarse = lambda f: f[:, ::FIELD_STEP, ::FIELD_STEP]  # noqa: E731
    return MouthLayers(
        box=(int(x0), int(y0), int(x1), int(y1)),
        fields=np.ascontiguousarray(np.concatenate([coarse(stack(upper)), coarse(stack(lower))], axis=2)),
        upper_cut=plane(upper_cut),
        cuts=np.ascontiguousarray(np.concatenate([np.dstack([plane(upper_cut), plane(dark_up)]),
                                                  np.dstack([plane(lower_cut), plane(dark_low)])], axis=1)),
        split=plane(seam), photo_teeth=photo_teeth,
    )


def _side_by_side(x: np.ndarray, width: int) -> np.ndarray:
    """Columns of a map into the left half (the upper lip's) and the right half (the lower lip's) of
    a side-by-side image, each kept inside its own half."""
    half = x.shape[1] // 2
    out = np.clip(x, 0, width - 1)
    out[:, half:] += width
    return out


class _Columns:
    """A lip's field down each of its columns (dy: h x w, at the photo rows rows_y), made ready to be
    inverted exactly: the rows' moved places, which never fold back (a pixel below another stays
    below it), laid out column after column, each above the one before, for one interpolation."""

    def __init__(self, dy: np.ndarray, rows_y: np.ndarray):
        h, w = dy.shape
        self.moved = np.maximum.accumulate(rows_y[:, None] + dy, axis=0)
        self.span = float(self.moved[-1].max() - self.moved[0].min()) + 1.0
        self.stacked = (self.moved + self.span * np.arange(w)).T.ravel()
        self.rows = np.tile(rows_y, w)
        self.width = w

    def row_to(self, y: np.ndarray, column: np.ndarray, between: bool = True) -> np.ndarray:
        """The photo row that moves down to y, in each (fractional) column: between the two columns
        beside it, or (between False) in the nearest."""
        within = lambda k: np.interp(np.clip(y, self.moved[0, k], self.moved[-1, k]) + self.span * k,  # noqa: E731
                                     self.stacked, self.rows)
        if not between:
            return within(np.clip(np.rint(column).astype(int), 0, self.width - 1))
        left = np.clip(column.astype(int), 0, self.width - 1)  # columns are never negative here
        share = np.clip(column - left, 0.0, 1.0)
        right = np.minimum(left + 1, self.width - 1)
        return within(left) + share * (within(right) - within(left))


def _read_at(plane: np.ndarray, x: np.ndarray, y: np.ndarray, cv2) -> np.ndarray:
    """plane read (bilinear, edges repeated) at the points (x, y), given as flat arrays. OpenCV's maps
    hold fewer than 32767 columns, and a large photo's mouth asks more points than that: they are
    read in rows of READ_ROW."""
    count = len(x)
    if count == 0:
        return np.zeros(0, np.float32)
    width = min(count, READ_ROW)
    rows = -(-count // width)

    def shaped(values: np.ndarray) -> np.ndarray:  # padded only when the last row is short (np.pad is slow)
        values = values.astype(np.float32, copy=False)
        if rows * width > count:
            values = np.concatenate([values, np.zeros(rows * width - count, np.float32)])
        return values.reshape(rows, width)

    return cv2.remap(plane, shaped(x), shaped(y), cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).ravel()[:count]


def _inverse_at(field: np.ndarray, cx: np.ndarray, cy: np.ndarray, origin: tuple[int, int], cv2) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each lip (upper, lower), the photo points q whose forward map q -> q + field(q) lands on the
    points (cx, cy), given in nearly column order. Down the face, where the lips stretch into the chin
    many times over (no fixed-point step settles there), each column of the field is inverted exactly;
    across, the lips move less and smoothly: a fixed-point step finds the column, secant steps after it
    where it missed."""
    x0, y0 = origin
    width = field.shape[1] // 2
    rows_y = y0 + FIELD_STEP * np.arange(field.shape[0], dtype=np.float32)
    found = []
    for half in (field[:, :width], field[:, width:]):
        columns = _Columns(half[..., 1], rows_y)
        across = np.ascontiguousarray(half[..., 0])
        column = np.maximum((cx - x0) / FIELD_STEP, 0.0)
        qy = columns.row_to(cy, column, between=False)  # near enough to read how far the column moves
        qx = cx - _read_at(across, column, (qy - y0) / FIELD_STEP, cv2)
        qy = columns.row_to(cy, np.maximum((qx - x0) / FIELD_STEP, 0.0))
        # Beside a wide opening's corners the motion across changes fast down the stretched lower lip,
        # and that first step lands pixels off (4.7 px on a 1024 px face: islands of lip in the
        # opening, a corner's edge in steps). There, secant steps on qx + dx(qx) = cx (from the column
        # itself, where the miss was dx there) until each lands within X_TOLERANCE.
        todo = np.arange(len(cx))
        last_q, last_miss = cx.astype(np.float64), qx - cx  # at the column itself it missed by -dx there
        for _ in range(X_STEPS):
            q = qx[todo]
            miss = cx[todo] - q - _read_at(across, np.maximum((q - x0) / FIELD_STEP, 0.0), (qy[todo] - y0) / FIELD_STEP, cv2)
            far = np.abs(miss) > X_TOLERANCE
            todo, q, miss = todo[far], q[far], miss[far]
            if not len(todo):
                break
            # the slope of the miss along q (-(1 + d dx/dq)); where it is flat or turned, half the miss
            slope = (miss - last_miss[todo]) / np.where(np.abs(q - last_q[todo]) > 1e-3, q - last_q[todo], np.nan)
            step = np.where(np.isfinite(slope) & (slope < -0.2), -miss / slope, 0.5 * miss)
            last_q[todo], last_miss[todo] = q, miss
            qx[todo] = q + np.clip(step, -2 * np.abs(miss), 2 * np.abs(miss))
            qy[todo] = columns.row_to(cy[todo], np.maximum((qx[todo] - x0) / FIELD_STEP, 0.0))
        found.append((qx, qy))
    return found


def _invert(field: np.ndarray, px: np.ndarray, py: np.ndarray, origin: tuple[int, int], cv2) -> tuple[np.ndarray, np.ndarray]:
    """For both lips at once, the points q (photo pixels) that each one's forward map q -> q + field(q)
    takes to (px, py): returned side by side, the upper lip's left. field: both lips' motion side by
    side (MouthLayers.fields). Each lip's inverse map is smooth almost everywhere, so it is found on a
    coarse grid (QUERY_STEP) and interpolated; where it jumps between two nodes (skin pressed together
    above a lip raised far, a fold the inversion skips over), interpolating drew the lip's edge as a
    saw, so there it is found at every pixel."""
    # Column by column, top to bottom: the queries come in nearly the order the interpolation keeps
    # its columns in, and each search starts where the last ended (ten times faster than row by row).
    cx, cy = px[::QUERY_STEP, ::QUERY_STEP].T.ravel(), py[::QUERY_STEP, ::QUERY_STEP].T.ravel()
    found = _inverse_at(field, cx, cy, origin, cv2)
    shape = px[::QUERY_STEP, ::QUERY_STEP].T.shape
    grid = lambda values: values.reshape(shape).T  # noqa: E731
    qx = np.concatenate([grid(found[0][0]), grid(found[1][0])], axis=1).astype(np.float32)
    qy = np.concatenate([grid(found[0][1]), grid(found[1][1])], axis=1).astype(np.float32)
    cx, cy = np.tile(px[::QUERY_STEP, ::QUERY_STEP], 2), np.tile(py[::QUERY_STEP, ::QUERY_STEP], 2)
    # Pixel (x, y) of the box is node (x, y) / QUERY_STEP of the coarse grid: each lip's offsets read there.
    offset_x, offset_y = qx - cx, qy - cy
    offset = cv2.remap(np.dstack([offset_x, offset_y]), *_upsampling(px.shape, qx.shape[1] // 2), cv2.INTER_LINEAR,
                       borderMode=cv2.BORDER_REPLICATE)
    qx, qy = offset[..., 0], offset[..., 1]
    width = px.shape[1]
    for part in (slice(0, width), slice(width, 2 * width)):
        qx[:, part] += px
        qy[:, part] += py
    # Cells whose corners' offsets differ by more than JUMP_PX: every pixel in them found exactly.
    jump = np.zeros(offset_y.shape, bool)
    for offsets in (offset_x, offset_y):
        step_down, step_across = np.abs(np.diff(offsets, axis=0)) > JUMP_PX, np.abs(np.diff(offsets, axis=1)) > JUMP_PX
        jump[:-1] |= step_down
        jump[1:] |= step_down
        jump[:, :-1] |= step_across
        jump[:, 1:] |= step_across
    half = jump.shape[1] // 2
    rough = np.repeat(np.repeat(jump[:, :half] | jump[:, half:], QUERY_STEP, axis=0), QUERY_STEP, axis=1)
    rough = cv2.dilate(rough[:px.shape[0], :px.shape[1]].astype(np.uint8), np.ones((QUERY_STEP, QUERY_STEP), np.uint8))
    cols, rows = np.nonzero(rough.T)  # column by column, as the inversion likes them
    if len(rows):
        exact = _inverse_at(field, px[rows, cols], py[rows, cols], origin, cv2)
        for (ex, ey), shift in zip(exact, (0, width)):
            qx[rows, cols + shift] = ex
            qy[rows, cols + shift] = ey
    return qx, qy


def _invert_near(field: np.ndarray, px: np.ndarray, py: np.ndarray, origin: tuple[int, int], cv2) -> tuple[np.ndarray, np.ndarray]:
    """_invert where both lips move little and smoothly (closing over the photo's own opening: the
    close field falls from each lip's edge over three times the distance it moves, so each step takes a
    third of the error at most): q = p - d(q), from q = p, NEAR_STEPS times. A tenth of the time."""
    x0, y0 = origin
    # Both lips at once, side by side as the field is: one remap a step.
    px, py = np.tile(px, 2), np.tile(py, 2)
    qx, qy = px, py
    for _ in range(NEAR_STEPS):
        d = cv2.remap(field, _side_by_side((qx - x0) / FIELD_STEP, field.shape[1] // 2), (qy - y0) / FIELD_STEP,
                      cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        qx, qy = px - d[..., 0], py - d[..., 1]
    return qx.astype(np.float32, copy=False), qy.astype(np.float32, copy=False)


@lru_cache(maxsize=8)
def _upsampling(shape: tuple[int, int], half: int) -> tuple[np.ndarray, np.ndarray]:
    """The maps that read a side-by-side coarse grid (QUERY_STEP) at every pixel of a box, both halves."""
    rows, cols = np.mgrid[0:shape[0], 0:shape[1]].astype(np.float32) / QUERY_STEP
    return np.concatenate([np.minimum(cols, half - 1), cols + half], axis=1), np.tile(rows, 2)


def _at(plane: np.ndarray, qx: np.ndarray, qy: np.ndarray, origin: tuple[int, int], cv2) -> np.ndarray:
    return cv2.remap(plane, qx - origin[0], qy - origin[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _teeth_under_raised_lip(layers: MouthLayers, field: np.ndarray, px: np.ndarray, py: np.ndarray,
                            origin: tuple[int, int], cv2) -> np.ndarray:
    """Where each pixel of the box reads the photo's teeth (its row) when the upper lip rises off them:
    the teeth from the cut down to the split drawn taller by as far as the lip rose there."""
    below_cut = _at(layers.upper_cut, px, py, origin, cv2)
    teeth_px = np.maximum(below_cut - _at(layers.split, px, py, origin, cv2), 1.0)
    lip_dy = np.ascontiguousarray(field[:, :field.shape[1] // 2, 1])
    raised = np.clip(-cv2.remap(lip_dy, ((px - origin[0]) / FIELD_STEP).astype(np.float32),
                                ((py - origin[1]) / FIELD_STEP).astype(np.float32), cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REPLICATE), 0.0, LIFT_REACH * (layers.box[3] - layers.box[1]))
    read = np.clip((below_cut + raised) * teeth_px / (teeth_px + raised), 0.5, teeth_px)
    return py + np.where(below_cut < teeth_px, np.maximum(read - below_cut, 0.0), 0.0)


def draw_lips(layers: MouthLayers, image: np.ndarray, weights: np.ndarray, px: np.ndarray, py: np.ndarray,
              parted: float, cv2, near: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The mouth's box drawn forward: px, py are where each output pixel of the box lies in the photo
    before the face moves (the head's motion undone); parted: how far the lips are apart, 0 (shut) to
    1 (the photo's dark between them is the opening's). Returns the pixels (uint8 RGB) and the hole:
    how much of each pixel neither lip, nor the photo's own teeth, covers (the painter's to fill)."""
    origin = layers.box[:2]
    field = weighted_fields(weights, layers.fields, layers.field_spans)
    qx, qy = (_invert_near if near else _invert)(field, px, py, origin, cv2)
    # Each lip covers the pixels that come from its side of its cut (a pixel's width of soft edge).
    cut_width = layers.upper_cut.shape[1]
    cut = cv2.remap(layers.cuts, _side_by_side(qx - origin[0], cut_width), qy - origin[1], cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_REPLICATE)
    cover = np.clip(0.5 - cut[..., 0] - parted * cut[..., 1], 0.0, 1.0)
    width = px.shape[1]
    upper_cover, lower_cover = np.ascontiguousarray(cover[:, :width]), np.ascontiguousarray(cover[:, width:])
    both = cv2.remap(image, qx, qy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    upper_rgb, lower_rgb = np.ascontiguousarray(both[:, :width]), np.ascontiguousarray(both[:, width:])
    if layers.photo_teeth:
        # The photo's teeth above the split stay with the skull: the photo where it was. Where the upper
        # lip rises off them more of them shows: the teeth from the cut down to the split drawn taller by
        # as far as the lip rose there (its own field at the pixel), their top still under the lip. Drawn
        # on up from the row at the cut instead, every column repeated one pixel of the lip's edge: pink
        # and white stripes over the sample's teeth at AA.
        # (Lips closing over the teeth (near) come down over them: nothing is bared.)
        on_teeth = py if near else _teeth_under_raised_lip(layers, field, px, py, origin, cv2)
        # A pixel's width of soft edge at the split and under the lip: a hard one drew the teeth's edge
        # as a staircase.
        teeth = (np.clip(0.5 + _at(layers.upper_cut, px, on_teeth, origin, cv2), 0.0, 1.0)
                 * np.clip(0.5 - _at(layers.split, px, on_teeth, origin, cv2), 0.0, 1.0))
        hole = (1 - upper_cover) * (1 - lower_cover) * (1 - teeth)
        inside = cv2.remap(image, px, on_teeth, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    else:
        hole = (1 - upper_cover) * (1 - lower_cover)
        inside = None
    below = lower_rgb if inside is None else cv2.blendLinear(lower_rgb, inside, lower_cover, 1 - lower_cover)
    pixels = cv2.blendLinear(upper_rgb, below, upper_cover, 1 - upper_cover)
    return pixels, hole
