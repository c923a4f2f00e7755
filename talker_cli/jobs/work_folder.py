"""A run's scratch folder (the speech of each job, for the encoder) in the system's temp folder, and
the removal of those that runs killed outright left behind: SIGKILL, the OOM killer or a power cut
skip every cleanup (194 such folders had gathered here). A run holds a lock on a file in its folder
while it lives; a folder of this user's whose lock nobody holds, untouched for STALE_S, is removed."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ..offline import own_folder
from .outputs import held

PREFIX = "talker-run-"
LOCK = ".lock"
STALE_S = 3600  # a folder touched this recently is left alone, locked or not (a run of an older talker)
# This run's folders, and those of talker before their lock (talker-XXXXXXXX); never talker-locks-UID
# (the GPU locks) or talker-mfa-* (inside a run).
_RUN_FOLDER = re.compile(r"talker-(?:run-)?[a-z0-9_]{8}")


@contextlib.contextmanager
def work_folder() -> Iterator[Path]:
    remove_abandoned(Path(tempfile.gettempdir()))
    with tempfile.TemporaryDirectory(prefix=PREFIX) as root:
        lock = os.open(Path(root) / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            yield Path(root)
        finally:
            os.close(lock)


def remove_abandoned(parent: Path, now: float | None = None) -> None:
    now = time.time() if now is None else now
    for folder in parent.iterdir():
        if not _RUN_FOLDER.fullmatch(folder.name):
            continue
        info = own_folder(folder)
        if info is not None and now - info.st_mtime > STALE_S and not held(folder / LOCK):
            shutil.rmtree(folder, ignore_errors=True)
