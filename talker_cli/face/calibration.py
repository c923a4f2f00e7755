"""How far to draw the lips apart so that a viewer sees the opening the track asks for.

The track's opening is a distance between the inner lips (eye-corner distances). What the warp draws
is not what the eye, or a face tracker, reads: a photo's lip shapes, teeth and shading make the same
drawn gap read up to a third wider on one face and a tenth narrower on another, and a thin gap reads
as closed lips or as a clear opening with little in between. So each photo's renderer draws a few
probe openings, reads them back with FaceMesh as a video (as bench/mouth.py reads real speakers), and
inverts what it saw: the curve from the asked opening to the drawn one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# Drawn openings probed, in eye-corner distances: fine where thin gaps jump from closed to open,
# up to a wide-open shout.
PROBES = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4)
MIN_READ = 6  # fewer probes read than this (a face the tracker loses): draw as asked
# Under this a reading is not trusted: a tracker reads a thin gap, or lips drawn part way over a
# photo's teeth, as closed one time and wide open the next. The curve runs straight from closed to
# the first probe read clearly open.
OPEN_READ = 0.05
# The most the curve draws for an asked opening: 1.5 times it. On filmed speakers' frames and photos
# the tracker reads a drawn opening as 0.7-1.7 of itself; on a painting it read 0.2, 0.25 and 0.3
# all as 0.1 and the curve drew an E (0.16) as wide as an AA (0.2), a shout each. A reading that far
# under the drawing is the tracker losing the mouth, not the mouth looking small.
MAX_GAIN = 1.5


@dataclass(frozen=True)
class OpeningCurve:
    """asked -> drawn, both increasing, in eye-corner distances; beyond the last point the last ratio."""
    asked: tuple[float, ...] = (0.0, 1.0)
    drawn: tuple[float, ...] = (0.0, 1.0)

    def __call__(self, asked: float) -> float:
        top_asked, top_drawn = self.asked[-1], self.drawn[-1]
        if asked > top_asked:
            return min(asked * top_drawn / top_asked, MAX_GAIN * asked)
        return min(float(np.interp(asked, self.asked, self.drawn)), MAX_GAIN * asked)


AS_DRAWN = OpeningCurve()


def fit_curve(drawn: np.ndarray, seen: np.ndarray) -> OpeningCurve:
    """The inverse of what was seen at each drawn opening (NaN: not read), from closed (0, 0) through
    the probes read open. The readings are made non-decreasing first (a tracker's noise must not fold
    the curve), each inner one is taken halfway to its neighbours' line (below), and they are made
    strictly increasing by a hair."""
    keep = np.isfinite(seen)
    if keep.sum() < MIN_READ:
        return AS_DRAWN
    drawn, seen = np.asarray(drawn, float)[keep], np.maximum.accumulate(np.asarray(seen, float)[keep])
    open_ = (seen >= OPEN_READ) & (drawn > 0)
    if open_.sum() < 2:
        return AS_DRAWN
    seen, at = seen[open_], drawn[open_]
    # A tracker reads neighbouring probes unevenly (on a GRID frame 0.05, 0.06 and 0.08 drawn read
    # 0.076, 0.093 and 0.101): inverted as read, the curve's slope doubled from one probe to the next
    # and the mouth sped up through it. Each inner reading is taken halfway to the line through its
    # neighbours' (a face read in proportion to what is drawn keeps its readings).
    if len(seen) >= 3:
        line = seen[:-2] + (seen[2:] - seen[:-2]) * (at[1:-1] - at[:-2]) / (at[2:] - at[:-2])
        seen = np.concatenate([seen[:1], (seen[1:-1] + line) / 2, seen[-1:]])
    seen = np.concatenate([[0.0], seen]) + 1e-6 * np.arange(len(seen) + 1)
    return OpeningCurve(asked=tuple(float(x) for x in seen), drawn=(0.0, *(float(x) for x in at)))


def calibrate(draw: Callable[[float], np.ndarray], read: Callable[[list[np.ndarray]], np.ndarray]) -> OpeningCurve:
    """draw(opening) renders the face with its lips drawn that far apart; read(frames) gives the
    openings a tracker sees in them, read as a video: the probes opening and then closing again, each
    probe's two readings averaged (a tracker's reading of a frame leans on the frame before it)."""
    frames = [draw(opening) for opening in PROBES]
    seen = read(frames + frames[::-1])
    opening, closing = seen[:len(frames)], seen[len(frames):][::-1]
    both = np.where(np.isnan(opening), closing, np.where(np.isnan(closing), opening, (opening + closing) / 2))
    return fit_curve(np.array(PROBES), both)


def curve_record(curve: OpeningCurve) -> dict:
    """The curve as JSON-ready numbers (the work cache keeps it per photo)."""
    return {"asked": list(curve.asked), "drawn": list(curve.drawn)}


def curve_from_record(record: object) -> OpeningCurve | None:
    """A kept curve, or None where it is not one this module could have made: two lists of the same
    length, at least two points, finite, from (0, 0), increasing, drawn within the probes' range
    (a damaged or planted entry is calibrated again, never drawn from)."""
    if record == curve_record(AS_DRAWN):  # a face the tracker did not read: drawn as asked
        return AS_DRAWN
    try:
        asked = tuple(float(x) for x in record["asked"])  # type: ignore[index]
        drawn = tuple(float(x) for x in record["drawn"])  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        return None
    points = np.array([asked, drawn]) if len(asked) == len(drawn) else np.zeros((2, 0))
    if (points.shape[1] < 2 or not np.isfinite(points).all() or asked[0] != 0.0 or drawn[0] != 0.0
            or (np.diff(points, axis=1) <= 0).any() or max(drawn) > max(PROBES) or max(asked) > 1.0):
        return None
    return OpeningCurve(asked=asked, drawn=drawn)
