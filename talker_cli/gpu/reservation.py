"""One VRAM reservation per device, made through PyTorch's caching allocator and kept all run.

Measured on an H200 (see DESIGN notes): a block allocated and then released without empty_cache()
stays cached and serves later allocations of every size, so the memory is ours for the whole
job but usable by every stage; set_per_process_memory_fraction caps what may be reserved on top.
Allocator settings that make the allocator give cached blocks back (a small max_split_size_mb, a
garbage_collection_threshold) would silently undo the reservation: they are removed with a warning.
"""

from __future__ import annotations

import gc
import logging
import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import ResourceError
from .vram_plan import MIB, SMALL_POOL_HEADROOM

log = logging.getLogger("talker")
ALLOC_CONF_VARS = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
_BREAKING = ("max_split_size_mb", "garbage_collection_threshold")
SMALL_BLOCK = 1 * MIB  # allocations at or under this size come from the small pool


def sanitize_alloc_conf(environ: dict[str, str] | None = None) -> list[str]:
    """Drop allocator options that would release the reservation; returns what was dropped.

    Must run before CUDA is initialised: the allocator reads these variables once.
    """
    environ = os.environ if environ is None else environ
    dropped = []
    for var in ALLOC_CONF_VARS:
        conf = environ.get(var)
        if not conf:
            continue
        kept = []
        for option in conf.split(","):
            if option.split(":", 1)[0].strip() in _BREAKING:
                dropped.append(option.strip())
            elif option.strip():
                kept.append(option.strip())
        if kept:
            environ[var] = ",".join(kept)
        else:
            environ.pop(var)
    for option in dropped:
        log.warning("ignoring allocator option %s: it would hand the VRAM reservation back to the driver", option)
    return dropped


@dataclass
class LedgerRow:
    stage: str
    device: str
    planned_bytes: int
    peak_allocated_bytes: int = 0
    peak_reserved_bytes: int = 0
    device_allocs: int = 0  # cudaMalloc calls made during the stage, after the reservation
    alloc_retries: int = 0
    ooms: int = 0

    @property
    def planner_error(self) -> float | None:
        if not self.peak_allocated_bytes:
            return None
        return (self.planned_bytes - self.peak_allocated_bytes) / self.peak_allocated_bytes


@dataclass
class Reservation:
    """Holds one device's reservation and writes the ledger of every stage run under it."""

    device: str
    bytes: int
    cap_fraction: float
    torch: Any = None
    ledger: list[LedgerRow] = field(default_factory=list)
    made: bool = False

    def make(self) -> None:
        torch = self.torch
        if torch is None:
            import torch
            self.torch = torch
        device = torch.device(self.device)
        total = torch.cuda.get_device_properties(device).total_memory
        if self.bytes > self.cap_fraction * total:
            raise ResourceError(
                f"the plan needs {self.bytes / 2**30:.2f} GiB on {self.device}, over the cap of "
                f"{self.cap_fraction:.0%} of {total / 2**30:.1f} GiB (--mem-ratio); raise the ratio or use a smaller preset"
            )
        torch.cuda.set_per_process_memory_fraction(self.cap_fraction, device)
        try:
            block = torch.empty(self.bytes - SMALL_POOL_HEADROOM, dtype=torch.uint8, device=device)
            # Fill the small pool too: 2 MiB segments, each split into two 1 MiB blocks.
            small = [torch.empty(SMALL_BLOCK, dtype=torch.uint8, device=device)
                     for _ in range(2 * SMALL_POOL_HEADROOM // (2 * MIB))]
        except torch.cuda.OutOfMemoryError:
            free, _ = torch.cuda.mem_get_info(device)
            raise ResourceError(
                f"cannot reserve {self.bytes / 2**30:.2f} GiB on {self.device}: only {free / 2**30:.2f} GiB free "
                "(another process may hold it); wait, or use a smaller preset or --device cpu"
            ) from None
        del block, small  # back into the cache, not to the driver
        self.made = True
        log.info("reserved %.2f GiB on %s (cap %.0f%% of %.1f GiB)", self.bytes / 2**30, self.device,
                 self.cap_fraction * 100, total / 2**30)

    def _stats(self) -> dict[str, int]:
        return self.torch.cuda.memory_stats(self.torch.device(self.device))

    def stage_begin(self, stage: str, planned_bytes: int) -> None:
        self.torch.cuda.reset_peak_memory_stats(self.torch.device(self.device))
        self._before = self._stats()
        self.ledger.append(LedgerRow(stage, self.device, planned_bytes))

    def stage_end(self) -> LedgerRow:
        gc.collect()  # free the stage's tensors; the cached blocks stay reserved
        after = self._stats()
        row = self.ledger[-1]
        row.peak_allocated_bytes = after.get("allocated_bytes.all.peak", 0)
        row.peak_reserved_bytes = after.get("reserved_bytes.all.peak", 0)
        for key, attr in (("num_device_alloc", "device_allocs"), ("num_alloc_retries", "alloc_retries"),
                          ("num_ooms", "ooms")):
            setattr(row, attr, after.get(key, 0) - self._before.get(key, 0))
        return row

    def release(self) -> None:
        if not self.made:
            return
        gc.collect()
        self.torch.cuda.synchronize(self.torch.device(self.device))  # blocks freed on other streams
        # cuBLAS keeps its workspace (32 MiB on Hopper) inside the reserved block for as long as the
        # process lives; that pins the whole segment, so the workspace goes before empty_cache.
        clear_workspaces = getattr(getattr(self.torch, "_C", None), "_cuda_clearCublasWorkspaces", None)
        if clear_workspaces is not None:
            clear_workspaces()
        self.torch.cuda.empty_cache()
        self.torch.cuda.set_per_process_memory_fraction(1.0, self.torch.device(self.device))
        self.made = False
