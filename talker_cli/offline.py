"""Offline by default: the switches that keep every library off the model hubs, and the folder
where talker keeps what it makes once and reuses (under the user's cache folder)."""

from __future__ import annotations

import os
from pathlib import Path


def force_offline() -> None:
    """No code path may reach a model hub: the libraries are told so before they are imported."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "talker"
