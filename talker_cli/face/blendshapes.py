"""Viseme track -> per-frame ARKit blendshape weights, head rotation, emotions, blinks and brow accents.

Each viseme has a target pose and a dominance; the poses are blended by co-articulation (each shape
reaching ahead of its sound and lingering after it, the dominant ones holding against their
neighbours), then sampled at frame centres.
Before the first sound and after the last the mouth rests (speech_envelope), and lip closures (PP)
are forced closed last, so neither smoothing, emotions nor the mouth scale can open them.
The track carries all 52 ARKit shapes (zeros where talker does not animate) and the head's
rotation, so the same track drives the video and a 3D character.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..artifacts import BlendshapeTrack, VisemeSegment
from .emotions import EMOTIONS, emotion_weights

if TYPE_CHECKING:  # the settings are read, not built, here
    from ..config import RenderConfig, VisemeConfig

# Apple's ARKit order, as Live Link Face records it.
NAMES = (
    "eyeBlinkLeft", "eyeLookDownLeft", "eyeLookInLeft", "eyeLookOutLeft", "eyeLookUpLeft", "eyeSquintLeft",
    "eyeWideLeft", "eyeBlinkRight", "eyeLookDownRight", "eyeLookInRight", "eyeLookOutRight", "eyeLookUpRight",
    "eyeSquintRight", "eyeWideRight", "jawForward", "jawLeft", "jawRight", "jawOpen", "mouthClose",
    "mouthFunnel", "mouthPucker", "mouthLeft", "mouthRight", "mouthSmileLeft", "mouthSmileRight",
    "mouthFrownLeft", "mouthFrownRight", "mouthDimpleLeft", "mouthDimpleRight", "mouthStretchLeft",
    "mouthStretchRight", "mouthRollLower", "mouthRollUpper", "mouthShrugLower", "mouthShrugUpper",
    "mouthPressLeft", "mouthPressRight", "mouthLowerDownLeft", "mouthLowerDownRight", "mouthUpperUpLeft",
    "mouthUpperUpRight", "browDownLeft", "browDownRight", "browInnerUp", "browOuterUpLeft", "browOuterUpRight",
    "cheekPuff", "cheekSquintLeft", "cheekSquintRight", "noseSneerLeft", "noseSneerRight", "tongueOut",
)
INDEX = {name: i for i, name in enumerate(NAMES)}
# The shapes speech moves: only these are smoothed on the fine grid (an hour is 1.4 M rows).
MOUTH = tuple(INDEX[n] for n in (
    "jawOpen", "mouthClose", "mouthFunnel", "mouthPucker", "mouthSmileLeft", "mouthSmileRight", "mouthStretchLeft",
    "mouthStretchRight", "mouthLowerDownLeft", "mouthLowerDownRight", "mouthUpperUpLeft", "mouthUpperUpRight",
    "tongueOut"))
HEAD_AXES = ("yaw", "pitch", "roll")  # degrees; yaw turns the face to the image's right, pitch nods down


# What the track's mouth weights mean in the face (the renderer draws exactly this, face/frames.py):
# the inner lips part by JAW_OPENING eye-corner distances at jawOpen 1 (mouthClose 0), and the lower
# lip's drop and the upper lip's raise add theirs. Eye-corner distances are FaceMesh's 33-263, the
# unit bench/mouth.py measures real mouths in; a wide-open human mouth is about half of one.
JAW_OPENING = 0.35
LOWER_LIP_DROP = 0.04
UPPER_LIP_RAISE = 0.03
FUNNEL_OPENING = 0.04  # the lips flaring apart


def _lips_part(lower, upper, funnel):
    """What the lips themselves add to the opening (eye-corner distances), the jaw aside."""
    return LOWER_LIP_DROP * lower + UPPER_LIP_RAISE * upper + FUNNEL_OPENING * funnel


def lip_opening(jaw, close, lower=0.0, upper=0.0, funnel=0.0):
    """The inner lips' opening at the mouth's centre, in eye-corner distances, that these weights ask
    for (numbers, or arrays of them frame by frame)."""
    return np.maximum(JAW_OPENING * jaw * (1.0 - close) + _lips_part(lower, upper, funnel), 0.0)


def track_opening(track: BlendshapeTrack) -> np.ndarray:
    """lip_opening of every frame of a track."""
    w = track.weights
    both = lambda name: 0.5 * (w[:, INDEX[f"{name}Left"]] + w[:, INDEX[f"{name}Right"]])  # noqa: E731
    return lip_opening(w[:, INDEX["jawOpen"]], w[:, INDEX["mouthClose"]], both("mouthLowerDown"),
                       both("mouthUpperUp"), w[:, INDEX["mouthFunnel"]])


def _pose(opening=0.0, close=0.0, funnel=0.0, pucker=0.0, smile=0.0, stretch=0.0, lower=0.0, upper=0.0, tongue=0.0):
    """A mouth pose from the lip opening it shows (eye-corner distances): the jaw supplies what the lips
    do not."""
    jaw = max(opening - _lips_part(lower, upper, funnel), 0.0) / JAW_OPENING
    v = np.zeros(len(NAMES), dtype=np.float32)
    for names, value in (
        (("jawOpen",), jaw), (("mouthClose",), close), (("mouthFunnel",), funnel),
        (("mouthPucker",), pucker), (("mouthSmileLeft", "mouthSmileRight"), smile),
        (("mouthStretchLeft", "mouthStretchRight"), stretch),
        (("mouthLowerDownLeft", "mouthLowerDownRight"), lower),
        (("mouthUpperUpLeft", "mouthUpperUpRight"), upper), (("tongueOut",), tongue),
    ):
        for name in names:
            v[INDEX[name]] = value
    return v


def _both(**values: float) -> np.ndarray:
    """A pose from names without their side: browDown=0.7 sets browDownLeft and browDownRight."""
    v = np.zeros(len(NAMES), dtype=np.float32)
    for name, value in values.items():
        for full in (name, f"{name}Left", f"{name}Right"):
            if full in INDEX:
                v[INDEX[full]] = value
    return v


# Each viseme's opening (eye-corner distances) and its dominance, how strongly it holds its shape
# against its neighbours (Cohen and Massaro's co-articulation model): lip closures, lip-teeth contact
# and vowels dominate; the tongue's consonants (T, D, N, L, S, K) and short pauses take the jaw of the
# sounds around them. Fitted to filmed speakers' inner-lip openings frame by frame (bench/mouth.py: 40
# GRID clips of one speaker and 3 clips of natural speech, the fit drawn towards a phonetic table and
# checked on clips it was not fitted on); the rounded shapes (U, O, R) are set lower than the fit, as a
# puckered mouth reads wider open than it is asked to (FaceMesh on the frame, as on the filmed
# speaker); R and W hold their nearly shut, rounded lips as firmly as a closure (the filmed speaker's
# lips are shut in half of their frames, where a weaker R took its vowel's opening); F, V and TH leave
# the inner lips nearly touching (the lower lip under the upper teeth, or the tongue between them: the
# filmed lips read 0.006-0.03 there), so they are drawn nearly shut and hold it; MOUTH_GAIN undoes
# the fit's shrinkage towards the mean, so the mouth opens as far as the filmed one (with each photo's
# renderer calibrated to be seen opening as far as asked, face/calibration.py).
MOUTH_GAIN = 1.4
# Filmed speakers part their lips for breath before they speak: the mouth opens to about 0.1 eye
# distances some 0.2-0.3 s before the first sound after a rest (the anticipation, VisemeConfig), and
# stays parted through the pauses of fluent speech; an opening B, P or M closes it again
# (bench/mouth.py's clips). The breath yields to every sound's shape, so it shows only in the pause.
# The lips part slowly, over the breath's first BREATH_RISE_S (many filmed speakers are still shut
# 0.1-0.2 s before a first L or S), but at once before a B, P or M: there the lips open fully early
# and shut again some 0.08 s before the closure, or the breath never shows.
BREATH_RISE_S = 0.2
BREATH_RISE_BEFORE_CLOSURE_S = 0.08
BREATH_OPENING = 0.07
BREATH_DOMINANCE = 0.5
VISEME_SHAPES = {  # viseme: (opening, dominance, lips and tongue)
    "sil": (0.007, 0.02, {}),
    "PP": (0.0, 13.0, dict(close=1.0, pucker=0.1)),
    "FF": (0.0, 8.0, dict(close=0.3, upper=0.3, stretch=0.1)),  # lower lip under the upper teeth: no gap
    "TH": (0.015, 8.0, dict(stretch=0.1, tongue=0.35)),  # the tongue between the teeth, lips nearly shut
    "DD": (0.11, 0.44, dict(stretch=0.15, tongue=0.1)),  # the tongue's tip behind the upper teeth
    "kk": (0.115, 2.2, dict(stretch=0.1)),
    "CH": (0.105, 3.1, dict(funnel=0.55, pucker=0.2, upper=0.2)),
    "SS": (0.03, 0.2, dict(stretch=0.35, smile=0.15, upper=0.15)),
    "nn": (0.01, 0.46, dict(stretch=0.1, tongue=0.1)),
    "RR": (0.0, 20.0, dict(pucker=0.4, funnel=0.3)),  # an onset R: rounded lips, shut in the middle
    "aa": (0.145, 4.8, dict(lower=0.3, upper=0.1)),
    # E and I widen the mouth little: filmed mouths are 2-4% wider on E and -1-2% on I than over the
    # rest of their speech (GRID s1's 40 clips, three natural speakers; drawn with twice the stretch
    # and smile, talker's were 4-7% and 3-5%)
    "E": (0.115, 9.0, dict(stretch=0.2, smile=0.1, lower=0.2)),
    "I": (0.095, 8.7, dict(stretch=0.15, smile=0.15, upper=0.1)),
    "O": (0.05, 16.0, dict(funnel=0.6, pucker=0.3)),
    "U": (0.025, 14.0, dict(pucker=0.8, funnel=0.4)),
    "W": (0.01, 13.0, dict(pucker=0.6, funnel=0.2)),  # not a viseme: W's own pose inside U (visemes.PHONE_SHAPES)
    "ER": (0.05, 2.0, dict(pucker=0.3, funnel=0.2)),  # not a viseme: an r-coloured vowel's pose inside RR
    "AH": (0.10, 4.8, dict(lower=0.3, upper=0.1)),  # not a viseme: the mid-central vowel's pose inside aa
    "breath": (BREATH_OPENING, BREATH_DOMINANCE, {}),  # not a viseme: the lips parted in a pause (with_breaths)
}
VISEME_POSES = {v: _pose(opening * MOUTH_GAIN, **lips) for v, (opening, _, lips) in VISEME_SHAPES.items()}
DOMINANCE = {v: dominance for v, (_, dominance, _) in VISEME_SHAPES.items()}
# Brows, lids, cheeks and mouth corners of each emotion (Ekman's action units in ARKit's terms).
EMOTION_POSES = {
    "neutral": _both(),
    "happy": _both(mouthSmile=0.55, cheekSquint=0.5, eyeSquint=0.3, browInnerUp=0.1),
    "sad": _both(browInnerUp=1.0, mouthFrown=0.7, eyeSquint=0.15, mouthPress=0.2, eyeLookDown=0.2),
    "angry": _both(browDown=0.9, eyeSquint=0.4, noseSneer=0.4, mouthPress=0.35, mouthFrown=0.25),
    "surprised": _both(browInnerUp=0.9, browOuterUp=0.9, eyeWide=0.8, jawOpen=0.12),
}
_SIGNAL_HZ = 400  # fine time grid before sampling at frames


def frame_count(duration_s: float, fps: int) -> int:
    return max(1, int(round(duration_s * fps)))


def _coarticulate(signal: np.ndarray, lookahead_s: float, carryover_s: float, rate_hz: float) -> np.ndarray:
    """Each channel spread over time: ahead of itself with time constant lookahead_s (the lips shape
    before the sound) and after itself with carryover_s, by the kernel exp(-k/lookahead) for the
    samples ahead and exp(k/carryover) for those behind (normalised), with the signal's edge values
    held beyond its ends. By FFT, one channel at a time so an hour's spectrum stays small; numpy
    alone, as scipy.signal costs over a second to import."""
    if lookahead_s <= 0 and carryover_s <= 0:
        return signal
    reach = int(np.ceil(12 * max(lookahead_s, carryover_s) * rate_hz))  # e^-12 < 1e-5: the kernel ends there
    offset = np.arange(-reach, reach + 1)  # sample t takes signal[t + offset]
    ahead = np.exp(-offset / (lookahead_s * rate_hz)) if lookahead_s > 0 else (offset == 0).astype(float)
    behind = np.exp(offset / (carryover_s * rate_hz)) if carryover_s > 0 else (offset == 0).astype(float)
    weights = np.where(offset > 0, ahead, np.where(offset < 0, behind, 1.0))
    weights /= weights.sum()
    padded = np.pad(signal, ((reach, reach), (0, 0)), mode="edge")
    size = 1 << int(np.ceil(np.log2(len(padded) + len(weights) - 1)))
    spectrum = np.fft.rfft(weights[::-1], size)  # a correlation is a convolution with the kernel reversed
    out = np.empty_like(signal)
    for channel in range(signal.shape[1]):
        full = np.fft.irfft(np.fft.rfft(padded[:, channel], size) * spectrum, size)
        out[:, channel] = full[2 * reach:2 * reach + len(signal)]
    return out


# Filmed speakers' mouths are shut about 0.08 s (median) before the aligned end of their last sound,
# which fades out through nearly closed lips (bench/mouth.py's clips).
SETTLE_S = 0.1


def with_breaths(segments: Sequence[VisemeSegment], breath_s: float) -> list[VisemeSegment]:
    """The last breath_s of every pause before a sound (all of a shorter pause) becomes a breath
    (none when breath_s is 0: a mouth that must not move before the sound)."""
    if breath_s <= 0:
        return list(segments)
    out: list[VisemeSegment] = []
    for seg, following in zip(segments, [*segments[1:], None]):
        if seg.viseme != "sil" or following is None or following.viseme == "sil":
            out.append(seg)
            continue
        breath_from = max(seg.start_s, seg.end_s - breath_s)
        if breath_from > seg.start_s:
            out.append(VisemeSegment("sil", seg.start_s, breath_from))
        out.append(VisemeSegment("breath", breath_from, seg.end_s))
    return out


def speech_envelope(segments: Sequence[VisemeSegment], n_fine: int, lead_s: float, release_s: float) -> np.ndarray:
    """1 while the face speaks, 0 at rest: the mouth leaves its rest over the lead_s before the first
    sound (a smooth rise, no jump), or over the first BREATH_RISE_S of a breath before it (its first
    BREATH_RISE_BEFORE_CLOSURE_S before a lip closure); it closes
    over the last SETTLE_S of the last sound (no earlier than that sound's start) and is relaxed within
    release_s (one frame) after it, however slow the transitions are."""
    t = np.arange(n_fine) / _SIGNAL_HZ
    spoken = [s for s in segments if s.viseme != "sil"]
    if not spoken:
        return np.zeros(n_fine, dtype=np.float32)
    first, last = spoken[0].start_s, spoken[-1].end_s
    if spoken[0].viseme == "breath":  # the breath is the anticipation: the lips part at its start
        rise_s = BREATH_RISE_BEFORE_CLOSURE_S if len(spoken) > 1 and spoken[1].viseme == "PP" else BREATH_RISE_S
        lead_s = min(rise_s, spoken[0].end_s - spoken[0].start_s)
        first += lead_s
    settle_from = max(last - SETTLE_S, spoken[-1].start_s)
    envelope = np.clip(1.0 - (t - settle_from) / (last + release_s - settle_from), 0.0, 1.0)
    if lead_s > 0:  # the mouth leaves its rest smoothly over the lead, not with a jump at its start
        rise = np.clip((t - (first - lead_s)) / lead_s, 0.0, 1.0)
        envelope = np.minimum(envelope, rise * rise * (3 - 2 * rise))
    else:
        envelope[t < first] = 0.0
    return envelope.astype(np.float32)


def smoothed_targets(segments: Sequence[VisemeSegment], duration_s: float, fps: int, config: VisemeConfig,
                     poses: dict[str, np.ndarray], dominance: dict[str, float] | None = None) -> np.ndarray:
    """frames x len(pose) weights: the poses blended by co-articulation, at rest outside speech,
    sampled at frame centres. Where each viseme is (one channel per viseme) is spread over time
    (_coarticulate); at each instant the poses are averaged with those spreads times their dominance
    as weights, so a dominant shape (a closure, a vowel) holds while a weak one (T, S, a short pause)
    takes the shape of its neighbours. `poses` may be any per-viseme table (the ARKit mouth shapes,
    VRM's vowels)."""
    dominance = DOMINANCE if dominance is None else dominance
    segments = with_breaths(segments, config.anticipation_s)
    n_frames = frame_count(duration_s, fps)
    n_fine = int(np.ceil(n_frames / fps * _SIGNAL_HZ)) + 1
    names = sorted({seg.pose for seg in segments} | {"sil"}, key=list(poses).index)
    column = {name: i for i, name in enumerate(names)}
    where = np.zeros((n_fine, len(names)), dtype=np.float32)
    where[:, column["sil"]] = 1.0  # before, between and after the segments
    for seg in segments:
        a = max(int(round(seg.start_s * _SIGNAL_HZ)), 0)
        b = max(int(round(seg.end_s * _SIGNAL_HZ)), 0)
        where[a:b] = 0.0
        where[a:b, column[seg.pose]] = 1.0
    spread = _coarticulate(where, config.lookahead_s, config.smoothing_s, _SIGNAL_HZ)
    weight = np.clip(spread, 0.0, None) * np.array([dominance[name] for name in names], dtype=np.float32)
    blended = (weight @ np.stack([poses[name] for name in names])) / np.maximum(weight.sum(axis=1), 1e-12)[:, None]
    blended *= speech_envelope(segments, n_fine, config.anticipation_s, 1.0 / fps)[:, None]
    centres = ((np.arange(n_frames) + 0.5) / fps * _SIGNAL_HZ).astype(int).clip(0, n_fine - 1)
    return blended[centres].astype(np.float32)


def closure_frames(segments: Sequence[VisemeSegment], fps: int, n_frames: int) -> list[slice]:
    """The frames of each lip closure (PP), from the frame it starts in to the frame it ends in."""
    frames = []
    for seg in segments:
        if seg.viseme == "PP":
            first = int(np.floor(seg.start_s * fps))
            last = max(first, int(np.ceil(seg.end_s * fps)) - 1)
            frames.append(slice(max(first, 0), min(last + 1, n_frames)))
    return frames


def force_closures(weights: np.ndarray, segments: Sequence[VisemeSegment], fps: int) -> None:
    """Closures must be seen, however short: the lips shut and the jaw up on every closure frame."""
    close, jaw = INDEX["mouthClose"], INDEX["jawOpen"]
    for frames in closure_frames(segments, fps, weights.shape[0]):
        weights[frames, close] = np.maximum(weights[frames, close], 0.9)
        weights[frames, jaw] = np.minimum(weights[frames, jaw], 0.08)


def mouth_weights(segments: Sequence[VisemeSegment], duration_s: float, fps: int,
                  config: VisemeConfig) -> np.ndarray:
    """frames x 52: the mouth shapes of speech (every other shape 0), closures forced."""
    mouth_poses = {v: pose[list(MOUTH)] for v, pose in VISEME_POSES.items()}
    smooth = smoothed_targets(segments, duration_s, fps, config, mouth_poses)
    weights = np.zeros((smooth.shape[0], len(NAMES)), dtype=np.float32)
    weights[:, MOUTH] = smooth
    force_closures(weights, segments, fps)
    return weights


def head_track(n_frames: int, fps: int, amount: float, seed: int) -> np.ndarray:
    """Idle head motion, frames x (yaw, pitch, roll) in degrees: sums of slow incommensurate sines."""
    t = (np.arange(n_frames) + 0.5) / fps
    phases = np.random.default_rng(seed + 1).uniform(0, 2 * np.pi, 6)
    wave = lambda a, b, fa, fb: np.sin(2 * np.pi * fa * t + phases[a]) + 0.5 * np.sin(2 * np.pi * fb * t + phases[b])  # noqa: E731
    yaw = 1.375 * wave(2, 3, 0.07, 0.19)
    pitch = 0.917 * wave(4, 5, 0.09, 0.23)
    roll = 0.9 * np.sin(2 * np.pi * 0.11 * t + phases[0]) + 0.4 * np.sin(2 * np.pi * 0.27 * t + phases[1])
    return (amount * np.stack([yaw, pitch, roll], axis=1)).astype(np.float32)


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


def blendshape_track(segments: Sequence[VisemeSegment], duration_s: float, visemes: VisemeConfig,
                     render: RenderConfig, emotion_changes: Sequence[tuple[float, str]] = ()) -> BlendshapeTrack:
    """The whole face over time. emotion_changes: (time, emotion) from the script's tags; the job's
    emotion (render.emotion) holds before the first."""
    fps = render.fps
    weights = mouth_weights(segments, duration_s, fps, visemes)
    n_frames = weights.shape[0]
    speech = [i for i in MOUTH if NAMES[i] != "mouthClose"]
    weights[:, speech] *= render.mouth_open_scale  # larger or smaller speech; closures stay shut (below)
    emotions = emotion_weights(emotion_changes, render.emotion, n_frames, fps)
    weights += emotions @ np.stack([EMOTION_POSES[e] for e in EMOTIONS])
    t = (np.arange(n_frames) + 0.5) / fps
    rng = np.random.default_rng(render.seed)
    blink = np.zeros(n_frames, dtype=np.float32)
    interval = 60.0 / render.blink_rate if render.blink_rate > 0 else 0.0
    for onset in blink_times(duration_s, interval, rng):
        blink = np.maximum(blink, _blink_curve(t, onset).astype(np.float32))
    for side in ("Left", "Right"):
        weights[:, INDEX[f"eyeBlink{side}"]] = np.maximum(weights[:, INDEX[f"eyeBlink{side}"]], blink)
    brow = INDEX["browInnerUp"]
    weights[:, brow] = np.maximum(weights[:, brow], brow_accents(segments, fps, n_frames))
    weights = np.clip(weights, 0.0, 1.0)
    force_closures(weights, segments, fps)
    return BlendshapeTrack(fps=fps, names=NAMES, weights=weights,
                           head=head_track(n_frames, fps, render.head_motion, render.seed), emotions=emotions)
