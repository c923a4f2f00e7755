"""Outputs appear complete or not at all: each is written under a temporary name in the same
folder, flushed to disk, and renamed into place only when the whole job has succeeded."""

from __future__ import annotations

import fcntl
import json
import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import UsageError, os_error


def _held(path: Path) -> bool:
    """A partial file whose writer lives: it holds a lock on it. A lock, unlike a process number,
    means the same in every PID namespace and container sharing the folder."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return False  # its writer's lock file is gone: so is the writer
    except OSError:
        return True  # what cannot be looked at is left alone
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def output_files(video_path: Path) -> dict[str, Path]:
    """Every file one job writes, beside its MP4."""
    stem = video_path.with_suffix("")
    return {
        "video": video_path,
        "manifest": Path(f"{stem}.json"),
        "blendshapes": Path(f"{stem}.blendshapes.json"),
        "subtitles": Path(f"{stem}.srt"),
    }


def _identities(path: Path) -> list[object]:
    """What makes two paths one file: the resolved path (links followed) and, for a file that
    exists, its device and inode (hard links)."""
    keys: list[object] = [os.path.realpath(path)]
    try:
        info = os.stat(path)
        keys.append((info.st_dev, info.st_ino))
    except OSError:  # not there (yet)
        pass
    return keys


def check_paths(outputs: Iterable[tuple[str, Path]], inputs: Iterable[Path | None]) -> None:
    """No two outputs are one file and no output is, or resolves to, an input: checked before any work.
    Outputs come named ('the manifest of line 3') so the message can say which two collide."""
    written: dict[object, tuple[str, Path]] = {}
    for name, out in outputs:
        for key in _identities(out):
            if key in written:
                raise UsageError(f"{written[key][0]} and {name} would be the same file, {out}; choose other output names")
            written[key] = (name, out)
    for source in inputs:
        for key in _identities(source) if source is not None else ():
            if key in written:
                name, out = written[key]
                raise UsageError(f"{name}, {out}, would overwrite the input {source}; choose another output name")


class OutputSet:
    def __init__(self, video_path: Path):
        folder = video_path.parent
        if not folder.is_dir():
            raise UsageError(f"output folder does not exist: {folder}; create it first")
        if video_path.suffix.lower() != ".mp4":
            raise UsageError(f"output must end in .mp4: {video_path}")
        if video_path.is_dir():
            raise UsageError(f"output path is a folder: {video_path}")
        self.final = output_files(video_path)
        tag = f"partial-{os.getpid()}-{secrets.token_hex(4)}"  # unique across hosts and PID namespaces
        self.temporary = {key: path.with_name(f".{path.name}.{tag}") for key, path in self.final.items()}
        self._remove_stale()
        self._lock: int | None = None
        try:  # the video's partial file, locked while this run lives; a folder that cannot take it is refused
            self._lock = os.open(self.temporary["video"], os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                                 | os.O_CLOEXEC, 0o644)
        except OSError as error:
            raise os_error(error) from None
        fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _remove_stale(self) -> None:
        """Partial files of runs that were killed outright (SIGKILL, power cut): their video's partial
        file is no longer locked by a living writer (or is gone)."""
        video = self.final["video"]
        for key, path in self.final.items():
            for partial in path.parent.glob(f".{path.name}.partial-*"):
                tag = partial.name[len(f".{path.name}."):]
                if not _held(video.with_name(f".{video.name}.{tag}")):
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
        self._unlock()
        return dict(self.final)

    def discard(self) -> None:
        for temp in self.temporary.values():
            try:
                temp.unlink()
            except FileNotFoundError:
                pass
        self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
