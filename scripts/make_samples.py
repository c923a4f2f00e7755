"""Regenerate samples/: the astronaut photo (public domain, from scikit-image's data set) and a
short speech recording made with the offline default voice.

    python scripts/make_samples.py      (needs scikit-image for the photo)
"""

from pathlib import Path

from talker_cli.audio_io import write_wav
from talker_cli.config import TtsConfig
from talker_cli.voices.tts import make_tts

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SPEECH = "Good morning. This short recording was made with the offline voice, to test speech input."


def main() -> None:
    photo = SAMPLES / "face.png"
    if not photo.exists():
        from PIL import Image
        from skimage import data

        Image.fromarray(data.astronaut()).save(photo)
    tts = make_tts(TtsConfig(lead_silence_s=0.3, tail_silence_s=0.3))
    tts.load()
    speech = tts.synthesize(SPEECH)
    write_wav(SAMPLES / "speech.wav", speech.samples, speech.sample_rate)
    (SAMPLES / "speech.txt").write_text(SPEECH + "\n")


if __name__ == "__main__":
    main()
