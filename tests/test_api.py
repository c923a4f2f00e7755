"""talker from Python (talker_cli/api.py): the jobs the commands run, their manifests returned, their
errors raised with the exit codes the commands give."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

import talker_cli
from talker_cli.cli import app
from talker_cli.errors import InputError, UsageError

from .conftest import ffprobe

runner = CliRunner()


def _frames_md5(path) -> list[str]:
    import imageio_ffmpeg

    listing = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(path), "-map", "0:v",
                              "-f", "framemd5", "-"], capture_output=True, text=True, check=True).stdout
    return [line.split(",")[-1].strip() for line in listing.splitlines() if line and not line.startswith("#")]


def test_render_from_python_makes_what_the_command_makes(tmp_path, face_photo):
    manifest = talker_cli.render(face_photo, tmp_path / "api.mp4", text="Said from Python.", fps=30, seed=3)
    assert manifest["output"]["video"] == str(tmp_path / "api.mp4")
    assert manifest["config"]["render"]["fps"] == 30  # the flags are the command's settings
    assert round(float(ffprobe(tmp_path / "api.mp4")["streams"][0]["avg_frame_rate"].split("/")[0])) == 30
    done = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", "Said from Python.", "--fps", "30",
                               "--seed", "3", "-o", str(tmp_path / "cli.mp4"), "-q", "--json"])
    assert done.exit_code == 0, done.output
    command = json.loads(done.stdout)
    assert command["config"] == manifest["config"] and sorted(command) == sorted(manifest)
    assert _frames_md5(tmp_path / "api.mp4") == _frames_md5(tmp_path / "cli.mp4")  # the same speech, kept: the same frames


def test_lipsync_from_python_writes_the_animation_files(tmp_path):
    manifest = talker_cli.lipsync(tmp_path / "hello", text="Only the track.", formats="arkit-json,srt")
    assert set(manifest["output"]) == {"speech", "manifest", "arkit-json", "srt"}
    track = json.loads((tmp_path / "hello.blendshapes.json").read_text())
    assert track["fps"] > 0 and len(track["frames"]) > 10
    assert not list(tmp_path.glob("*.mp4"))


@pytest.mark.parametrize("call, error, code", [
    (lambda tmp, photo: talker_cli.render(photo, tmp / "a.mp4", text="hi", fsp=25), UsageError, 2),  # a typo
    (lambda tmp, photo: talker_cli.lipsync(tmp / "a", text="hi", crop="face"), UsageError, 2),  # no video to crop
    (lambda tmp, photo: talker_cli.render(tmp / "none.png", tmp / "a.mp4", text="hi"), InputError, 3),
    (lambda tmp, photo: talker_cli.render(photo, tmp / "a.mp4", text="hi", wait_s=-1), UsageError, 2),
])
def test_a_job_that_cannot_run_raises_the_commands_error_and_writes_nothing(tmp_path, face_photo, call, error, code):
    with pytest.raises(error) as raised:
        call(tmp_path, face_photo)
    assert raised.value.exit_code == code
    assert not list(tmp_path.iterdir())


def test_importing_talker_loads_the_api_only_when_used():
    probe = ("import sys, talker_cli; before = 'talker_cli.api' in sys.modules; talker_cli.render; "
             "print(before, 'talker_cli.api' in sys.modules, 'numpy' in sys.modules)")
    seen = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert seen[:2] == ["False", "True"]
