"""ONNX Runtime sessions for the voices, made quickly.

onnxruntime optimizes a graph each time it loads it: 0.4 s of every Piper load and 0.3 s of Kokoro's,
for speech made no faster (bench/voice_load.py measures both ways). The voices are loaded with those
optimizations off.
"""

from __future__ import annotations

from pathlib import Path


def cpu_session(model: Path | str | bytes):
    """A session on the CPU over a model (a path or the model's bytes), its graph taken as it is."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    return onnxruntime.InferenceSession(str(model) if isinstance(model, Path) else model, sess_options=options,
                                        providers=["CPUExecutionProvider"])
