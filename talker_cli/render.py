"""Blendshape track + photo -> frames: warp the face, paint the mouth interior, move the head over a
still background.

Frames are made one at a time (render(i)), so memory does not grow with the length of the video.
"""

from __future__ import annotations

import numpy as np

from .artifacts import BlendshapeTrack, FacePhoto
from .face_rig import BASIS, FaceRig, build_rig

JAW_TRAVEL = 0.5  # lip opening at jawOpen = 1, in mouth half widths


def basis_weights(track: BlendshapeTrack, frame: int) -> np.ndarray:
    w = dict(zip(track.names, track.weights[frame]))
    both = lambda name: 0.5 * (w[f"{name}Left"] + w[f"{name}Right"])  # noqa: E731
    jaw = w["jawOpen"] * JAW_TRAVEL
    close = w["mouthClose"]
    values = {
        "lipgap": jaw * (1 - close), "chin": jaw, "close": close,
        "lowerDown": both("mouthLowerDown"), "upperUp": both("mouthUpperUp"),
        "funnel": w["mouthFunnel"], "pucker": w["mouthPucker"],
        "smileLeft": w["mouthSmileLeft"], "smileRight": w["mouthSmileRight"],
        "stretchLeft": w["mouthStretchLeft"], "stretchRight": w["mouthStretchRight"],
        "brow": w["browInnerUp"], "blinkLeft": w["eyeBlinkLeft"], "blinkRight": w["eyeBlinkRight"],
        "browDown": both("browDown"), "browOuterUp": both("browOuterUp"), "eyeWide": both("eyeWide"),
        "squint": max(both("eyeSquint"), both("cheekSquint")), "frown": both("mouthFrown"),
    }
    return np.array([values[name] for name in BASIS], dtype=np.float32)


HEAD_RADIUS = 0.5  # from the neck's pivot to the face, in face widths: a turn of the head moves the face by this


def head_offset(head_deg: np.ndarray) -> tuple[float, float, float]:
    """The track's (yaw, pitch, roll) as the photo can show it: roll in degrees, and the face's
    shift (dx, dy) in face widths that a small turn and nod make."""
    yaw, pitch, roll = (float(v) for v in head_deg)
    return roll, HEAD_RADIUS * float(np.sin(np.radians(yaw))), HEAD_RADIUS * float(np.sin(np.radians(pitch)))


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


class FrameRenderer:
    """Holds the rig, the head's matte and the grids; render(i) makes frame i of the track.

    Only the head's box is drawn: the rest of the frame is the still photo. Everything that does not
    change between frames (grids, the matte, the mouth's fields on the lips) is computed here, once.
    """

    def __init__(self, photo: FacePhoto):
        import cv2

        self.cv2 = cv2
        # One thread: ffmpeg encodes beside the drawing, and OpenCV's own thread pool only fought it
        # for the cores (bench/render.py: drawing and encoding about 20% faster at 60 s on 2 cores).
        cv2.setNumThreads(1)
        self.photo = photo
        height, width = photo.image_rgb.shape[:2]
        self.rig = build_rig(photo.landmarks_px, (width, height))
        self.painter = MouthPainter(photo, self.rig)
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

    def head_transform(self, track: BlendshapeTrack, index: int) -> np.ndarray:
        """The head's motion in this frame as a 2 x 3 affine map of photo pixels."""
        angle, dx, dy = head_offset(track.head[index]) if track.head is not None else (0.0, 0.0, 0.0)
        forward = self.cv2.getRotationMatrix2D(tuple(map(float, self.pivot)), angle, 1.0)
        forward[:, 2] += (dx * self.face_width, dy * self.face_width)
        return forward

    def render(self, track: BlendshapeTrack, index: int) -> np.ndarray:
        cv2 = self.cv2
        weights = basis_weights(track, index)
        forward = self.head_transform(track, index)
        # Where each output pixel of the box comes from in the still photo: the head's inverse motion,
        # faded out by the matte (m * (inverse(p) - p), linear in p), minus the face's own deformation.
        (a, b, c), (d, e, f) = cv2.invertAffineTransform(forward)
        map_x = self.grid_x + (a - 1) * self.matte_x + b * self.matte_y + c * self.matte
        map_y = self.grid_y + d * self.matte_x + (e - 1) * self.matte_y + f * self.matte
        # The face field is evaluated at the output pixel: the head moves by a pixel or two, the
        # field varies over tens of pixels, so the error is far below a pixel.
        shift = self.rig.displacement(weights)
        map_x[self.roi_in_box] -= shift[..., 0]
        map_y[self.roi_in_box] -= shift[..., 1]
        frame = self.photo.image_rgb.copy()
        x0, y0, x1, y1 = self.box
        # float32 whatever numpy's promotion rules (numpy 2 keeps float64 from float64 scalars)
        frame[y0:y1, x0:x1] = cv2.remap(self.photo.image_rgb, map_x.astype(np.float32, copy=False),
                                        map_y.astype(np.float32, copy=False), cv2.INTER_LINEAR,
                                        borderMode=cv2.BORDER_REFLECT)
        upper, lower = (cv2.transform(p[None].astype(np.float32), forward)[0] for p in self.rig.opening(weights))
        self.painter.paint(frame, upper.astype(np.float64), lower.astype(np.float64))
        return frame
