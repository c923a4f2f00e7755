"""Outputs appear complete or not at all: each is written under a temporary name in the same
folder, flushed to disk, and renamed into place only when the whole job has succeeded."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import UsageError


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class OutputSet:
    def __init__(self, video_path: Path):
        folder = video_path.parent
        if not folder.is_dir():
            raise UsageError(f"output folder does not exist: {folder}; create it first")
        if video_path.suffix.lower() != ".mp4":
            raise UsageError(f"output must end in .mp4: {video_path}")
        if video_path.is_dir():
            raise UsageError(f"output path is a folder: {video_path}")
        stem = video_path.with_suffix("")
        self.final = {
            "video": video_path,
            "manifest": Path(f"{stem}.json"),
            "blendshapes": Path(f"{stem}.blendshapes.json"),
            "subtitles": Path(f"{stem}.srt"),
        }
        tag = f".partial-{os.getpid()}"
        self.temporary = {key: path.with_name(f".{path.name}{tag}") for key, path in self.final.items()}
        self._remove_stale()

    def _remove_stale(self) -> None:
        """Partial files of runs that were killed outright (SIGKILL, power cut) and are gone."""
        for path in self.final.values():
            for partial in path.parent.glob(f".{path.name}.partial-*"):
                pid = partial.name.rsplit("-", 1)[-1]
                if pid.isdigit() and not _alive(int(pid)):
                    partial.unlink(missing_ok=True)

    def temp(self, key: str) -> Path:
        return self.temporary[key]

    def write_text(self, key: str, text: str) -> None:
        with open(self.temporary[key], "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())

    def write_json(self, key: str, data: Any) -> None:
        self.write_text(key, json.dumps(data, indent=2, sort_keys=False) + "\n")

    def commit(self) -> dict[str, Path]:
        """Rename every temporary into place, the manifest last: its presence means 'complete'."""
        for key in ("video", "blendshapes", "subtitles", "manifest"):
            temp = self.temporary[key]
            if temp.exists():
                if key == "video":
                    with open(temp, "rb") as handle:
                        os.fsync(handle.fileno())
                os.replace(temp, self.final[key])
        return dict(self.final)

    def discard(self) -> None:
        for temp in self.temporary.values():
            try:
                temp.unlink()
            except FileNotFoundError:
                pass
