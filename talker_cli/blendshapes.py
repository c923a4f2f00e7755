"""Viseme track -> per-frame ARKit blendshape weights, plus idle blinks and brow accents.

Each viseme has a target pose; the target signal is smoothed with a zero-phase one-pole filter
(forward and backward), which gives both release and anticipation, then sampled at frame centres.
Before the first sound and after the last the mouth rests (speech_envelope), and lip closures (PP)
are forced closed so they are never smoothed away.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .artifacts import BlendshapeTrack, VisemeSegment
from .config import RenderConfig, VisemeConfig

NAMES = (
    "jawOpen", "mouthClose", "mouthFunnel", "mouthPucker", "mouthSmileLeft", "mouthSmileRight",
    "mouthStretchLeft", "mouthStretchRight", "mouthLowerDownLeft", "mouthLowerDownRight",
    "mouthUpperUpLeft", "mouthUpperUpRight", "browInnerUp", "eyeBlinkLeft", "eyeBlinkRight",
)
INDEX = {name: i for i, name in enumerate(NAMES)}


def _pose(jaw=0.0, close=0.0, funnel=0.0, pucker=0.0, smile=0.0, stretch=0.0, lower=0.0, upper=0.0):
    v = np.zeros(len(NAMES), dtype=np.float32)
    for names, value in (
        (("jawOpen",), jaw), (("mouthClose",), close), (("mouthFunnel",), funnel),
        (("mouthPucker",), pucker), (("mouthSmileLeft", "mouthSmileRight"), smile),
        (("mouthStretchLeft", "mouthStretchRight"), stretch),
        (("mouthLowerDownLeft", "mouthLowerDownRight"), lower),
        (("mouthUpperUpLeft", "mouthUpperUpRight"), upper),
    ):
        for name in names:
            v[INDEX[name]] = value
    return v


VISEME_POSES = {
    "sil": _pose(),
    "PP": _pose(jaw=0.04, close=1.0, pucker=0.1),
    "FF": _pose(jaw=0.1, close=0.4, upper=0.35, stretch=0.1),
    "TH": _pose(jaw=0.22, stretch=0.1, lower=0.1),
    "DD": _pose(jaw=0.25, stretch=0.15, lower=0.1),
    "kk": _pose(jaw=0.3, stretch=0.1, lower=0.1),
    "CH": _pose(jaw=0.15, funnel=0.55, pucker=0.2, upper=0.2),
    "SS": _pose(jaw=0.1, stretch=0.35, smile=0.15, upper=0.15),
    "nn": _pose(jaw=0.2, stretch=0.1),
    "RR": _pose(jaw=0.2, pucker=0.4, funnel=0.3),
    "aa": _pose(jaw=0.7, lower=0.3, upper=0.1),
    "E": _pose(jaw=0.45, stretch=0.35, smile=0.2, lower=0.2),
    "I": _pose(jaw=0.25, stretch=0.3, smile=0.35, upper=0.1),
    "O": _pose(jaw=0.5, funnel=0.6, pucker=0.3),
    "U": _pose(jaw=0.2, pucker=0.8, funnel=0.4),
}
_SIGNAL_HZ = 400  # fine time grid before sampling at frames


def frame_count(duration_s: float, fps: int) -> int:
    return max(1, int(round(duration_s * fps)))


def _zero_phase_smooth(signal: np.ndarray, tau_s: float, rate_hz: float) -> np.ndarray:
    """A one-pole low-pass run forward then backward: symmetric, no lag, no overshoot. The two passes
    together are one convolution with the kernel a^|k| (normalised), done here by FFT one channel at
    a time, with the signal's edge values held beyond its ends (each pass starting in its steady
    state). numpy alone: scipy.signal costs over a second to import."""
    if tau_s <= 0:
        return signal
    a = np.exp(-1.0 / (tau_s * rate_hz))
    reach = int(np.ceil(12 * tau_s * rate_hz))  # a^reach < 1e-5: the kernel ends there
    kernel = a ** np.abs(np.arange(-reach, reach + 1))
    kernel /= kernel.sum()
    padded = np.pad(signal, ((reach, reach), (0, 0)), mode="edge")
    size = 1 << int(np.ceil(np.log2(len(padded) + len(kernel) - 1)))
    spectrum = np.fft.rfft(kernel, size)
    out = np.empty_like(signal)
    for channel in range(signal.shape[1]):  # one channel at a time keeps an hour's spectrum small
        full = np.fft.irfft(np.fft.rfft(padded[:, channel], size) * spectrum, size)
        out[:, channel] = full[2 * reach:2 * reach + len(signal)]
    return out


def speech_envelope(segments: Sequence[VisemeSegment], n_fine: int, lead_s: float, release_s: float) -> np.ndarray:
    """1 while the face speaks, 0 at rest: the mouth may start moving at most lead_s before the
    first sound and is relaxed within release_s (one frame) after the last, however slow the
    transitions are."""
    t = np.arange(n_fine) / _SIGNAL_HZ
    spoken = [s for s in segments if s.viseme != "sil"]
    if not spoken:
        return np.zeros(n_fine, dtype=np.float32)
    first, last = spoken[0].start_s, spoken[-1].end_s
    envelope = np.clip(1.0 - (t - last) / release_s, 0.0, 1.0).astype(np.float32)
    envelope[t < first - lead_s] = 0.0
    return envelope


def mouth_weights(segments: Sequence[VisemeSegment], duration_s: float, fps: int,
                  config: VisemeConfig) -> np.ndarray:
    n_frames = frame_count(duration_s, fps)
    n_fine = int(np.ceil(n_frames / fps * _SIGNAL_HZ)) + 1
    target = np.zeros((n_fine, len(NAMES)), dtype=np.float32)  # an hour is 1.4 M rows: keep them small
    for seg in segments:
        a = int(round(seg.start_s * _SIGNAL_HZ))
        b = int(round(seg.end_s * _SIGNAL_HZ))
        target[max(a, 0):max(b, 0)] = VISEME_POSES[seg.viseme]
    smooth = _zero_phase_smooth(target, config.smoothing_s, _SIGNAL_HZ)
    smooth *= speech_envelope(segments, n_fine, config.anticipation_s, 1.0 / fps)[:, None]
    centres = ((np.arange(n_frames) + 0.5) / fps * _SIGNAL_HZ).astype(int).clip(0, n_fine - 1)
    weights = smooth[centres].astype(np.float32)
    for seg in segments:  # closures must be seen, however short
        if seg.viseme != "PP":
            continue
        first = int(np.floor(seg.start_s * fps))
        last = max(first, int(np.ceil(seg.end_s * fps)) - 1)
        frames = slice(max(first, 0), min(last + 1, n_frames))
        weights[frames, INDEX["mouthClose"]] = np.maximum(weights[frames, INDEX["mouthClose"]], 0.9)
        weights[frames, INDEX["jawOpen"]] = np.minimum(weights[frames, INDEX["jawOpen"]], 0.08)
    return weights


def blink_times(duration_s: float, interval_s: float, rng: np.random.Generator) -> list[float]:
    """Blink onsets: the first within ~1 s, then every interval_s on average (0.5x..1.5x)."""
    if interval_s <= 0:
        return []
    times, t = [], float(rng.uniform(0.6, 1.4))
    while t < duration_s - 0.3:
        times.append(t)
        t += float(rng.uniform(0.5, 1.5) * interval_s)
    return times


def _blink_curve(t: np.ndarray, onset: float) -> np.ndarray:
    """Close in 0.08 s, hold 0.04 s, open in 0.14 s."""
    x = t - onset
    closing = np.clip(x / 0.08, 0, 1)
    opening = np.clip(1 - (x - 0.12) / 0.14, 0, 1)
    return np.where(x < 0, 0.0, np.where(x < 0.12, closing, opening))


def brow_accents(segments: Sequence[VisemeSegment], fps: int, n_frames: int) -> np.ndarray:
    """A slight inner-brow raise as speech resumes after a rest of 0.3 s or more."""
    t = (np.arange(n_frames) + 0.5) / fps
    brow = np.zeros(n_frames, dtype=np.float32)
    rest_start = 0.0
    for i, seg in enumerate(segments):
        if seg.viseme == "sil":
            rest_start = seg.start_s
            continue
        if i > 0 and segments[i - 1].viseme == "sil" and seg.start_s - rest_start >= 0.3:
            bump = np.exp(-0.5 * ((t - seg.start_s - 0.15) / 0.18) ** 2) * 0.35
            brow = np.maximum(brow, bump.astype(np.float32))
    return brow


def blendshape_track(segments: Sequence[VisemeSegment], duration_s: float,
                     visemes: VisemeConfig, render: RenderConfig) -> BlendshapeTrack:
    fps = render.fps
    weights = mouth_weights(segments, duration_s, fps, visemes)
    n_frames = weights.shape[0]
    t = (np.arange(n_frames) + 0.5) / fps
    rng = np.random.default_rng(render.seed)
    blink = np.zeros(n_frames, dtype=np.float32)
    for onset in blink_times(duration_s, render.blink_interval_s, rng):
        blink = np.maximum(blink, _blink_curve(t, onset).astype(np.float32))
    weights[:, INDEX["eyeBlinkLeft"]] = blink
    weights[:, INDEX["eyeBlinkRight"]] = blink
    weights[:, INDEX["browInnerUp"]] = brow_accents(segments, fps, n_frames)
    return BlendshapeTrack(fps=fps, names=NAMES, weights=np.clip(weights, 0.0, 1.0))
