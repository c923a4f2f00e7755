"""Shared fixtures: sample paths, a CLI runner, ffprobe, and a cache folder for the LLM."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


@pytest.fixture(scope="session", autouse=True)
def offline_environment(tmp_path_factory):
    # Tests must pass with no network: any hub access would fail loudly.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))
    # Stage results are cached per test session, so no test depends on what an earlier run left.
    os.environ["TALKER_WORK_CACHE"] = str(tmp_path_factory.mktemp("work-cache"))
    yield


@pytest.fixture(scope="session")
def face_photo() -> Path:
    return SAMPLES / "face.png"


def _renderer(path: Path):
    from talker_cli.config import RenderConfig
    from talker_cli.face.frames import FrameRenderer
    from talker_cli.photo import load_photo

    photo = load_photo(path, RenderConfig())
    return photo, FrameRenderer(photo)


@pytest.fixture(scope="module")
def closed_lips():
    """A real speaker's frame with the lips shut (GRID, tests/data/README.md), and its renderer."""
    return _renderer(ROOT / "tests" / "data" / "grid-s1-bbaf3s-0.png")


@pytest.fixture(scope="module")
def open_at_rest():
    """A real speaker's frame with the mouth open (GRID), and its renderer."""
    return _renderer(ROOT / "tests" / "data" / "grid-s1-bbaf3s-30.png")


@pytest.fixture(scope="module")
def smiling(face_photo):
    """The sample photo, a smile showing its teeth, and its renderer."""
    return _renderer(face_photo)


@pytest.fixture(scope="session")
def speech_wav() -> Path:
    return SAMPLES / "speech.wav"


@pytest.fixture(scope="session")
def speech_text() -> str:
    return (SAMPLES / "speech.txt").read_text().strip()


def mouth_box(photo) -> tuple[slice, slice]:
    """The rows and columns around the photo's lips: 1.6 mouth widths across, 1.1 down (as
    bench/appearance.py cuts them)."""
    import numpy as np

    lm = photo.landmarks_px
    width = float(np.linalg.norm(lm[61] - lm[291]))
    centre = lm[[61, 291, 13, 14]].mean(axis=0)
    return (slice(int(centre[1] - 0.55 * width), int(centre[1] + 0.55 * width)),
            slice(int(centre[0] - 0.8 * width), int(centre[0] + 0.8 * width)))


def damage_keeping_times(path: Path, offset: int = 0, data: bytes = b"!!!!") -> None:
    """Overwrite bytes in place, the size and modification time as they were (a disk error, or a copy
    made to look like the original)."""
    import os

    info = path.stat()
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def ffprobe(path: Path) -> dict:
    exe = shutil.which("ffprobe")
    assert exe, "ffprobe is needed by the tests: run scripts/system-deps.sh"
    result = subprocess.run(
        [exe, "-v", "error", "-show_streams", "-show_format", "-of", "json", str(path)],
        capture_output=True, check=True, text=True,
    )
    return json.loads(result.stdout)


def still_preset(tmp_path: Path, **render) -> Path:
    """A preset with idle motion off, so only the mouth moves between frames."""
    lines = ["[render]", "head_motion = 0.0", "blink_rate = 0.0"]
    lines += [f"{k} = {v!r}" for k, v in render.items()]
    path = tmp_path / "still.toml"
    path.write_text("\n".join(lines) + "\n")
    return path
