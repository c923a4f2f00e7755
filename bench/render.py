"""Render benchmark: texts of about 10 s, 60 s and 300 s of speech through the whole pipeline.

Prints per-stage seconds, the render stage's frames per second (drawing beside the encoder, and the
same frames drawn again alone on one thread), the whole run's real-time factor (run seconds / video
seconds) and the peak RSS; then the same texts through `talker lipsync`
(animation files only, every format): seconds per audio second without video. Each run is its own
process so peak RSS is that run's own.

    python bench/render.py [--lengths 10,60,300] [--preset cpu] [--photo-seen] [--photo PATH] [--max-side N]

Every stage is measured (`--force`: nothing from the work cache), unless --photo-seen: then the runs
use a work cache of their own in which the photo was rendered once before (with other words), as a
cron job's one face is: its landmarks and mouth calibration come from the cache, the speech is made.
--photo renders another photo than samples/face.png (512 px); the video keeps a photo's own size up to
1024 px (--max-side sets the cap), and drawing and encoding grow with its pixels.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SAMPLE_PHOTO = ROOT / "samples" / "face.png"
PARAGRAPH = (
    "The morning light came slowly over the hills, and the town began its ordinary day. "
    "Bakers opened their doors, buses pulled away from the square, and children argued about homework. "
    "Nobody noticed the small robot that rolled along the pavement, counting paving stones and humming. "
)
WORDS_PER_SECOND = 2.8  # words per target second that gave the target lengths with the default voice


def text_for(seconds: float) -> str:
    words = PARAGRAPH.split()
    wanted = int(seconds * WORDS_PER_SECOND)
    return " ".join(words[i % len(words)] for i in range(wanted)).rstrip(",") + "."


ALL_FORMATS = "arkit-json,livelink,gltf,glb,rhubarb-tsv,rhubarb-json,rhubarb-xml,rhubarb-dat,vrm,srt,vtt"


def child_cpu_s() -> float:
    """CPU seconds (user and system, every core) of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_one(seconds: float, preset: str, folder: Path, command: str = "render",
            cache: Path | None = None, photo_flags: tuple[str, ...] = ("--photo", str(SAMPLE_PHOTO))) -> tuple[dict, float]:
    """One run in its own process: its manifest (with the process's CPU seconds added as
    "cpu_seconds"), and its wall time with Python's start-up. cache: a work cache to use (else
    nothing is taken from one); photo_flags: the photo and the video's size."""
    text_file = folder / f"text-{seconds:.0f}.txt"
    text_file.write_text(text_for(seconds))
    if command == "render":
        target = ["render", *photo_flags, "-o", str(folder / f"bench-{seconds:.0f}.mp4")]
    else:
        target = ["lipsync", "-o", str(folder / f"anim-{seconds:.0f}"), "--format", ALL_FORMATS]
    started, cpu = time.perf_counter(), child_cpu_s()
    every_stage = ["--force"] if cache is None else []  # --force: no speech from the work cache
    environment = {**os.environ, "TALKER_WORK_CACHE": str(cache)} if cache is not None else None
    result = subprocess.run([sys.executable, "-m", "talker_cli", *target, "--text-file", str(text_file),
                             "--preset", preset, "--json", "--quiet", *every_stage],
                            capture_output=True, text=True, cwd=ROOT, env=environment)
    if result.returncode != 0:
        raise SystemExit(f"{command} of {seconds:.0f} s failed: {result.stderr.strip()}")
    wall = time.perf_counter() - started
    return {**json.loads(result.stdout), "cpu_seconds": child_cpu_s() - cpu}, wall


def encode_only_seconds(mp4: Path, manifest: dict, folder: Path) -> tuple[float, float]:
    """The floor: talker's own ffmpeg command encoding the same frames and sound, read from files
    dumped once (the frames decoded from the MP4 to raw RGB), with no drawing at all. Wall and CPU
    seconds."""
    from talker_cli.audio_io import ffmpeg_exe
    from talker_cli.config import VideoConfig
    from talker_cli.face.video import encode_command

    raw, sound = folder / "frames.rgb", folder / "sound.wav"
    for target, args in ((raw, ["-f", "rawvideo", "-pix_fmt", "rgb24"]), (sound, ["-vn", "-c:a", "pcm_s16le"])):
        subprocess.run([ffmpeg_exe(), "-v", "error", "-y", "-i", str(mp4), *args, str(target)], check=True)
    video = manifest["video"]
    command = encode_command(video["width"], video["height"], video["fps"], video["frames"], sound,
                             folder / "encode-only.mp4", VideoConfig(**manifest["config"]["video"]))
    command[command.index("pipe:")] = str(raw)
    started, cpu = time.perf_counter(), child_cpu_s()
    subprocess.run(command, check=True)
    seconds, cpu = time.perf_counter() - started, child_cpu_s() - cpu
    raw.unlink()
    return seconds, cpu


def draw_alone_fps(photo: Path, track_file: Path, max_side: int | None, passes: int = 3) -> float:
    """The run's own frames drawn again in this process on one thread, with no encoder beside them:
    frames per second, each frame's fastest of `passes` (the draw column shares the cores with the
    encoder, and a 10 s video's 0.4 s of drawing moved by a fifth from one run to the next)."""
    import cv2
    import numpy as np

    from talker_cli.config import RenderConfig
    from talker_cli.exports.arkit import read_track
    from talker_cli.face.frames import FrameRenderer
    from talker_cli.photo import load_photo

    cv2.setNumThreads(1)
    track = read_track(track_file)
    config = RenderConfig(**({"max_side": max_side} if max_side else {}))
    renderer = FrameRenderer(load_photo(photo, config))
    fastest = np.full(track.frame_count, np.inf)
    for _ in range(passes):
        for index in range(track.frame_count):
            started = time.perf_counter()
            renderer.render(track, index)
            fastest[index] = min(fastest[index], time.perf_counter() - started)
    return track.frame_count / float(fastest.sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="10,60,300", help="target speech lengths in seconds")
    parser.add_argument("--preset", default="cpu")
    parser.add_argument("--photo-seen", action="store_true",
                        help="the photo rendered once before: its landmarks and calibration from the work cache")
    parser.add_argument("--photo", type=Path, default=SAMPLE_PHOTO, help="the photo to render (samples/face.png)")
    parser.add_argument("--max-side", type=int, help="the video's long side at most (talker's default: 1024)")
    args = parser.parse_args()
    photo_flags = ("--photo", str(args.photo.resolve()), *(("--max-side", str(args.max_side)) if args.max_side else ()))
    lengths = [float(x) for x in args.lengths.split(",")]
    stage_names = ["photo", "input", "tts", "alignment", "visemes", "export", "render"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache" if args.photo_seen else None
        if cache is not None:
            run_one(2, args.preset, Path(tmp), cache=cache, photo_flags=photo_flags)  # the photo seen once, with other words
        for seconds in lengths:
            manifest, _ = run_one(seconds, args.preset, Path(tmp), cache=cache, photo_flags=photo_flags)
            stages = {s["name"]: s for s in manifest["stages"]}
            encode_s, encode_cpu_s = encode_only_seconds(Path(manifest["output"]["video"]), manifest, Path(tmp))
            video = Path(manifest["output"]["video"])
            alone_fps = draw_alone_fps(args.photo, video.with_name(f"{video.stem}.blendshapes.json"), args.max_side)
            rows.append({
                "target_s": seconds,
                "video_s": manifest["video"]["duration_s"],
                "size": f"{manifest['video']['width']}x{manifest['video']['height']}",
                "frames": manifest["video"]["frames"],
                **{name: stages[name]["seconds"] for name in stage_names},
                "draw_s": stages["render"]["details"]["draw_seconds"],
                "render_fps": stages["render"]["details"]["draw_fps"],
                "alone_fps": alone_fps,
                "total_s": manifest["seconds"],
                "encode_s": encode_s,
                "cpu_s": manifest["cpu_seconds"],
                "encode_cpu_s": encode_cpu_s,
                "rtf": manifest["real_time_factor"],
                "peak_rss_mib": max(s["peak_rss_bytes"] for s in manifest["stages"] if s["ran"]) / 2**20,
            })
    header = ["video s", "size", "frames"] + [f"{n} s" for n in stage_names] + ["draw s", "draw fps", "draw alone fps", "total s",
                                                                       "encode-only s", "total / encode-only", "RTF",
                                                                       "CPU s", "encode-only CPU s", "peak RSS MiB"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        cells = [f"{r['video_s']:.1f}", r["size"], str(r["frames"])] + [f"{r[n]:.2f}" for n in stage_names]
        cells += [f"{r['draw_s']:.2f}", f"{r['render_fps']:.0f}", f"{r['alone_fps']:.0f}", f"{r['total_s']:.1f}", f"{r['encode_s']:.1f}",
                  f"{r['total_s'] / r['encode_s']:.2f}", f"{r['rtf']:.3f}", f"{r['cpu_s']:.1f}", f"{r['encode_cpu_s']:.1f}",
                  f"{r['peak_rss_mib']:.0f}"]
        print("| " + " | ".join(cells) + " |")
    print("\nrender s: drawing the frames (draw s) while ffmpeg encodes them; RTF = run seconds / video seconds (lower is faster);")
    print("draw alone fps: the same frames drawn again on one thread with no encoder (each frame's fastest of 3).")
    print("encode-only s: talker's ffmpeg command on the same frames and sound read from files (the floor).")
    print(f"CPU s: user and system seconds of the whole process and its encoder, all cores ({os.cpu_count()} here).")
    lipsync_table(lengths, args.preset)


def lipsync_table(lengths: list[float], preset: str) -> None:
    """`talker lipsync` on the same texts: every format, no photo, no video."""
    print("\n| lipsync: speech s | tts s | alignment s | visemes s | export s | run s | process s | run s per audio s | process s per audio s |")
    print("|" + "---|" * 9)
    with tempfile.TemporaryDirectory() as tmp:
        for seconds in lengths:
            manifest, wall = run_one(seconds, preset, Path(tmp), "lipsync")
            stages = {s["name"]: s["seconds"] for s in manifest["stages"]}
            speech = manifest["speech_s"]
            cells = [f"{speech:.1f}"] + [f"{stages[n]:.2f}" for n in ("tts", "alignment", "visemes", "export")]
            cells += [f"{manifest['seconds']:.2f}", f"{wall:.2f}", f"{manifest['seconds'] / speech:.3f}", f"{wall / speech:.3f}"]
            print("| " + " | ".join(cells) + " |")
    print("\nrun s: the manifest's clock (all stages); process s: the command's wall time with Python's start-up.")


if __name__ == "__main__":
    main()
