"""Is there speech in a recording? Music, tones or noise are refused as what they are instead of
animated.

Whisper hears words in sounds that hold none (a guitar's plucks came out as "Yay, yay, yay, yay.")
and the phone recognizer, the alignment chain's last path, finds phones in any sound, so neither can
tell alone. Silero VAD, the ONNX model that ships in the faster-whisper wheel (1.2 MB, offline),
gives each 32 ms frame a probability of voice. Measured (16 kHz): music, plucked strings, white noise
and mains hum reach at most 0.54 on one frame of 157; real speech (jfk.flac, TIMIT) passes 0.5 on
60-90% of its frames, also at 0 dB SNR in white noise, 45 dB quieter, or cut to telephone bandwidth;
of 501 TIMIT words cut out alone with 0.1 s around them, 3 had fewer than three frames over 0.5.
Under music 6 dB louder than the speech it heard one frame of 343, while Whisper still wrote the
words: so a recording is refused only when neither hears speech, the detector no voice and Whisper
no words, or only words it doubts were speech (the plucks: no-speech probability 0.85; speech under
that music 0.33-0.50).
"""

from __future__ import annotations

import logging
from typing import Callable

import numpy as np

from ..artifacts import Speech, Transcript
from ..errors import InputError

RATE = 16000
FRAME = 512  # samples per Silero frame at 16 kHz (32 ms)
VOICE = 0.5  # Silero's own speech threshold
MIN_VOICED_FRAMES = 3  # about 0.1 s of voice: a word
WHISPER_NO_SPEECH = 0.6  # Whisper's own threshold for a segment that holds no speech
CHUNK_FRAMES = 1875  # one minute per call, so an hour's recording is never copied whole

log = logging.getLogger(__name__)

Detector = Callable[[np.ndarray], np.ndarray]  # samples (a multiple of FRAME) -> one probability per frame


def silero_detector() -> Detector | None:
    """faster-whisper's Silero VAD, or None when that library is not installed."""
    try:
        from faster_whisper.vad import get_vad_model
    except ImportError:
        return None
    try:
        model = get_vad_model()
    except Exception as error:  # a damaged install: the check is a safeguard, not worth failing the job
        log.warning("the voice detector could not be loaded (%s: %s); the recording is not checked for a voice",
                    type(error).__name__, error)
        return None
    return lambda samples: np.asarray(model(samples)).reshape(-1)


def voiced_frames(samples: np.ndarray, detector: Detector, enough: int = MIN_VOICED_FRAMES) -> int:
    """Frames with a voice, counted a minute at a time until `enough` are found."""
    found = 0
    step = CHUNK_FRAMES * FRAME
    for start in range(0, len(samples), step):
        chunk = samples[start:start + step].astype(np.float32)
        chunk = np.pad(chunk, (0, -len(chunk) % FRAME))
        found += int((detector(chunk) >= VOICE).sum())
        if found >= enough:
            break
    return found


def voice_heard(samples: np.ndarray, detector: Detector | None = None) -> bool | None:
    """Whether a 16 kHz recording has a voice in it; None without the detector (not installed)."""
    detector = detector or silero_detector()
    if detector is None:
        log.debug("faster-whisper is not installed: the recording is not checked for a voice")
        return None
    return voiced_frames(samples, detector) >= MIN_VOICED_FRAMES


def check_speech_heard(recording: Speech, transcript: Transcript | None) -> None:
    """InputError when neither the voice detector nor Whisper heard speech in the recording (None:
    Whisper could not transcribe it)."""
    if recording.voiced is not False:
        return
    where = recording.source_path or "the recording"
    if transcript is None or not transcript.words or transcript.no_speech_prob > WHISPER_NO_SPEECH:
        raise InputError(f"no speech was found in the recording {where}: the voice detector heard no voice in its "
                         f"{recording.duration_s:.1f} s and Whisper no words it took for speech (music, tones or "
                         "noise); pass a recording of speech")
    log.warning("%s: the voice detector heard almost no voice, Whisper heard words: speech under loud music or "
                "noise? The mouth follows what Whisper heard", where)
