"""A voice never reads a script its language is not written in: refused before any stage, nothing written."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from talker_cli.cli import app
from talker_cli.errors import UsageError
from talker_cli.language import check_voice_speaks, scripts_of

runner = CliRunner()


def test_scripts_are_counted_per_letter():
    assert scripts_of("Hello 你好!") == {"LATIN": 5, "CJK": 2}
    assert scripts_of("こんにちは、世界") == {"HIRAGANA": 5, "CJK": 2}
    assert scripts_of("12, 34 ... !") == {}


@pytest.mark.parametrize("text, voice_language", [
    ("Привет", "ru_RU"), ("你好世界", "zh_CN"), ("こんにちは世界", "ja"), ("Hola, ¿qué tal?", "es_ES"),
    ("Grüße aus Köln", "de_DE"), ("Hello", "en-us"), ("2024!", "en_US"),
])
def test_a_voice_reads_its_own_script(text, voice_language):
    check_voice_speaks(text, voice_language, "voice")


@pytest.mark.parametrize("text, voice_language, script", [
    ("Привет", "en_US", "Cyrillic"), ("Hello", "ru_RU", "Latin"), ("Hello 你好", "en_US", "Han"),
    ("مرحبا", "de_DE", "Arabic"), ("こんにちは", "zh_CN", "Japanese kana"),
])
def test_a_voice_refuses_a_script_it_cannot_read(text, voice_language, script):
    with pytest.raises(UsageError, match=f"written in {script}.*voice v \\({voice_language}\\)"):
        check_voice_speaks(text, voice_language, "v")


@pytest.mark.parametrize("text", ["你好，我是一个会说话的头像。", "Привет, я говорящая голова.", "مرحبا، أنا رأس يتكلم.",
                                  "My name is 王小明."])
def test_render_refuses_text_the_default_voice_cannot_speak_before_any_stage(tmp_path, face_photo, text):
    out = tmp_path / "out" / "talk.mp4"
    out.parent.mkdir()
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", text, "-o", str(out)])
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert "\n" not in line and "en_US-joe-medium (en_US) cannot speak" in line and "--tts-model" in line
    assert list(out.parent.iterdir()) == []


def test_the_refusal_comes_before_the_photo_is_even_read(tmp_path):
    result = runner.invoke(app, ["render", "--photo", str(tmp_path / "missing.png"), "--text", "你好",
                                 "-o", str(tmp_path / "talk.mp4")])
    assert result.exit_code == 2 and "cannot speak" in result.stderr  # not exit 3, photo not found
