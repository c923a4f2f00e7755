"""A lock per physical GPU, so cron jobs sharing a card queue instead of both running out of memory.

An advisory flock on a file named after the card (CUDA_VISIBLE_DEVICES resolved to the physical
index or UUID). The kernel drops the lock when the process dies, however it dies.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path

from .errors import BusyError


def lock_dir() -> Path:
    return Path(os.environ.get("TALKER_LOCK_DIR") or "/tmp/talker-locks")


def physical_id(device: str, environ=None) -> str:
    environ = os.environ if environ is None else environ
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    visible = [v.strip() for v in environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return visible[index] if index < len(visible) else str(index)


@contextmanager
def device_locks(devices: list[str], wait_s: float, poll_s: float = 0.2):
    """Hold every device's lock for the duration; wait up to wait_s for each, else BusyError."""
    folder = lock_dir()
    folder.mkdir(parents=True, exist_ok=True)
    handles = []
    try:
        for device in sorted(set(devices)):
            name = physical_id(device)
            handle = open(folder / f"gpu-{name}.lock", "a+")
            deadline = time.monotonic() + max(wait_s, 0.0)
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        handle.close()
                        raise BusyError(f"GPU {name} ({device}) is in use by another talker job; "
                                        f"retry later or pass --wait SECONDS (waited {wait_s:.0f} s)") from None
                    time.sleep(poll_s)
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n")
            handle.flush()
            handles.append(handle)
        yield
    finally:
        for handle in handles:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
