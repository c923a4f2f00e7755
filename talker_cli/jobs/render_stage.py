"""The render stage: each frame drawn from the track and streamed to the encoder; the photo's mouth
calibration kept in the work cache."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .job import Job, Stage


KEPT_RENDERERS = 4  # photos whose renderers a batch keeps at once


def photo_digest(photo) -> str:
    """The photo as drawn: its pixels at the video size and its landmarks there."""
    import numpy as np

    digest = hashlib.sha256(np.ascontiguousarray(photo.image_rgb).tobytes())
    digest.update(repr(photo.image_rgb.shape).encode())
    digest.update(np.ascontiguousarray(photo.landmarks_px, dtype=np.float32).tobytes())
    return digest.hexdigest()


class RenderStage(Stage):
    """Draws each frame of the face from the track and streams it to the encoder: the MP4."""

    name = "render"
    backend = "landmark-warp+libx264"
    reads = ("photo", "track", "voice")
    writes = ("video",)

    def __init__(self) -> None:
        # A batch's renderers, by the photo as drawn: jobs of one photo share its rig and calibration.
        self.renderers: dict[str, Any] = {}

    def applies(self, job: Job) -> bool:
        return job.photo is not None

    def unload(self) -> None:
        self.renderers = {}

    def run(self, job: Job) -> dict[str, Any]:
        import time

        from ..audio_io import silenced_soundtrack, write_wav
        from ..face.calibration import curve_record
        from ..face.frames import FrameRenderer
        from ..face.video import write_mp4

        speech = job.artifacts.voice
        soundtrack = speech.source_path
        if soundtrack is not None and speech.silenced:
            soundtrack = silenced_soundtrack(soundtrack, job.run.work_dir)
        if soundtrack is None:
            soundtrack = job.run.work_dir / "speech.wav"
            write_wav(soundtrack, speech.samples, speech.sample_rate)
        drawn = photo_digest(job.artifacts.photo)
        renderer = self.renderers.get(drawn)
        if renderer is None:
            key, curve = self._kept_calibration(job, drawn)
            renderer = FrameRenderer(job.artifacts.photo, curve)
            if key is not None and curve is None:
                made = json.dumps(curve_record(renderer.scale.curve))
                job.run.cache.store(key, {"what": "the photo's mouth calibration"},
                                    lambda folder: (folder / "curve.json").write_text(made))
            if len(self.renderers) >= KEPT_RENDERERS:
                self.renderers.pop(next(iter(self.renderers)))  # the oldest: a batch of many photos stays small
            self.renderers[drawn] = renderer
        track = job.artifacts.track
        height, width = job.artifacts.photo.image_rgb.shape[:2]
        draw_seconds = 0.0

        def timed_frames():
            nonlocal draw_seconds
            for index in range(track.frame_count):
                t = time.perf_counter()
                frame = renderer.render(track, index)
                draw_seconds += time.perf_counter() - t
                job.run.meter("render", index + 1, track.frame_count, "frames")
                yield frame

        video = write_mp4(timed_frames(), width, height, track.fps, track.frame_count, soundtrack,
                          job.run.outputs.temp("video"), job.config.video)
        job.artifacts.video = video
        return {
            "frames": video.frame_count, "duration_s": round(video.duration_s, 3),
            "draw_seconds": round(draw_seconds, 3),
            "draw_fps": round(video.frame_count / draw_seconds, 1) if draw_seconds else None,
        }

    @staticmethod
    def _kept_calibration(job: Job, drawn: str) -> tuple[str | None, Any]:
        """The work cache's key for this photo's mouth calibration (the photo as drawn, and talker's
        code, decide it) and the curve kept under it: None where there is none, or where what is
        there is not a curve calibration could have made (face/calibration.curve_from_record).
        Every render and every batch job of the same photo had calibrated it again."""
        from ..face.calibration import curve_from_record

        cache = job.run.cache
        if cache is None:
            return None, None
        key = cache.key("calibration", {"photo": drawn})
        return key, cache.kept(key, lambda folder: curve_from_record(json.loads((folder / "curve.json").read_text())))
