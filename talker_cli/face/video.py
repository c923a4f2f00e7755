"""MP4 stage: frames (streamed) + soundtrack -> H.264/AAC MP4, yuv420p, faststart.

ffmpeg-python builds the argument list; the ffmpeg binary comes from the imageio-ffmpeg wheel.
Frames go to ffmpeg's stdin one at a time, so memory does not grow with the video's length. The
soundtrack is padded or cut to exactly the frames' duration, so audio and video end together.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..artifacts import Video
from ..audio_io import AUDIO_DEMUXERS, ffmpeg_exe
from ..config import VideoConfig
from ..errors import ResourceError, StageError


def encode_command(width: int, height: int, fps: int, frame_count: int, audio: Path, output: Path,
                   config: VideoConfig) -> list[str]:
    import ffmpeg

    duration = frame_count / fps
    frames = ffmpeg.input("pipe:", format="rawvideo", pix_fmt="rgb24", s=f"{width}x{height}", framerate=fps)
    # the soundtrack, maybe the user's recording: one local audio file and nothing else (audio_io)
    sound = ffmpeg.input(f"file:{audio}", protocol_whitelist="file", format_whitelist=AUDIO_DEMUXERS).audio.filter("apad")
    stream = ffmpeg.output(
        frames.video, sound, str(output), vcodec="libx264", pix_fmt="yuv420p", crf=config.crf,
        preset=config.x264_preset, acodec="aac", audio_bitrate=config.audio_bitrate, ac=1,
        ar=config.audio_rate, t=f"{duration:.6f}", movflags="+faststart", f="mp4",
    )
    return [ffmpeg_exe(), "-nostdin", "-hide_banner", "-loglevel", "error", "-y"] + stream.get_args()


def write_mp4(frames: Iterable[np.ndarray], width: int, height: int, fps: int, frame_count: int,
              audio: Path, output: Path, config: VideoConfig) -> Video:
    command = encode_command(width, height, fps, frame_count, audio, output, config)
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    written = 0
    try:
        for frame in frames:
            if frame.shape != (height, width, 3):
                raise StageError(f"frame {written} is {frame.shape}, expected {(height, width, 3)}")
            process.stdin.write(np.ascontiguousarray(frame, dtype=np.uint8).tobytes())
            written += 1
        process.stdin.close()
    except BrokenPipeError:
        pass  # ffmpeg stopped early; its exit status and message tell why
    except BaseException:
        process.kill()
        process.wait()
        raise
    errors = process.stderr.read().decode(errors="replace").strip()
    if process.wait() != 0 or written != frame_count:
        last = errors.splitlines()[-1] if errors else f"{written} of {frame_count} frames written"
        if "No space left on device" in errors or "Disk quota exceeded" in errors:
            raise ResourceError(f"cannot write {output}: the disk is full ({last}); free some space and run again")
        raise StageError(f"ffmpeg failed to encode the video: {last}")
    return Video(path=output, width=width, height=height, fps=fps, frame_count=frame_count,
                 duration_s=frame_count / fps)
