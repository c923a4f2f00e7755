"""Would drawing the frames while the speech is still being made pay on this machine?

Renders a text of about --seconds of speech once (`talker render`, for its track and soundtrack), then,
in one process, --repeats times each:

  sequential   Piper makes the speech (its own threads, as a render does), then the frames are drawn
               and encoded (face/frames.py into face/video.py's ffmpeg), as the pipeline runs them
  overlapped   Piper on one thread makes the speech while the frames are drawn and encoded beside
               it: the most that drawing sentence by sentence as the speech comes could gain, had
               drawing needed nothing from the speech (it reads the track the first run made)

and prints the wall and CPU seconds of each, and the ratio. On 2 cores the speech already takes both
(onnxruntime's two threads), so the overlap pays only what the second thread spins for.

    python bench/overlap.py [--seconds 60] [--repeats 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def cpu_seconds() -> float:
    """User and system seconds of this process and its finished children, every core."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    import imageio_ffmpeg
    import numpy as np
    import onnxruntime
    from render import text_for

    from talker_cli.config import RenderConfig, TtsConfig, VideoConfig
    from talker_cli.exports.arkit import read_track
    from talker_cli.face.frames import FrameRenderer
    from talker_cli.face.video import write_mp4
    from talker_cli.photo import load_photo
    from talker_cli.voices.tts import PiperTts, aligned_voice

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        text = text_for(args.seconds)
        photo_path = ROOT / "samples" / "face.png"
        subprocess.run([sys.executable, "-m", "talker_cli", "render", "--photo", str(photo_path), "--text", text,
                        "--preset", "cpu", "-o", str(folder / "first.mp4"), "--quiet"], check=True, cwd=ROOT)
        sound = folder / "first.wav"
        subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-loglevel", "error", "-y", "-i", str(folder / "first.mp4"),
                        "-vn", str(sound)], check=True)
        track = read_track(folder / "first.blendshapes.json")
        renderer = FrameRenderer(load_photo(photo_path, RenderConfig()))
        height, width = renderer.photo.image_rgb.shape[:2]
        frames = track.frame_count

        def draw_and_encode() -> None:
            write_mp4((renderer.render(track, i) for i in range(frames)), width, height, track.fps, frames, sound,
                      folder / "again.mp4", VideoConfig())

        tts = PiperTts(TtsConfig())
        tts.load()
        threads_of_its_own = tts.voice.session
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        one_thread = onnxruntime.InferenceSession(str(aligned_voice(Path(tts.model_path)) or tts.model_path),
                                                  sess_options=options, providers=["CPUExecutionProvider"])
        tts.synthesize(text)  # warm

        rows = []
        for _ in range(args.repeats):
            tts.voice.session = threads_of_its_own
            cpu, started = cpu_seconds(), time.perf_counter()
            tts.synthesize(text)
            speech = time.perf_counter() - started
            draw_and_encode()
            rows.append(("sequential", speech, time.perf_counter() - started, cpu_seconds() - cpu))

            tts.voice.session = one_thread
            started = time.perf_counter()
            tts.synthesize(text)
            alone = time.perf_counter() - started
            cpu, started = cpu_seconds(), time.perf_counter()
            speaking = threading.Thread(target=tts.synthesize, args=(text,))
            speaking.start()
            draw_and_encode()
            speaking.join()
            rows.append(("overlapped", alone, time.perf_counter() - started, cpu_seconds() - cpu))

    print(f"{os.cpu_count()} cores, {frames} frames ({frames / track.fps:.1f} s of video)\n")
    print("| run | speech alone s | speech, drawing and encoding s | CPU s |")
    print("|---|---|---|---|")
    for name, speech, total, cpu in rows:
        print(f"| {name} | {speech:.2f} | {total:.2f} | {cpu:.1f} |")
    sequential = np.mean([total for name, _, total, _ in rows if name == "sequential"])
    overlapped = np.mean([total for name, _, total, _ in rows if name == "overlapped"])
    print(f"\noverlapped takes {overlapped / sequential:.2f} of the sequential time")


if __name__ == "__main__":
    main()
