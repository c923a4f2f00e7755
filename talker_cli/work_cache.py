"""A content-addressed cache of finished stage results (speech, transcripts, replies).

A key is the hash of what decides a stage's result: its inputs' content and its part of the config.
An interrupted or failed job re-run later reuses what its finished stages made; a changed input or
setting makes a new key. Entries are written to a temporary folder and renamed when complete; one
that cannot be read back is made again (pipeline.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .offline import work_cache_root

FORMAT = 1  # bump when what a stage saves changes shape


class WorkCache:
    def __init__(self, root: Path | None = None, read: bool = True):
        self.root = root or work_cache_root()
        self.read = read  # False (--force): redo every stage, but still record the results

    @staticmethod
    def key(stage: str, parts: dict[str, Any]) -> str:
        blob = json.dumps({"stage": stage, "format": FORMAT, **parts}, sort_keys=True, default=str)
        return f"{stage}-{hashlib.sha256(blob.encode()).hexdigest()[:32]}"

    def lookup(self, key: str) -> Path | None:
        """The finished entry under the key: a folder of this user's own that no one else may write in.
        A link, or an entry another user made or could change (a cache folder shared by a team), is
        no entry: its content would be taken as this job's result."""
        if not self.read:
            return None
        folder = self.root / key
        try:
            info = os.lstat(folder)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
            return None
        return folder if (folder / "meta.json").is_file() else None

    def store(self, key: str, meta: dict[str, Any], write: Callable[[Path], None]) -> None:
        """write(folder) fills a fresh folder; it appears under its key only when complete."""
        self.root.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=self.root))
        try:
            write(temp)
            (temp / "meta.json").write_text(json.dumps(meta))
            target = self.root / key
            if target.exists():
                shutil.rmtree(target)
            os.replace(temp, target)
        except OSError:
            shutil.rmtree(temp, ignore_errors=True)  # a cache that cannot be written costs only time

    @staticmethod
    def meta(folder: Path) -> dict[str, Any]:
        return json.loads((folder / "meta.json").read_text())
