"""The opening curve: asked -> drawn, from what a face tracker read at each drawn probe."""

from __future__ import annotations

import numpy as np

from talker_cli.face.calibration import AS_DRAWN, OPEN_READ, PROBES, calibrate, fit_curve

DRAWN = np.array(PROBES)


def test_a_face_that_reads_wider_is_drawn_narrower():
    curve = fit_curve(DRAWN, 1.3 * DRAWN)
    assert np.isclose(curve(0.13), 0.1, atol=1e-4)
    assert np.isclose(curve(0.8), 0.8 / 1.3, atol=1e-4)  # beyond the probes: the last ratio


def test_thin_gaps_read_closed_or_open_at_random_run_straight_from_closed():
    # a tracker reading nothing under 0.05 drawn, then a jump (lips over a photo's teeth)
    seen = np.where(DRAWN < 0.05, 0.002, DRAWN)
    curve = fit_curve(DRAWN, seen)
    assert curve(0.0) == 0.0
    assert np.isclose(curve(0.01), 0.01, atol=1e-4)  # not the plateau's far end (0.05)
    seen = np.where(DRAWN < 0.04, DRAWN * 0.2, np.maximum(DRAWN * 2, OPEN_READ))
    curve = fit_curve(DRAWN, seen)
    assert curve(0.04) < 0.025  # a thin gap read wide is drawn thinner


def test_a_tracker_s_noise_does_not_fold_the_curve():
    seen = DRAWN.copy()
    seen[9] = seen[7] - 0.01  # 0.13 read narrower than 0.08
    curve = fit_curve(DRAWN, seen)
    assert np.all(np.diff(curve.asked) > 0)  # np.interp's contract
    asked = np.linspace(0, 0.5, 200)
    drawn = [curve(a) for a in asked]
    assert np.all(np.diff(drawn) >= 0)


def test_one_probe_read_high_does_not_make_the_mouth_speed_up_through_it():
    """A tracker reads neighbouring probes unevenly: one probe read 0.012 high, inverted as read, made
    the curve's slope 5.5 times steeper from one probe to the next (the mouth sped up through it);
    taken halfway to its neighbours' line, the step is under 2.5 times."""
    seen = DRAWN.copy()
    seen[list(PROBES).index(0.06)] += 0.012
    curve = fit_curve(DRAWN, seen)
    asked, drawn = np.array(curve.asked), np.array(curve.drawn)
    slopes = np.diff(drawn) / np.diff(asked)
    near = (drawn[1:] > 0.04) & (drawn[1:] <= 0.1)  # the segments around the probe read high
    assert slopes[near].max() / slopes[near].min() < 2.5, slopes[near]
    assert np.isclose(curve(0.2), 0.2, atol=1e-3)  # readings away from it are as read


def test_a_face_the_tracker_loses_is_drawn_as_asked():
    seen = np.full(len(DRAWN), np.nan)
    seen[:3] = DRAWN[:3]
    assert fit_curve(DRAWN, seen) is AS_DRAWN
    assert fit_curve(DRAWN, np.zeros(len(DRAWN))) is AS_DRAWN


def test_calibrate_draws_every_probe_and_inverts_what_was_read():
    drawn_at = []

    def draw(opening):
        drawn_at.append(opening)
        return np.full((2, 2, 3), opening)

    read_as = []

    def read(frames):  # a tracker that reads 0.1 more while the mouth closes than while it opens
        read_as.append([frame[0, 0, 0] for frame in frames])
        half = len(frames) // 2
        return np.array([0.8 * f[0, 0, 0] + (0.1 if i >= half and f[0, 0, 0] > 0.1 else 0.0)
                         for i, f in enumerate(frames)])

    curve = calibrate(draw, read)
    assert drawn_at == list(PROBES)
    assert read_as == [list(PROBES) + list(PROBES)[::-1]]  # one video: opening, then closing again
    assert np.isclose(curve(0.21), 0.2, atol=1e-4)  # 0.16 opening, 0.26 closing: 0.21 seen


def test_a_tracker_that_loses_the_drawn_mouth_does_not_make_every_opening_a_shout():
    """On a painting FaceMesh read drawn openings of 0.2, 0.25 and 0.3 eye distances all as about 0.1:
    inverted as read, an E (0.16) was drawn 0.34 wide and an AA (0.2) 0.37, both a shout. The curve
    draws at most 1.5 times what is asked (filmed speakers' frames and photos need 0.6-1.43), so the
    vowels keep their order and their ratio."""
    from talker_cli.face.calibration import MAX_GAIN

    painting = fit_curve(np.array([0.0, 0.16, 0.2, 0.25, 0.3, 0.4]), np.array([0.0, 0.079, 0.099, 0.099, 0.112, 0.243]))
    e, aa = painting(0.161), painting(0.203)
    assert e <= MAX_GAIN * 0.161 + 1e-9 and aa <= MAX_GAIN * 0.203 + 1e-9
    assert aa / e > 1.2  # AA opens wider than E, as asked (0.203 / 0.161 = 1.26)
    assert painting(0.5) <= MAX_GAIN * 0.5 + 1e-9  # beyond the probes too
    filmed = fit_curve(np.array([0.0, 0.05, 0.1, 0.15, 0.2]), np.array([0.0, 0.06, 0.11, 0.16, 0.2]))
    assert abs(filmed(0.15) - 0.14) < 0.01  # a curve within the bound is drawn as inverted
