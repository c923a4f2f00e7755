"""Outputs appear complete or not at all: each is written under a temporary name in the same
folder, flushed to disk, and renamed into place only when the whole job has succeeded."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import UsageError, os_error


def held(path: Path) -> bool:
    """A file whose writer lives: it holds a lock on it (a partial output, a run's scratch folder). A
    lock, unlike a process number, means the same in every PID namespace and container sharing the
    folder."""
    try:  # without waiting: a FIFO planted under a partial file's name would block a plain open forever
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return False  # its writer's lock file is gone: so is the writer
    except OSError:
        return True  # what cannot be looked at is left alone
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return True  # not a partial file talker wrote: left alone
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def output_files(output: Path, formats: Sequence[str], video: bool = True, speech: bool = False) -> dict[str, Path]:
    """Every file one job writes: for a render, `output` is the MP4 and the rest lie beside it under
    its stem; for animation only (no video), `output` is the stem itself (a suffix of ours is dropped).
    Keys: "video", "speech", "manifest" and each format's name."""
    from ..exports import FORMATS

    if video:
        if output.suffix.lower() != ".mp4":
            raise UsageError(f"output must end in .mp4: {output}")
        stem = str(output.with_suffix(""))
    else:
        if output.is_dir():
            raise UsageError(f"output is a folder: {output}; give the stem of the files, e.g. {output / 'take1'}")
        stem = str(output)
        for suffix in sorted({*FORMATS.values(), ".json", ".wav", ".mp4"}, key=len, reverse=True):
            if stem.lower().endswith(suffix) and len(stem) > len(suffix):
                stem = stem[: -len(suffix)]
                break
    files = {"video": output} if video else {}
    if speech:
        files["speech"] = Path(f"{stem}.wav")
    files["manifest"] = Path(f"{stem}.json")
    files.update({name: Path(stem + FORMATS[name]) for name in formats})
    return files


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
    """One job's files (output_files), written under temporary names and renamed together."""

    def __init__(self, files: dict[str, Path]):
        manifest = files["manifest"]
        if not manifest.parent.is_dir():
            if manifest.parent.exists():
                raise UsageError(f"output folder {manifest.parent} is a file, not a folder")
            above = next((p for p in manifest.parent.parents if p.exists()), None)
            if above is not None and not above.is_dir():
                raise UsageError(f"output folder {manifest.parent} cannot exist: {above} is a file, not a folder")
            raise UsageError(f"output folder does not exist: {manifest.parent}; create it first")
        for path in files.values():
            if path.is_dir():
                raise UsageError(f"output path is a folder: {path}")
        self.final = dict(files)
        tag = f"partial-{os.getpid()}-{secrets.token_hex(4)}"  # unique across hosts and PID namespaces
        self.temporary = {key: path.with_name(f".{path.name}.{tag}") for key, path in self.final.items()}
        self._remove_stale()
        self._lock: int | None = None
        try:  # the manifest's partial file, locked while this run lives; a folder that cannot take it is refused
            self._lock = os.open(self.temporary["manifest"], os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                                 | os.O_CLOEXEC, 0o644)
        except OSError as error:
            raise os_error(error) from None
        fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _remove_stale(self) -> None:
        """Partial files of runs that were killed outright (SIGKILL, power cut): their video's partial
        file is no longer locked by a living writer (or is gone)."""
        manifest = self.final["manifest"]
        for key, path in self.final.items():
            for partial in path.parent.glob(f".{path.name}.partial-*"):
                tag = partial.name[len(f".{path.name}."):]
                if not held(manifest.with_name(f".{manifest.name}.{tag}")):
                    partial.unlink(missing_ok=True)

    def temp(self, key: str) -> Path:
        return self.temporary[key]

    def write_text(self, key: str, text: str) -> None:
        self.write_bytes(key, text.encode("utf-8"))

    def write_bytes(self, key: str, data: bytes) -> None:
        with open(self.temporary[key], "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())

    def write_json(self, key: str, data: Any) -> None:
        self.write_text(key, json.dumps(data, indent=2, sort_keys=False) + "\n")

    def commit(self) -> dict[str, Path]:
        """Rename every temporary into place, the manifest last: its presence means 'complete'. Two
        runs finishing the same output at once take turns (a lock on the folder): the files left are
        all one run's, never one run's subtitles beside the other's manifest."""
        for key in ("video", "speech"):  # written by ffmpeg or soundfile: flushed here
            if key in self.temporary and self.temporary[key].exists():
                with open(self.temporary[key], "rb") as handle:
                    os.fsync(handle.fileno())
        folder = os.open(self.final["manifest"].parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            with contextlib.suppress(OSError):  # a file system without locks: renamed as before
                fcntl.flock(folder, fcntl.LOCK_EX)
            for key in [k for k in self.final if k != "manifest"] + ["manifest"]:
                if self.temporary[key].exists():
                    os.replace(self.temporary[key], self.final[key])
        finally:
            os.close(folder)
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
