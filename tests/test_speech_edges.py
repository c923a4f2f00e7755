"""Silence edges put where the sound starts and stops, on made sound and on labelled speech."""

from __future__ import annotations

import numpy as np

from talker_cli.artifacts import Phone
from talker_cli.aligners.speech_edges import PAUSE_S, REACH_S, snap_silence_edges

from .test_recording_alignment import TIMIT, aligner, needs_speech, timit  # noqa: F401

RATE = 16000


def sound(*parts: tuple[float, float]) -> np.ndarray:
    """Quiet noise with a loud voiced tone in each (start, end) part."""
    rng = np.random.default_rng(0)
    t = np.arange(int(2.0 * RATE)) / RATE
    samples = 0.001 * rng.standard_normal(len(t))
    for start, end in parts:
        inside = (t >= start) & (t < end)
        samples[inside] += 0.3 * np.sin(2 * np.pi * 150 * t[inside]) + 0.1 * np.sin(2 * np.pi * 900 * t[inside])
    return samples


def test_the_edges_of_a_recording_move_to_where_its_sound_starts_and_stops():
    samples = sound((0.5, 1.1))
    phones = [Phone("SIL", 0.0, 0.46), Phone("AA", 0.46, 1.14), Phone("SIL", 1.14, 2.0)]  # 40 ms wide each side
    snapped = snap_silence_edges(phones, samples, RATE)
    assert abs(snapped[1].start_s - 0.5) <= 0.005
    assert abs(snapped[1].end_s - 1.1) <= 0.005
    assert snapped[0].end_s == snapped[1].start_s and snapped[1].end_s == snapped[2].start_s


def test_a_long_pause_is_snapped_and_a_short_one_is_left_to_the_aligner():
    long_gap = PAUSE_S + 0.1
    samples = sound((0.2, 0.6), (0.6 + long_gap, 1.3))
    phones = [Phone("AA", 0.0, 0.63), Phone("SIL", 0.63, 0.6 + long_gap - 0.03), Phone("IY", 0.6 + long_gap - 0.03, 2.0)]
    snapped = snap_silence_edges(phones, samples, RATE)
    assert abs(snapped[0].end_s - 0.6) <= 0.006 and abs(snapped[2].start_s - (0.6 + long_gap)) <= 0.006

    closure = [Phone("AA", 0.0, 0.63), Phone("SIL", 0.63, 0.67), Phone("IY", 0.67, 2.0)]  # a stop's closure
    assert snap_silence_edges(closure, sound((0.2, 0.6), (0.7, 1.3)), RATE) == closure


def test_an_edge_moves_no_further_than_its_reach_and_keeps_every_phone():
    samples = sound((0.9, 1.5))
    phones = [Phone("SIL", 0.0, 0.5), Phone("M", 0.5, 0.6), Phone("AA", 0.6, 1.5), Phone("SIL", 1.5, 2.0)]
    snapped = snap_silence_edges(phones, samples, RATE)
    assert snapped[1].start_s - 0.5 <= REACH_S + 1e-9
    assert all(p.end_s > p.start_s for p in snapped)
    assert [p.label for p in snapped] == [p.label for p in phones]


def test_nothing_moves_where_no_sound_stands_out():
    samples = sound()
    phones = [Phone("SIL", 0.0, 0.5), Phone("AA", 0.5, 1.0), Phone("SIL", 1.0, 2.0)]
    assert snap_silence_edges(phones, samples, RATE) == phones


@needs_speech
def test_speech_starts_and_stops_where_the_labels_say(aligner):  # noqa: F811
    """The labelled sample, eight speakers: pocketsphinx alone puts the first sound within 25 ms of the
    labels in 0.67 of the utterances and the last sound's end in 0.48 (snapped: 0.88 and 0.66)."""
    names = sorted(p.stem for p in TIMIT.glob("*.wav"))
    starts, ends = [], []
    for name in names:
        speech, text, truth = timit(name)
        found = [p for p in aligner.align(speech, text).phones if p.label != "SIL"]
        labelled = [p for p in truth if p.label != "SIL"]
        starts.append(abs(found[0].start_s - labelled[0].start_s) <= 0.025)
        ends.append(abs(found[-1].end_s - labelled[-1].end_s) <= 0.025)
    assert np.mean(starts) >= 0.8 and np.mean(ends) >= 0.6


def test_loudness_of_some_frames_is_that_of_the_whole_read_there_only():
    """An edge reads only the frames around it (an hour's whole loudness in float64 cost 1.4 GB)."""
    from talker_cli.aligners.speech_edges import loudness_db

    x = np.random.default_rng(0).normal(size=16000 * 5).astype(np.float32)
    whole = loudness_db(x, 16000)
    assert len(whole) == 2000
    assert np.allclose(loudness_db(x, 16000, 100, 50), whole[100:150])
    assert np.allclose(loudness_db(x, 16000, 1990, 100), whole[1990:])  # clipped at the end
    assert np.allclose(loudness_db(x, 16000, 0, 3), whole[:3])
