"""Animation files: the job's face track written in the formats engines and animation tools read.

Each format is one module with a function from an Animation to the file's bytes; this module names
the formats, their file suffixes, and writes the chosen ones into a job's outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .formats import FORMATS  # noqa: F401  (the names the config's rule and the outputs take)


def parse_formats(text: str) -> tuple[str, ...]:
    """A comma-separated list (checked by the config's rule) as a tuple, each format once, in order."""
    return tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))


@dataclass(frozen=True, eq=False)
class Animation:
    """What every format is made from."""

    track: Any  # BlendshapeTrack: 52 ARKit weights, head rotation and emotions per frame
    segments: Sequence[Any]  # VisemeSegment: the mouth shapes over time
    cues: Sequence[Any]  # subtitles.Cue
    duration_s: float
    sound_file: Path | None  # the speech the animation belongs to, named in Rhubarb's metadata
    dat_frame_rate: int = 24
    visemes: Any = None  # VisemeConfig: VRM's vowels are timed by the same rules as the ARKit mouth
    mouth_scale: float = 1.0


def json_rows(rows, decimals: int | None = None) -> str:
    """JSON arrays, one per line (joined by ",\\n    "), made by json's C encoder a chunk at a time:
    long tracks stay fast and small in memory. Numbers are rounded to `decimals` places."""
    import json

    import numpy as np

    if decimals is not None:
        rows = np.asarray(rows, dtype=np.float64)
    chunks = []
    for start in range(0, len(rows), 5000):
        chunk = rows[start:start + 5000]
        values = chunk.round(decimals).tolist() if decimals is not None else chunk
        chunks.append(",\n    ".join(json.dumps(row) for row in values))
    return ",\n    ".join(chunks)


def render_format(name: str, animation: Animation) -> bytes:
    """One format's file content."""
    from . import arkit, gltf, livelink, rhubarb, vrm
    from ..subtitles import to_srt, to_vtt

    writers = {
        "arkit-json": arkit.to_json, "livelink": livelink.to_csv, "gltf": gltf.to_gltf, "glb": gltf.to_glb,
        "rhubarb-tsv": rhubarb.to_tsv, "rhubarb-json": rhubarb.to_json, "rhubarb-xml": rhubarb.to_xml,
        "rhubarb-dat": rhubarb.to_dat, "vrm": vrm.to_json,
        "srt": lambda a: to_srt(a.cues), "vtt": lambda a: to_vtt(a.cues),
    }
    content = writers[name](animation)
    return content.encode("utf-8") if isinstance(content, str) else content
