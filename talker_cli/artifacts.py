"""What the stages hand each other: frozen records with units in their names.

Arrays live on the CPU; nothing from a model or a GPU crosses a stage boundary.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np


@dataclass(frozen=True, eq=False)
class FacePhoto:
    path: Path
    sha256: str
    image_rgb: np.ndarray  # H x W x 3 uint8, already at the render size
    landmarks_px: np.ndarray  # 478 x 2 float32, FaceMesh points in image_rgb pixels
    source_size: tuple[int, int]  # (width, height) of the file as read


@dataclass(frozen=True)
class Word:
    text: str
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Phone:
    label: str  # ARPAbet without stress digits, or "SIL"
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Transcript:
    text: str
    words: tuple[Word, ...]
    language: str
    no_speech_prob: float = 0.0  # Whisper's least doubt that a segment held speech (1.0: no segment)


@dataclass(frozen=True)
class Script:
    text: str  # as spoken: emotion tags removed
    origin: str  # "text", "transcript" or "reply"
    emotion_marks: tuple[tuple[int, str], ...] = ()  # (offset in text, emotion) of each [emotion] tag


@dataclass(frozen=True, eq=False)
class Speech:
    samples: np.ndarray  # mono float32 in [-1, 1]
    sample_rate: int
    origin: str  # "tts" or "recording"
    native_phones: tuple[Phone, ...] | None = None  # the TTS engine's own timings
    native_words: tuple[Word, ...] | None = None
    source_path: Path | None = None  # a recording is its own soundtrack, at its own quality
    voiced: bool | None = None  # a recording: whether the voice detector heard a voice (None: not asked)
    silenced: int = 0  # a recording: its samples that were not numbers (NaN, infinite), taken as silence

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate


@dataclass(frozen=True)
class AlignedSpan:
    start_s: float
    end_s: float
    source: str  # the path that timed this stretch of speech (forced, phone recognition, ...)


@dataclass(frozen=True)
class PhoneTrack:
    phones: tuple[Phone, ...]
    words: tuple[Word, ...]
    source: str  # which aligner produced it
    spans: tuple[AlignedSpan, ...] = ()  # recordings: which path served each stretch


@dataclass(frozen=True)
class VisemeSegment:
    viseme: str
    start_s: float
    end_s: float
    shape: str = ""  # the mouth's own pose where the sound's differs from its viseme's (W: the lips nearly shut)

    @property
    def pose(self) -> str:
        """The mouth pose drawn for this segment (face/blendshapes.py's table)."""
        return self.shape or self.viseme


@dataclass(frozen=True, eq=False)
class BlendshapeTrack:
    fps: int
    names: tuple[str, ...]
    weights: np.ndarray  # frames x len(names) float32 in [0, 1]
    head: np.ndarray | None = None  # frames x (yaw, pitch, roll) degrees; None: a still head
    emotions: np.ndarray | None = None  # frames x len(emotions.EMOTIONS), each row summing to 1

    @property
    def frame_count(self) -> int:
        return int(self.weights.shape[0])


@dataclass(frozen=True)
class Video:
    path: Path
    width: int
    height: int
    fps: int
    frame_count: int
    duration_s: float


@dataclass
class Artifacts:
    """A job's slots, one per thing a stage makes; each stage declares the slots it reads and the
    ones it fills (jobs/job.Stage.reads / writes), and the runner holds it to that."""

    photo: FacePhoto | None = None
    recording: Speech | None = None  # the user's recording, decoded
    heard: Transcript | None = None  # what the ASR heard in the recording
    transcript: Transcript | None = None  # the recording's words: what was heard, or the user's (--transcript)
    script: Script | None = None  # the words given: the text, or the recording's transcript
    prompt: str | None = None  # what a reply answers
    reply: Script | None = None  # the LLM's answer, said instead of the script
    speech: Speech | None = None  # synthesized speech
    phones: PhoneTrack | None = None
    visemes: tuple[VisemeSegment, ...] | None = None
    track: BlendshapeTrack | None = None  # the face over time
    emotion_changes: tuple[tuple[float, str], ...] | None = None  # (time, emotion) of the script's tags
    video: Video | None = None

    @property
    def spoken(self) -> Script | None:
        """The words the face says: the reply if there is one, else the script."""
        return self.reply or self.script

    @property
    def voice(self) -> Speech | None:
        """The sound the face moves to: synthesized speech if any, else the recording."""
        return self.speech or self.recording

    def filled(self) -> dict[str, int]:
        """Which slots hold what (by identity), to see what a stage changed."""
        return {f.name: id(getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) is not None}
