"""A content-addressed cache of finished stage results (speech, transcripts, replies) and of what is
found in each photo: its face's landmarks (input_stages.PhotoStage) and its mouth's calibration
(render_stage.RenderStage).

A key is the hash of what decides a stage's result: its inputs' content, its part of the config and
talker's own code (a changed ASR or voice makes other transcripts and speech of the same input; the
version number alone does not say so). An interrupted or failed job re-run later reuses what its finished stages made; a changed input or
setting makes a new key. Entries are written to a temporary folder and renamed when complete; one
that cannot be read back is made again (pipeline.py); a run whose code changes under it (an upgrade
while a long batch runs) stores nothing more. Each run's first new entry prunes the cache:
entries unused for two weeks, then the least recently used past 2 GiB.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from ..offline import own_folder, work_cache_root

log = logging.getLogger("talker")
T = TypeVar("T")

FORMAT = 1  # bump when what a stage saves changes shape
# The cache serves re-runs of interrupted jobs, not an archive: a cron job's speech (5 MB a minute)
# would fill the disk. Entries unused this long go, and the least recently used go past the size.
KEEP_UNUSED_S = 14 * 86400
MAX_BYTES = 2 << 30
ABANDONED_S = 86400  # a half-written entry of a process that was killed


def fingerprint(package: Path) -> str:
    """A hash of a package's source files, names and contents."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


PACKAGE = Path(__file__).resolve().parent.parent  # the whole of talker_cli


def source_times(package: Path) -> tuple[int, int]:
    """The newest modification time of a package's source files, and how many there are: both move
    when its code is edited or upgraded (a stat each, well under a millisecond for talker)."""
    times = [path.stat().st_mtime_ns for path in package.rglob("*.py")]
    return max(times, default=0), len(times)


@cache
def _code_read() -> tuple[str, tuple[int, int]]:
    return fingerprint(PACKAGE), source_times(PACKAGE)


def code_fingerprint() -> str:
    """talker's own fingerprint, read once per process (a few milliseconds)."""
    return _code_read()[0]


def code_changed() -> bool:
    """Whether talker's source files moved since this process read its fingerprint: its modules are
    imported as its stages need them, so what it makes from then on may come from other code than
    its keys name (an upgrade in the middle of a long batch, an edit while it runs)."""
    return source_times(PACKAGE) != _code_read()[1]


class WorkCache:
    def __init__(self, root: Path | None = None, read: bool = True, max_bytes: int = MAX_BYTES,
                 keep_unused_s: float = KEEP_UNUSED_S):
        self.root = root or work_cache_root()
        self.read = read  # False (--force): redo every stage, but still record the results
        self.max_bytes, self.keep_unused_s = max_bytes, keep_unused_s
        self.pruned = False  # once per run: the first entry it stores prunes the rest
        self.unusable = False  # it failed once: this run stores nothing more

    @staticmethod
    def key(stage: str, parts: dict[str, Any]) -> str:
        blob = json.dumps({"stage": stage, "format": FORMAT, "code": code_fingerprint(), **parts}, sort_keys=True,
                          default=str)
        return f"{stage}-{hashlib.sha256(blob.encode()).hexdigest()[:32]}"

    def lookup(self, key: str) -> Path | None:
        """The finished entry under the key: a folder of this user's own that no one else may write in.
        A link, or an entry another user made or could change (a cache folder shared by a team), is
        no entry: its content would be taken as this job's result."""
        if not self.read:
            return None
        folder = self.root / key
        info = own_folder(folder)
        if info is None or info.st_mode & 0o022:
            return None
        try:
            os.utime(folder / "meta.json")  # used now: the last to be pruned
        except OSError:
            return None
        return folder

    def kept(self, key: str, read: Callable[[Path], T | None]) -> T | None:
        """What read(folder) makes of the entry under the key (a photo's landmarks, its calibration):
        None where there is none, or where read cannot read it (OSError, ValueError) or finds it is
        not what it should be (returns None); the caller makes it again and stores it over that."""
        folder = self.lookup(key)
        if folder is None:
            return None
        try:
            return read(folder)
        except (OSError, ValueError):
            return None

    def store(self, key: str, meta: dict[str, Any], write: Callable[[Path], None]) -> None:
        """write(folder) fills a fresh folder; it appears under its key only when complete. The cache
        is optional: one it cannot write (a file, a folder of another user's or read-only, a full
        disk) is said once, and the job goes on without it."""
        if self.unusable:
            return
        if code_changed():
            self.unusable = True
            log.warning("talker's code changed while this run went on; what it makes is not kept in the work cache")
            return
        temp = None
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            temp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=self.root))
            write(temp)
            (temp / "meta.json").write_text(json.dumps(meta))
            target = self.root / key
            if target.exists():
                shutil.rmtree(target)
            os.replace(temp, target)
        except OSError as error:
            if temp is not None:
                shutil.rmtree(temp, ignore_errors=True)
            self.unusable = True
            reason = "it is not a folder" if self.root.exists() and not self.root.is_dir() else error.strerror or error
            log.warning("the work cache %s cannot be used (%s); this run goes on without it", self.root, reason)
            return
        if not self.pruned:
            self.pruned = True
            self.prune()

    def prune(self, now: float | None = None) -> None:
        """Remove this user's entries unused for keep_unused_s, then the least recently used until the
        rest fit in max_bytes, and half-written entries abandoned for a day. Another user's are left."""
        now = time.time() if now is None else now
        entries = []  # (last used, bytes, folder)
        for folder in self.root.iterdir() if self.root.is_dir() else []:
            info = own_folder(folder)
            if info is None:
                continue
            try:
                if folder.name.startswith("."):
                    if now - info.st_mtime > ABANDONED_S:
                        shutil.rmtree(folder, ignore_errors=True)
                    continue
                used = (folder / "meta.json").stat().st_mtime
                size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
            except OSError:
                continue
            entries.append((used, size, folder))
        entries.sort()
        total = sum(size for _, size, _ in entries)
        for used, size, folder in entries:
            if now - used <= self.keep_unused_s and total <= self.max_bytes:
                break
            shutil.rmtree(folder, ignore_errors=True)
            total -= size

    @staticmethod
    def meta(folder: Path) -> dict[str, Any]:
        return json.loads((folder / "meta.json").read_text())
