"""What the GPUs are and how much memory is free, as the driver reports it.

NVML (nvidia-ml-py) answers without creating a CUDA context, fast, and also tells what other
processes hold; PyTorch is the fallback. Devices are numbered as CUDA numbers them for this
process, so CUDA_VISIBLE_DEVICES is respected (integers or GPU-UUIDs, in its order).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuDevice:
    index: int  # the CUDA ordinal this process sees: cuda:index
    name: str
    total_bytes: int
    free_bytes: int
    used_by_others_bytes: int | None = None  # other processes' memory, where NVML can tell
    source: str = "nvml"

    @property
    def label(self) -> str:
        return f"cuda:{self.index}"


def _visible(environ) -> list[str] | None:
    value = environ.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def _nvml_devices(environ) -> list[GpuDevice] | None:
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # no driver: NVML is not usable, and neither is CUDA (no need to ask torch)
        return []
    try:
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        uuids = [_text(pynvml.nvmlDeviceGetUUID(h)) for h in handles]
        visible = _visible(environ)
        if visible is None:
            chosen = list(range(len(handles)))
        else:
            chosen = []
            for entry in visible:
                if entry.isdigit() and int(entry) < len(handles):
                    chosen.append(int(entry))
                elif entry.startswith("GPU-"):
                    matches = [i for i, u in enumerate(uuids) if u.startswith(entry)]
                    if not matches:
                        break
                    chosen.append(matches[0])
                else:  # CUDA stops at the first invalid entry
                    break
        devices = []
        own = os.getpid()
        for ordinal, i in enumerate(chosen):
            h = handles[i]
            memory = pynvml.nvmlDeviceGetMemoryInfo(h)
            try:
                others = sum(p.usedGpuMemory or 0 for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h) if p.pid != own)
            except pynvml.NVMLError:
                others = None
            devices.append(GpuDevice(ordinal, _text(pynvml.nvmlDeviceGetName(h)), int(memory.total),
                                     int(memory.free), others, "nvml"))
        return devices
    finally:
        pynvml.nvmlShutdown()


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _torch_devices() -> list[GpuDevice]:
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    devices = []
    for i in range(torch.cuda.device_count()):
        free, total = torch.cuda.mem_get_info(i)
        devices.append(GpuDevice(i, torch.cuda.get_device_name(i), int(total), int(free), None, "torch"))
    return devices


def probe_devices(environ=None) -> list[GpuDevice]:
    environ = os.environ if environ is None else environ
    devices = _nvml_devices(environ)
    return devices if devices is not None else _torch_devices()
