"""A recording with no speech in it (music, tones, noise) is refused: the voice detector heard no
voice and Whisper no words it took for speech."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from talker_cli.audio_io import decode_audio, write_wav
from talker_cli.cli import app
from talker_cli.errors import InputError
from talker_cli.artifacts import Speech, Transcript, Word
from talker_cli.listening.voice_activity import (CHUNK_FRAMES, FRAME, MIN_VOICED_FRAMES, RATE, check_speech_heard, silero_detector,
                                       voice_heard)

runner = CliRunner()


def scripted(voiced_at: set[int], calls: list[int]):
    """A detector that hears a voice in the given frames (counted over the whole recording)."""
    seen = [0]

    def detect(chunk: np.ndarray) -> np.ndarray:
        assert len(chunk) % FRAME == 0 and len(chunk) <= CHUNK_FRAMES * FRAME
        calls.append(len(chunk))
        frames = np.arange(seen[0], seen[0] + len(chunk) // FRAME)
        seen[0] += len(frames)
        return np.where(np.isin(frames, list(voiced_at)), 0.9, 0.2)

    return detect


def test_too_few_voiced_frames_is_no_voice():
    samples = np.zeros(RATE * 5, dtype=np.float32)
    voiced = set(range(40, 40 + MIN_VOICED_FRAMES - 1))
    assert voice_heard(samples, scripted(voiced, [])) is False
    assert voice_heard(samples, scripted(voiced | {90}, [])) is True


def recording(voiced):
    return Speech(np.zeros(RATE * 5, dtype=np.float32), RATE, "recording", source_path=Path("x.wav"), voiced=voiced)


def heard(no_speech_prob: float, words: int = 8) -> Transcript:
    return Transcript("yay " * words, tuple(Word("yay", i * 0.3, i * 0.3 + 0.2) for i in range(words)), "en", no_speech_prob)


def test_no_speech_is_when_neither_the_detector_nor_whisper_heard_any(caplog):
    """A guitar's plucks: no voice, and Whisper wrote "Yay, yay, yay, yay." at a no-speech probability of 0.85."""
    for transcript in (heard(0.85), heard(1.0, words=0)):
        with pytest.raises(InputError, match=r"no speech was found in the recording x\.wav: .* 5\.0 s and Whisper no words"):
            check_speech_heard(recording(False), transcript)
    check_speech_heard(recording(False), heard(0.33))  # speech under music 6 dB louder: Whisper wrote the words
    assert "Whisper heard words" in caplog.text
    caplog.clear()
    for voiced in (True, None):  # a voice heard, or no detector: the alignment chain decides
        check_speech_heard(recording(voiced), heard(1.0, words=0))
    assert caplog.text == ""


def test_an_hour_is_read_a_minute_at_a_time_and_stops_at_the_first_voice():
    samples = np.zeros(RATE * 3600, dtype=np.float32)
    calls: list[int] = []
    assert voice_heard(samples, scripted({CHUNK_FRAMES + 5, CHUNK_FRAMES + 6, CHUNK_FRAMES + 7}, calls))
    assert len(calls) == 2  # the second minute held the voice: the other 58 are not read
    calls.clear()
    assert not voice_heard(samples[: RATE * 150 + 7], scripted(set(), calls))
    assert CHUNK_FRAMES * FRAME == RATE * 60
    assert len(calls) == 3 and calls[-1] == -(-(RATE * 30 + 7) // FRAME) * FRAME  # the rest, padded to whole frames


def music(seconds: float = 5.0) -> np.ndarray:
    """Notes with harmonics and a plucked decay, one every half second."""
    t = np.arange(int(RATE * seconds)) / RATE
    out = np.zeros_like(t)
    for k, f in enumerate([261.6, 329.6, 392.0, 523.3, 392.0, 329.6, 261.6, 440.0, 349.2, 293.7]):
        part = (t >= k * 0.5) & (t < k * 0.5 + 0.5)
        tt = t[part] - k * 0.5
        out[part] = sum(0.2 / h * np.sin(2 * np.pi * f * h * tt) for h in range(1, 6)) * np.exp(-4 * tt)
    return out.astype(np.float32)


def test_music_noise_and_hum_have_no_voice_and_speech_has_one(speech_wav):
    detector = silero_detector()
    rng = np.random.default_rng(0)
    t = np.arange(RATE * 4) / RATE
    for sound in (music(), 0.05 * rng.standard_normal(RATE * 4), 0.2 * np.sin(2 * np.pi * 50 * t)):
        assert voice_heard(sound.astype(np.float32), detector) is False
    speech = decode_audio(speech_wav, RATE)
    assert voice_heard(speech, detector) is True
    noisy = speech + rng.standard_normal(len(speech)).astype(np.float32) * np.sqrt(np.mean(speech ** 2))  # 0 dB SNR
    assert voice_heard(noisy, detector) is True


def test_music_given_as_a_recording_is_refused_in_one_line_and_leaves_nothing(tmp_path):
    song = tmp_path / "song.wav"
    write_wav(song, music(), RATE)
    out = tmp_path / "out"
    out.mkdir()
    result = runner.invoke(app, ["lipsync", "--audio", str(song), "-o", str(out / "song"), "-q"])
    assert result.exit_code == 3, result.output
    assert "no voice" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert list(out.iterdir()) == []


JFK = Path(__file__).resolve().parents[2] / "shared" / "speech" / "jfk.flac"


@pytest.mark.skipif(not JFK.is_file(), reason=f"real speech not found at {JFK}")
def test_speech_under_loud_music_is_followed_not_refused(tmp_path, caplog):
    """Music 6 dB louder than a real speech: the detector heard one voiced frame of 343, Whisper the words."""
    speech = decode_audio(JFK, RATE)
    backing = np.tile(music(), 3)[: len(speech)]
    mix = speech + backing / np.sqrt(np.mean(backing ** 2)) * np.sqrt(np.mean(speech ** 2)) * 2
    write_wav(tmp_path / "vlog.wav", mix / max(1.0, np.abs(mix).max() / 0.99), RATE)
    result = runner.invoke(app, ["lipsync", "--audio", str(tmp_path / "vlog.wav"), "-o", str(tmp_path / "vlog"), "-q"])
    assert result.exit_code == 0, result.stderr
    assert "the voice detector heard almost no voice" in caplog.text
    assert "your country" in (tmp_path / "vlog.srt").read_text()


def test_a_detector_that_cannot_load_checks_nothing_and_says_so(monkeypatch, caplog):
    import faster_whisper.vad

    def broken():
        raise RuntimeError("NO_SUCHFILE : silero_vad_v6.onnx failed")

    monkeypatch.setattr(faster_whisper.vad, "get_vad_model", broken)
    assert voice_heard(np.zeros(RATE, dtype=np.float32)) is None
    assert "the voice detector could not be loaded" in caplog.text
