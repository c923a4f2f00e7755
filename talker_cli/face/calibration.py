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


@dataclass(frozen=True)
class OpeningCurve:
    """asked -> drawn, both increasing, in eye-corner distances; beyond the last point the last ratio."""
    asked: tuple[float, ...] = (0.0, 1.0)
    drawn: tuple[float, ...] = (0.0, 1.0)

    def __call__(self, asked: float) -> float:
        top_asked, top_drawn = self.asked[-1], self.drawn[-1]
        if asked > top_asked:
            return asked * top_drawn / top_asked
        return float(np.interp(asked, self.asked, self.drawn))


AS_DRAWN = OpeningCurve()


def fit_curve(drawn: np.ndarray, seen: np.ndarray) -> OpeningCurve:
    """The inverse of what was seen at each drawn opening (NaN: not read), from closed (0, 0) through
    the probes read open. The readings are made non-decreasing first (a tracker's noise must not fold
    the curve), and strictly increasing by a hair."""
    keep = np.isfinite(seen)
    if keep.sum() < MIN_READ:
        return AS_DRAWN
    drawn, seen = np.asarray(drawn, float)[keep], np.maximum.accumulate(np.asarray(seen, float)[keep])
    open_ = (seen >= OPEN_READ) & (drawn > 0)
    if open_.sum() < 2:
        return AS_DRAWN
    seen = np.concatenate([[0.0], seen[open_]]) + 1e-6 * np.arange(open_.sum() + 1)
    return OpeningCurve(asked=tuple(float(x) for x in seen), drawn=(0.0, *(float(x) for x in drawn[open_])))


def calibrate(draw: Callable[[float], np.ndarray], read: Callable[[list[np.ndarray]], np.ndarray]) -> OpeningCurve:
    """draw(opening) renders the face with its lips drawn that far apart; read(frames) gives the
    openings a tracker sees in them, read as a video: the probes opening and then closing again, each
    probe's two readings averaged (a tracker's reading of a frame leans on the frame before it)."""
    frames = [draw(opening) for opening in PROBES]
    seen = read(frames + frames[::-1])
    opening, closing = seen[:len(frames)], seen[len(frames):][::-1]
    both = np.where(np.isnan(opening), closing, np.where(np.isnan(closing), opening, (opening + closing) / 2))
    return fit_curve(np.array(PROBES), both)
