"""Whole renders through the CLI on the offline defaults, checked with ffprobe and by looking at pixels."""

import json
import subprocess

import numpy as np
import pytest
from typer.testing import CliRunner

from talker_cli.audio_io import ffmpeg_exe
from talker_cli.cli import app
from talker_cli.photo import file_sha256, find_landmarks

from .conftest import ffprobe, still_preset

runner = CliRunner()


def decode_frames(path, width, height):
    raw = subprocess.run([ffmpeg_exe(), "-v", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3)


@pytest.fixture(scope="module")
def text_render(tmp_path_factory, face_photo):
    folder = tmp_path_factory.mktemp("render")
    preset = still_preset(folder)
    photo_hash = file_sha256(face_photo)
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text",
                                 "Hello. I am a talking face, and my mouth moves when I speak.",
                                 "--preset", str(preset), "-o", str(folder / "talk.mp4"), "--json"])
    assert result.exit_code == 0, result.stderr
    assert file_sha256(face_photo) == photo_hash  # inputs are never modified
    return folder, json.loads(result.stdout)


@pytest.mark.slow
def test_mp4_is_h264_aac_yuv420p_with_equal_lengths(text_render):
    folder, manifest = text_render
    info = ffprobe(folder / "talk.mp4")
    video = next(s for s in info["streams"] if s["codec_type"] == "video")
    audio = next(s for s in info["streams"] if s["codec_type"] == "audio")
    assert video["codec_name"] == "h264" and video["pix_fmt"] == "yuv420p"
    assert audio["codec_name"] == "aac"
    assert video["width"] % 2 == 0 and video["height"] % 2 == 0
    assert (video["width"], video["height"]) == (512, 512)
    frame = 1 / manifest["video"]["fps"]
    assert abs(float(video["duration"]) - float(audio["duration"])) <= frame + 1e-3
    assert abs(float(info["format"]["duration"]) - manifest["video"]["duration_s"]) <= frame + 1e-3
    assert manifest["video"]["duration_s"] > 2.5


def test_side_files_and_manifest(text_render):
    folder, manifest = text_render
    assert sorted(p.name for p in folder.iterdir()) == ["still.toml", "talk.blendshapes.json", "talk.json", "talk.mp4", "talk.srt"]
    on_disk = json.loads((folder / "talk.json").read_text())
    assert on_disk == manifest
    stages = {s["name"]: s for s in manifest["stages"]}
    assert stages["tts"]["backend"] == "piper" and stages["tts"]["model"].endswith(".onnx")
    assert stages["alignment"]["backend"] == "native"
    assert not stages["asr"]["ran"] and not stages["llm"]["ran"]
    assert all(s["seconds"] >= 0 and s["peak_rss_bytes"] > 0 for s in manifest["stages"] if s["ran"])
    assert len(manifest["inputs"]["photo_sha256"]) == 64
    assert manifest["config"]["render"]["head_motion"] == 0.0
    track = json.loads((folder / "talk.blendshapes.json").read_text())
    assert track["fps"] == 25 and len(track["frames"]) == manifest["video"]["frames"]
    assert len(track["frames"][0]) == len(track["names"])
    srt = (folder / "talk.srt").read_text()
    assert srt.startswith("1\n00:00:00,") and "Hello." in srt


def test_mouth_moves_with_speech_and_rests_in_silence(text_render):
    folder, manifest = text_render
    w, h, fps = manifest["video"]["width"], manifest["video"]["height"], manifest["video"]["fps"]
    frames = decode_frames(folder / "talk.mp4", w, h).astype(np.int16)
    track = json.loads((folder / "talk.blendshapes.json").read_text())
    jaw = np.array(track["frames"])[:, track["names"].index("jawOpen")]
    lm = find_landmarks(frames[0].astype(np.uint8))
    x0, y0 = (lm[[61, 0]].min(axis=0) - 5).astype(int)
    x1, y1 = (lm[[291, 152]].max(axis=0) + 5).astype(int)
    mouth = frames[:, y0:y1, x0:x1]
    change = np.abs(mouth - mouth[0]).mean(axis=(1, 2, 3))
    lead = int(0.15 * fps)  # the voice starts after 0.4 s of silence
    speaking = jaw > 0.3
    assert speaking.sum() > 10
    assert change[:lead].max() < 1.0  # near-still in silence
    assert np.median(change[speaking]) > 4 * max(change[:lead].max(), 0.5)
    # the mouth region changes more where the jaw is more open, from the mouth at rest after speaking
    # (the first frame is the photo's own smile, kept until the mouth first moves)
    assert jaw[-1] < 0.05
    from_rest = np.abs(mouth - mouth[-1]).mean(axis=(1, 2, 3))
    assert np.corrcoef(jaw, from_rest)[0, 1] > 0.6
    # outside the face nothing moves when idle motion is off
    assert np.abs(frames[:, :, :60] - frames[0, :, :60]).max() <= 6  # encoder noise only


@pytest.mark.slow
def test_recording_in_odd_format_is_transcribed_and_is_the_soundtrack(tmp_path, face_photo, speech_wav):
    mp3 = tmp_path / "speech48k.mp3"
    subprocess.run([ffmpeg_exe(), "-v", "error", "-i", str(speech_wav), "-ar", "48000", "-ac", "2", str(mp3)], check=True)
    out = tmp_path / "from_audio.mp4"
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--audio", str(mp3), "-o", str(out), "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    manifest = json.loads(result.stdout)
    stages = {s["name"]: s for s in manifest["stages"]}
    assert stages["asr"]["ran"] and not stages["tts"]["ran"]
    assert stages["alignment"]["backend"] == "pocketsphinx"
    assert manifest["spoken_text_origin"] == "transcript"
    assert "morning" in manifest["spoken_text"].lower()
    info = ffprobe(out)
    audio = next(s for s in info["streams"] if s["codec_type"] == "audio")
    assert abs(float(audio["duration"]) - 5.3) < 0.2  # the recording's own length
    assert "morning" in (tmp_path / "from_audio.srt").read_text().lower()


@pytest.mark.slow
def test_reply_speaks_the_llm_answer(tmp_path, face_photo):
    out = tmp_path / "reply.mp4"
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", "What is the capital of France?",
                                 "--reply", "-o", str(out), "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    manifest = json.loads(result.stdout)
    assert manifest["spoken_text_origin"] == "reply"
    assert manifest["prompt"] == "What is the capital of France?"
    assert "Paris" in manifest["spoken_text"]
    assert {s["name"]: s for s in manifest["stages"]}["llm"]["ran"]
    assert out.exists()


@pytest.mark.slow
def test_a_rerun_reuses_the_speech_and_force_makes_it_again(text_render, face_photo, tmp_path):
    folder, first = text_render
    preset = folder / "still.toml"
    args = ["render", "--photo", str(face_photo), "--text", first["spoken_text"], "--preset", str(preset), "--json", "-q"]
    again = json.loads(runner.invoke(app, args + ["-o", str(tmp_path / "again.mp4")]).stdout)
    tts = {s["name"]: s for s in again["stages"]}["tts"]
    assert tts["details"]["cached"] is True and tts["backend"] == "piper"
    assert again["video"] == first["video"]
    forced = json.loads(runner.invoke(app, args + ["-o", str(tmp_path / "forced.mp4"), "--force"]).stdout)
    assert "cached" not in {s["name"]: s for s in forced["stages"]}["tts"]["details"]


@pytest.mark.slow
def test_audio_with_reply_answers_what_was_said_in_a_synthesized_voice(tmp_path, face_photo, speech_wav, speech_text):
    out = tmp_path / "answer.mp4"
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--audio", str(speech_wav), "--reply",
                                 "-o", str(out), "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    manifest = json.loads(result.stdout)
    stages = {s["name"]: s for s in manifest["stages"]}
    assert stages["asr"]["ran"] and stages["llm"]["ran"] and stages["tts"]["ran"]
    assert "morning" in manifest["prompt"].lower()  # the prompt is what the recording said
    assert manifest["spoken_text_origin"] == "reply" and manifest["spoken_text"] != manifest["prompt"]
    # the face says the reply in the TTS voice, timed by it: the recording is not the soundtrack
    assert stages["alignment"]["backend"] == "native"
    audio = next(s for s in ffprobe(out)["streams"] if s["codec_type"] == "audio")
    assert abs(float(audio["duration"]) - manifest["video"]["duration_s"]) < 0.1
    assert abs(float(audio["duration"]) - stages["tts"]["details"]["speech_s"]) < 0.1
    words = set(manifest["spoken_text"].lower().split()[:3])
    assert words & set((tmp_path / "answer.srt").read_text().lower().split())


@pytest.mark.slow
def test_a_recording_without_speech_is_refused_and_leaves_nothing(tmp_path, face_photo):
    noise = tmp_path / "noise.wav"
    samples = (0.1 * np.random.default_rng(0).standard_normal(48000)).astype(np.float32)
    from talker_cli.audio_io import write_wav

    write_wav(noise, samples, 16000)
    out = tmp_path / "out" / "noise.mp4"
    out.parent.mkdir()
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--audio", str(noise), "-o", str(out), "-q"])
    assert result.exit_code == 3
    assert "no speech was found in the recording" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert list(out.parent.iterdir()) == []
