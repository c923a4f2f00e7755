"""ONNX Runtime sessions for the voices, made quickly and sparing the cores.

onnxruntime optimizes a graph each time it loads it: 0.4 s of every Piper load and 0.3 s of Kokoro's,
for speech made no faster. Its worker threads spin while they wait for work, taking a core the
encoder or the photo could use. The voices are loaded with neither (bench/voice_load.py measures
both ways).
"""

from __future__ import annotations

from pathlib import Path


def cpu_session(model: Path | str | bytes):
    """A session on the CPU over a model (a path or the model's bytes), its graph taken as it is and
    its threads sleeping, not spinning, between pieces of work."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(model) if isinstance(model, Path) else model, sess_options=options,
                                        providers=["CPUExecutionProvider"])
