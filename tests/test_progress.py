"""Progress a user can follow: plain lines at most every few seconds without a terminal, the end of
each task, nothing when quiet; and a render reports every frame it draws."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from talker_cli.cli import app
from talker_cli.jobs.progress import LINE_EVERY_S, ProgressLines, meter_for, no_meter, time_left


def test_plain_lines_come_every_few_seconds_with_the_time_left_and_at_the_end(caplog):
    now = [0.0]
    lines = ProgressLines(clock=lambda: now[0])
    with caplog.at_level("INFO", logger="talker"):
        for frame in range(1, 1001):
            now[0] = frame * 0.01  # 100 frames a second: 10 s in all
            lines("render", frame, 1000, "frames")
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 + int(10 / LINE_EVERY_S), said  # the first, one every 5 s, the end
    assert said[0].startswith("render: 1/1,000 frames (0%)")
    assert "render: 501/1,000 frames (50%), about 5 s left" in said
    assert said[-1] == "render: 1,000/1,000 frames (100%)"


def test_quiet_shows_nothing_and_the_time_left_follows_the_pace():
    assert meter_for(quiet=True) is no_meter
    assert time_left(25, 100, 10.0) == 30.0 and time_left(0, 100, 1.0) is None


def test_a_render_reports_each_frame_it_draws_up_to_the_last(tmp_path, face_photo, caplog):
    out = tmp_path / "a.mp4"
    with caplog.at_level("INFO", logger="talker"):
        result = CliRunner().invoke(app, ["render", "--photo", str(face_photo), "--text", "Hello there.", "-o", str(out),
                                          "--json"])
    assert result.exit_code == 0, result.stderr
    frames = json.loads(result.stdout)["video"]["frames"]  # the JSON on stdout is unchanged by the lines
    assert f"render: {frames:,}/{frames:,} frames (100%)" in caplog.text
    caplog.clear()
    with caplog.at_level("INFO", logger="talker"):
        quiet = CliRunner().invoke(app, ["render", "--photo", str(face_photo), "--text", "Hello there.",
                                         "-o", str(tmp_path / "b.mp4"), "-q"])
    assert quiet.exit_code == 0 and "frames" not in caplog.text


def test_every_voice_reports_the_parts_it_has_spoken_up_to_the_last():
    from talker_cli.config import TtsConfig
    from talker_cli.voices.tts import make_tts

    for language, text in (("en", "One sentence. Another one. And a third!"), ("zh", "今天天气很好。我们去散步吧。"),
                           ("de", "Guten Morgen. Wie geht es dir?")):
        engine = make_tts(TtsConfig(), language)
        engine.load()
        reports = []
        engine.meter = lambda *report: reports.append(report)
        try:
            engine.synthesize(text)
        finally:
            engine.unload()
        total = reports[-1][2]
        assert [r[1] for r in reports] == list(range(total + 1)), (engine.name, reports)  # each part, in order
        assert {(r[0], r[2], r[3]) for r in reports} == {("speak", total, "parts")}
        assert total == (1 if engine.name == "espeak" else text.count(".") + text.count("!") + text.count("。"))
