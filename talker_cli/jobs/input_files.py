"""Input files opened once and checked to be regular files before anything is read from them, and read
with a bound: a FIFO, a device (/dev/zero), a folder or a socket is named as what it is, never
waited on or read without end.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import InputError

KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
         (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def kind_of(mode: int) -> str:
    return next((name for test, name in KINDS if test(mode)), "not a regular file")


def _require_regular(mode: int, path: Path, what: str, error) -> None:
    if not stat.S_ISREG(mode):
        raise error(f"{what} {path} is {kind_of(mode)}, not a file; pass a file")


def check_file(path: Path, what: str, error=InputError) -> None:
    """Refuse a path that is not a regular file this user can read (links followed), saying what it
    is (error: the class to raise). It is opened, not asked about: permission bits say nothing of
    ACLs, and root reads what they forbid."""
    os.close(open_regular(path, what, error))


def open_regular(path: Path, what: str, error=InputError) -> int:
    """A descriptor of the regular file at path (links followed), opened without waiting: a FIFO
    with no writer would block a plain open forever."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except OSError as reason:
        raise error(f"cannot read {what} {path}: {reason.strerror}") from None
    try:
        _require_regular(os.fstat(fd).st_mode, path, what, error)
    except error:
        os.close(fd)
        raise
    return fd


def read_bounded(path: Path, what: str, max_bytes: int, bound: str = "this job reads") -> bytes:
    """At most max_bytes of a regular file, refused from its size (or at the first byte past the
    bound, for files whose size says nothing, as in /proc) before it is read whole; `bound` says
    where the limit comes from."""
    with os.fdopen(open_regular(path, what), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise InputError(f"{what} {path} is {size:,} bytes, over the {max_bytes:,} bytes {bound}")
        try:
            data = handle.read(max_bytes + 1)
        except OSError as error:
            raise InputError(f"cannot read {what} {path}: {error.strerror}") from None
    if len(data) > max_bytes:
        raise InputError(f"{what} {path} is over the {max_bytes:,} bytes {bound}")
    return data
