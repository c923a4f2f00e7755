"""The recording alignment chain: spans, fallbacks, real speech that broke the old aligner, flat memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from talker_cli.aligners.alignment import PocketsphinxAligner
from talker_cli.artifacts import Phone, Speech, Word
from talker_cli.audio_io import decode_audio
from talker_cli.errors import InputError
from talker_cli.aligners.phonemes import VOWELS
from talker_cli.aligners.recording_alignment import MAX_SPAN_S, AlignmentFailed, align_recording, plan_spans

from .conftest import ROOT

# Real speech lives beside the checkout and may not be copied into it (the TIMIT sample's terms).
SPEECH = Path(os.environ.get("TALKER_SPEECH_DIR", ROOT.parent / "shared" / "speech"))
TIMIT = SPEECH / "timit-dev"
needs_speech = pytest.mark.skipif(not TIMIT.is_dir(), reason=f"real speech not found at {SPEECH} (TALKER_SPEECH_DIR)")
sys.path.insert(0, str(ROOT / "bench"))


def words_every(n: int, step_s: float, gap_every: int = 7) -> tuple[Word, ...]:
    """n words, with a 0.4 s pause after every gap_every-th."""
    words, t = [], 0.3
    for i in range(n):
        words.append(Word(f"w{i}", t, t + step_s))
        t += step_s + (0.4 if i % gap_every == gap_every - 1 else 0.0)
    return tuple(words)


def test_spans_cover_the_recording_are_short_and_cut_between_words():
    words = words_every(400, 0.3)
    duration = words[-1].end_s + 0.5
    spans = plan_spans(words, duration)
    assert spans[0].start_s == 0 and spans[-1].end_s == duration
    assert all(a.end_s == b.start_s for a, b in zip(spans, spans[1:]))
    assert len(spans) >= duration / MAX_SPAN_S and all(s.duration_s <= min(MAX_SPAN_S, 30) for s in spans)
    assert sum(len(s.words) for s in spans) == len(words)
    for span in spans:  # no word straddles a cut, and cuts fall in the pauses
        assert all(span.start_s <= w.start_s and w.end_s <= span.end_s for w in span.words)
    pauses = [(a.end_s, b.start_s) for a, b in zip(words, words[1:]) if b.start_s - a.end_s > 0.3]
    assert all(any(a <= s.end_s <= b for a, b in pauses) for s in spans[:-1])


class ScriptedEngine:
    """Answers like the acoustic engine, failing where the test says: the chain's decisions are under test."""

    def __init__(self, unalignable=(), unheard=()):
        self.unalignable, self.unheard = set(unalignable), set(unheard)
        self.forced, self.heard = [], []

    def dictionary_words(self, text):
        return text.lower().split()

    def pronounce(self, word):
        return ["M", "AA"]

    def force(self, samples, words, offset_s):
        self.forced.append(list(words))
        if self.unalignable & set(words):
            raise AlignmentFailed("no path")
        step = len(samples) / 16000 / len(words)
        phones = [Phone("AA", offset_s + i * step, offset_s + (i + 1) * step) for i in range(len(words))]
        return phones, [Word(w, p.start_s, p.end_s) for w, p in zip(words, phones)]

    def recognize(self, samples, offset_s):
        self.heard.append(offset_s)
        if any(abs(offset_s - t) < 0.3 for t in self.unheard):
            return [Phone("SIL", offset_s, offset_s + len(samples) / 16000)]
        return [Phone("B", offset_s, offset_s + 0.05), Phone("IY", offset_s + 0.05, offset_s + 0.1)]


def test_no_vowel_heard_is_no_speech():
    class Clicks(ScriptedEngine):
        def recognize(self, samples, offset_s):
            return [Phone("SIL", offset_s, offset_s + 0.5), Phone("P", offset_s + 0.5, offset_s + 0.6)]

    with pytest.raises(InputError, match="no speech was found"):
        align_recording(recording(1.0), "", (), Clicks())


def recording(duration_s: float) -> Speech:
    return Speech(np.zeros(int(duration_s * 16000), np.float32), 16000, "recording")


def test_a_failing_span_is_split_then_recognized_then_anchored():
    anchors = (Word("one", 0.2, 0.5), Word("two", 0.5, 0.8), Word("mumble", 1.4, 1.8), Word("four", 1.8, 2.1))
    engine = ScriptedEngine(unalignable={"mumble"})
    track = align_recording(recording(2.5), "one two mumble four", anchors, engine)
    assert engine.forced[0] == ["one", "two", "mumble", "four"]  # the whole span first
    assert [s.source for s in track.spans] == ["forced", "recognized", "forced"]
    assert track.spans[0].start_s == 0 and track.spans[-1].end_s == 2.5
    assert {w.text for w in track.words} == {"one", "two", "mumble", "four"}
    # nothing heard in the failing word either: its pronunciation over the ASR's timing of it
    engine = ScriptedEngine(unalignable={"mumble"}, unheard=engine.heard)
    track = align_recording(recording(2.5), "one two mumble four", anchors, engine)
    assert [s.source for s in track.spans] == ["forced", "anchored", "forced"]
    spread = [p for p in track.phones if track.spans[1].start_s <= p.start_s < track.spans[1].end_s and p.label != "SIL"]
    assert [p.label for p in spread] == ["M", "AA"] and spread[0].start_s == 1.4 and spread[-1].end_s == 1.8


def test_no_speech_anywhere_is_an_input_error():
    engine = ScriptedEngine(unheard=[0.0])
    with pytest.raises(InputError, match="no speech was found"):
        align_recording(recording(1.0), "", (), engine)


@pytest.fixture(scope="module")
def aligner():
    engine = PocketsphinxAligner()
    engine.load()
    yield engine
    engine.unload()


def timit(name: str) -> tuple[Speech, str, list[Phone]]:
    from lipsync import read_timit_phones

    path = TIMIT / name
    speech = Speech(decode_audio(path.with_suffix(".wav"), 16000), 16000, "recording")
    return speech, path.with_suffix(".txt").read_text().split(None, 2)[2].strip(), read_timit_phones(path.with_suffix(".phn"))


@needs_speech
@pytest.mark.parametrize("name", ["dr3-madc0_sa2", "dr7-fblv0_sx338", "dr8-mbcg0_si486"])
def test_utterances_that_broke_the_phone_level_pass_align(aligner, name):
    from lipsync import boundary_errors

    speech, text, truth = timit(name)
    track = aligner.align(speech, text)
    assert [s.source for s in track.spans] == ["forced"]
    assert len(track.words) == len(text.split())
    errors, missed = boundary_errors(truth, list(track.phones))
    assert np.mean(np.abs(errors) <= 0.025) >= 0.7 and missed <= 0.15 * len(truth)


@needs_speech
def test_a_span_whose_words_cannot_fit_its_audio_falls_back_and_the_rest_is_forced(aligner):
    speech, text, truth = timit("dr1-fvmh0_sa2")  # "Don't ask me to carry an oily rag like that."
    words = [w.text for w in (Word(t, 0, 0) for t in text.split())]
    spoken = [p for p in truth if p.label != "SIL"]
    step = (spoken[-1].end_s - spoken[0].start_s) / len(words)
    anchors = [Word(w, spoken[0].start_s + i * step, spoken[0].start_s + (i + 1) * step) for i, w in enumerate(words)]
    # the ASR heard thirty words in a quarter of a second: no path fits them (a word-level failure)
    crammed = [Word("international", anchors[4].start_s, anchors[4].start_s + 0.25)] * 30
    track = aligner.align(speech, text, tuple(anchors[:4] + crammed + anchors[4:]))
    sources = [s.source for s in track.spans]
    assert sources[0] == "forced" and sources[-1] == "forced" and "recognized" in sources
    assert track.phones[-1].end_s <= speech.duration_s + 0.02
    assert sum(p.label != "SIL" for p in track.phones) >= 20


PEAK_RSS = """
import json, resource, sys
import numpy as np
from talker_cli.aligners.alignment import PocketsphinxAligner
from talker_cli.artifacts import Speech, Word
from talker_cli.audio_io import decode_audio
samples = decode_audio(__import__("pathlib").Path(sys.argv[1]), 16000)
words = [Word(w, float(a), float(b)) for w, a, b in json.loads(sys.argv[2])]
times = int(sys.argv[3])
length = len(samples) / 16000
speech = Speech(np.tile(samples, times), 16000, "recording")
anchors = tuple(Word(w.text, w.start_s + k * length, w.end_s + k * length) for k in range(times) for w in words)
aligner = PocketsphinxAligner()
aligner.load()
track = aligner.align(speech, " ".join(w.text for w in anchors), anchors)
print(json.dumps({"rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "spans": len(track.spans), "sources": sorted({s.source for s in track.spans}),
                  "end_s": track.phones[-1].end_s, "duration_s": speech.duration_s}))
"""


@pytest.mark.slow
@needs_speech
def test_memory_stays_flat_with_the_length_of_a_recording():
    jfk = SPEECH / "jfk.flac"
    said = ("and so my fellow americans ask not what your country can do for you "
            "ask what you can do for your country").split()
    samples = decode_audio(jfk, 16000)
    # anchors as an ASR gives them: the words spread over the speech, the whole recording repeated
    step = (len(samples) / 16000 - 0.6) / len(said)
    words = json.dumps([[w, 0.3 + i * step, 0.3 + (i + 1) * step] for i, w in enumerate(said)])

    def peak(times):
        out = subprocess.run([sys.executable, "-c", PEAK_RSS, str(jfk), words, str(times)],
                             capture_output=True, text=True, check=True, cwd=ROOT).stdout
        return json.loads(out)

    short, long = peak(2), peak(24)  # 22 s and 4.4 min
    assert long["duration_s"] > 10 * short["duration_s"]
    assert long["end_s"] == pytest.approx(long["duration_s"], abs=0.05)
    assert long["rss_mib"] < short["rss_mib"] + 60  # not 12 times the alignment's memory


def test_a_long_recording_is_transcribed_in_windows_cut_where_it_is_quiet():
    from talker_cli.artifacts import Transcript
    from talker_cli.listening.asr import WINDOW_S, transcribe_in_windows

    rate = 16000
    loud = (0.3 * np.random.default_rng(0).standard_normal(int(700 * rate))).astype(np.float32)
    for quiet_s in (285.0, 560.0):  # pauses inside each window's last half minute
        loud[int(quiet_s * rate):int((quiet_s + 0.3) * rate)] = 0
    windows, reports = [], []

    def window(samples, heard):
        windows.append(len(samples) / rate)
        heard(len(samples) / rate / 2)  # half way through the window, as a segment's end says
        return Transcript("word", (Word("word", 1.0, 1.5),), "en")

    transcript = transcribe_in_windows(Speech(loud, rate, "recording"), window, meter=lambda *r: reports.append(r))
    assert len(windows) == 3 and max(windows) <= WINDOW_S
    # the seconds transcribed so far, on the whole recording, growing to its length
    assert [round(r[1]) for r in reports] == [round(windows[0] / 2), round(windows[0] + windows[1] / 2),
                                              round(windows[0] + windows[1] + windows[2] / 2), 700]
    assert all(r[0] == "transcribe" and r[2] == 700 for r in reports)
    starts = [w.start_s for w in transcript.words]
    assert starts[0] == 1.0 and 285 < starts[1] - 1.0 < 285.3 and 560 < starts[2] - 1.0 < 560.3
    assert transcript.text == "word word word"


def test_the_benchmark_reads_a_closure_with_its_release_and_an_affricate_with_its_closure(tmp_path):
    from lipsync import read_timit_phones

    phn = tmp_path / "much.phn"  # "much time": m ah tcl ch, then tcl t ay m
    rows = ["0 1600 h#", "1600 2400 m", "2400 4000 ah", "4000 4800 tcl", "4800 5600 ch", "5600 6400 tcl",
            "6400 6800 t", "6800 8800 ay", "8800 9600 m", "9600 11200 h#"]
    phn.write_text("\n".join(rows) + "\n")
    phones = read_timit_phones(phn)
    assert [p.label for p in phones] == ["SIL", "M", "AH", "CH", "T", "AY", "M", "SIL"]
    assert (phones[3].start_s, phones[3].end_s) == (0.25, 0.35) and (phones[4].start_s, phones[4].end_s) == (0.35, 0.425)


def test_numbers_are_words_said_the_way_they_are_written():
    from talker_cli.aligners.alignment import said_as, tokenize

    assert tokenize("I paid $5 for 3 .5 apples, 50 % of 1,500 in the 1990s, 10th café, don't") == [
        "i", "paid", "$5", "for", "3", ".5", "apples", "50", "%", "of", "1,500", "in", "the", "1990s",
        "10th", "café", "don't"]
    assert tokenize("привет 你好") == []  # not read out as English letters ("Chinese letter")
    assert said_as("$5") == ["5 dollars"] and said_as("£1") == ["1 pound"]
    assert said_as(".30") == ["point 30", "30"]  # 3.5, or the end of 9.30
    assert tokenize("8 ,000 1 ,500") == ["8", ",000", "1", ",500"]  # 8,000 and 1,500 as Whisper cuts them
    assert said_as(",000") == ["thousand"] and said_as(",500") == ["thousand 500"]
    assert said_as("1999") == ["1999", "19 99"] and said_as("1800") == ["1800", "18 hundred"]
    assert said_as("2005") == ["2005"] and said_as("hello") == ["hello"]
    assert said_as("3:00") == ["3 o'clock", "3"] and said_as("3:05") == ["3 oh 5"] and said_as("9:30") == ["9:30"]


@pytest.mark.slow
def test_a_recording_with_numbers_keeps_the_words_whisper_writes_as_digits(aligner):
    """Whisper writes "$5", "50" "%" and "1999." for what is said: each is aligned as it was said
    (taken apart, "dollars" and "percent" had no phones and their sound went to a pause)."""
    from talker_cli.listening.asr import make_asr
    from talker_cli.config import load_config
    from talker_cli.voices.tts import make_tts

    config = load_config("cpu", {})
    voice = make_tts(config.tts, "en")
    voice.load()
    # Piper draws its voice's noise afresh each time, and one draw in many was heard as words: the
    # recording here is the same every run
    voice.voice.config.noise_scale = voice.voice.config.noise_w_scale = 0.0
    said = voice.synthesize("I paid five dollars for three point five apples at nine thirty, fifty percent more "
                            "than in nineteen ninety nine.")
    recording = Speech(decode_audio_of(said), 16000, "recording")
    asr = make_asr(config.asr)
    asr.load()
    heard = asr.transcribe(recording)
    assert all(n in heard.text for n in ("$5", "3.5", "50%", "1999"))  # digits, as this ASR writes them
    labels = " ".join(p.label for p in aligner.align(recording, heard.text, heard.words).phones)
    assert "F AY V D AA L ER Z" in labels
    assert "TH R IY P OY N T F AY V" in labels  # "3" ".5"
    assert "F IH F T IY P ER S EH N T" in labels  # "50" "%"
    assert "N AY N T IY N N AY N T IY N AY N" in labels  # a year, not "nineteen hundred ninety-nine"


def decode_audio_of(speech) -> np.ndarray:
    from talker_cli.audio_io import resample

    return resample(speech.samples, speech.sample_rate, 16000)


def test_each_stretch_keeps_the_reading_that_fits_its_sound_better():
    """Of two ASR readings, the second's words replace the first's only in the stretch where they fit
    the audio better; the second's words go to the stretch their middle falls in."""
    from talker_cli.aligners.readings import better_reading
    from talker_cli.artifacts import Transcript

    first_words = words_every(60, 0.5, gap_every=30)  # two stretches of 30 words, a pause between
    cut = (first_words[29].end_s + first_words[30].start_s) / 2
    assert [len(s.words) for s in plan_spans(first_words, first_words[-1].end_s + 0.5)] == [30, 30]
    # the second reading: the first stretch heard the same, the second as "x0 .. x29"
    second_words = first_words[:30] + tuple(Word(f"x{i}", w.start_s, w.end_s) for i, w in enumerate(first_words[30:]))
    first = Transcript(" ".join(w.text for w in first_words), first_words, "en")
    second = Transcript(" ".join(w.text for w in second_words), second_words, "en")
    rate = 100
    samples = np.zeros(int((first_words[-1].end_s + 0.5) * rate), np.float32)
    fitted: list[tuple[float, str]] = []

    def fit(audio, text):  # the x-words fit best
        fitted.append((len(audio) / rate, text.split()[0]))
        return -1.0 if text.startswith("x") else -5.0

    choice = better_reading(samples, rate, first, second, fit)
    assert (choice.stretches, choice.taken) == (1, 1)
    assert [w.text for w in choice.transcript.words] == [w.text for w in second_words]
    assert choice.transcript.text == second.text
    assert sorted(t for _, t in fitted) == ["w30", "x0"]  # only the stretch read differently was fitted
    assert all(abs(seconds - (len(samples) / rate - cut)) < 0.02 for seconds, _ in fitted)

    choice = better_reading(samples, rate, first, second, lambda audio, text: -1.0 if text.startswith("w") else -5.0)
    assert (choice.stretches, choice.taken) == (1, 0) and choice.transcript is first


def test_a_reading_that_fits_no_better_keeps_the_first_and_punctuation_is_no_difference():
    from talker_cli.aligners.readings import better_reading
    from talker_cli.artifacts import Transcript

    words = (Word("Bin", 0.2, 0.4), Word("blue", 0.4, 0.7), Word("now.", 0.8, 1.1))
    same = (Word("bin", 0.2, 0.4), Word("Blue,", 0.4, 0.7), Word("now", 0.8, 1.1))
    asked = []
    choice = better_reading(np.zeros(16000, np.float32), 16000, Transcript("Bin blue now.", words, "en"),
                            Transcript("bin Blue, now", same, "en"), lambda a, t: asked.append(t) or 0.0)
    assert (choice.stretches, choice.taken, asked) == (0, 0, [])
    assert choice.transcript.text == "Bin blue now."


@needs_speech
def test_the_aligner_fits_what_was_said_better_than_what_a_small_whisper_misheard(aligner):
    """GRID's command sentences, as Whisper tiny.en heard them, against their true words."""
    from talker_cli.aligners.readings import better_reading
    from talker_cli.artifacts import Transcript

    grid = SPEECH.parent / "mouth" / "grid-s1"
    if not grid.is_dir():
        pytest.skip(f"GRID clips not found at {grid}")
    misheard = {"bbaf3s": "Bimplo every soon.", "brif7a": "Been right in F7 again.",
                "lray6p": "Leave red at y6 please."}
    for name, heard in misheard.items():
        samples = decode_audio(grid / f"{name}.mpg", 16000)
        said = [line.split() for line in (grid / f"{name}.align").read_text().splitlines()]
        true = [Word(w, int(a) / 25000, int(b) / 25000) for a, b, w in said if w not in ("sil", "sp")]
        assert aligner.fit(samples, " ".join(w.text for w in true)) > aligner.fit(samples, heard), name
        guessed = [Word(w, true[0].start_s + i * 0.3, true[0].start_s + i * 0.3 + 0.25) for i, w in enumerate(heard.split())]
        choice = better_reading(samples, 16000, Transcript(heard, tuple(guessed), "en"),
                                Transcript(" ".join(w.text for w in true), tuple(true), "en"), aligner.fit)
        assert choice.taken == 1 and [w.text for w in choice.transcript.words] == [w.text for w in true], name


class GapEngine(ScriptedEngine):
    """Forces every span as two vowels with a pause between them, and hears a vowel in the pause."""

    def force(self, samples, words, offset_s):
        return ([Phone("AA", offset_s + 0.2, offset_s + 0.5), Phone("SIL", offset_s + 0.5, offset_s + 0.8),
                 Phone("AA", offset_s + 0.8, offset_s + 1.1)], [Word(w, offset_s + 0.2, offset_s + 1.1) for w in words])

    def recognize(self, samples, offset_s):
        self.heard.append(offset_s)
        return [Phone("SIL", offset_s, offset_s + 0.1), Phone("AE", offset_s + 0.1, offset_s + 0.2),
                Phone("T", offset_s + 0.2, offset_s + 0.25), Phone("SIL", offset_s + 0.25, offset_s + 0.3)]


def voiced(levels: list[tuple[float, float, float]], duration_s: float = 1.3) -> Speech:
    """A recording whose sound has each (start, end, amplitude) of a 150 Hz tone."""
    t = np.arange(int(duration_s * 16000)) / 16000
    samples = np.zeros_like(t)
    for a, b, amplitude in levels:
        samples[(t >= a) & (t < b)] = amplitude * np.sin(2 * np.pi * 150 * t[(t >= a) & (t < b)])
    return Speech(samples.astype(np.float32), 16000, "recording")


def test_a_loud_vowel_heard_in_a_pause_is_a_dropped_word_and_stands_in_for_it():
    words = (Word("one", 0.2, 0.5), Word("two", 0.8, 1.1))
    loud = voiced([(0.2, 0.5, 0.3), (0.6, 0.7, 0.2), (0.8, 1.1, 0.3)])  # 3.5 dB under the vowels
    track = align_recording(loud, "one two", words, GapEngine())
    assert [p.label for p in track.phones if p.label != "SIL"] == ["AA", "AE", "T", "AA"]
    assert next(p for p in track.phones if p.label == "AE").start_s == pytest.approx(0.6)
    assert [(s.start_s, s.end_s, s.source) for s in track.spans] == [
        (0.0, 0.5, "forced"), (0.5, 0.8, "recognized"), (0.8, 1.3, "forced")]
    assert {w.text for w in track.words} == {"one", "two"}  # no word is invented for the sound
    # the same vowel 30 dB under the speech's is breath or noise: the pause stays a pause
    quiet = voiced([(0.2, 0.5, 0.3), (0.6, 0.7, 0.01), (0.8, 1.1, 0.3)])
    track = align_recording(quiet, "one two", words, GapEngine())
    assert [p.label for p in track.phones] == ["AA", "SIL", "AA"]
    assert [s.source for s in track.spans] == ["forced"]


@needs_speech
def test_a_word_the_asr_dropped_is_spoken_where_its_voice_is(aligner):
    """GRID pbav3s, "place blue at v three soon", as Whisper tiny.en heard it: "at" is missing."""
    grid = SPEECH.parent / "mouth" / "grid-s1"
    if not grid.is_dir():
        pytest.skip(f"GRID clips not found at {grid}")
    speech = Speech(decode_audio(grid / "pbav3s.mpg", 16000), 16000, "recording")
    heard = [("Please", 0.6, 0.88), ("blue,", 0.88, 1.24), ("be", 1.45, 1.65), ("free", 1.65, 1.87), ("soon.", 1.87, 2.25)]
    track = aligner.align(speech, "Please blue, be free soon.", tuple(Word(*w) for w in heard))
    said = [p for p in track.phones if 1.25 <= (p.start_s + p.end_s) / 2 <= 1.44]  # "at": 1.22-1.44 s
    assert any(p.label in VOWELS for p in said), said
    assert track.phones[-1].label == "SIL" and track.phones[-1].end_s - track.phones[-1].start_s > 0.5
    assert "recognized" in {s.source for s in track.spans}


@needs_speech
def test_the_pauses_of_fluent_speech_stay_pauses(aligner):
    """jfk.flac's breaths between phrases ("And so, my fellow Americans, [breath] ask not ...") stay
    pauses, while the loud first syllable of "country" (5.97-6.07 s), which the forced path left as a
    pause and crammed the word into its last syllable, is heard."""
    speech = Speech(decode_audio(SPEECH / "jfk.flac", 16000), 16000, "recording")
    text = ("And so my fellow Americans ask not what your country can do for you "
            "ask what you can do for your country")
    track = aligner.align(speech, text)
    pauses = [(p.start_s, p.end_s) for p in track.phones[1:-1] if p.label == "SIL" and p.end_s - p.start_s >= 0.6]
    assert len(pauses) == 3 and all(1 < a < b < 9 for a, b in pauses)
    assert any(p.label in VOWELS and 5.95 < (p.start_s + p.end_s) / 2 < 6.1 for p in track.phones)
    assert [s.source for s in track.spans] == ["forced", "recognized", "forced"]


def test_a_pause_heard_across_a_span_cut_is_one_record():
    from talker_cli.aligners.recording_alignment import _Chain
    from talker_cli.artifacts import AlignedSpan

    chain = _Chain(ScriptedEngine(), recording(3.0))
    chain.served = [AlignedSpan(0.0, 1.2, "forced"), AlignedSpan(1.2, 2.0, "recognized"), AlignedSpan(2.0, 3.0, "forced")]
    chain.mark(1.0, 1.5, "recognized")
    assert chain.served == [AlignedSpan(0.0, 1.0, "forced"), AlignedSpan(1.0, 2.0, "recognized"),
                            AlignedSpan(2.0, 3.0, "forced")]
