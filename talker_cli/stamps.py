"""Model files talker makes for itself in its cache (a model joined from its wheels' parts, one
assembled or patched) are stamped once their SHA-256 is known to be right, and checked against the
stamp before every use: a file changed since (damaged, truncated, replaced) is hashed again and, when
its hash no longer matches, made again rather than loaded.

The stamp is a small JSON file beside the model (.NAME.stamp): the SHA-256 and what the file system
says of the file when it matched (size, modification and change times, inode). Any write to the file,
or a copy put in its place, changes one of them; checking them costs one stat, where hashing a 1 GB
model costs seconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from pathlib import Path


def stamp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.stamp")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    _read_into(path, digest.update)
    return digest.hexdigest()


def concatenated(parts: list[Path], target: Path) -> str:
    """The parts written one after another into target, a new file, and the SHA-256 of the whole,
    taken as it is written (one read of 1 GB, not two)."""
    digest = hashlib.sha256()
    with open(target, "xb") as out:

        def write(block: bytes) -> None:
            digest.update(block)
            out.write(block)

        for part in parts:
            _read_into(part, write)
    return digest.hexdigest()


def _read_into(path: Path, take) -> None:
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            take(block)


def _state(path: Path) -> dict:
    info = os.stat(path)
    return {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "ctime_ns": info.st_ctime_ns, "inode": info.st_ino}


def stamp(path: Path, sha256: str) -> None:
    """Record that the file, as it is now, hashes to sha256. A cache that cannot take the stamp costs
    a full hash at the next use, nothing more."""
    target = stamp_path(path)
    temp = target.with_name(f"{target.name}.{os.getpid()}-{secrets.token_hex(4)}")
    try:
        temp.write_text(json.dumps({"sha256": sha256, **_state(path)}))
        os.replace(temp, target)
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink()


def _read_stamp(path: Path) -> dict | None:
    try:
        found = json.loads(stamp_path(path).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and isinstance(found.get("sha256"), str) else None


def verified(path: Path, sha256: str | None = None) -> bool:
    """The file is whole: the file system says of it what its stamp says, or its content hashes again
    to the SHA-256 expected (the pinned one when given, else the stamp's), which stamps it anew. A
    file with neither a pinned hash nor a stamp cannot be vouched for: False, and the caller makes it."""
    try:
        now = _state(path)
    except OSError:
        return False
    found = _read_stamp(path)
    expected = sha256 or (found or {}).get("sha256")
    if expected is None:
        return False
    if found is not None and found["sha256"] == expected and all(found.get(k) == v for k, v in now.items()):
        return True
    try:
        if sha256_of(path) != expected:
            return False
    except OSError:
        return False
    stamp(path, expected)
    return True
