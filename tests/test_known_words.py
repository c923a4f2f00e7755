"""--transcript: the user's words for a recording, timed by the ASR's reading, aligned instead of it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from talker_cli.aligners.known_words import given_words, timed_given_words, with_given_words
from talker_cli.artifacts import Transcript, Word
from talker_cli.errors import InputError
from talker_cli.cli import app

from .conftest import ROOT

GRID = ROOT.parent / "shared" / "mouth" / "grid-s1"


def test_misheard_words_take_the_time_of_what_was_heard_in_their_place():
    heard = (Word("Please", 0.62, 0.90), Word("green", 0.90, 1.17), Word("bile", 1.17, 1.44), Word("one", 1.44, 1.63),
             Word("soon.", 1.63, 1.99))
    words = timed_given_words("place green by r one soon", heard)
    assert [w.text for w in words] == ["place", "green", "by", "r", "one", "soon"]
    starts = [w.start_s for w in words]
    assert starts == sorted(starts) and all(a.end_s <= b.start_s + 1e-9 for a, b in zip(words, words[1:]))
    by, r = words[2], words[3]
    assert 1.1 < by.start_s < by.end_s <= r.start_s < r.end_s <= 1.44 + 1e-9  # "r" is the rest of "bile"
    assert abs(words[1].start_s - 0.90) < 0.05 and abs(words[-1].end_s - 1.99) < 0.05


def test_a_word_the_asr_wrote_as_a_digit_takes_the_time_between_its_neighbours():
    heard = (Word("at", 0.9, 1.0), Word("q", 1.0, 1.2), Word("7", 1.2, 1.5), Word("again.", 1.5, 1.9))
    words = {w.text: w for w in timed_given_words("at Q seven again", heard)}
    assert words["seven"].start_s == pytest.approx(words["Q"].end_s) and words["seven"].end_s == pytest.approx(1.5)
    assert words["Q"].start_s >= 1.0 - 0.1 and words["again"].start_s == pytest.approx(1.5)


def test_unspaced_scripts_are_timed_character_by_character():
    assert given_words("今天 天气很好 OK") == ["今", "天", "天", "气", "很", "好", "OK"]
    heard = (Word("今天", 0.1, 0.5), Word("天气", 0.5, 0.9), Word("很好", 0.9, 1.3))
    words = timed_given_words("今天天气很好", heard)
    assert [round(w.start_s, 2) for w in words] == [0.1, 0.3, 0.5, 0.7, 0.9, 1.1]


def test_words_that_are_not_the_recordings_are_refused():
    heard = (Word("Bimplo", 0.7, 1.2), Word("every", 1.2, 1.5), Word("soon.", 1.5, 1.9))
    assert len(timed_given_words("bin blue at f three soon", heard)) == 6  # GRID's worst mishearing passes
    with pytest.raises(InputError, match="--transcript does not match the recording: .*'Bimplo every soon.'"):
        timed_given_words("word " * 50, heard)
    with pytest.raises(InputError, match="does not match"):
        timed_given_words("Don't ask me to carry an oily rag like that.", heard)


def test_chinese_is_compared_in_the_characters_the_asr_wrote():
    """Whisper writes Mandarin mostly in traditional characters; every character here differs."""
    heard = Transcript("說話讀書", (Word("說話", 0.1, 0.5), Word("讀書", 0.5, 0.9)), "zh")
    words = with_given_words(heard, "说话读书").words
    assert [w.text for w in words] == list("说话读书")  # the user's characters, timed by the heard ones
    assert [round(w.start_s, 2) for w in words] == [0.1, 0.3, 0.5, 0.7]


def test_words_are_untimed_when_the_asr_heard_none():
    assert timed_given_words("hello there", ()) == (Word("hello", 0.0, 0.0), Word("there", 0.0, 0.0))


def _opening_over(folder, stem, start_s, end_s):
    data = json.loads((folder / f"{stem}.blendshapes.json").read_text())
    names = data["names"]
    frames = np.array(data["frames"], float)
    t = (np.arange(len(frames)) + 0.5) / data["fps"]
    return frames[(t >= start_s) & (t < end_s), names.index("jawOpen")].mean()


@pytest.mark.skipif(not GRID.is_dir(), reason=f"GRID clips not found at {GRID}")
def test_a_known_transcript_opens_the_mouth_where_the_asr_misheard_an_open_vowel(tmp_path):
    """GRID pgbr1s says "place green by r one soon"; Whisper hears "bile" for "by r", and the L it
    aligns there shuts the mouth where the speaker's is wide open for R's AA."""
    clip = GRID / "pgbr1s.mpg"
    said = [line.split() for line in (GRID / "pgbr1s.align").read_text().splitlines()]
    r_start, r_end = next((int(a) / 25000, int(b) / 25000) for a, b, w in said if w == "r")
    runner = CliRunner()
    for stem, extra in (("heard", []), ("given", ["--transcript", "place green by r one soon"])):
        result = runner.invoke(app, ["lipsync", "--audio", str(clip), "-o", str(tmp_path / stem), "--format",
                                     "arkit-json,srt", "-q", *extra])
        assert result.exit_code == 0, result.output
    subtitles = (tmp_path / "given.srt").read_text()
    assert "place green by r one soon" in subtitles and "bile" not in subtitles
    assert "place green by r one soon" not in (tmp_path / "heard.srt").read_text()
    given, heard = _opening_over(tmp_path, "given", r_start, r_end), _opening_over(tmp_path, "heard", r_start, r_end)
    assert given > 1.3 * heard and given > 0.25, (given, heard)


def test_the_work_cache_keeps_what_was_heard_not_the_words_given(tmp_path, speech_wav, speech_text):
    runner = CliRunner()

    def lipsync(stem, *extra):
        result = runner.invoke(app, ["lipsync", "--audio", str(speech_wav), "-o", str(tmp_path / stem), "--format",
                                     "srt", "--json", "-q", *extra])
        said = (tmp_path / f"{stem}.srt").read_text() if result.exit_code == 0 else ""
        return result, " ".join(line for line in said.splitlines() if line[:1].isalpha())

    given = speech_text.replace("Good morning", "Good evening")
    result, said = lipsync("given", "--transcript", given)
    assert result.exit_code == 0 and said.split() == given.split()
    result, said = lipsync("heard")  # the same recording again: the ASR's result comes from the cache
    asr = next(s for s in json.loads(result.stdout)["stages"] if s["name"] == "asr")
    assert asr["details"]["cached"] and "morning" in said.lower() and "evening" not in said.lower()
    result, _ = lipsync("other", "--transcript", "word " * 300)
    assert result.exit_code == 3 and "--transcript does not match the recording" in result.stderr


def test_a_known_word_never_starts_before_the_one_before_it_ends():
    """The ASR's words may overlap (its timings are estimates): the given words keep their order in time."""
    heard = (Word("hello", 0.10, 0.62), Word("there", 0.50, 1.00), Word("friend", 0.95, 1.40))
    words = timed_given_words("hello there friend", heard)
    assert [w.text for w in words] == ["hello", "there", "friend"]
    assert all(later.start_s >= earlier.end_s for earlier, later in zip(words, words[1:])), words
    assert words[1].end_s == 1.00 and words[2].end_s == 1.40  # only the starts move
