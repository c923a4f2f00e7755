from talker_cli.artifacts import Word
from talker_cli.subtitles import make_cues, to_srt


def test_cues_break_at_sentence_end_and_stay_short():
    words = [Word(t, i * 0.3, i * 0.3 + 0.25) for i, t in enumerate("Hello there. This is a rather long line of words that must wrap".split())]
    cues = make_cues(words, "")
    assert cues[0].text == "Hello there."
    assert all(len(c.text) <= 42 for c in cues)
    assert cues[0].start_s == 0.0


def test_a_sentence_never_ends_on_a_word_alone():
    text = "Subtitles must never leave the final word alone."  # all but the last word: 41 characters
    words = [Word(w, 0.3 * i, 0.3 * i + 0.25) for i, w in enumerate(text.split())]
    assert [c.text for c in make_cues(words, text)] == ["Subtitles must never leave the final", "word alone."]


def test_unlabelled_words_take_the_script_spread_over_the_speech():
    words = [Word("", 1.0, 1.5), Word("", 1.6, 3.0)]
    cues = make_cues(words, "One. Two.")
    assert [c.text for c in cues] == ["One.", "Two."]
    assert cues[0].start_s == 1.0 and cues[-1].end_s == 3.0


def test_srt_format():
    srt = to_srt(make_cues([Word("Hi.", 0.0, 61.5)], ""))
    assert srt == "1\n00:00:00,000 --> 00:01:01,500\nHi.\n"


def test_chinese_words_are_shown_as_chinese_is_written_within_its_width():
    pieces = ["今天", "天", "气", "很好,", "我们", "一起", "去", "公", "园", "散", "步", "吧。"]
    words = [Word(w, 0.2 * k, 0.2 * k + 0.2) for k, w in enumerate(pieces)]
    cues = [c.text for c in make_cues(words, "")]
    assert "".join(cues) == "今天天气很好,我们一起去公园散步吧。"  # no spaces between them
    assert all(len(c) <= 16 for c in cues)


def test_a_word_wider_than_a_cue_is_shown_in_pieces_over_its_time():
    """A 3,000-letter word (or a long URL) was one cue of 3,000 characters."""
    long = "a" * 2990 + "bcdefghijk"
    words = [Word("Look:", 0.0, 0.4), Word(long, 0.5, 30.5), Word("done.", 30.6, 31.0)]
    cues = make_cues(words, "")
    assert all(len(c.text) <= 42 for c in cues)
    assert "".join(c.text.replace(" ", "") for c in cues) == "Look:" + long + "done."
    inside = [c for c in cues if "a" * 10 in c.text or c.text.endswith("ijk")]
    assert abs(inside[0].start_s - 0.5) < 0.5 and abs(inside[-1].end_s - 30.5) < 0.5
    assert all(a.end_s <= b.start_s + 1e-9 for a, b in zip(cues, cues[1:]))  # in order, never overlapping
    unlabelled = make_cues([Word("", 0.0, 10.0)], "Visit https://example.com/" + "x" * 100 + " now.")
    assert all(len(c.text) <= 42 for c in unlabelled)


def test_a_cue_is_not_held_on_screen_through_a_long_pause():
    """Words before a 2 s pause end their cue when they are said; the next cue starts with its word."""
    words = [Word("Wait", 0.0, 0.3), Word("for", 0.35, 0.5), Word("it", 0.55, 0.7),
             Word("now", 2.7, 3.0), Word("go", 3.05, 3.3)]
    cues = make_cues(words, "Wait for it now go")
    assert [c.text for c in cues] == ["Wait for it", "now go"]
    assert cues[0].end_s == 0.7 and cues[1].start_s == 2.7
