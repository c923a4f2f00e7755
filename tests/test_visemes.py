import numpy as np
import pytest

from talker_cli.artifacts import Phone, VisemeSegment
from talker_cli.face.blendshapes import INDEX, NAMES, blendshape_track, blink_times, mouth_weights, track_opening
from talker_cli.config import RenderConfig, VisemeConfig
from talker_cli.face.visemes import (
    VISEMES, enforce_min_duration, hold_short_pauses, phones_to_segments, viseme_track,
)


def seg(v, a, b):
    return VisemeSegment(v, a, b)


def names(segments):
    return [s.viseme for s in segments]


def test_every_viseme_is_in_the_ovr_set():
    phones = [Phone(p, i * 0.1, i * 0.1 + 0.1) for i, p in enumerate("P F TH D K CH S N R AA EH IY OW UW SIL".split())]
    assert set(names(phones_to_segments(phones))) <= set(VISEMES)


def test_hh_takes_the_shape_of_the_next_sound_and_equal_neighbours_join():
    phones = [Phone("HH", 0.0, 0.1), Phone("UW", 0.1, 0.3), Phone("UH", 0.3, 0.4)]
    assert phones_to_segments(phones) == [seg("U", 0.0, 0.4)]


def test_a_diphthong_that_ends_rounded_is_drawn_rounding_for_its_last_part_one_ending_in_i_stays_whole():
    now = phones_to_segments([Phone("N", 0.0, 0.1), Phone("AW", 0.1, 0.35), Phone("SIL", 0.35, 1.0)])
    assert [(s.viseme, s.pose) for s in now] == [("nn", "nn"), ("aa", "aa"), ("aa", "U"), ("sil", "sil")]
    assert now[2].start_s == pytest.approx(0.25)  # the glide's last 40%, as Rhubarb times diphthongs
    go = phones_to_segments([Phone("G", 0.0, 0.1), Phone("OW", 0.1, 0.35)])
    assert [(s.viseme, s.pose) for s in go] == [("kk", "kk"), ("O", "O"), ("O", "U")]
    my = phones_to_segments([Phone("M", 0.0, 0.1), Phone("AY", 0.1, 0.35)])
    assert [(s.viseme, s.pose) for s in my] == [("PP", "PP"), ("aa", "aa")]
    track = lambda vowel: track_opening(blendshape_track(  # noqa: E731
        viseme_track([Phone("SIL", 0, 0.3), Phone("N", 0.3, 0.4), Phone(vowel, 0.4, 0.7), Phone("SIL", 0.7, 1.2)],
                     VisemeConfig()), 1.2, VisemeConfig(), RenderConfig(blink_rate=0, head_motion=0)))
    assert track("AW")[16] < 0.5 * track("AA")[16]  # frame centre 0.66 s: "now" rounds, "nah" does not


def test_an_r_after_a_vowel_keeps_its_lips_open_one_before_a_vowel_rounds_them_shut():
    heart_red = [Phone("SIL", 0, 0.3), Phone("AA", 0.3, 0.45), Phone("R", 0.45, 0.55), Phone("T", 0.55, 0.6),
                 Phone("R", 0.6, 0.7), Phone("EH", 0.7, 0.85), Phone("D", 0.85, 0.9), Phone("SIL", 0.9, 1.5)]
    segments = phones_to_segments(heart_red)
    assert [(s.viseme, s.pose) for s in segments] == [
        ("sil", "sil"), ("aa", "aa"), ("RR", "ER"), ("DD", "DD"), ("RR", "RR"), ("E", "E"), ("DD", "DD"),
        ("sil", "sil")]
    her = phones_to_segments([Phone("HH", 0, 0.05), Phone("ER", 0.05, 0.2)])
    assert [(s.viseme, s.pose) for s in her] == [("RR", "ER")]
    opening = track_opening(blendshape_track(viseme_track(heart_red, VisemeConfig()), 1.5, VisemeConfig(),
                                             RenderConfig(blink_rate=0, head_motion=0)))
    heart_r, red_r = opening[int(0.5 * 25)], opening[int(0.65 * 25)]
    assert heart_r > 0.05 and heart_r > red_r  # "heart"'s R open (drawn as "red"'s: 0.02)
    assert red_r < 0.04  # "red"'s rounded lips shut in the middle, as filmed speakers' are


def test_a_short_v_between_short_vowels_is_kept_as_a_closure_is():
    """"seven" as fast speech has it: V shorter than the minimum between vowels that cannot lend."""
    seven = [Phone("SIL", 0, 0.3), Phone("S", 0.3, 0.4), Phone("EH", 0.4, 0.444), Phone("V", 0.444, 0.472),
             Phone("AH", 0.472, 0.488), Phone("N", 0.488, 0.62), Phone("SIL", 0.62, 1.0)]
    segments = viseme_track(seven, VisemeConfig())
    assert "FF" in names(segments)
    assert all(s.end_s - s.start_s >= VisemeConfig().min_shape_s - 1e-9 for s in segments)


def test_w_keeps_its_viseme_and_its_own_nearly_shut_lips_through_the_rules():
    """W exports as U (its viseme in every set) but is drawn with lips nearly shut, as filmed
    speakers' are, where U's stay open: its pose must survive HH, short pauses and the minimum."""
    phones = [Phone("SIL", 0, 0.3), Phone("HH", 0.3, 0.33), Phone("W", 0.33, 0.36), Phone("UW", 0.36, 0.5),
              Phone("SIL", 0.5, 0.55), Phone("W", 0.55, 0.62), Phone("SIL", 0.62, 0.66), Phone("AA", 0.66, 0.8),
              Phone("SIL", 0.8, 1.5)]
    segments = viseme_track(phones, VisemeConfig())
    assert [(s.viseme, s.pose) for s in segments] == [
        ("sil", "sil"), ("U", "W"), ("U", "U"), ("U", "W"), ("aa", "aa"), ("sil", "sil")]
    assert segments[3].end_s == pytest.approx(0.66)  # the short pause after W held W's pose
    assert all(s.end_s - s.start_s >= VisemeConfig().min_shape_s - 1e-9 for s in segments)
    for_w, for_u = (track_opening(blendshape_track(
        viseme_track([Phone("SIL", 0, 0.4), Phone(sound, 0.4, 0.5), Phone("AA", 0.5, 0.7), Phone("SIL", 0.7, 1.2)],
                     VisemeConfig()), 1.2, VisemeConfig(), RenderConfig(blink_rate=0, head_motion=0)))
        for sound in ("W", "UW"))
    assert for_w[10] < 0.6 * for_u[10]  # frame centre 0.42 s: "wa" against "ooa"


def test_the_open_vowels_open_the_jaw_wider_than_the_mid_central_one_in_the_same_viseme():
    """AA and AE ("hot", "hat") and AH ("hut", "the") are all viseme aa in every set, and export as
    such, but filmed speakers open the first two wider (natural speech's widest openings)."""
    def spoken(vowel):
        phones = [Phone("SIL", 0, 0.4), Phone("HH", 0.4, 0.45), Phone(vowel, 0.45, 0.65), Phone("T", 0.65, 0.72),
                  Phone("SIL", 0.72, 1.2)]
        segments = viseme_track(phones, VisemeConfig())
        track = blendshape_track(segments, 1.2, VisemeConfig(), RenderConfig(blink_rate=0, head_motion=0))
        return [s.viseme for s in segments], track_opening(track)[13]  # frame centre 0.54 s
    (hot, open_hot), (hat, open_hat), (hut, open_hut) = map(spoken, ("AA", "AE", "AH"))
    assert hot == hat == hut == ["sil", "aa", "DD", "sil"]
    assert open_hot == open_hat > 1.3 * open_hut > 0
    # beside an open vowel, AH is part of its open stretch: one segment, as before it had a pose of its own
    beside = phones_to_segments([Phone("AY", 0, 0.15), Phone("AH", 0.15, 0.2), Phone("T", 0.2, 0.3)])
    assert [(s.viseme, s.pose, s.end_s) for s in beside][:1] == [("aa", "aa", 0.2)]


def test_gaps_between_phones_become_silence():
    segments = phones_to_segments([Phone("M", 0.5, 0.6)])
    assert segments[0] == seg("sil", 0.0, 0.5)


def test_short_pause_holds_previous_shape_long_pause_rests():
    segments = [seg("aa", 0, 0.3), seg("sil", 0.3, 0.4), seg("E", 0.4, 0.6), seg("sil", 0.6, 0.9), seg("O", 0.9, 1.2)]
    held = hold_short_pauses(segments, 0.12)
    assert names(held) == ["aa", "E", "sil", "O"]
    assert held[0].end_s == 0.4


def test_short_shape_borrows_time_from_a_long_neighbour():
    segments = [seg("aa", 0, 0.3), seg("PP", 0.3, 0.33), seg("E", 0.33, 0.6)]
    out = enforce_min_duration(segments, 0.07)
    assert names(out) == ["aa", "PP", "E"]
    assert all(s.end_s - s.start_s >= 0.07 - 1e-9 for s in out)
    assert out[0].start_s == 0 and out[-1].end_s == 0.6  # total time is kept


def test_a_short_shape_is_lengthened_around_its_own_centre_when_both_neighbours_can_lend():
    segments = [seg("aa", 0, 0.3), seg("SS", 0.3, 0.33), seg("E", 0.33, 0.6)]
    out = enforce_min_duration(segments, 0.07)
    assert names(out) == ["aa", "SS", "E"]
    assert (out[1].start_s, out[1].end_s) == (pytest.approx(0.28), pytest.approx(0.35))  # centre 0.315 kept


def test_a_closure_has_a_minimum_of_its_own():
    segments = [seg("aa", 0, 0.3), seg("PP", 0.3, 0.35), seg("SS", 0.35, 0.4), seg("E", 0.4, 0.7)]
    out = enforce_min_duration(segments, 0.05, 0.07)
    assert names(out) == ["aa", "PP", "SS", "E"]
    assert out[1].end_s - out[1].start_s == pytest.approx(0.07)
    assert out[2].end_s - out[2].start_s >= 0.05 - 1e-9


def test_short_shape_between_short_neighbours_is_absorbed():
    segments = [seg("DD", 0, 0.05), seg("kk", 0.05, 0.08), seg("nn", 0.08, 0.13)]
    out = enforce_min_duration(segments, 0.07)
    assert all(s.end_s - s.start_s >= 0.07 - 1e-9 for s in out)
    assert out[0].start_s == 0 and out[-1].end_s == pytest.approx(0.13)


def test_weights_rest_in_silence_and_move_in_speech():
    segments = [seg("sil", 0, 0.5), seg("aa", 0.5, 0.9), seg("sil", 0.9, 1.6)]
    w = mouth_weights(segments, 1.6, 25, VisemeConfig())
    jaw = w[:, INDEX["jawOpen"]]
    assert jaw[:5].max() < 0.02  # 0..0.2 s: at rest
    assert jaw[15:20].max() > 0.3  # inside the vowel
    assert jaw[-5:].max() < 0.02
    assert np.abs(np.diff(jaw)).max() < 0.35  # smooth transitions


def test_a_short_closure_is_always_seen_closed():
    segments = [seg("aa", 0, 0.4), seg("PP", 0.4, 0.47), seg("aa", 0.47, 0.9)]
    w = mouth_weights(segments, 0.9, 25, VisemeConfig())
    closure_frames = range(int(0.4 * 25), int(np.ceil(0.47 * 25)))
    assert max(w[f, INDEX["mouthClose"]] for f in closure_frames) >= 0.89
    assert min(w[f, INDEX["jawOpen"]] for f in closure_frames) <= 0.08


def test_blinks_are_spaced_and_seeded():
    rng = np.random.default_rng(0)
    times = blink_times(30.0, 4.0, rng)
    assert 4 <= len(times) <= 15
    assert min(np.diff(times)) >= 2.0
    assert times == blink_times(30.0, 4.0, np.random.default_rng(0))
    assert blink_times(30.0, 0.0, rng) == []


def test_track_has_arkit_names_one_row_per_frame_and_blinks():
    phones = [Phone("SIL", 0, 0.5), Phone("HH", 0.5, 0.55), Phone("AY", 0.55, 0.8), Phone("SIL", 0.8, 6.0)]
    track = blendshape_track(viseme_track(phones, VisemeConfig()), 6.0, VisemeConfig(), RenderConfig(fps=30))
    assert track.names == NAMES
    assert {"jawOpen", "mouthClose", "mouthFunnel", "mouthPucker", "eyeBlinkLeft", "eyeBlinkRight"} <= set(NAMES)
    assert track.frame_count == 180
    assert track.weights.min() >= 0 and track.weights.max() <= 1
    assert track.weights[:, INDEX["eyeBlinkLeft"]].max() > 0.9


# Phones as Piper speaks them: short consonants between vowels (0.035-0.05 s), one P at 0.03 s
# squeezed between short neighbours, as in "a big top map".
PIPER_LIKE = [Phone("SIL", 0, 0.4), Phone("AH", 0.4, 0.46), Phone("B", 0.46, 0.5), Phone("IH", 0.5, 0.56),
              Phone("G", 0.56, 0.6), Phone("T", 0.6, 0.64), Phone("AA", 0.64, 0.75), Phone("P", 0.75, 0.78),
              Phone("M", 0.78, 0.81), Phone("AE", 0.81, 0.9), Phone("D", 0.9, 0.935), Phone("K", 0.935, 0.97),
              Phone("P", 0.97, 1.0), Phone("S", 1.0, 1.04), Phone("SIL", 1.04, 2.0)]


def test_no_shape_in_the_final_track_is_shorter_than_the_minimum():
    config = VisemeConfig()
    segments = viseme_track(PIPER_LIKE, config)
    assert config.min_closure_s > config.min_shape_s
    assert all(s.end_s - s.start_s >= config.min_shape_s - 1e-9 for s in segments)
    assert all(s.end_s - s.start_s >= config.min_closure_s - 1e-9 for s in segments if s.viseme == "PP")
    assert segments[0].start_s == 0 and segments[-1].end_s == 2.0  # nothing lost at the ends
    assert all(a.end_s == pytest.approx(b.start_s) for a, b in zip(segments, segments[1:]))


@pytest.mark.parametrize("fps, frames", [(25, 1), (30, 1), (50, 2), (60, 2)])
def test_every_closure_shows_a_closed_mouth_in_the_final_track(fps, frames):
    config = VisemeConfig()
    track = blendshape_track(viseme_track(PIPER_LIKE, config), 2.0, config, RenderConfig(fps=fps, blink_rate=0))
    closed = track.weights[:, INDEX["mouthClose"]] >= 0.9
    for phone in PIPER_LIKE:
        if phone.label in ("P", "B", "M"):
            near = range(int((phone.start_s - 0.04) * fps), int(np.ceil((phone.end_s + 0.04) * fps)))
            assert sum(closed[k] for k in near) >= frames, (phone, fps)


@pytest.mark.parametrize("fps", [25, 60])
def test_the_mouth_rests_before_the_anticipation_window_and_one_frame_after_the_last_sound(fps):
    config = VisemeConfig()
    phones = [Phone("SIL", 0, 0.8), Phone("AA", 0.8, 1.2), Phone("SIL", 1.2, 3.0)]
    track = blendshape_track(viseme_track(phones, config), 3.0, config, RenderConfig(fps=fps, blink_rate=0))
    mouth = track.weights[:, [INDEX[n] for n in NAMES if n.startswith(("jaw", "mouth"))]].max(axis=1)
    centres = (np.arange(track.frame_count) + 0.5) / fps
    assert mouth[centres < 0.8 - config.anticipation_s].max() == 0
    assert mouth[centres > 1.2 + 1 / fps].max() == 0
    assert mouth[(centres > 0.85) & (centres < 1.1)].min() > 0.3  # and speaks in between
    settling = mouth[(centres > 1.1) & (centres < 1.2)]  # closing as the last sound fades
    assert np.all(np.diff(settling) <= 1e-6) and settling[-1] < 0.8 * mouth[centres < 1.1].max()


@pytest.mark.parametrize("fps", [25, 30, 60])
def test_a_closure_is_forced_shut_from_the_frame_it_starts_in(fps):
    segments = [seg("aa", 0, 0.4), seg("PP", 0.41, 0.48), seg("aa", 0.48, 0.9)]
    w = mouth_weights(segments, 0.9, fps, VisemeConfig())
    first, last = int(np.floor(0.41 * fps)), int(np.ceil(0.48 * fps)) - 1
    assert all(w[k, INDEX["mouthClose"]] >= 0.89 for k in range(first, last + 1))  # not a frame late


def _reference_min_duration(segments, min_shape_s, min_closure_s):
    """The rule as first written, rescanning the whole list for every shape: slow, plainly right."""
    from talker_cli.face.visemes import _join_equal

    length = lambda s: s.end_s - s.start_s  # noqa: E731
    minimum = lambda s: min_closure_s if s.viseme == "PP" else min_shape_s  # noqa: E731
    out = _join_equal(segments)
    for _ in range(4 * len(out) + 4):
        short = [i for i, s in enumerate(out) if length(s) < minimum(s) - 1e-9]
        if not short or len(out) < 2:
            return out
        i = min(short, key=lambda k: (out[k].viseme != "PP", length(out[k])))
        seg, need = out[i], minimum(out[i]) - length(out[i])
        before = out[i - 1] if i > 0 else None
        after = out[i + 1] if i + 1 < len(out) else None
        spare_before = length(before) - minimum(before) if before else -1.0
        spare_after = length(after) - minimum(after) if after else -1.0
        if min(spare_before, spare_after) >= need / 2:
            out[i - 1] = seg_(before.viseme, before.start_s, before.end_s - need / 2)
            out[i] = seg_(seg.viseme, seg.start_s - need / 2, seg.end_s + need / 2)
            out[i + 1] = seg_(after.viseme, after.start_s + need / 2, after.end_s)
        elif max(spare_before, spare_after) >= need or seg.viseme in ("PP", "FF"):
            if after is not None and (before is None or spare_after >= spare_before):
                take = min(need, length(after))
                out[i], out[i + 1] = seg_(seg.viseme, seg.start_s, seg.end_s + take), seg_(after.viseme, after.start_s + take, after.end_s)
            else:
                take = min(need, length(before))
                out[i], out[i - 1] = seg_(seg.viseme, seg.start_s - take, seg.end_s), seg_(before.viseme, before.start_s, before.end_s - take)
        elif after is None or (before is not None and spare_before >= spare_after):
            out[i - 1] = seg_(before.viseme, before.start_s, seg.end_s)
            del out[i]
        else:
            out[i + 1] = seg_(after.viseme, seg.start_s, after.end_s)
            del out[i]
        out = _join_equal(out)
    return out


seg_ = VisemeSegment


def test_the_minimum_duration_rule_gives_what_the_plain_rescanning_rule_gives():
    rng = np.random.default_rng(7)
    for _ in range(1500):
        t, segments = 0.0, []
        for _ in range(int(rng.integers(1, 40))):
            d = float(rng.choice([0.0, 0.01, 0.03, 0.05, 0.069, 0.07, 0.1, 0.2, 0.5])) if rng.random() < 0.7 \
                else float(rng.uniform(0, 0.3))
            segments.append(seg(str(rng.choice(["PP", "sil", "aa", "E", "SS", "PP", "kk", "FF"])), t, t + d))
            t += d
        shortest, closure = [(0.07, 0.07), (0.05, 0.07)][int(rng.integers(2))]
        expected = _reference_min_duration(segments, shortest, closure)
        got = enforce_min_duration(segments, shortest, closure)
        assert [(s.viseme, round(s.start_s, 9), round(s.end_s, 9)) for s in got] == \
            [(s.viseme, round(s.start_s, 9), round(s.end_s, 9)) for s in expected], segments


def test_lip_teeth_and_tongue_teeth_contacts_are_drawn_nearly_shut_between_open_vowels():
    """F, V and TH leave the inner lips nearly touching (filmed lips read 0.006-0.03 eye distances
    there): between two wide vowels the contact's middle frame is shown closed as bench/mouth.py
    counts it (under 0.06) while the vowels around it open."""
    def opening_at(sound, middle_frame):
        phones = [Phone("SIL", 0, 0.3), Phone("AA", 0.3, 0.5), Phone(sound, 0.5, 0.62), Phone("AA", 0.62, 0.82),
                  Phone("SIL", 0.82, 1.3)]
        track = blendshape_track(viseme_track(phones, VisemeConfig()), 1.3, VisemeConfig(),
                                 RenderConfig(blink_rate=0, head_motion=0))
        opening = track_opening(track)
        return opening[middle_frame], opening[10]  # frame centres 0.54-0.58 s; 0.42 s (the vowel)
    for sound in ("F", "V", "TH", "DH"):
        contact, vowel = opening_at(sound, 13)
        assert contact < 0.06 < 0.15 < vowel, sound
