"""VRAM arithmetic: the bytes a model stage needs on its device, from shapes alone.

A stage's need = weights + caches + the largest transient activations, for the actual input
(prompt and reply tokens, audio windows). Nothing is loaded: ModelSpec comes from config files or
weight-file headers (model_specs.py). Formulas assume PyTorch SDPA attention (no seq x seq score
matrix), transformers' generate (logits for the last position only, DynamicCache), batch-major
activations, and were checked against torch.cuda.max_memory_allocated on an H200 (bench/vram.py).
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 2**30
MIB = 2**20
ALLOCATOR_ROUND = 512  # the caching allocator rounds every block up to 512 bytes
# < 1 MB allocations live in 2 MiB segments of their own pool. 64 MiB fell 12 MiB short for
# whisper-large-v3 decoding 8 windows at once on an H200 (5 new segments): 128 MiB leaves room.
SMALL_POOL_HEADROOM = 128 * MIB
CUDA_CONTEXT_BYTES = 600 * MIB  # driver context + kernels, outside the allocator (seen: 500-560 MiB on H200)


@dataclass(frozen=True)
class ModelSpec:
    """Shapes that decide memory. kind: 'causal-lm', 'whisper', 'vits' or 'external' (not torch-allocated)."""

    kind: str
    name: str
    param_count: int
    dtype_bytes: int
    layers: int = 0
    hidden: int = 0
    heads: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    intermediate: int = 0
    vocab: int = 0
    decoder_layers: int = 0  # whisper
    alignment_heads: int = 0  # openai-whisper: cross-attention heads that time words
    source_positions: int = 1500  # whisper encoder positions per 30 s window
    mel_bins: int = 80
    external_bytes: int = 0  # for 'external' engines: measured or declared device bytes
    stored_dtype_bytes: int = 0  # weights kept in another dtype than the compute runs in (0: the same)
    quant_bits: int = 0  # causal-lm: linear layers quantized to 4 or 8 bits by bitsandbytes (0: not)
    buffer_bytes: int = 0  # registered buffers (masks, rotary tables) that live beside the weights
    tied_embeddings: bool = False  # the output head shares the input embedding's weights
    decoder_elements_per_frame: int = 0  # vits: the widest waveform-decoder level, channels x upsampling
    frames_per_s: float = 0.0  # vits: spectrogram frames per second of speech (sample rate / hop)

    @property
    def weight_bytes(self) -> int:
        if self.quant_bits:
            # bitsandbytes quantizes the linear layers; the embedding and the output head stay in
            # the compute dtype. 4-bit adds a float32 scale per block of 64 weights (1/8 more).
            embeddings = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
            per_weight = self.quant_bits / 8 * (1.125 if self.quant_bits == 4 else 1.0)
            linear = (self.param_count - embeddings) * per_weight
            return int(linear) + embeddings * self.dtype_bytes + self.buffer_bytes
        return self.param_count * (self.stored_dtype_bytes or self.dtype_bytes) + self.buffer_bytes


@dataclass(frozen=True)
class Workload:
    prompt_tokens: int = 0
    new_tokens: int = 0
    windows: int = 0  # 30 s audio windows
    batch: int = 1  # sequences (LLM) or windows (whisper) run together
    built_from_config: bool = False  # random init (benchmarks) rather than loaded from weight files
    speech_s: float = 0.0  # vits: seconds of speech synthesized in one piece
    word_timing: bool = False  # openai-whisper: a second pass keeps every cross-attention map


@dataclass(frozen=True)
class StagePlan:
    stage: str
    device: str
    model: str
    weights_bytes: int
    cache_bytes: int
    activation_bytes: int
    torch_allocated: bool = True  # False: the engine allocates outside PyTorch's caching allocator
    detail: str = ""

    @property
    def peak_bytes(self) -> int:
        return self.weights_bytes + self.cache_bytes + self.activation_bytes


def _round(n: float) -> int:
    return int(-(-int(n) // ALLOCATOR_ROUND) * ALLOCATOR_ROUND)


def kv_cache_bytes(spec: ModelSpec, tokens: int, batch: int = 1) -> int:
    """K and V for every layer and token; DynamicCache's concatenation briefly holds one more layer."""
    per_layer = 2 * batch * spec.kv_heads * spec.head_dim * tokens * spec.dtype_bytes
    return _round(per_layer * spec.layers + per_layer // 2)


def causal_lm_plan(spec: ModelSpec, work: Workload, stage: str, device: str) -> StagePlan:
    b, p, dt = work.batch, max(work.prompt_tokens, 1), spec.dtype_bytes
    total_tokens = p + work.new_tokens
    cache = kv_cache_bytes(spec, total_tokens, b)
    # Prefill is the activation peak: gate, up and act(gate)*up of the MLP live together, next to
    # the residual stream, the normed input and SDPA's q/k/v/out (k, v repeated to all heads).
    mlp = 3 * b * p * spec.intermediate * dt
    stream = 4 * b * p * spec.hidden * dt
    attention = 2 * b * p * spec.heads * spec.head_dim * dt
    # Logits for the last position, upcast to float32, with the sampler's copy.
    logits = 3 * b * spec.vocab * 4
    run = cache + mlp + stream + attention + logits
    # Built from a config, a tied head is first its own tensor, dropped when tied: that transient
    # can be the peak (seen on an H200, GPT-2 style). Loading from files ties before allocating.
    building = spec.vocab * spec.hidden * dt if spec.tied_embeddings and work.built_from_config else 0
    # Quantized layers are dequantized to the compute dtype one at a time: the largest, an MLP matrix.
    dequantized = spec.intermediate * spec.hidden * dt if spec.quant_bits else 0
    activations = _round(max(run, building) - cache + dequantized)
    return StagePlan(stage, device, spec.name, _round(spec.weight_bytes), cache, activations,
                     detail=f"{p}+{work.new_tokens} tokens x{b}" + (f", {spec.quant_bits}-bit" if spec.quant_bits else ""))


def whisper_plan(spec: ModelSpec, work: Workload, stage: str, device: str) -> StagePlan:
    b, dt, pos, d = max(min(work.windows, work.batch), 1), spec.dtype_bytes, spec.source_positions, spec.hidden
    tokens = work.new_tokens + 4  # the decoder prompt: start, language, task, no-timestamps
    encoder_out = b * pos * d * dt
    # Encoding, then decoding: the two peaks do not overlap. Encoder: the first convolution's
    # output over 2 x pos frames (and its GELU), or an MLP block (fc1 output and its GELU) beside
    # the residual stream. Decoder: cross-attention K/V of the encoder output for every layer,
    # the self-attention cache, and float32 logits with the argmax's copy.
    conv = 2 * b * d * (2 * pos) * dt + b * spec.mel_bins * 2 * pos * dt
    mlp = b * pos * (2 * spec.intermediate + 6 * d) * dt
    encoding = max(conv, mlp)
    cross_kv = 2 * b * pos * d * dt * spec.decoder_layers
    self_kv = 2 * b * tokens * d * dt * spec.decoder_layers
    logits = 3 * b * spec.vocab * 4 + b * 4 * spec.vocab * dt
    decoding = cross_kv + self_kv
    # openai-whisper's word timing re-runs a window without SDPA and keeps every decoder layer's
    # float32 cross-attention map; then the alignment heads' maps are stacked, scaled and
    # normalised, three copies at a time, beside the float32 logits and their softmax.
    maps = 4 * tokens * pos
    timing = (maps * spec.decoder_layers * spec.heads + 3 * maps * spec.alignment_heads
              + 2 * tokens * spec.vocab * 4) if work.word_timing else 0
    if timing > max(decoding + logits, encoding):
        cache, activations = _round(encoder_out), _round(timing)
    elif decoding + logits > encoding:  # the decoder's peak is the stage's peak
        cache, activations = _round(encoder_out + decoding), _round(logits)
    else:
        cache, activations = _round(encoder_out), _round(encoding)
    return StagePlan(stage, device, spec.name, _round(spec.weight_bytes), cache, activations,
                     detail=f"{work.windows} windows, batch {b}, {work.new_tokens} tokens")


# The HiFi-GAN decoder's widest level holds its input, the running sum over residual blocks and a
# residual block's intermediates at once: about this many tensors of that level's size.
VITS_DECODER_TENSORS = 6
# What a segment costs whatever its length (convolution workspaces, the text encoder's and the
# duration predictor's passes): about 20 MiB on an H200 (54 and 300 characters), 24 with margin.
VITS_FIXED_BYTES = 24 * MIB


def vits_plan(spec: ModelSpec, work: Workload, stage: str, device: str) -> StagePlan:
    frames = work.speech_s * spec.frames_per_s
    activations = VITS_DECODER_TENSORS * spec.decoder_elements_per_frame * frames * spec.dtype_bytes
    # Text encoder, flow and the alignment path work on hidden x frames: small beside the decoder.
    latent = 8 * spec.hidden * frames * spec.dtype_bytes
    return StagePlan(stage, device, spec.name, _round(spec.weight_bytes), 0,
                     _round(activations + latent + VITS_FIXED_BYTES), detail=f"{work.speech_s:.0f} s of speech in one piece")


def external_plan(spec: ModelSpec, stage: str, device: str) -> StagePlan:
    return StagePlan(stage, device, spec.name, spec.external_bytes, 0, 0, torch_allocated=False,
                     detail="allocates outside PyTorch")


def plan_stage(spec: ModelSpec, work: Workload, stage: str, device: str) -> StagePlan:
    if spec.kind == "causal-lm":
        return causal_lm_plan(spec, work, stage, device)
    if spec.kind == "whisper":
        return whisper_plan(spec, work, stage, device)
    if spec.kind == "vits":
        return vits_plan(spec, work, stage, device)
    if spec.kind == "external":
        return external_plan(spec, stage, device)
    raise ValueError(f"no VRAM formula for model kind {spec.kind!r}")


def reservation_bytes(plans: list[StagePlan], margin: float = 0.03) -> int:
    """One reservation per device: the largest torch stage plus a small margin and the small pool."""
    torch_peaks = [p.peak_bytes for p in plans if p.torch_allocated]
    if not torch_peaks:
        return 0
    return _round(max(torch_peaks) * (1 + margin)) + SMALL_POOL_HEADROOM
