"""Photo stage: read the face photo, size it for the video, find the face's 478 landmarks.

Landmarks come from MediaPipe FaceMesh, whose model ships inside the mediapipe wheel.
"""

from __future__ import annotations

import logging
import os
import sys
import types
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .artifacts import FacePhoto
from .config import RenderConfig
from .errors import InputError, ModelMissingError
from .stamps import sha256_of

MIN_FACE_WIDTH_PX = 48
CROP_SIDE = 512  # a face framed by --crop face is enlarged to this long side when smaller (max_side if less)
log = logging.getLogger("talker")


def file_sha256(path: Path) -> str:
    return sha256_of(path)


def video_size(width: int, height: int, max_side: int) -> tuple[int, int]:
    """Scale so the long side is at most max_side; both sides even (yuv420p needs it)."""
    scale = min(1.0, max_side / max(width, height))
    return max(2, int(width * scale) // 2 * 2), max(2, int(height * scale) // 2 * 2)


@contextmanager
def quiet_native_logs():
    """MediaPipe's C++ code logs to file descriptor 2 directly; keep stderr for our own lines."""
    os.environ.setdefault("GLOG_minloglevel", "2")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


MAX_PHOTO_PIXELS = 100_000_000  # a larger image is a decompression bomb, not a portrait


def _to_rgb8(image) -> np.ndarray:
    """8-bit RGB, scaling 16- and 32-bit images by their range (Pillow's convert clips them to white)."""
    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        values = np.asarray(image, dtype=np.float64)
        top = 65535.0 if image.mode.startswith("I;16") or values.max() > 255 else 255.0
        gray = np.clip(values / top * 255.0 + 0.5, 0, 255).astype(np.uint8)
        return np.repeat(gray[:, :, None], 3, axis=2)
    return np.asarray(image.convert("RGB"))


@contextmanager
def _opened(path: Path):
    """The photo opened by Pillow (its header read), its failures said as one line each."""
    import warnings

    from PIL import Image, UnidentifiedImageError

    from .jobs.input_files import check_file

    check_file(path, "photo")  # a FIFO would leave Pillow waiting, a device reading forever
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            Image.MAX_IMAGE_PIXELS = MAX_PHOTO_PIXELS
            with Image.open(path) as image:
                yield image
    except PermissionError:
        raise InputError(f"photo cannot be read (permission denied): {path}") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(f"{path} is over {MAX_PHOTO_PIXELS // 1_000_000} megapixels; pass a smaller photo") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        raise InputError(f"{path} is not a readable image ({error.__class__.__name__}); pass a JPEG or PNG photo") from None


def check_image(path: Path) -> None:
    """Refuse, from its header alone, a photo Pillow cannot read or one too large to decode."""
    with _opened(path):
        pass


def read_image(path: Path) -> np.ndarray:
    from PIL import ImageOps

    with _opened(path) as image:
        return _to_rgb8(ImageOps.exif_transpose(image))


class _OnUse(types.ModuleType):
    """Stands for a module while mediapipe is imported (see _mediapipe). Used at all, it hands over to
    the real module."""

    __spec__ = None  # the import system reads it; any other name loads the real module

    def __getattr__(self, name: str):
        import importlib

        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


def _mediapipe():
    """mediapipe, imported without paying for what talker does not use of it: its drawing helpers
    import matplotlib's pyplot (0.3 s, matplotlib itself 0.15 s of it) and its audio tasks
    sounddevice (0.05 s; mediapipe goes on without it). Each stands in only while mediapipe is
    imported, and only where nothing imported it before."""
    if "mediapipe" in sys.modules:
        return sys.modules["mediapipe"]
    package, pyplot = _OnUse("matplotlib"), _OnUse("matplotlib.pyplot")
    package.pyplot = pyplot
    stand_ins = {name: module for name, module in
                 (("matplotlib", package), ("matplotlib.pyplot", pyplot), ("sounddevice", None))
                 if name not in sys.modules}
    sys.modules.update(stand_ins)
    try:
        import mediapipe
    finally:
        for name, module in stand_ins.items():
            if name in sys.modules and sys.modules[name] is module:
                del sys.modules[name]  # a later import gets the real one
    return mediapipe


def _mesh(image_rgb: np.ndarray) -> np.ndarray | None:
    """FaceMesh's 478 points, in pixels, of the face its own detector finds; None if it finds none."""
    mp = _mediapipe()

    with mp.solutions.face_mesh.FaceMesh(
        static_image_mode=True, max_num_faces=1, refine_landmarks=True, min_detection_confidence=0.5
    ) as mesh:
        result = mesh.process(np.ascontiguousarray(image_rgb))
    if not result.multi_face_landmarks:
        return None
    height, width = image_rgb.shape[:2]
    return np.array([[p.x * width, p.y * height] for p in result.multi_face_landmarks[0].landmark], dtype=np.float32)


def read_mouths(images: list[np.ndarray]) -> np.ndarray:
    """frames x 2: the inner lips' opening at the mouth's centre (FaceMesh 13-14) and the mouth's
    width between its corners (61-291), both over the eye-corner distance (33-263), as a face tracker
    sees them in a video: one FaceMesh reads the images in order, tracking the face from one to the
    next; NaN where no face is found."""
    mp = _mediapipe()

    out = np.full((len(images), 2), np.nan)
    with quiet_native_logs(), mp.solutions.face_mesh.FaceMesh(
        static_image_mode=False, max_num_faces=1, refine_landmarks=True, min_detection_confidence=0.3
    ) as mesh:
        for i, image in enumerate(images):
            found = mesh.process(np.ascontiguousarray(image)).multi_face_landmarks
            if found:
                points = found[0].landmark
                height, width = image.shape[:2]
                xy = lambda k: np.array([points[k].x * width, points[k].y * height])  # noqa: E731
                eyes = np.linalg.norm(xy(33) - xy(263))
                out[i] = np.linalg.norm(xy(13) - xy(14)) / eyes, np.linalg.norm(xy(61) - xy(291)) / eyes
    return out


def read_mouth_openings(images: list[np.ndarray]) -> np.ndarray:
    """The inner lips' opening of each image (read_mouths), as talker's renderer reads its own probes."""
    return read_mouths(images)[:, 0]


def _face_boxes(image_rgb: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Every face's box (x0, y0, x1, y1) in pixels, largest first: MediaPipe's full-range detector,
    which also finds the small or several faces FaceMesh's own short-range detector misses."""
    mp = _mediapipe()

    height, width = image_rgb.shape[:2]
    with mp.solutions.face_detection.FaceDetection(model_selection=1, min_detection_confidence=0.5) as detector:
        result = detector.process(np.ascontiguousarray(image_rgb))
    boxes = []
    for detection in result.detections or []:
        b = detection.location_data.relative_bounding_box
        boxes.append((int(b.xmin * width), int(b.ymin * height), int((b.xmin + b.width) * width),
                      int((b.ymin + b.height) * height)))
    return sorted(boxes, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]), reverse=True)


def _face_boxes_in_tiles(image_rgb: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Faces too small for the detector in the whole image (a full-body photo): looked for in
    overlapping tiles of half the image's long side, largest first."""
    height, width = image_rgb.shape[:2]
    side = max(height, width) // 2
    if min(height, width) < 2 * MIN_FACE_WIDTH_PX or side < 2 * MIN_FACE_WIDTH_PX:
        return []
    starts = lambda length: sorted({*range(0, max(length - side, 0) + 1, side // 2), max(length - side, 0)})  # noqa: E731
    boxes = []
    for top in starts(height):
        for left in starts(width):
            for x0, y0, x1, y1 in _face_boxes(image_rgb[top:top + side, left:left + side]):
                boxes.append((x0 + left, y0 + top, x1 + left, y1 + top))
    return sorted(boxes, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]), reverse=True)


def find_landmarks(image_rgb: np.ndarray) -> np.ndarray | None:
    """478 x 2 pixel landmarks of the most prominent face, or None. When FaceMesh alone finds no face
    (several faces, or a small one), the largest face found by the full-range detector is meshed
    in a crop around it."""
    try:
        with quiet_native_logs():
            points = _mesh(image_rgb)
            if points is not None:
                return points
            boxes = _face_boxes(image_rgb) or _face_boxes_in_tiles(image_rgb)
            if not boxes:
                return None
            if len(boxes) > 1:
                log.warning("%d faces in the photo: the largest is animated", len(boxes))
            x0, y0, x1, y1 = boxes[0]
            side = int(1.2 * max(x1 - x0, y1 - y0))  # the face and some hair and chin around it
            cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
            left, top = max(cx - side, 0), max(cy - side, 0)
            crop = image_rgb[top:cy + side, left:cx + side]
            points = _mesh(crop)
    except ImportError:
        raise ModelMissingError("mediapipe is not installed; run: pip install 'mediapipe==0.10.21'") from None
    return None if points is None else points + np.array([left, top], dtype=np.float32)


def kept_landmarks(points: object, shape: tuple[int, ...]) -> np.ndarray | None:
    """Landmarks read back from the work cache, or None where they are not what find_landmarks could
    have found in an image of this shape: 478 x 2 finite points, around the image (a face may run a
    little off its edge). A damaged or planted entry is found again, never drawn from."""
    if not isinstance(points, np.ndarray) or points.shape != (478, 2) or points.dtype.kind != "f":
        return None
    height, width = shape[:2]
    if not np.isfinite(points).all() or (points < -0.5 * np.array([width, height])).any() \
            or (points > 1.5 * np.array([width, height])).any() or np.ptp(points[:, 0]) < 1.0:
        return None
    return points.astype(np.float32)


# A face turned this far has its nose tip within this share of its width from one side of its face
# (FaceMesh 234 and 454; a frontal face's is at 0.4-0.55, the Mona Lisa's, turned a little, at 0.29),
# or beyond it, where FaceMesh puts the hidden side's points when it meets a profile (1.37 on one).
TURNED_NOSE = 0.12


def turned_away(landmarks: np.ndarray) -> bool:
    """Whether the face is seen near profile: the warp and the mouth are drawn for a face that looks at
    the camera, and the hidden side's landmarks are guesses."""
    left, right = float(landmarks[234, 0]), float(landmarks[454, 0])
    nose = (float(landmarks[1, 0]) - left) / (right - left) if abs(right - left) > 1e-6 else 0.0
    return not TURNED_NOSE <= nose <= 1 - TURNED_NOSE


def face_crop_box(landmarks: np.ndarray, width: int, height: int) -> tuple[int, int, int, int]:
    """The head and shoulders around a face (x0, y0, x1, y1), 4:5 like a portrait, inside the image:
    the face's landmarks span brow to chin, so the box is 2.6 times their height, with the face's
    centre 40% down from its top."""
    lo, hi = landmarks.min(axis=0), landmarks.max(axis=0)
    box_h = min(2.6 * float(hi[1] - lo[1]), height)
    box_w = min(0.8 * box_h, width)
    box_h = min(box_h, box_w / 0.8)
    cx, cy = (lo + hi) / 2
    x0 = float(np.clip(cx - box_w / 2, 0, width - box_w))
    y0 = float(np.clip(cy - 0.4 * box_h, 0, height - box_h))
    return int(x0), int(y0), int(round(x0 + box_w)), int(round(y0 + box_h))


Landmarks = Callable[[np.ndarray], "np.ndarray | None"]  # an image -> its face's 478 points, or None


def load_photo(path: Path, config: RenderConfig, sha256: str | None = None,
               landmarks_of: Landmarks | None = None) -> FacePhoto:
    """The photo at the video size with its face's landmarks. sha256: the file's, when the caller
    has hashed it already; landmarks_of: what finds them (find_landmarks, or the work cache's copy
    of what it found)."""
    landmarks_of = landmarks_of or find_landmarks
    original = read_image(path)
    height, width = original.shape[:2]
    image, landmarks = _sized_with_landmarks(original, config.max_side, path, landmarks_of)
    if config.crop == "face":  # frame the head and shoulders, then find the face again at the new size
        scale = width / image.shape[1]
        x0, y0, x1, y1 = face_crop_box(landmarks * scale, width, height)
        whole = (x1 - x0) * (y1 - y0) >= 0.9 * width * height
        image, landmarks = _sized_with_landmarks(original if whole else original[y0:y1, x0:x1], config.max_side,
                                                 path, landmarks_of, enlarge=not whole)
    if turned_away(landmarks):
        log.warning("the face in %s is turned away from the camera (near profile): talker draws a face that "
                    "looks at the camera, and its open mouth may show past the cheek", path.name)
    face_width = float(np.ptp(landmarks[:, 0]))
    if face_width < MIN_FACE_WIDTH_PX:
        raise InputError(
            f"the face in {path} is only {face_width:.0f} px wide at the video size; "
            f"use --crop face, crop the photo closer or raise render.max_side (need {MIN_FACE_WIDTH_PX} px)"
        )
    return FacePhoto(
        path=path, sha256=sha256 or file_sha256(path), image_rgb=np.ascontiguousarray(image),
        landmarks_px=landmarks, source_size=(width, height),
    )


def _sized_with_landmarks(original: np.ndarray, max_side: int, path: Path, landmarks_of: Landmarks,
                          enlarge: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The image at the video size (a small crop enlarged to CROP_SIDE, so the face has pixels to draw
    with) and its face's landmarks there; no face is an input error."""
    import cv2

    height, width = original.shape[:2]
    out_w, out_h = video_size(width, height, max_side)
    least = min(max_side, CROP_SIDE)
    if enlarge and max(width, height) < least:
        scale = least / max(width, height)
        out_w, out_h = max(2, int(width * scale) // 2 * 2), max(2, int(height * scale) // 2 * 2)
    shrink = out_w < width
    image = (cv2.resize(original, (out_w, out_h), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_CUBIC)
             if (out_w, out_h) != (width, height) else original)
    landmarks = landmarks_of(image)
    if landmarks is None:
        raise InputError(f"no face found in {path}; use a photo with one clear, frontal face")
    return image, landmarks
