"""What is said at each moment of a sound, as Whisper's encoder describes it: one vector every 20 ms.

Cepstra describe a voice as much as what it says; the encoder of a multilingual recogniser was
trained to describe what is said in any voice, so a synthesis and a recording of the same words
look alike in it. The warp (synthesis_alignment) matches the two sounds on both. The model is the
multilingual Whisper base the ASR uses (whisper_models.multilingual_whisper), run on the CPU.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelMissingError

FRAME_S = 0.02  # one encoder frame per two 10 ms mel frames
_MEL_FRAMES = 3000  # the encoder's 30 s


class WhisperFrames:
    def __init__(self) -> None:
        self.model = None
        self.mel = None

    def load(self) -> None:
        try:
            import ctranslate2
            from faster_whisper.feature_extractor import FeatureExtractor
        except ImportError:
            raise ModelMissingError("faster-whisper is not installed; run: pip install faster-whisper") from None
        from .whisper_models import multilingual_whisper

        self.model = ctranslate2.models.Whisper(str(multilingual_whisper()), device="cpu", compute_type="int8")
        self.mel = FeatureExtractor(feature_size=80)

    def __call__(self, samples: np.ndarray) -> np.ndarray:
        """16 kHz samples -> one unit-length row per FRAME_S (row k describes k * FRAME_S onwards).
        The encoder is given the sound's own length (not padded to 30 s: 7x faster for a 6 s sound,
        and the warp matched as well), in pieces of at most 30 s."""
        import ctranslate2

        mel = self.mel(np.asarray(samples, dtype=np.float32), padding=0)
        rows = []
        for start in range(0, max(mel.shape[1], 1), _MEL_FRAMES):
            piece = mel[:, start:start + _MEL_FRAMES]
            even = max(2, piece.shape[1] + piece.shape[1] % 2)  # the encoder halves the frames
            piece = np.pad(piece, ((0, 0), (0, even - piece.shape[1])))
            encoded = self.model.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(piece[None])), to_cpu=True)
            rows.append(np.array(encoded)[0])
        said = np.concatenate(rows)
        return said / np.maximum(np.linalg.norm(said, axis=1, keepdims=True), 1e-9)

    def unload(self) -> None:
        self.model = None
        self.mel = None
