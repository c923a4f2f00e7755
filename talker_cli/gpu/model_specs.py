"""Read a model's memory-deciding shapes without loading its weights.

Sources, fastest first: GGUF tensor tables (gguf's memory-mapped reader), safetensors headers (a
JSON table at the start of each file) with config.json, PyTorch checkpoints (.pt/.pth) read as
pickles whose tensors become shapes, and as a last resort the model built on PyTorch's meta device
from its config, which allocates nothing.
"""

from __future__ import annotations

import collections
import io
import json
import math
import pickle
import struct
import zipfile
from pathlib import Path
from typing import Any

from ..errors import ModelMissingError
from .vram_plan import ModelSpec

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}


def _dims_from_config(cfg: dict[str, Any]) -> dict[str, int]:
    hidden = cfg.get("hidden_size") or cfg.get("n_embd") or cfg.get("d_model") or 0
    heads = cfg.get("num_attention_heads") or cfg.get("n_head") or cfg.get("encoder_attention_heads") or 0
    return {
        "layers": cfg.get("num_hidden_layers") or cfg.get("n_layer") or cfg.get("encoder_layers") or 0,
        "hidden": hidden,
        "heads": heads,
        "kv_heads": cfg.get("num_key_value_heads") or heads,
        "head_dim": cfg.get("head_dim") or (hidden // heads if heads else 0),
        "intermediate": cfg.get("intermediate_size") or cfg.get("n_inner") or cfg.get("encoder_ffn_dim") or 4 * hidden,
        "vocab": cfg.get("vocab_size") or 0,
    }


def spec_from_config(cfg: dict[str, Any], param_count: int, dtype: str, name: str, buffer_bytes: int = 0) -> ModelSpec:
    dims = _dims_from_config(cfg)
    common = {"name": name, "param_count": param_count, "dtype_bytes": DTYPE_BYTES[dtype], "buffer_bytes": buffer_bytes}
    if cfg.get("model_type") == "whisper":
        return ModelSpec(
            kind="whisper", **common, **dims, decoder_layers=cfg.get("decoder_layers", dims["layers"]),
            source_positions=cfg.get("max_source_positions", 1500), mel_bins=cfg.get("num_mel_bins", 80),
        )
    tied = bool(cfg.get("tie_word_embeddings", cfg.get("model_type") == "gpt2"))
    return ModelSpec(kind="causal-lm", **common, **dims, tied_embeddings=tied)


def safetensors_param_count(files: list[Path]) -> int:
    """Sum of element counts from the headers: 8 bytes of length, then a JSON table of tensors."""
    total = 0
    for path in files:
        with open(path, "rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            header = json.loads(handle.read(length))
        for key, entry in header.items():
            if key == "__metadata__":
                continue
            n = 1
            for size in entry["shape"]:
                n *= size
            total += n
    return total


def meta_param_count(cfg: dict[str, Any]) -> tuple[int, int]:
    """Build the model on the meta device (no memory): its distinct parameters and buffer bytes."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSpeechSeq2Seq

    config = AutoConfig.for_model(**cfg)
    factory = AutoModelForSpeechSeq2Seq if cfg.get("model_type") == "whisper" else AutoModelForCausalLM
    with torch.device("meta"):
        model = factory.from_config(config)
    params = sum(p.numel() for p in model.parameters())
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    return params, buffers


def spec_from_folder(folder: Path, dtype: str) -> ModelSpec:
    cfg = json.loads((folder / "config.json").read_text())
    files = sorted(folder.glob("*.safetensors"))
    count, buffers = (safetensors_param_count(files), 0) if files else meta_param_count(cfg)
    return spec_from_config(cfg, count, dtype, folder.name, buffers)


# GGUF value types: sizes of the fixed-width ones; 8 is a string, 9 an array.
_GGUF_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def read_gguf_header(path: Path) -> tuple[dict[str, Any], int]:
    """GGUF metadata (arrays summarised by their length) and the total element count of its tensors.

    Reads only the header, skipping the tokenizer's tens of thousands of strings quickly; the
    gguf package's reader decodes all of them and takes seconds.
    """
    with open(path, "rb") as f:
        def unpack(fmt):
            return struct.unpack("<" + fmt, f.read(struct.calcsize("<" + fmt)))[0]

        def string():
            return f.read(unpack("Q")).decode("utf-8", errors="replace")

        def value(kind):
            if kind == 8:
                return string()
            if kind == 9:
                item, count = unpack("I"), unpack("Q")
                if item == 8:
                    for _ in range(count):
                        f.seek(unpack("Q"), 1)
                elif item in _GGUF_SCALAR:
                    f.seek(count * struct.calcsize(_GGUF_SCALAR[item]), 1)
                else:
                    for _ in range(count):
                        value(item)
                return count
            return unpack(_GGUF_SCALAR[kind])

        if f.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        unpack("I")  # version
        n_tensors, n_kv = unpack("Q"), unpack("Q")
        meta = {}
        for _ in range(n_kv):
            key = string()
            meta[key] = value(unpack("I"))
        elements = 0
        for _ in range(n_tensors):
            string()
            n = 1
            for _ in range(unpack("I")):
                n *= unpack("Q")
            unpack("I")  # tensor type
            unpack("Q")  # offset
            elements += n
    return meta, elements


def spec_from_gguf(path: Path, dtype: str) -> ModelSpec:
    """transformers dequantizes GGUF on load: the model's size on the device is params x dtype."""
    meta, count = read_gguf_header(path)
    arch = meta["general.architecture"]
    cfg = {
        "num_hidden_layers": meta[f"{arch}.block_count"],
        "hidden_size": meta[f"{arch}.embedding_length"],
        "num_attention_heads": meta[f"{arch}.attention.head_count"],
        "num_key_value_heads": meta.get(f"{arch}.attention.head_count_kv"),
        "intermediate_size": meta[f"{arch}.feed_forward_length"],
        "vocab_size": meta["tokenizer.ggml.tokens"],
    }
    return spec_from_config(cfg, count, dtype, path.name)


class TensorShape:
    """What a checkpoint's tensor is to the planner: its element count."""

    def __init__(self, numel: int):
        self.numel = numel


class _Opaque:
    """Stands in for any class a checkpoint names (storages, dtypes, optimizer state)."""

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass


def _rebuild_tensor(storage, offset, size, *rest):
    return TensorShape(math.prod(size))


class _ShapeUnpickler(pickle.Unpickler):
    """Reads a PyTorch checkpoint's pickle without torch and without running its code: tensors
    become TensorShape, every other class an inert stand-in."""

    SAFE = {("collections", "OrderedDict"): collections.OrderedDict,
            ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
            ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
            ("torch._utils", "_rebuild_parameter"): lambda data, *rest: data}

    def find_class(self, module, name):
        return self.SAFE.get((module, name), _Opaque)

    def persistent_load(self, pid):
        return pid  # storages stay on disk


def read_checkpoint_shapes(path: Path) -> Any:
    """A torch.save file's contents with tensors as TensorShape: no torch import, nothing loaded
    (importing torch alone takes seconds, and check-gpu must stay fast)."""
    unreadable = ModelMissingError(f"{path} is not a readable PyTorch checkpoint (damaged or another format); "
                                   "pass a whisper .pt file saved by torch.save")
    try:
        with zipfile.ZipFile(path) as archive:
            pickled = next(n for n in archive.namelist() if n.endswith("/data.pkl") or n == "data.pkl")
            return _ShapeUnpickler(io.BytesIO(archive.read(pickled))).load()
    except (zipfile.BadZipFile, StopIteration):  # the legacy (pre-1.6) format: torch reads it
        import torch

        try:
            loaded = torch.load(path, map_location="meta", weights_only=True)
        except Exception:  # torch says only that it could not unpickle
            raise unreadable from None
        return _as_shapes(loaded)
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, zipfile.LargeZipFile, OSError):
        raise unreadable from None


def _as_shapes(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _as_shapes(v) for k, v in value.items()}
    return TensorShape(value.numel()) if hasattr(value, "numel") else value


def spec_from_whisper_checkpoint(path: Path, dtype: str) -> ModelSpec:
    """openai-whisper .pt: dims and parameter count from the checkpoint. openai-whisper keeps its
    weights in float32 and casts each layer to the compute dtype as it runs (float16 on a GPU)."""
    from ..listening.asr import official_alignment_heads

    checkpoint = read_checkpoint_shapes(path)
    if not isinstance(checkpoint, dict) or not {"dims", "model_state_dict"} <= set(checkpoint):
        raise ModelMissingError(f"{path} is a PyTorch file but not a whisper checkpoint (no dims and "
                                "model_state_dict); pass one saved by openai-whisper")
    dims = checkpoint["dims"]
    count = sum(getattr(t, "numel", 0) for t in checkpoint["model_state_dict"].values())
    heads = official_alignment_heads(path)
    layers, text_heads = dims["n_text_layer"], dims["n_text_head"]
    if heads is None or heads.size != layers * text_heads:  # whisper's default: the last half, every head
        alignment = (layers - layers // 2) * text_heads
    else:
        alignment = int(heads.sum())
    return ModelSpec(
        kind="whisper", name=path.name, param_count=count, dtype_bytes=DTYPE_BYTES[dtype], stored_dtype_bytes=4,
        layers=dims["n_audio_layer"], hidden=dims["n_audio_state"], heads=dims["n_audio_head"],
        kv_heads=dims["n_audio_head"], head_dim=dims["n_audio_state"] // dims["n_audio_head"],
        intermediate=4 * dims["n_audio_state"], vocab=dims["n_vocab"], decoder_layers=dims["n_text_layer"],
        source_positions=dims["n_audio_ctx"], mel_bins=dims["n_mels"], alignment_heads=alignment,
    )


def spec_from_coqui_folder(folder: Path, checkpoint: Path) -> ModelSpec:
    """Coqui VITS: decoder shape from config.json, parameters from the checkpoint, less the
    training discriminator and any baked-in speaker encoder (neither is loaded to speak).
    Coqui runs in float32."""
    cfg = json.loads((folder / "config.json").read_text())
    args, audio = cfg.get("model_args", {}), cfg.get("audio", {})
    state = read_checkpoint_shapes(checkpoint)
    count = sum(getattr(t, "numel", 0) for k, t in state["model"].items()
                if not k.startswith("disc.") and "speaker_encoder" not in k)
    channels, width, widest = args.get("upsample_initial_channel_decoder", 512), 1, 0
    for rate in args.get("upsample_rates_decoder", [8, 8, 2, 2]):
        channels, width = channels // 2, width * rate
        widest = max(widest, channels * width)
    return ModelSpec(kind="vits", name=folder.name, param_count=count, dtype_bytes=4,
                     hidden=args.get("hidden_channels", 192), decoder_elements_per_frame=widest,
                     frames_per_s=audio.get("sample_rate", 22050) / audio.get("hop_length", 256))


CTRANSLATE2_WORKSPACE = 256 * 2**20


def spec_from_ctranslate2(folder: Path) -> ModelSpec:
    """CTranslate2 allocates through its own allocator, outside PyTorch's: its weights as stored
    (float16 Whisper conversions stay float16 on the GPU) plus a workspace for one window."""
    weights = (folder / "model.bin").stat().st_size
    return ModelSpec(kind="external", name=folder.name, param_count=0, dtype_bytes=1,
                     external_bytes=weights + CTRANSLATE2_WORKSPACE)
