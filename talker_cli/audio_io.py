"""Audio in and out through the ffmpeg binary that ships in the imageio-ffmpeg wheel.

Decoding goes through ffmpeg so any container (WAV, MP3, FLAC, 48 kHz stereo...) reads the same.
"""

from __future__ import annotations

import logging
import subprocess
import wave
from pathlib import Path

import numpy as np

from .errors import InputError, ModelMissingError

log = logging.getLogger(__name__)


def ffmpeg_exe() -> str:
    try:
        import imageio_ffmpeg
    except ImportError:
        raise ModelMissingError("imageio-ffmpeg is not installed; run: pip install imageio-ffmpeg") from None
    return imageio_ffmpeg.get_ffmpeg_exe()


# Inputs reach ffmpeg as local files only, read by demuxers of plain audio: no network protocol,
# and no playlist or concat format that would make ffmpeg open other files than the one given.
AUDIO_DEMUXERS = ("wav,w64,mp3,flac,ogg,mov,mp4,m4a,matroska,webm,aac,aiff,caf,au,amr,wv,ape,asf,"
                  "mpeg,mpegts,avi,flv")


def ffmpeg_input(path: Path) -> list[str]:
    """The ffmpeg arguments that open one local audio file and nothing else."""
    return ["-protocol_whitelist", "file", "-format_whitelist", AUDIO_DEMUXERS, "-i", f"file:{path}"]


def decode_audio(path: Path, sample_rate: int, channel: int | None = None) -> np.ndarray:
    """Any audio file -> mono float32 at sample_rate: its channels mixed, or the one given; samples
    that are not numbers taken as silence. Raises InputError for non-audio."""
    return _silenced(_decoded(path, sample_rate, channel), path)[0]


def _decoded(path: Path, sample_rate: int, channel: int | None = None) -> np.ndarray:
    """The file's samples as ffmpeg decodes them (a float WAV's NaN and infinities kept)."""
    from .jobs.input_files import check_file

    check_file(path, "audio file")  # a FIFO or a device would leave ffmpeg waiting or reading forever
    if path.stat().st_size == 0:
        raise InputError(f"audio file is empty: {path}")
    command = [
        ffmpeg_exe(), "-nostdin", "-hide_banner", "-loglevel", "error", *ffmpeg_input(path),
        "-vn", *(["-ac", "1"] if channel is None else ["-af", f"pan=mono|c0=c{channel}"]),
        "-ar", str(sample_rate), "-f", "f32le", "-acodec", "pcm_f32le", "pipe:1",
    ]
    result = subprocess.run(command, capture_output=True, check=False)
    if result.returncode != 0:
        reason = result.stderr.decode(errors="replace").strip().splitlines()
        raise InputError(
            f"cannot read {path} as audio ({reason[-1] if reason else 'ffmpeg failed'}); "
            "pass a WAV, MP3, FLAC or OGG recording"
        )
    samples = np.frombuffer(result.stdout, dtype=np.float32).copy()
    if samples.size == 0:
        raise InputError(f"{path} holds no audio samples; pass a recording of speech")
    return samples


def _silenced(samples: np.ndarray, path: Path) -> tuple[np.ndarray, int]:
    """The samples with those that are not numbers (a crashed recorder's float WAV) set to silence,
    and how many there were."""
    broken = ~np.isfinite(samples)
    if broken.all():
        raise InputError(f"{path} holds no samples that are numbers (all NaN or infinite); pass a recording of speech")
    if broken.any():
        log.warning("%s: %d samples are not numbers (NaN or infinite); they are taken as silence", path, broken.sum())
        samples[broken] = 0.0
    return samples, int(broken.sum())


def probe_duration_s(path: Path) -> float:
    """The container's stated duration, without decoding; 0.0 when ffmpeg cannot tell."""
    import re

    result = subprocess.run([ffmpeg_exe(), "-nostdin", "-hide_banner", *ffmpeg_input(path)],
                            capture_output=True, check=False)
    match = re.search(rb"Duration: (\d+):(\d+):(\d+(?:\.\d+)?)", result.stderr)
    if not match:
        return 0.0
    h, m, s = match.groups()
    return int(h) * 3600 + int(m) * 60 + float(s)


SILENT_DBFS = -50.0


def level_dbfs(samples: np.ndarray) -> float:
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if samples.size else 0.0
    return 20 * np.log10(rms) if rms > 0 else -np.inf


def decode_recording(path: Path, sample_rate: int) -> tuple[np.ndarray, int]:
    """A recording as mono: its channels mixed, or its first channel when the mix cancels out (a
    stereo file whose second channel is the first inverted mixes to silence); and how many of its
    samples were not numbers, taken as silence."""
    mixed, broken = _silenced(_decoded(path, sample_rate), path)
    if level_dbfs(mixed) >= SILENT_DBFS:
        return mixed, broken
    first, broken_first = _silenced(_decoded(path, sample_rate, channel=0), path)
    if level_dbfs(first) < SILENT_DBFS:
        return mixed, broken
    log.warning("%s: its channels cancel out when mixed (one is the other inverted); its first channel is used", path)
    return first, broken_first


def check_not_silent(samples: np.ndarray, path: Path, min_rms_dbfs: float = SILENT_DBFS) -> None:
    level = level_dbfs(samples)
    if level < min_rms_dbfs:
        raise InputError(
            f"{path} is silent (level {level:.0f} dBFS, below {min_rms_dbfs:.0f} dBFS); "
            "pass a recording with speech in it"
        )


SOUNDTRACK_RATE = 48000


def silenced_soundtrack(path: Path, work_dir: Path) -> Path:
    """A recording whose samples are not all numbers, as a soundtrack the AAC encoder takes (it fails
    on them with a raw error): a copy with them silent, as the rest of the job took them."""
    copy = work_dir / "soundtrack.wav"
    write_wav(copy, _silenced(_decoded(path, SOUNDTRACK_RATE), path)[0], SOUNDTRACK_RATE)
    return copy


def write_wav(path: Path, samples: np.ndarray, sample_rate: int) -> None:
    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(pcm.tobytes())


def resample(samples: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """Band-limited polyphase resampling (scipy), for handing speech to 16 kHz models."""
    if from_rate == to_rate:
        return samples
    from math import gcd

    from scipy.signal import resample_poly

    g = gcd(from_rate, to_rate)
    return resample_poly(samples, to_rate // g, from_rate // g).astype(np.float32)
