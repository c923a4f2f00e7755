"""A lock per physical GPU, so cron jobs sharing a card queue instead of both running out of memory.

An advisory flock on a file named after the card (CUDA_VISIBLE_DEVICES resolved to the physical
index or UUID). The kernel drops the lock when the process dies, however it dies. The files live in
a folder of the user's own (mode 0700) unless TALKER_LOCK_DIR names one users share, and are opened
without following links.
"""

from __future__ import annotations

import fcntl
import os
import re
import stat
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from ..errors import BusyError, UsageError


def lock_dir() -> Path:
    """TALKER_LOCK_DIR (a folder users share, made by its owner), else a folder of this user's own."""
    shared = os.environ.get("TALKER_LOCK_DIR")
    return Path(shared) if shared else Path(tempfile.gettempdir()) / f"talker-locks-{os.getuid()}"


def _checked_folder() -> Path:
    """The lock folder, refused when another user could plant links or files in a private one."""
    folder = lock_dir()
    private = not os.environ.get("TALKER_LOCK_DIR")
    try:
        if private:
            folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError as error:
        raise UsageError(f"cannot use the lock folder {folder}: {error.strerror}; set TALKER_LOCK_DIR "
                         "to a folder you can write") from None
    if not stat.S_ISDIR(info.st_mode):
        raise UsageError(f"the lock folder {folder} is not a folder (a link or a file); remove it or set TALKER_LOCK_DIR")
    if private and (info.st_uid != os.getuid() or info.st_mode & 0o022):
        raise UsageError(f"the lock folder {folder} belongs to another user or others may write in it; "
                         "remove it or set TALKER_LOCK_DIR")
    return folder


def physical_id(device: str, environ=None) -> str:
    environ = os.environ if environ is None else environ
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    visible = [v.strip() for v in environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    name = visible[index] if index < len(visible) else str(index)
    if not re.fullmatch(r"[A-Za-z0-9_.:-]+", name) or name.startswith("."):  # it names a file
        raise UsageError(f"CUDA_VISIBLE_DEVICES entry {name!r} is not a GPU index or UUID")
    return name


def _open_lock(path: Path) -> int:
    """The lock file, never through a link (a planted one would make talker write elsewhere)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as error:
        raise UsageError(f"cannot open the lock file {path}: {error.strerror}; set TALKER_LOCK_DIR "
                         "to a folder you can write") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError(f"the lock file {path} is not a regular file; remove it")
    return fd


def checked_wait(seconds: float) -> float:
    """--wait as device_locks takes it: a number of seconds, 0 or more."""
    import math

    if not math.isfinite(seconds) or seconds < 0:
        raise UsageError(f"--wait must be a number of seconds, 0 or more, got {seconds}")
    return seconds


@contextmanager
def device_locks(devices: list[str], wait_s: float, poll_s: float = 0.2):
    """Hold every device's lock for the duration; wait up to wait_s for each, else BusyError.
    No device, no lock and no lock folder."""
    held: list[int] = []
    try:
        for device in sorted(set(devices)):
            name = physical_id(device)
            fd = _open_lock(_checked_folder() / f"gpu-{name}.lock")
            deadline = time.monotonic() + max(wait_s, 0.0)
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        os.close(fd)
                        raise BusyError(f"GPU {name} ({device}) is in use by another talker job; "
                                        f"retry later or pass --wait SECONDS (waited {wait_s:.0f} s)") from None
                    time.sleep(poll_s)
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            held.append(fd)
        yield
    finally:
        for fd in held:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
