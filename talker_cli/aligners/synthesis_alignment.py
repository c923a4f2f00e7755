"""Alignment by synthesis: a recording timed against the same words spoken by a voice whose phone
timings are known (espeak-ng), for languages with no acoustic model here.

Both sounds become cepstra (MFCC without energy, with deltas, normalised per sound, so the speakers'
and channels' spectral colour cancels), joined by what Whisper's encoder says is said in each 20 ms
(whisper_frames.py), which is much the same in any voice; dynamic time warping finds the cheapest
monotone match of their frames, and every phone boundary of the synthesis is carried along that
match onto the recording. Voices differ, but the order and rough shape of their spectral changes
are the same, and that is what the warp follows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..artifacts import Phone, Word

if TYPE_CHECKING:
    from ..listening.whisper_frames import WhisperFrames

RATE = 16000
HOP_S = 0.005  # boundaries are placed to 5 ms
WINDOW_S = 0.025
_MELS = 40
_CEPSTRA = 13
_BLOCK = 512  # recording frames whose distances are computed at once
MAX_WARP_S = 30.0  # 6,000 x 6,000 frames: a table of 144 MB
# The encoder's part of a frame, against the cepstra's typical length: on 58 TIMIT utterances
# warped with espeak-ng's English, boundaries within 25 ms 0.577 (cepstra alone) -> 0.615 at 2,
# 0.610 at 4, 0.605 at 6.
SAID_WEIGHT = 2.0


def _mel_filters(n_fft: int) -> np.ndarray:
    mel = lambda hz: 2595.0 * np.log10(1.0 + hz / 700.0)  # noqa: E731
    hz = lambda m: 700.0 * (10.0 ** (m / 2595.0) - 1.0)  # noqa: E731
    edges = hz(np.linspace(mel(60.0), mel(7600.0), _MELS + 2))
    bins = np.fft.rfftfreq(n_fft, 1.0 / RATE)
    rising = (bins[None, :] - edges[:-2, None]) / (edges[1:-1] - edges[:-2])[:, None]
    falling = (edges[2:, None] - bins[None, :]) / (edges[2:] - edges[1:-1])[:, None]
    return np.maximum(0.0, np.minimum(rising, falling))


def cepstra(samples: np.ndarray) -> np.ndarray:
    """16 kHz samples -> one row per HOP_S frame: MFCC 1-12 and their deltas, each column's mean
    over the sound taken away (the voice's and the channel's colour)."""
    hop, window = int(HOP_S * RATE), int(WINDOW_S * RATE)
    n_fft = 512
    padded = np.concatenate([samples.astype(np.float32), np.zeros(window, np.float32)])
    count = max(1, (len(samples) + hop - 1) // hop)
    frames = np.lib.stride_tricks.sliding_window_view(padded, window)[::hop][:count]
    frames = (frames - frames.mean(axis=1, keepdims=True)) * np.hanning(window).astype(np.float32)
    power = np.abs(np.fft.rfft(frames, n_fft)) ** 2
    log_mel = np.log(power @ _mel_filters(n_fft).T + 1e-8)
    k = np.arange(_MELS)
    dct = np.cos(np.pi / _MELS * (k[None, :] + 0.5) * np.arange(1, _CEPSTRA)[:, None])
    ceps = log_mel @ dct.T
    deltas = np.gradient(ceps, axis=0) if len(ceps) > 1 else np.zeros_like(ceps)
    features = np.hstack([ceps, deltas])
    # The mean only: scaling each column to unit variance cost 9 points of boundaries on real speech
    return features - features.mean(axis=0)


def features(samples: np.ndarray, said: WhisperFrames | None = None) -> np.ndarray:
    """The warp's frames of a sound: its cepstra, and beside them the encoder's description of the
    moment each frame is in, scaled to SAID_WEIGHT times the cepstra's typical length."""
    ceps = cepstra(samples)
    if said is None:
        return ceps
    from ..listening.whisper_frames import FRAME_S

    described = said(samples)
    moment = np.clip(((np.arange(len(ceps)) * HOP_S + WINDOW_S / 2) / FRAME_S).astype(int), 0, len(described) - 1)
    scale = np.sqrt((ceps ** 2).sum(axis=1).mean())
    return np.hstack([ceps, (SAID_WEIGHT * scale * described[moment]).astype(ceps.dtype)])


def warp(recording: np.ndarray, synthesis: np.ndarray) -> np.ndarray:
    """The cheapest monotone match of the two frame sequences, as (recording row, synthesis row)
    pairs from (0, 0) to the last of each. Steps: both advance, or either alone (a sound held
    longer by one voice). Row by row: the step along a row is a running minimum, so each row is a
    few numpy passes and only the n x m table of totals is kept."""
    n, m = len(recording), len(synthesis)
    synthesis_norms = (synthesis ** 2).sum(1)

    def distances(rows: np.ndarray) -> np.ndarray:  # Euclidean, without an n x m x d temporary
        return np.sqrt(np.maximum((rows ** 2).sum(1)[:, None] + synthesis_norms[None, :] - 2.0 * rows @ synthesis.T, 0.0))

    total = np.empty((n, m), np.float32)  # the cheapest cost of reaching each pair
    cost = distances(recording[:_BLOCK])
    total[0] = np.cumsum(cost[0])  # the first row: synthesis advances alone
    for i in range(1, n):
        if i % _BLOCK == 0:
            cost = distances(recording[i:i + _BLOCK])
        here, above = cost[i % _BLOCK], total[i - 1]
        entry = here + np.minimum(np.concatenate([[np.inf], above[:-1]]), above)  # from the row above
        along = np.cumsum(here)  # D[i, j] = min over k <= j of entry[k] + here[k+1..j]
        total[i] = along + np.minimum.accumulate(entry - along)
    path = [(n - 1, m - 1)]
    i, j = n - 1, m - 1
    while i or j:  # back along the cheapest predecessors: each step's own cost is the same cell's
        options = [(total[i - 1, j - 1], i - 1, j - 1)] if i and j else []
        options += [(total[i - 1, j], i - 1, j)] if i else []
        options += [(total[i, j - 1], i, j - 1)] if j else []
        _, i, j = min(options)
        path.append((i, j))
    return np.array(path[::-1])


def carry_times(path: np.ndarray, times_s: np.ndarray) -> np.ndarray:
    """Times in the synthesis -> times in the recording, along the match. Where the synthesis moves
    from frame c-1 to frame c, the recording moves between the last frame matched to c-1 and the
    first matched to c: the change lies halfway between them (frame centres, WINDOW_S/2 in)."""
    columns, first = np.unique(path[:, 1], return_index=True)
    last = np.r_[first[1:], len(path)] - 1
    knots_x = np.r_[-0.5, columns[1:] - 0.5, columns[-1] + 0.5]
    knots_y = np.r_[-0.5, (path[last[:-1], 0] + path[first[1:], 0]) / 2.0, path[-1, 0] + 0.5]
    centre = WINDOW_S / 2
    return np.interp((np.asarray(times_s) - centre) / HOP_S, knots_x, knots_y) * HOP_S + centre


def align_to_synthesis(samples: np.ndarray, voice_samples: np.ndarray, phones: tuple[Phone, ...],
                       words: tuple[Word, ...], offset_s: float,
                       said: WhisperFrames | None = None) -> tuple[list[Phone], list[Word]]:
    """The synthesis's phones and words timed on the recording (both at RATE), offset_s added;
    `said` adds the encoder's description to the frames matched."""
    path = warp(features(samples, said), features(voice_samples, said))
    duration = len(samples) / RATE

    def moved(items, make):
        edges = carry_times(path, np.array([[x.start_s, x.end_s] for x in items]).reshape(-1)) if items else []
        edges = np.clip(np.asarray(edges), 0.0, duration).reshape(-1, 2) + offset_s
        return [make(x, float(a), float(b)) for x, (a, b) in zip(items, edges) if b > a]

    return (moved(phones, lambda p, a, b: Phone(p.label, a, b)),
            moved(words, lambda w, a, b: Word(w.text, a, b)))
