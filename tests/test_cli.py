"""The CLI through Typer's runner: bad input gets one line on stderr, its exit code, and no output."""

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from talker_cli.audio_io import write_wav
from talker_cli.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, ["render", *map(str, args)])


def assert_failed_cleanly(result, code, message, out_dir):
    assert result.exit_code == code, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("talker: error:")]
    assert len(lines) == 1, result.stderr
    assert message in lines[0]
    assert list(out_dir.iterdir()) == []  # nothing at the output path, no partial files


@pytest.fixture
def out_dir(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def test_help_lists_commands():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "render" in result.output


def test_missing_photo(out_dir):
    result = run("--photo", out_dir.parent / "nope.jpg", "--text", "Hi.", "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 3, "photo not found", out_dir)


def test_photo_that_is_a_folder(out_dir):
    result = run("--photo", out_dir.parent, "--text", "Hi.", "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 3, "not a file", out_dir)


def test_not_an_image(out_dir, tmp_path):
    fake = tmp_path / "fake.jpg"
    fake.write_text("this is not a picture")
    result = run("--photo", fake, "--text", "Hi.", "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 3, "is not a readable image", out_dir)


def test_photo_without_a_face(out_dir, tmp_path):
    blank = tmp_path / "wall.png"
    gradient = np.tile(np.linspace(0, 255, 320, dtype=np.uint8), (240, 1))
    Image.fromarray(np.stack([gradient] * 3, axis=2)).save(blank)
    result = run("--photo", blank, "--text", "Hi.", "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 3, "no face found", out_dir)


@pytest.mark.parametrize("text", ["", "   \n "])
def test_empty_text(out_dir, face_photo, text):
    result = run("--photo", face_photo, "--text", text, "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 3, "text is empty", out_dir)


def test_text_too_long_for_the_preset_says_the_limit(out_dir, face_photo, tmp_path):
    preset = tmp_path / "tiny.toml"
    preset.write_text("[input]\nmax_chars = 40\n")
    result = run("--photo", face_photo, "--text", "word " * 20, "--preset", preset, "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 3, "limit of 40", out_dir)


def test_missing_text_file(out_dir, face_photo):
    result = run("--photo", face_photo, "--text-file", out_dir.parent / "none.txt", "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 3, "text file not found", out_dir)


def test_silent_audio(out_dir, face_photo, tmp_path):
    silent = tmp_path / "silent.wav"
    write_wav(silent, np.zeros(16000 * 2, np.float32), 16000)
    result = run("--photo", face_photo, "--audio", silent, "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 3, "is silent", out_dir)


def test_empty_audio_file(out_dir, face_photo, tmp_path):
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    result = run("--photo", face_photo, "--audio", empty, "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 3, "audio file is empty", out_dir)


def test_garbage_audio(out_dir, face_photo, tmp_path):
    garbage = tmp_path / "noise.wav"
    garbage.write_bytes(np.random.default_rng(0).bytes(5000))
    result = run("--photo", face_photo, "--audio", garbage, "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 3, "cannot read", out_dir)


def test_output_folder_missing(tmp_path, face_photo):
    target = tmp_path / "missing" / "a.mp4"
    result = run("--photo", face_photo, "--text", "Hi.", "-o", target)
    assert result.exit_code == 2
    assert "output folder does not exist" in result.stderr
    assert not target.parent.exists()


def test_unknown_preset(out_dir, face_photo):
    result = run("--photo", face_photo, "--text", "Hi.", "--preset", "gpu-9000", "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 2, "unknown preset 'gpu-9000'", out_dir)


def test_two_inputs_is_a_usage_error(out_dir, face_photo, speech_wav):
    result = run("--photo", face_photo, "--text", "Hi.", "--audio", speech_wav, "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 2, "exactly one of", out_dir)


def test_a_transcript_needs_a_recording_and_words(out_dir, face_photo, speech_wav):
    result = run("--photo", face_photo, "--text", "Hi.", "--transcript", "Hi.", "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 2, "--transcript gives the words of a recording: pass it with --audio", out_dir)
    for nothing in ("  ", "!!! 😀"):
        result = run("--photo", face_photo, "--audio", speech_wav, "--transcript", nothing, "-o", out_dir / "a.mp4")
        assert_failed_cleanly(result, 2, "--transcript has no words", out_dir)


def test_missing_voice_model_names_the_path_and_flag(out_dir, face_photo, tmp_path):
    missing = tmp_path / "voices" / "x.onnx"
    result = run("--photo", face_photo, "--text", "Hi.", "--tts-model", missing, "-o", out_dir / "a.mp4")
    assert_failed_cleanly(result, 4, str(missing), out_dir)
    assert "--tts-model" in result.stderr


def test_help_does_not_import_heavy_libraries():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from talker_cli.cli import app\n"
        "for args in (['--help'], ['render', '--help']):\n"
        "    assert CliRunner().invoke(app, args).exit_code == 0\n"
        "heavy = [m for m in ('torch', 'transformers', 'mediapipe', 'cv2', 'piper') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_progress_says_when_a_stage_was_reused_from_the_work_cache(caplog):
    import logging

    from talker_cli.jobs.progress import StageLines
    from talker_cli.jobs.pipeline import StageReport

    progress = StageLines(quiet=False)  # stderr is not a terminal here: plain log lines
    with caplog.at_level(logging.INFO, logger="talker"):
        progress("tts", StageReport("tts", True, backend="piper", seconds=0.01, details={"cached": True}))
        progress("render", StageReport("render", True, backend="landmark-warp+libx264", seconds=2.0, peak_rss_bytes=300 * 2**20))
    assert "tts           0.01 s  reused from the work cache  [piper]" in caplog.text
    assert "render        2.00 s  peak RSS 300 MiB  [landmark-warp+libx264]" in caplog.text


@pytest.mark.parametrize("wait", ["-1", "nan", "inf"])
def test_a_wait_that_is_not_a_number_of_seconds_is_refused(tmp_path, wait):
    result = CliRunner().invoke(app, ["lipsync", "--text", "Hi.", "-o", str(tmp_path / "a"), "--wait", wait, "-q"])
    assert result.exit_code == 2 and "--wait must be a number of seconds, 0 or more" in result.stderr
    assert not list(tmp_path.iterdir())


def test_help_shows_every_option_text_whole_brackets_included():
    """Rich reads [word] as markup and drops it: "[happy]-style tags" had become "-style tags"."""
    import re

    import typer.main

    command = typer.main.get_command(app)
    for name, sub in command.commands.items():
        shown = " ".join(CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "400"}).stdout.split())
        shown = re.sub(r"[│╭╮╰╯─]", " ", shown)
        for param in sub.params:
            help_text = (param.help or "").replace("\\[", "[")
            if "[" in help_text:
                assert " ".join(help_text.split()) in " ".join(shown.split()), (name, param.name)
