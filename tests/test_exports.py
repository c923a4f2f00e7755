"""Animation files: `talker lipsync`, every export format read back by an independent reader, and the
face controls (emotion, head motion, blinks, mouth scale, crop) changing what they should."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from talker_cli.cli import app
from talker_cli.face.visemes import VISEMES

from .conftest import ROOT, ffprobe, still_preset

runner = CliRunner()
ALL_FORMATS = "arkit-json,livelink,gltf,glb,rhubarb-tsv,rhubarb-json,rhubarb-xml,rhubarb-dat,vrm,srt,vtt"
TEXT = "[happy] Hello, my big friend. [sad] We lost my map in the park."  # W: a pose of its own inside U
PRESTON_BLAIR = {"MBP", "etc", "E", "AI", "O", "U", "FV", "L", "rest"}


@pytest.fixture(scope="module")
def lipsync_text(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lipsync")
    result = runner.invoke(app, ["lipsync", "--text", TEXT, "-o", str(folder / "anim"), "--format", ALL_FORMATS,
                                 "--dat-frame-rate", "30", "--json"])
    assert result.exit_code == 0, result.stderr
    return folder, json.loads(result.stdout)


def _track(folder: Path, stem: str = "anim") -> dict:
    return json.loads((folder / f"{stem}.blendshapes.json").read_text())


@pytest.mark.slow
def test_lipsync_writes_every_format_the_speech_and_a_manifest_and_no_video(lipsync_text):
    folder, manifest = lipsync_text
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(["anim.blendshapes.json", "anim.livelink.csv", "anim.gltf", "anim.glb", "anim.tsv",
                            "anim.rhubarb.json", "anim.xml", "anim.dat", "anim.vrm.json", "anim.srt", "anim.vtt",
                            "anim.wav", "anim.json"])
    assert manifest["video"] is None and manifest["inputs"]["photo"] is None
    ran = {s["name"] for s in manifest["stages"] if s["ran"]}
    assert {"tts", "alignment", "visemes", "export"} <= ran and not {"photo", "render"} & ran
    wav = ffprobe(folder / "anim.wav")
    assert abs(float(wav["format"]["duration"]) - manifest["speech_s"]) < 0.01
    assert "[happy]" not in manifest["spoken_text"] and manifest["spoken_text"].startswith("Hello")
    assert [e for _, e in manifest["controls"]["emotion_changes"]] == ["happy", "sad"]


def test_arkit_json_has_all_52_names_weights_in_range_and_one_row_per_frame(lipsync_text):
    folder, manifest = lipsync_text
    track = _track(folder)
    assert len(track["names"]) == 52 and len(set(track["names"])) == 52
    assert track["names"][0] == "eyeBlinkLeft" and track["names"][-1] == "tongueOut"
    weights = np.array(track["frames"])
    assert weights.shape == (round(manifest["speech_s"] * 25), 52)
    assert weights.min() >= 0 and weights.max() <= 1
    assert len(track["head_rotation_deg"]["frames"]) == len(weights)
    visemes = [v for v, _, _ in track["visemes"]]
    assert set(visemes) <= set(VISEMES) and "U" in visemes  # "We"
    assert all(a != b for a, b in zip(visemes, visemes[1:]))  # "Hello" ends rounding, still one O


def test_livelink_csv_has_the_apps_exact_header_and_one_row_per_frame(lipsync_text):
    folder, _ = lipsync_text
    rows = list(csv.reader((folder / "anim.livelink.csv").read_text().splitlines()))
    header = rows[0]
    assert header[:3] == ["Timecode", "BlendShapeCount", "EyeBlinkLeft"]
    assert header[-9:] == ["HeadYaw", "HeadPitch", "HeadRoll", "LeftEyeYaw", "LeftEyePitch", "LeftEyeRoll",
                           "RightEyeYaw", "RightEyePitch", "RightEyeRoll"]
    assert header[2:54] == [n[0].upper() + n[1:] for n in _track(folder)["names"]]
    assert len(header) == 63
    frames = rows[1:]
    assert len(frames) == len(_track(folder)["frames"])
    assert all(r[1] == "61" and len(r) == 63 for r in frames)
    assert frames[0][0] == "00:00:00:00.000" and frames[26][0] == "00:00:01:01.000"  # 25 fps
    values = np.array([[float(v) for v in r[2:54]] for r in frames])
    assert np.allclose(values, np.array(_track(folder)["frames"]), atol=1e-4)


def _validator() -> list[str]:
    script = ROOT / "scripts" / "validate_gltf.js"
    node = shutil.which("node")
    assert node, "node is needed by the glTF test: run scripts/system-deps.sh"
    return [node, str(script)]


@pytest.mark.parametrize("suffix", [".gltf", ".glb"])
def test_gltf_passes_the_khronos_validator_and_animates_52_named_morph_targets(lipsync_text, suffix):
    folder, _ = lipsync_text
    path = folder / f"anim{suffix}"
    result = subprocess.run([*_validator(), str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["issues"]["numErrors"] == 0, report["issues"]["messages"]
    assert report["issues"]["numWarnings"] == 0, report["issues"]["messages"]
    info = report["info"]
    assert info["animationCount"] == 1 and info["hasMorphTargets"]
    if suffix == ".gltf":
        gltf = json.loads(path.read_text())
        mesh = gltf["meshes"][0]
        assert mesh["extras"]["targetNames"] == _track(folder)["names"]
        assert len(mesh["primitives"][0]["targets"]) == 52
        sampler = gltf["animations"][0]["samplers"][0]
        frames = len(_track(folder)["frames"])
        assert gltf["accessors"][sampler["input"]]["count"] == frames
        assert gltf["accessors"][sampler["output"]]["count"] == frames * 52


def test_head_rotation_becomes_glTF_quaternions_about_the_right_axes():
    from talker_cli.exports.gltf import _quaternions

    q = _quaternions(np.array([[90, 0, 0], [0, 90, 0], [0, 0, 90]], np.float32))
    s = np.sqrt(0.5)
    assert np.allclose(q, [[0, s, 0, s], [s, 0, 0, s], [0, 0, s, s]], atol=1e-6)  # yaw Y, pitch X, roll Z


def _rhubarb_cues(folder: Path) -> list[dict]:
    return json.loads((folder / "anim.rhubarb.json").read_text())["mouthCues"]


def test_rhubarb_json_cues_cover_the_sound_without_gaps_and_rest_at_both_ends(lipsync_text):
    folder, manifest = lipsync_text
    data = json.loads((folder / "anim.rhubarb.json").read_text())
    assert data["metadata"]["soundFile"] == str((folder / "anim.wav").resolve())
    cues = data["mouthCues"]
    assert cues[0]["start"] == 0 and cues[0]["value"] == "X" and cues[-1]["value"] == "X"
    assert cues[-1]["end"] == data["metadata"]["duration"] == pytest.approx(manifest["speech_s"], abs=0.01)
    assert all(a["end"] == b["start"] and a["value"] != b["value"] for a, b in zip(cues, cues[1:]))
    assert {c["value"] for c in cues} <= set("ABCDEFGHX") and "A" in {c["value"] for c in cues}  # "big", "map"


def test_rhubarb_tsv_and_xml_hold_the_same_cues_as_the_json(lipsync_text):
    folder, _ = lipsync_text
    cues = _rhubarb_cues(folder)
    lines = [line.split("\t") for line in (folder / "anim.tsv").read_text().splitlines()]
    assert all(re.fullmatch(r"\d+\.\d\d", t) and s in "ABCDEFGHX" for t, s in lines)
    assert [(float(t), s) for t, s in lines[:-1]] == [(c["start"], c["value"]) for c in cues]
    assert lines[-1] == [f"{cues[-1]['end']:.2f}", "X"]
    root = ElementTree.parse(folder / "anim.xml").getroot()
    assert root.tag == "rhubarbResult"
    xml_cues = [(float(c.get("start")), float(c.get("end")), c.text) for c in root.find("mouthCues")]
    assert xml_cues == [(c["start"], c["end"], c["value"]) for c in cues]
    assert float(root.find("metadata/duration").text) == cues[-1]["end"]


def test_moho_dat_numbers_frames_from_one_at_its_own_rate_with_preston_blair_names(lipsync_text):
    folder, _ = lipsync_text
    lines = (folder / "anim.dat").read_text().splitlines()
    assert lines[0] == "MohoSwitch1"
    entries = [line.split(" ") for line in lines[1:]]
    frames = [int(f) for f, _ in entries]
    assert frames[0] == 1 and frames == sorted(set(frames))
    assert {name for _, name in entries} <= PRESTON_BLAIR and "MBP" in {name for _, name in entries}
    cues = _rhubarb_cues(folder)
    assert frames[-1] in (1 + int(30 * cues[-1]["end"]), 2 + int(30 * cues[-1]["end"]))  # 30 fps, as asked
    first_closure = next(c for c in cues if c["value"] == "A")
    assert [str(1 + int(30 * first_closure["start"] + 1e-9)), "MBP"] in entries


def test_vrm_expressions_are_the_presets_in_range_with_one_value_per_frame(lipsync_text):
    folder, _ = lipsync_text
    data = json.loads((folder / "anim.vrm.json").read_text())
    frames = len(_track(folder)["frames"])
    assert {"aa", "ih", "ou", "ee", "oh", "blink", "happy", "angry", "sad", "relaxed", "surprised", "neutral"} \
        <= set(data["expressions"])
    assert data["frameCount"] == frames and all(len(v) == frames for v in data["expressions"].values())
    values = np.array(list(data["expressions"].values()))
    assert values.min() >= 0 and values.max() <= 1
    assert max(data["expressions"]["aa"]) > 0.5  # "map", "park"
    happy, sad = np.array(data["expressions"]["happy"]), np.array(data["expressions"]["sad"])
    assert happy[:5].min() > 0.99 and sad[-5:].min() > 0.99  # the tags, in order
    closed = np.array(_track(folder)["frames"])[:, _track(folder)["names"].index("mouthClose")] >= 0.9
    vowels = np.array([data["expressions"][v] for v in ("aa", "ih", "ou", "ee", "oh")])
    assert closed.any() and vowels[:, closed].max() == 0  # lips shut: no vowel


def test_webvtt_and_srt_carry_the_same_cues(lipsync_text):
    folder, _ = lipsync_text
    vtt = (folder / "anim.vtt").read_text()
    srt = (folder / "anim.srt").read_text()
    assert vtt.startswith("WEBVTT\n\n")
    vtt_times = re.findall(r"(\d\d:\d\d:\d\d\.\d{3}) --> (\d\d:\d\d:\d\d\.\d{3})", vtt)
    srt_times = re.findall(r"(\d\d:\d\d:\d\d,\d{3}) --> (\d\d:\d\d:\d\d,\d{3})", srt)
    assert vtt_times and [(a.replace(",", "."), b.replace(",", ".")) for a, b in srt_times] == vtt_times
    assert "Hello, my big friend." in vtt and "[happy]" not in vtt


@pytest.mark.slow
def test_lipsync_of_a_recording_is_the_track_render_makes_of_it(tmp_path, face_photo, speech_wav):
    preset = still_preset(tmp_path)
    rendered = runner.invoke(app, ["render", "--photo", str(face_photo), "--audio", str(speech_wav), "--preset",
                                   str(preset), "-o", str(tmp_path / "r.mp4"), "--format", "arkit-json,livelink"])
    assert rendered.exit_code == 0, rendered.stderr
    animated = runner.invoke(app, ["lipsync", "--audio", str(speech_wav), "--preset", str(preset),
                                   "-o", str(tmp_path / "l"), "--format", "arkit-json"])
    assert animated.exit_code == 0, animated.stderr
    assert not (tmp_path / "l.wav").exists()  # the recording is its own sound
    assert _track(tmp_path, "r")["frames"] == _track(tmp_path, "l")["frames"]
    video = next(s for s in ffprobe(tmp_path / "r.mp4")["streams"] if s["codec_type"] == "video")
    livelink_rows = (tmp_path / "r.livelink.csv").read_text().count("\n") - 1
    assert int(video["nb_frames"]) == len(_track(tmp_path, "r")["frames"]) == livelink_rows


def test_an_output_stem_keeps_its_dots_and_drops_only_our_own_suffix(tmp_path):
    from talker_cli.jobs.outputs import output_files

    files = output_files(tmp_path / "take.v2", ("rhubarb-json",), video=False, speech=True)
    assert files["speech"].name == "take.v2.wav" and files["rhubarb-json"].name == "take.v2.rhubarb.json"
    assert output_files(tmp_path / "take.wav", (), video=False, speech=True)["speech"].name == "take.wav"


@pytest.mark.slow
def test_a_lipsync_output_that_would_overwrite_its_recording_is_refused(tmp_path, speech_wav):
    recording = tmp_path / "voice.wav"
    recording.write_bytes(speech_wav.read_bytes())
    result = runner.invoke(app, ["lipsync", "--text", "hello", "-o", str(tmp_path / "voice"), "--format", "srt"])
    assert result.exit_code == 0  # the text's own speech may be written as voice.wav: no input is there
    recording.write_bytes(speech_wav.read_bytes())
    result = runner.invoke(app, ["lipsync", "--audio", str(recording), "--reply", "-o", str(tmp_path / "voice")])
    assert result.exit_code == 2 and "overwrite the input" in result.stderr
    assert recording.read_bytes() == speech_wav.read_bytes()


def test_an_unknown_format_is_a_usage_error_naming_the_choices(tmp_path):
    result = runner.invoke(app, ["lipsync", "--text", "hi", "-o", str(tmp_path / "x"), "--format", "arkit-json,fbx"])
    assert result.exit_code == 2 and "rhubarb-dat" in result.stderr
    assert list(tmp_path.iterdir()) == []


def _gltf_accessor(gltf: dict, data: bytes, index: int) -> np.ndarray:
    """An accessor's floats, read from the buffer as a glTF reader would (an independent reader)."""
    accessor = gltf["accessors"][index]
    view = gltf["bufferViews"][accessor["bufferView"]]
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[accessor["type"]]
    start = view.get("byteOffset", 0) + accessor.get("byteOffset", 0)
    return np.frombuffer(data, "<f4", accessor["count"] * width, start).reshape(accessor["count"], width)


@pytest.mark.parametrize("suffix", [".gltf", ".glb"])
def test_the_gltf_animation_is_the_track_frame_by_frame(lipsync_text, suffix):
    """Key times at frame centres and each key's 52 weights equal the ARKit track's row of that frame:
    a shift by one frame, or weights in another order, fails here."""
    import base64
    import struct

    folder, _ = lipsync_text
    track = _track(folder)
    raw = (folder / f"anim{suffix}").read_bytes()
    if suffix == ".gltf":
        gltf = json.loads(raw)
        data = base64.b64decode(gltf["buffers"][0]["uri"].split(",", 1)[1])
    else:
        json_length = struct.unpack_from("<I", raw, 12)[0]
        gltf = json.loads(raw[20:20 + json_length])
        data = raw[20 + json_length + 8:]
    sampler = gltf["animations"][0]["samplers"][0]
    times = _gltf_accessor(gltf, data, sampler["input"])[:, 0]
    weights = _gltf_accessor(gltf, data, sampler["output"]).reshape(len(times), -1)
    frames = np.array(track["frames"], np.float32)
    assert np.allclose(times, (np.arange(len(frames)) + 0.5) / track["fps"], atol=1e-6)
    assert weights.shape == frames.shape and np.allclose(weights, frames, atol=1e-4)


def test_vrm_expressions_follow_the_mouth_scale(tmp_path):
    runs = {}
    for scale in ("1", "0.5"):
        result = runner.invoke(app, ["lipsync", "--text", "Hello, my big friend.", "-o", str(tmp_path / scale),
                                     "--format", "vrm", "--mouth-scale", scale, "-q"])
        assert result.exit_code == 0, result.stderr
        runs[scale] = json.loads((tmp_path / f"{scale}.vrm.json").read_text())["expressions"]
    full, half = np.array(runs["1"]["aa"]), np.array(runs["0.5"]["aa"])
    assert full.max() > 0.3 and np.allclose(half, np.clip(full * 0.5, 0, 1), atol=2e-4)


def test_an_arkit_file_reads_back_as_the_track_it_was_written_from(tmp_path):
    """The benchmarks draw a run's frames again from its NAME.blendshapes.json: read back, the file is
    the track (its weights to 4 decimals, the head's rotation to 3, the rate and the names)."""
    from types import SimpleNamespace

    from talker_cli.artifacts import BlendshapeTrack
    from talker_cli.exports.arkit import read_track, to_json
    from talker_cli.face.blendshapes import NAMES

    rng = np.random.default_rng(3)
    track = BlendshapeTrack(30, NAMES, rng.uniform(0, 1, (7, len(NAMES))).astype(np.float32),
                            head=rng.normal(0, 2, (7, 3)).astype(np.float32))
    path = tmp_path / "anim.blendshapes.json"
    path.write_text(to_json(SimpleNamespace(track=track, segments=[])))
    read = read_track(path)
    assert read.fps == 30 and tuple(read.names) == tuple(NAMES)
    assert np.allclose(read.weights, track.weights, atol=6e-5) and read.weights.dtype == np.float32
    assert read.head is not None and np.allclose(read.head, track.head, atol=6e-4)
