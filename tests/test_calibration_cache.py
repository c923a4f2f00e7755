"""The mouth's calibration (face/calibration.py) is made once per photo and kept in the work cache by
the photo's content: a second render of the same photo draws the same frames without calibrating,
and a damaged or planted entry is calibrated again, never drawn from."""

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

