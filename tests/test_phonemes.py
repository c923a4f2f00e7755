import numpy as np
import pytest

from talker_cli.aligners.phonemes import arpabet_label, ipa_durations_to_phones, ipa_labels


def labels(phones):
    return [p.label for p in phones]


def test_diphthongs_and_affricates_are_one_phone():
    phones, _ = ipa_durations_to_phones([("h", 0.05), ("a", 0.05), ("ɪ", 0.05), ("t", 0.02), ("ʃ", 0.04)])
    assert labels(phones) == ["HH", "AY", "CH"]
    assert phones[1].end_s - phones[1].start_s == pytest.approx(0.10)


def test_stress_mark_time_goes_to_the_next_phone_and_length_to_the_previous():
    phones, _ = ipa_durations_to_phones([("ˈ", 0.03), ("i", 0.05), ("ː", 0.04), ("s", 0.05)])
    assert labels(phones) == ["IY", "S"]
    assert phones[0].start_s == 0.0
    assert phones[0].end_s == pytest.approx(0.12)
    assert phones[1].start_s == pytest.approx(0.12)


def test_track_is_contiguous_and_keeps_total_time():
    symbols = [("^", 0.03), ("h", 0.03), ("ə", 0.05), (" ", 0.04), ("w", 0.05), ("ɜ", 0.05), ("ː", 0.03),
               ("l", 0.05), ("d", 0.04), ("!", 0.1), ("$", 0.05)]
    phones, words = ipa_durations_to_phones(symbols, start_s=1.0)
    assert phones[0].start_s == 1.0
    assert phones[-1].end_s == pytest.approx(1.0 + sum(d for _, d in symbols))
    for a, b in zip(phones, phones[1:]):
        assert a.end_s == pytest.approx(b.start_s)
    assert len(words) == 2
    assert words[1][0] == pytest.approx(1.11)  # the space between the words is the next word's onset


def test_a_space_between_words_spoken_on_is_no_pause_but_one_after_a_comma_or_at_the_start_is():
    symbols = [(" ", 0.2), ("ɐ", 0.05), ("p", 0.03), (" ", 0.04), ("b", 0.05), ("i", 0.05), (",", 0.1), (" ", 0.06),
               ("m", 0.05), ("a", 0.05)]
    phones, words = ipa_durations_to_phones(symbols)
    assert labels(phones) == ["SIL", "AH", "P", "B", "IY", "SIL", "M", "AA"]
    b = phones[3]
    assert (b.start_s, b.end_s) == (pytest.approx(0.28), pytest.approx(0.37))  # the gap is b's closure
    assert phones[5].end_s - phones[5].start_s == pytest.approx(0.16)  # comma and space: a pause
    assert [round(a, 2) for a, _ in words] == [0.2, 0.28, 0.58]


def test_arpabet_labels_drop_stress_and_unknowns_become_silence():
    assert arpabet_label("AH0") == "AH"
    assert arpabet_label("iy1") == "IY"
    assert arpabet_label("+SPN+") == "SIL"


def test_a_letter_written_with_its_diacritic_is_its_letter_not_lost():
    # espeak-ng writes Japanese /a/ as the one code point ä: every a of a Japanese text was being
    # given to the consonant before it, and the mouth never opened for it
    phones, _ = ipa_durations_to_phones([("w", 0.05), ("ä", 0.1), ("t", 0.05), ("ä", 0.1), ("\u0308", 0.02)])
    assert [p.label for p in phones] == ["W", "AA", "T", "AA"]
    assert phones[1].end_s - phones[1].start_s == pytest.approx(0.1) and phones[-1].end_s == pytest.approx(0.32)


def test_affricates_written_as_two_letters_are_one_phone_and_mandarin_aspiration_is_no_h():
    from talker_cli.voices.espeak_tts import pronounce

    assert pronounce("吃", "zh") == ["CH", "IY"]  # espeak-ng: ts.hi -> tʂʰi, not T SH HH IY
    assert pronounce("天", "zh")[:1] == ["T"] and "HH" not in pronounce("天", "zh")  # tʰ
    assert pronounce("喝", "zh")[:1] == ["K"]  # Mandarin's own h (χ) is still a sound of its own
    assert "CH" in pronounce("ちいさい", "ja") and "SH" not in pronounce("ちいさい", "ja")  # tɕ
    assert pronounce("cats", "en")[-2:] == ["T", "S"]  # "ts" stays two
    assert ipa_labels(list("tɕi")) == ["CH", "IY"] and ipa_labels(list("ʈʂa")) == ["CH", "AA"]


def test_espeak_keeps_its_pauses_and_runs_its_words_together():
    from talker_cli.config import TtsConfig
    from talker_cli.voices.espeak_tts import EspeakTts, _symbols

    voice = EspeakTts(TtsConfig(lead_silence_s=0.0, tail_silence_s=0.0), "es")
    phones = list(voice.synthesize("Buenos días, me llamo Pablo.").native_phones)
    inner = phones[1:-1]
    pauses = [p for p in inner if p.label == "SIL" and p.end_s - p.start_s >= 0.1]
    assert len(pauses) == 1  # the comma's
    me = [i for i, p in enumerate(inner) if p.label == "M"][0]
    assert labels(inner[me:me + 3]) == ["M", "EH", "L"]  # "me llamo": no silence between the words
    # a pause event of its own between two sounds (espeak-ng's "días" has one) stays a pause
    sound = np.full(6000, 0.3, np.float32)
    sound[2000:3000] = 0.0  # silent
    marks = [(0, "d"), (1000, "i"), (2000, ""), (3000, "a"), (4000, ""), (4500, " "), (4500, "s"), (5000, "")]
    timed, _ = ipa_durations_to_phones(_symbols(marks, sound, 10000))
    assert labels(timed) == ["D", "IY", "SIL", "AA", "S"]
    assert timed[3].end_s == pytest.approx(0.45)  # a loud unnamed event (a tone, a glide) is the sound before it
    assert timed[4].end_s == pytest.approx(0.6)
