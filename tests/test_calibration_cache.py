"""What is found in a photo once is kept in the work cache by the photo's content: the mouth's
calibration (face/calibration.py) and the face's landmarks. A second render of the same photo draws
the same frames without calibrating or running FaceMesh, and a damaged or planted entry is made
again, never drawn from."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from typer.testing import CliRunner

from talker_cli.cli import app
from talker_cli.face.calibration import AS_DRAWN, OpeningCurve, curve_from_record, curve_record

runner = CliRunner()
MADE = OpeningCurve(asked=(0.0, 0.05, 0.1, 0.2), drawn=(0.0, 0.06, 0.11, 0.2))


def test_a_kept_curve_reads_back_as_it_was_made():
    assert curve_from_record(json.loads(json.dumps(curve_record(MADE)))) == MADE
    assert curve_from_record(curve_record(AS_DRAWN)) == AS_DRAWN  # a face the tracker could not read


@pytest.mark.parametrize("record", [
    {"asked": [0.0, 0.2, 0.1], "drawn": [0.0, 0.1, 0.2]},  # folds back
    {"asked": [0.0, 0.1, 0.2], "drawn": [0.0, 0.1]},  # lengths differ
    {"asked": [0.0, float("nan")], "drawn": [0.0, 0.1]},
    {"asked": [0.0, 0.1], "drawn": [0.0, 5.0]},  # a jaw dropped five eye distances
    {"asked": [0.01, 0.1], "drawn": [0.0, 0.1]},  # not from closed
    {"asked": [0.0], "drawn": [0.0]},
    {"asked": "0.0, 0.1", "drawn": [0.0, 0.1]},
    {"drawn": [0.0, 0.1]},
    [0.0, 0.1],
])
def test_a_record_calibration_could_not_have_made_is_no_curve(record):
    assert curve_from_record(record) is None


def _video_frames_md5(path) -> list[str]:
    import imageio_ffmpeg

    listing = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(path), "-map", "0:v",
                              "-f", "framemd5", "-"], capture_output=True, text=True, check=True).stdout
    return [line.split(",")[-1].strip() for line in listing.splitlines() if line and not line.startswith("#")]


def test_a_kept_entry_is_what_its_reader_makes_of_it_and_none_where_it_cannot(tmp_path):
    from talker_cli.jobs.work_cache import WorkCache

    cache = WorkCache(tmp_path / "cache")
    key = cache.key("calibration", {"photo": "p"})
    read = lambda folder: json.loads((folder / "curve.json").read_text())  # noqa: E731
    assert cache.kept(key, read) is None  # nothing kept yet
    cache.store(key, {"what": "w"}, lambda folder: (folder / "curve.json").write_text("[1, 2]"))
    assert cache.kept(key, read) == [1, 2]
    assert WorkCache(cache.root, read=False).kept(key, read) is None  # --force: made again
    assert cache.kept(key, lambda folder: None) is None  # read back, but not what it should be
    (cache.root / key / "curve.json").write_text("[1, 2")  # cut short
    assert cache.kept(key, read) is None
    (cache.root / key / "curve.json").unlink()
    assert cache.kept(key, read) is None


def test_a_photos_calibration_is_made_once_and_kept_by_its_content(tmp_path, monkeypatch, face_photo):
    import cv2

    import talker_cli.face.frames as frames

    calibrated = []
    calibrate = frames.calibrate
    monkeypatch.setattr(frames, "calibrate", lambda *args: calibrated.append(1) or calibrate(*args))
    monkeypatch.setenv("TALKER_WORK_CACHE", str(tmp_path / "cache"))

    def render(photo, name) -> None:
        done = runner.invoke(app, ["render", "--photo", str(photo), "--text", "Kept once.", "-o",
                                   str(tmp_path / name), "-q"])
        assert done.exit_code == 0, done.output

    render(face_photo, "a.mp4")
    assert len(calibrated) == 1
    render(face_photo, "b.mp4")
    assert len(calibrated) == 1  # the same photo: its curve is kept
    # ...and draws what calibrating would have drawn (the speech is kept too: the same track)
    assert _video_frames_md5(tmp_path / "a.mp4") == _video_frames_md5(tmp_path / "b.mp4")

    entries = list((tmp_path / "cache").glob("calibration-*"))
    assert len(entries) == 1
    (entries[0] / "curve.json").write_text(json.dumps({"asked": [0.0, 0.3, 0.01], "drawn": [0.0, 0.1, 0.4]}))
    render(face_photo, "c.mp4")
    assert len(calibrated) == 2  # planted: calibrated again, and kept whole again
    assert curve_from_record(json.loads((entries[0] / "curve.json").read_text())) is not None

    mirrored = tmp_path / "mirrored.png"
    cv2.imwrite(str(mirrored), np.ascontiguousarray(cv2.imread(str(face_photo))[:, ::-1]))
    render(mirrored, "d.mp4")
    assert len(calibrated) == 3  # another photo, another curve



@pytest.mark.parametrize("points", [
    np.zeros((468, 2), np.float32),  # not FaceMesh's 478
    np.full((478, 2), np.nan, np.float32),
    np.full((478, 2), 5000.0, np.float32),  # far off a 512 px image
    np.full((478, 2), 100.0, np.float32),  # every point in one place
    np.ones((478, 2), np.int64),
])
def test_landmarks_find_landmarks_could_not_have_found_are_none(points):
    from talker_cli.photo import kept_landmarks

    assert kept_landmarks(points, (512, 512, 3)) is None


def test_a_photos_landmarks_are_found_once_and_kept_by_its_content(tmp_path, monkeypatch, face_photo):
    import talker_cli.photo as photo

    found = []
    find = photo.find_landmarks
    monkeypatch.setattr(photo, "find_landmarks", lambda image: found.append(1) or find(image))
    monkeypatch.setenv("TALKER_WORK_CACHE", str(tmp_path / "cache"))

    def render(name: str, *flags: str) -> None:
        done = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", "Kept once.", "-o",
                                   str(tmp_path / name), "-q", *flags])
        assert done.exit_code == 0, done.output

    render("a.mp4")
    assert len(found) == 1
    render("b.mp4")
    assert len(found) == 1  # the same photo at the same size: FaceMesh is not run again
    assert _video_frames_md5(tmp_path / "a.mp4") == _video_frames_md5(tmp_path / "b.mp4")
    render("c.mp4", "--max-side", "384")
    assert len(found) == 2  # another size, another image: found again

    entry = min((tmp_path / "cache").glob("landmarks-*"), key=lambda folder: (folder / "landmarks.npy").stat().st_mtime)
    np.save(entry / "landmarks.npy", np.full((478, 2), np.nan, np.float32))  # damaged
    render("d.mp4")
    assert len(found) == 3  # found again, and kept whole again
    assert photo.kept_landmarks(np.load(entry / "landmarks.npy"), (512, 512, 3)) is not None
