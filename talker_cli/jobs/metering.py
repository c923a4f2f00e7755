"""Per-stage seconds and peak memory: resident set size always, VRAM when torch has a GPU."""

from __future__ import annotations

import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_CLEAR_REFS = Path("/proc/self/clear_refs")
_STATUS = Path("/proc/self/status")


def _reset_peak_rss() -> bool:
    """Linux lets a process reset its own high-water mark (writing 5 to clear_refs)."""
    try:
        _CLEAR_REFS.write_text("5")
        return True
    except OSError:
        return False


def _peak_rss_bytes() -> int:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _cuda():
    """torch.cuda when torch is already imported and sees a GPU; never imports torch itself."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return torch.cuda
    return None


@dataclass(frozen=True)
class Measurement:
    seconds: float
    peak_rss_bytes: int
    peak_vram_allocated_bytes: int | None
    peak_vram_reserved_bytes: int | None


class StageMeter:
    def start(self) -> None:
        self.per_stage_rss = _reset_peak_rss()
        cuda = _cuda()
        if cuda is not None:
            cuda.reset_peak_memory_stats()
        self.started = time.perf_counter()

    def stop(self) -> Measurement:
        seconds = time.perf_counter() - self.started
        cuda = _cuda()
        return Measurement(
            seconds=seconds,
            peak_rss_bytes=_peak_rss_bytes(),
            peak_vram_allocated_bytes=cuda.max_memory_allocated() if cuda else None,
            peak_vram_reserved_bytes=cuda.max_memory_reserved() if cuda else None,
        )
