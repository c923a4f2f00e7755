"""Does the drawn mouth look like the filmed one? Reconstruction, frame by frame, as talking-head papers score it.

For every talking clip in CLIPS_DIR (video with its sound in one file), the clip's first frame is the
photo and its sound the recording; talker renders it at the clip's frame rate. In every frame FaceMesh
finds the face in the real frame, in talker's frame and in the photo; talker's frame and the photo are
brought onto the real frame by a similarity on stable points (eye corners, nose, face sides), and a box
around the real lips (1.6 x 1.1 mouth widths) is cut from all three and compared with the real one:

  ssim           SSIM on luminance (Lab L), 7 x 7 Gaussian windows, the box at 96 x 64
  lab_l1         the mean absolute Lab difference
  own 80 ms      the speaker's own frame 80 ms earlier against the real frame: a near miss

On the frames where the real mouth is open (inner lips 13-14 over 0.06 eye distances apart):

  gain_open      (talker - photo) / (own 80 ms - photo): 0 no better than the unmoving photo, 1 as
                 close as the speaker's own frame two frames away
  rest_ssim      the render's first frame against the photo itself (for photos whose lips are shut,
                 clips that begin in silence: the frame at rest should be the photo)
  gain_open_by_band
                 the gain in each third of the box, top to bottom: the upper lip and what is over it,
                 the mouth, the chin (SSIM of each band alone): where the render gains on the photo,
                 and where it loses (a jaw dropped too far loses on the chin)
Alongside, talker's frame brought on through the photo's own fit (onto the photo, then as the photo
is brought on: `through_photo`), so that render and photo are aligned alike and differ by the drawing
alone: ssim_talker_open_through_photo, gain_open_through_photo, clips_talker_beats_photo_through_photo.
The specification fits the render onto the real frame directly, and where a real head turns away from
the photo's pose that fit picks other points than the photo's does from frame to frame (a natural
clip's figure moved by 0.02-0.03 with it alone).
With --still-video, a control: the photo itself encoded as talker encodes its videos (every frame the
photo) and read as talker's frames are (FaceMesh tracking a video, where the photo is read as a
still). What it scores against the photo is what the video's path alone moves a clip's figures by
(on three natural clips -0.028 to +0.030 by SSIM, more than most of what the drawing gains there):
  ssim_still_video_open, gain_open_vs_still_video (the gain with the still video as the baseline),
  clips_talker_beats_still_video

With --transplant, the ceiling instead of talker: each real frame's lower face pasted into the photo,
the head held as in the photo (brought on by the eye corners and nose, the points the measure aligns by
left as the photo's). No drawing of the mouth can score more without moving the head. On a speaker who
holds still (GRID s1) it scores a gain of 1.7; on three natural clips 0.27, one of them below the
photo: there the gap to the speaker's own frame is the head's motion, not the mouth.

    python bench/appearance.py CLIPS_DIR [--work DIR] [--limit N] [--json] [--sheet OUT.png] [--filmed-opening]
                               [--transplant] [--still-video] [-- TALKER FLAGS...]

The clips are rendered with `--language en` unless the flags after `--` name a language. --work keeps
the photos, sounds and renders, and a render found there is used again (delete it to render anew).
--sheet draws real | talker | photo at open frames, zoomed. --filmed-opening draws each frame opened as
far as the filmed mouth is (FaceMesh's reading of the real frame), no head motion, no blink, nothing
encoded: the drawing alone with its timing exact (where the gap is in what is drawn, not when).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mouth import VIDEO_SUFFIXES, read_frames  # noqa: E402

STABLE = [33, 133, 362, 263, 1, 168, 6, 197, 234, 454, 10]  # eye corners, nose bridge, face sides, forehead
LIP_POINTS = [61, 291, 0, 17, 13, 14, 78, 308]
CROP_SIZE = (96, 64)  # the box is resized to this before it is compared
OPEN = 0.06  # eye distances between the inner lips: the real mouth is open
SHUT_PHOTO = 0.04  # a photo whose inner lips are closer than this has its mouth shut
NEAR_MISS_S = 0.08
BANDS = ("upper lip", "mouth", "chin")  # the box's thirds, top to bottom
ROW = 6 + 3 * len(BANDS) + 2  # clip_rows' columns
STILL = ROW - 2  # the still video's SSIM
STEADY = ROW - 1  # talker's SSIM brought on through the photo's own fit (through_photo)


def _facemesh(static: bool):
    import mediapipe as mp

    return mp.solutions.face_mesh.FaceMesh(static_image_mode=static, max_num_faces=1, refine_landmarks=True)


def _points(mesh, image: np.ndarray) -> np.ndarray | None:
    found = mesh.process(np.ascontiguousarray(image)).multi_face_landmarks
    if not found:
        return None
    height, width = image.shape[:2]
    return np.array([(p.x * width, p.y * height) for p in found[0].landmark], np.float32)


def _aperture(points: np.ndarray) -> float:
    return float(np.linalg.norm(points[13] - points[14]) / np.linalg.norm(points[33] - points[263]))


def lip_box(points: np.ndarray, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """x0, y0, x1, y1 of the box around the lips: 1.6 mouth widths across, 1.1 down."""
    centre = points[LIP_POINTS].mean(axis=0)
    width = float(np.linalg.norm(points[61] - points[291]))
    half = np.array([0.8 * width, 0.55 * width])
    x0, y0 = np.maximum((centre - half).astype(int), 0)
    x1, y1 = np.minimum((centre + half).astype(int), [shape[1], shape[0]])
    return int(x0), int(y0), int(x1), int(y1)


def aligned_crop(image: np.ndarray, points: np.ndarray, onto: np.ndarray, box: tuple[int, int, int, int],
                 matrix: np.ndarray | None = None) -> np.ndarray:
    """`image` moved onto the frame whose landmarks are `onto` (a similarity on STABLE, or `matrix`),
    cut to box. The box is in the real frame's pixels: only it is drawn, whatever the size of `image` (a
    render smaller than the clip, a 1024 px render of a 1920 px clip or one made with --max-side 512,
    must not lose the rows below its own height)."""
    import cv2

    x0, y0, x1, y1 = box
    if matrix is None:
        matrix = similarity(points, onto)
    matrix = matrix - np.array([[0.0, 0.0, x0], [0.0, 0.0, y0]])  # into the box's own pixels
    moved = cv2.warpAffine(image, matrix, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return cv2.resize(moved, CROP_SIZE, interpolation=cv2.INTER_AREA)


def similarity(points: np.ndarray, onto: np.ndarray) -> np.ndarray:
    """The similarity on STABLE that brings a face whose landmarks are `points` onto `onto` (2 x 3; the
    identity for a frame onto itself)."""
    import cv2

    if points is onto:
        return np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    return cv2.estimateAffinePartial2D(points[STABLE], onto[STABLE])[0]


def through_photo(points: np.ndarray, photo_points: np.ndarray, photo_on: np.ndarray) -> np.ndarray:
    """The similarity that brings a rendered frame onto the real one through the photo: onto the photo
    first (least median: the render is the photo with its head swayed a little), then by `photo_on`,
    the photo's own fit onto the real frame. The specification fits the render onto the real frame
    directly (RANSAC over the face's points), and where the real head turns away from the photo's pose
    that fit takes another subset of the points for the render than for the photo, frame by frame: a
    natural clip's figure moved by 0.02-0.03 with it. Brought on alike, render and photo differ by the
    drawing alone."""
    import cv2

    to_photo, _ = cv2.estimateAffinePartial2D(points[STABLE], photo_points[STABLE], method=cv2.LMEDS)
    return (np.vstack([photo_on, [0.0, 0.0, 1.0]]) @ np.vstack([to_photo, [0.0, 0.0, 1.0]]))[:2]


def _ssim(a: np.ndarray, b: np.ndarray) -> float:
    import cv2

    a, b = a.astype(np.float64), b.astype(np.float64)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    blur = lambda x: cv2.GaussianBlur(x, (7, 7), 1.5)  # noqa: E731
    mean_a, mean_b = blur(a), blur(b)
    var_a, var_b = blur(a * a) - mean_a**2, blur(b * b) - mean_b**2
    cov = blur(a * b) - mean_a * mean_b
    return float((((2 * mean_a * mean_b + c1) * (2 * cov + c2)) / ((mean_a**2 + mean_b**2 + c1) * (var_a + var_b + c2))).mean())


def band_likeness(crop: np.ndarray, real: np.ndarray) -> list[float]:
    """SSIM on Lab luminance of each of the BANDS of two crops (RGB, same size), alone."""
    import cv2

    a, b = (cv2.cvtColor(x, cv2.COLOR_RGB2LAB)[..., 0] for x in (crop, real))
    edges = np.linspace(0, a.shape[0], len(BANDS) + 1).round().astype(int)
    return [_ssim(a[y0:y1], b[y0:y1]) for y0, y1 in zip(edges[:-1], edges[1:])]


def likeness(crop: np.ndarray, real: np.ndarray) -> tuple[float, float]:
    """SSIM on Lab luminance and the mean Lab difference of two crops (RGB, same size)."""
    import cv2

    lab_a = cv2.cvtColor(crop, cv2.COLOR_RGB2LAB).astype(np.float32)
    lab_b = cv2.cvtColor(real, cv2.COLOR_RGB2LAB).astype(np.float32)
    return _ssim(lab_a[..., 0], lab_b[..., 0]), float(np.abs(lab_a - lab_b).mean())


def clip_rows(real: list[np.ndarray], rendered: list[np.ndarray], photo: np.ndarray, fps: float,
              sheet: list[np.ndarray] | None, still: list[np.ndarray] | None = None) -> tuple[np.ndarray, float, float]:
    """frames x (real aperture, talker ssim, talker lab, photo ssim, photo lab, own-frame ssim, then the
    SSIM of each of the BANDS for talker, photo and own frame, then the still video's ssim: NaN without
    one) for the frames where all three faces are found; the render's first frame against the photo
    (SSIM); the photo's own aperture."""
    with _facemesh(True) as mesh:
        photo_points = _points(mesh, photo)
        first_points = _points(mesh, rendered[0]) if rendered else None
    if photo_points is None:
        return np.zeros((0, ROW)), float("nan"), float("nan")
    rest = float("nan")
    if first_points is not None:
        box = lip_box(photo_points, photo.shape)
        rest = likeness(aligned_crop(rendered[0], first_points, photo_points, box),
                        aligned_crop(photo, photo_points, photo_points, box))[0]
    back = max(int(round(NEAR_MISS_S * fps)), 1)
    rows, seen = [], []
    still_tracker = _facemesh(False) if still is not None else contextlib.nullcontext()  # none without a still video
    still = still if still is not None else [None] * len(rendered)
    with _facemesh(False) as real_mesh, _facemesh(False) as talker_mesh, still_tracker as still_mesh:
        for index, (frame, drawn, unmoved) in enumerate(zip(real, rendered, still)):
            real_points, drawn_points = _points(real_mesh, frame), _points(talker_mesh, drawn)
            unmoved_points = _points(still_mesh, unmoved) if unmoved is not None else None
            seen.append((frame, real_points))
            if real_points is None or drawn_points is None:
                continue
            box = lip_box(real_points, frame.shape)
            target = aligned_crop(frame, real_points, real_points, box)
            talker_crop = aligned_crop(drawn, drawn_points, real_points, box)
            photo_on = similarity(photo_points, real_points)  # fitted once: the photo's crop and the steady one
            photo_crop = aligned_crop(photo, photo_points, real_points, box, photo_on)
            own, own_bands = float("nan"), [float("nan")] * len(BANDS)
            if index >= back and seen[index - back][1] is not None:
                earlier, earlier_points = seen[index - back]
                earlier_crop = aligned_crop(earlier, earlier_points, real_points, box)
                own, own_bands = likeness(earlier_crop, target)[0], band_likeness(earlier_crop, target)
            unmoved_ssim = (likeness(aligned_crop(unmoved, unmoved_points, real_points, box), target)[0]
                            if unmoved_points is not None else float("nan"))
            steady_crop = aligned_crop(drawn, drawn_points, real_points, box, through_photo(drawn_points, photo_points, photo_on))
            aperture = _aperture(real_points)
            rows.append((aperture, *likeness(talker_crop, target), *likeness(photo_crop, target), own,
                         *band_likeness(talker_crop, target), *band_likeness(photo_crop, target), *own_bands,
                         unmoved_ssim, likeness(steady_crop, target)[0]))
            if sheet is not None and aperture > 0.08 and len(sheet) < 12 and index % 7 == 0:
                sheet.append(np.concatenate([target, talker_crop, photo_crop], axis=1))
    return np.array(rows).reshape(-1, ROW), rest, _aperture(photo_points)


def render(clip: Path, work: Path, talker_flags: list[str]) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, float]:
    """The clip's frames, talker's frames of it (rendered unless already in work), the photo, the fps."""
    import cv2
    import imageio_ffmpeg

    frames, fps = read_frames(clip)
    photo, sound, video = work / f"{clip.stem}.png", work / f"{clip.stem}.wav", work / f"{clip.stem}.mp4"
    if not video.exists():
        cv2.imwrite(str(photo), cv2.cvtColor(frames[0], cv2.COLOR_RGB2BGR))
        subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-loglevel", "error", "-y", "-i", str(clip), "-vn",
                        "-ac", "1", "-ar", "16000", str(sound)], check=True)
        talker = [str(Path(sys.executable).parent / "talker"), "render", "--quiet", "--photo", str(photo),
                  "--audio", str(sound), "--fps", str(int(round(fps))), "-o", str(video), *talker_flags]
        done = subprocess.run(talker, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"talker render failed on {clip.name} (exit {done.returncode}): {done.stderr.strip()}")
    return frames, read_frames(video)[0], frames[0], fps


def sound_of(clip: Path, work: Path, frames: int, fps: float) -> Path:
    """The clip's sound as a 16 kHz WAV in work (made once), or as long a silence where it has none."""
    import imageio_ffmpeg

    from talker_cli.audio_io import write_wav

    sound = work / f"{clip.stem}.wav"
    if not sound.exists():
        done = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-loglevel", "error", "-y", "-i", str(clip), "-vn",
                               "-ac", "1", "-ar", "16000", str(sound)], capture_output=True)
        if done.returncode != 0 or not sound.exists():
            write_wav(sound, np.zeros(int(16000 * frames / fps) + 1, np.float32), 16000)
    return sound


def as_talker_encodes(frames: list[np.ndarray], fps: float, sound: Path, out: Path) -> list[np.ndarray]:
    """Frames encoded as talker encodes its videos (into out, with the sound), decoded again."""
    from talker_cli.config import VideoConfig
    from talker_cli.face.video import write_mp4

    height, width = frames[0].shape[:2]
    write_mp4(iter(frames), width, height, int(round(fps)), len(frames), sound, out, VideoConfig())
    return read_frames(out)[0]


def still_video(photo: np.ndarray, count: int, fps: float, sound: Path, out: Path) -> list[np.ndarray]:
    """The photo itself in every frame, encoded as talker encodes its videos, decoded again."""
    return read_frames(out)[0] if out.exists() else as_talker_encodes([photo] * count, fps, sound, out)


def filmed_opening_frames(clip: Path, work: Path) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, float]:
    """The clip's frames and talker's drawing of its first frame opened, frame by frame, as far as the
    filmed mouth is (FaceMesh's reading of each real frame, as the jaw's opening; no head motion, no
    blink, not encoded): what the drawing scores when the timing and the amount are exactly right."""
    import cv2

    from talker_cli.artifacts import BlendshapeTrack
    from talker_cli.config import RenderConfig
    from talker_cli.face.blendshapes import INDEX, JAW_OPENING, NAMES
    from talker_cli.face.frames import FrameRenderer
    from talker_cli.photo import load_photo, read_mouth_openings

    frames, fps = read_frames(clip)
    photo_path = work / f"{clip.stem}.png"
    cv2.imwrite(str(photo_path), cv2.cvtColor(frames[0], cv2.COLOR_RGB2BGR))
    opening = read_mouth_openings(frames)
    opening = np.where(np.isfinite(opening), opening, 0.0)  # a frame FaceMesh lost: closed
    weights = np.zeros((len(frames), len(NAMES)), np.float32)
    weights[:, INDEX["jawOpen"]] = opening / JAW_OPENING
    track = BlendshapeTrack(int(round(fps)), NAMES, weights)
    renderer = FrameRenderer(load_photo(photo_path, RenderConfig(fps=int(round(fps)))))
    return frames, [renderer.render(track, k) for k in range(len(frames))], frames[0], fps


UPPER_FACE = [33, 133, 362, 263, 1, 2, 98, 327, 164]  # eye corners, nose: the head, not the jaw


def transplant_frames(clip: Path, work: Path) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, float]:
    """The clip's frames and, for each, the filmed lower face itself pasted into the photo, the head
    held as in the photo: the real frame brought onto the photo by a similarity on its upper face
    (UPPER_FACE), over the whole box compared and a margin round it but not the points the measure
    aligns by, encoded as talker encodes its videos. What any drawing of the mouth could score at most
    without moving the head: the rest of the gap to the speaker's own frame is the head's motion (and
    the measure's)."""
    import cv2

    frames, fps = read_frames(clip)
    photo = frames[0]
    out = work / f"{clip.stem}.transplant.mp4"
    if out.exists():
        return frames, read_frames(out)[0], photo, fps
    with _facemesh(True) as mesh:
        photo_points = _points(mesh, photo)
    if photo_points is None:
        return frames, [photo] * len(frames), photo, fps
    height, width = photo.shape[:2]
    mouth_width = float(np.linalg.norm(photo_points[61] - photo_points[291]))
    # the box compared, a quarter of the mouth's width larger all round, but not the points the
    # measure aligns by (the nose's tip): pasted, they would bring the filmed head's pose with them
    cover = np.zeros((height, width), np.float32)
    x0, y0, x1, y1 = lip_box(photo_points, photo.shape)
    margin = int(0.25 * mouth_width)
    cv2.rectangle(cover, (x0 - margin, y0 - margin), (x1 + margin, y1 + margin), 1.0, -1)
    for point in photo_points[STABLE]:
        cv2.circle(cover, (int(point[0]), int(point[1])), int(0.2 * mouth_width), 0.0, -1)
    cover = cv2.GaussianBlur(cover, (0, 0), 0.08 * mouth_width)[..., None]
    pasted = []
    with _facemesh(False) as mesh:
        for frame in frames:
            points = _points(mesh, frame)
            if points is None:
                pasted.append(photo)
                continue
            matrix, _ = cv2.estimateAffinePartial2D(points[UPPER_FACE], photo_points[UPPER_FACE])
            moved = cv2.warpAffine(frame, matrix, (width, height), flags=cv2.INTER_LINEAR,
                                   borderMode=cv2.BORDER_REPLICATE)
            pasted.append((photo + cover * (moved.astype(np.float32) - photo)).round().clip(0, 255).astype(np.uint8))
    return frames, as_talker_encodes(pasted, fps, sound_of(clip, work, len(frames), fps), out), photo, fps


def gains_by_band(rows: np.ndarray, where: np.ndarray) -> dict[str, float] | None:
    """The gain in each of the BANDS over the rows `where` (None where there are none)."""
    if not where.any():
        return None
    gains = {}
    for k, band in enumerate(BANDS):  # after the first six columns: talker's bands, the photo's, the own frame's
        talker, photo, own = (float(np.nanmean(rows[where, 6 + k + j * len(BANDS)])) for j in range(3))
        gains[band] = round((talker - photo) / (own - photo), 3)
    return gains


def clip_figures(name: str, rows: np.ndarray, rest: float, photo_aperture: float) -> dict:
    open_ = rows[:, 0] > OPEN
    mean = lambda column, where: round(float(np.nanmean(rows[where, column])), 4) if where.any() else None  # noqa: E731
    every = np.ones(len(rows), bool)
    return {"clip": name, "frames": len(rows), "open_frames": int(open_.sum()), "rest_ssim": round(rest, 4),
            "photo_aperture": round(photo_aperture, 3), "ssim_talker": mean(1, every), "ssim_photo": mean(3, every),
            "ssim_talker_open": mean(1, open_), "ssim_photo_open": mean(3, open_), "ssim_own_80ms_open": mean(5, open_),
            "lab_talker_open": mean(2, open_), "lab_photo_open": mean(4, open_),
            "gain_open_by_band": gains_by_band(rows, open_),
            "ssim_still_video_open": mean(STILL, open_) if np.isfinite(rows[:, STILL]).any() else None,
            "ssim_talker_open_through_photo": mean(STEADY, open_)}


def summary(clips: list[dict], rows: np.ndarray) -> dict:
    open_ = rows[:, 0] > OPEN
    talker, photo, own = (float(np.nanmean(rows[open_, k])) for k in (1, 3, 5))
    shut = [c["rest_ssim"] for c in clips if c["photo_aperture"] < SHUT_PHOTO and np.isfinite(c["rest_ssim"])]
    return {"clips": len(clips), "frames": len(rows), "open_frames": int(open_.sum()),
            "gain_open_by_band": gains_by_band(rows, open_),
            "ssim_talker_open": round(talker, 4), "ssim_photo_open": round(photo, 4), "ssim_own_80ms_open": round(own, 4),
            "gain_open": round((talker - photo) / (own - photo), 3),
            "lab_talker_open": round(float(rows[open_, 2].mean()), 2), "lab_photo_open": round(float(rows[open_, 4].mean()), 2),
            "rest_ssim_shut_photos_min": round(min(shut), 4) if shut else None,
            "clips_talker_beats_photo": sum(1 for c in clips if c["ssim_talker_open"] is not None
                                            and c["ssim_talker_open"] > c["ssim_photo_open"]),
            "clips_with_open_frames": sum(1 for c in clips if c["ssim_talker_open"] is not None),
            **through_photo_figures(clips, rows, photo, own), **still_figures(clips, rows, talker, own)}


def through_photo_figures(clips: list[dict], rows: np.ndarray, photo: float, own: float) -> dict:
    """talker brought onto the real frames through the photo's own fit (through_photo): the gain and the
    clips above the photo with render and photo aligned alike."""
    open_ = rows[:, 0] > OPEN
    steady = float(np.nanmean(rows[open_, STEADY]))
    return {"ssim_talker_open_through_photo": round(steady, 4),
            "gain_open_through_photo": round((steady - photo) / (own - photo), 3),
            "clips_talker_beats_photo_through_photo": sum(1 for c in clips if c["ssim_talker_open_through_photo"] is not None
                                                          and c["ssim_talker_open_through_photo"] > c["ssim_photo_open"])}


def still_figures(clips: list[dict], rows: np.ndarray, talker: float, own: float) -> dict:
    """The still video's figures (--still-video), where there is one."""
    open_ = (rows[:, 0] > OPEN) & np.isfinite(rows[:, STILL])
    if not open_.any():
        return {}
    still = float(rows[open_, STILL].mean())
    return {"ssim_still_video_open": round(still, 4), "gain_open_vs_still_video": round((talker - still) / (own - still), 3),
            "clips_talker_beats_still_video": sum(1 for c in clips if c["ssim_still_video_open"] is not None
                                                  and c["ssim_talker_open"] > c["ssim_still_video_open"])}


def main() -> None:
    argv = sys.argv[1:]
    talker_flags = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    if not any(flag.startswith("--language") for flag in talker_flags):
        talker_flags = [*talker_flags, "--language", "en"]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clips_dir", type=Path)
    parser.add_argument("--work", type=Path, help="keep the photos, sounds and renders here, and use them again")
    parser.add_argument("--limit", type=int, default=0, help="only the first N clips")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--sheet", type=Path, help="draw real | talker | photo at open frames into this PNG")
    parser.add_argument("--filmed-opening", action="store_true",
                        help="draw each frame opened as far as the filmed mouth is: the drawing alone, its timing exact")
    parser.add_argument("--transplant", action="store_true",
                        help="score the filmed lower face pasted into the photo, the head still: the ceiling of any drawing")
    parser.add_argument("--still-video", action="store_true",
                        help="also score the photo encoded as a video and read as talker's frames are (a control)")
    args = parser.parse_args(argv)
    clips = sorted(p for p in args.clips_dir.iterdir() if p.suffix.lower() in VIDEO_SUFFIXES)[:args.limit or None]
    if not clips:
        raise SystemExit(f"no video clips in {args.clips_dir}")
    sheet = [] if args.sheet else None
    figures, every_row = [], []
    with tempfile.TemporaryDirectory(prefix="talker-appearance-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        for clip in clips:
            made = (filmed_opening_frames if args.filmed_opening else transplant_frames if args.transplant
                    else lambda clip, work: render(clip, work, talker_flags))
            real, rendered, photo, fps = made(clip, work)
            still = None
            if args.still_video:
                still = still_video(photo, len(rendered), fps, sound_of(clip, work, len(rendered), fps),
                                    work / f"{clip.stem}.still.mp4")
            rows, rest, photo_aperture = clip_rows(real, rendered, photo, fps, sheet, still)
            if not len(rows):
                print(f"  {clip.name}: no face found", file=sys.stderr)
                continue
            figures.append(clip_figures(clip.name, rows, rest, photo_aperture))
            every_row.append(rows)
            if not args.json:
                f = figures[-1]
                print(f"  {clip.name}: open {f['open_frames']}, talker {f['ssim_talker_open']}, photo "
                      f"{f['ssim_photo_open']}, rest {f['rest_ssim']}", file=sys.stderr)
    result = {"clips_dir": str(args.clips_dir), "talker_flags": talker_flags,
              "summary": summary(figures, np.concatenate(every_row)), "clips": figures}
    if args.sheet and sheet:
        import cv2

        image = np.concatenate([cv2.resize(s, (s.shape[1] * 3, s.shape[0] * 3), interpolation=cv2.INTER_NEAREST)
                                for s in sheet], axis=0)
        cv2.imwrite(str(args.sheet), cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"{'clip':<16} {'open':>5} {'talker':>7} {'photo':>7} {'own80ms':>8} {'rest':>6}")
    for f in figures:
        cell = lambda x: f"{x:>7.3f}" if x is not None else f"{'-':>7}"  # noqa: E731
        print(f"{f['clip']:<16} {f['open_frames']:>5} {cell(f['ssim_talker_open'])} {cell(f['ssim_photo_open'])} "
              f"{cell(f['ssim_own_80ms_open']):>8} {f['rest_ssim']:>6.3f}")
    s = result["summary"]
    print(f"\n{s['clips']} clips, {s['open_frames']} open frames: SSIM talker {s['ssim_talker_open']:.3f}, photo "
          f"{s['ssim_photo_open']:.3f}, own frame 80 ms earlier {s['ssim_own_80ms_open']:.3f}; gain {s['gain_open']:+.3f}; "
          f"talker beats the photo in {s['clips_talker_beats_photo']} of {s['clips_with_open_frames']} clips; "
          f"rest frame of shut photos, lowest SSIM {s['rest_ssim_shut_photos_min']}")
    print("gain by band: " + ", ".join(f"{band} {gain:+.3f}" for band, gain in s["gain_open_by_band"].items()))
    print(f"talker brought on through the photo's own fit (render and photo aligned alike): SSIM "
          f"{s['ssim_talker_open_through_photo']:.3f}, gain {s['gain_open_through_photo']:+.3f}, above the photo in "
          f"{s['clips_talker_beats_photo_through_photo']} clips")
    if "ssim_still_video_open" in s:
        print(f"the photo as a still video: SSIM {s['ssim_still_video_open']:.3f}; gain over it "
              f"{s['gain_open_vs_still_video']:+.3f}; talker beats it in {s['clips_talker_beats_still_video']} clips")


if __name__ == "__main__":
    main()
