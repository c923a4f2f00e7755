"""Glasses in front of the eyes (face/glasses.py): a blink slides the lids under the rims, which stay
where the head carries them, and a face without glasses is drawn as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from talker_cli.artifacts import BlendshapeTrack
from talker_cli.config import RenderConfig
from talker_cli.face.blendshapes import INDEX, NAMES
from talker_cli.face.frames import FrameRenderer
from talker_cli.face.glasses import find_rims
from talker_cli.face.interior import luminance
from talker_cli.face.rig import EYES, LIDS
from talker_cli.photo import load_photo

ROOT = Path(__file__).resolve().parent.parent
RIM = (35, 30, 30)


def _blink(shut: float) -> BlendshapeTrack:
    weights = np.zeros((1, len(NAMES)), np.float32)
    weights[0, INDEX["eyeBlinkLeft"]] = weights[0, INDEX["eyeBlinkRight"]] = shut
    return BlendshapeTrack(25, NAMES, weights)


@pytest.fixture(scope="module")
def bespectacled(tmp_path_factory) -> tuple[Path, list[tuple[int, int, int]]]:
    """The sample face at twice its size wearing drawn glasses: a dark frame round each eye whose top
    bar runs over the upper lid just above its lashes, joined by a bridge over the nose; and each top
    bar's row and columns between the eye's corners."""
    import cv2
    from PIL import Image

    image = np.array(Image.open(ROOT / "samples" / "face.png").convert("RGB"))
    image = cv2.resize(image, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC)
    plain = tmp_path_factory.mktemp("glasses") / "plain.png"
    Image.fromarray(image).save(plain)
    marks = load_photo(plain, RenderConfig()).landmarks_px
    bars = []
    for name, idx in EYES.items():
        outer, inner = marks[idx["outer"]], marks[idx["inner"]]
        half = float(np.linalg.norm(inner - outer)) / 2
        top = int(round(marks[list(LIDS[name][0])][:, 1].min() - 0.12 * half))  # over the lid, above the lashes
        left, right = sorted((outer[0], inner[0]))
        x0, x1 = int(left - 0.55 * half), int(right + 0.45 * half)
        cv2.rectangle(image, (x0, top), (x1, int(marks[list(LIDS[name][1])][:, 1].max() + 0.6 * half)), RIM, 4)
        bars.append((top, int(left), int(right)))
    inner_right, inner_left = marks[EYES["Right"]["inner"]], marks[EYES["Left"]["inner"]]
    cv2.line(image, (int(inner_right[0] + 8), bars[0][0] + 1), (int(inner_left[0] - 8), bars[1][0] + 1), RIM, 4)
    path = plain.parent / "glasses.png"
    Image.fromarray(image).save(path)
    return path, bars


def test_a_blink_behind_glasses_leaves_their_rim_where_it_is(bespectacled):
    """Shut, the lids have slid down under the frame's top bar, which stays where it was over each eye
    (drawn with the lid's skin, it went down into the eye: a notch in the rim), and no copy of the bar
    is dragged down over the eye (the face under the rim is filled in before the lids stretch it). At
    rest the eyes and the glasses are the photo's."""
    path, bars = bespectacled
    photo = load_photo(path, RenderConfig())
    renderer = FrameRenderer(photo)
    assert renderer.rims is not None  # the premise: the glasses are found
    rest, shut = renderer.render(_blink(0.0), 0), renderer.render(_blink(1.0), 0)
    x0, y0, x1, y1 = renderer.rims.box
    eyes = slice(max(y0 - 20, 0), y1 + 20), slice(max(x0 - 20, 0), x1 + 20)
    assert np.abs(rest[eyes].astype(int) - photo.image_rgb[eyes].astype(int)).max() <= 1
    bar_light = float(luminance(np.array(RIM, np.float32)))
    for top, left, right in bars:
        bar = slice(top - 1, top + 2), slice(left, right)
        assert np.abs(shut[bar].astype(int) - photo.image_rgb[bar].astype(int)).mean() < 12
        # under the bar, over the shut eye: the lid's skin, nowhere as dark as a second bar
        under = luminance(shut[top + 4:top + 12, left:right].astype(np.float32)).mean(axis=1)
        assert under.min() > bar_light + 40, (under.min(), bar_light)


def test_a_face_without_glasses_has_no_rims(tmp_path):
    """No glasses, no rims: the sample face, at its size and twice it, and a GRID speaker's frames."""
    import cv2
    from PIL import Image

    twice = tmp_path / "twice.png"
    image = np.array(Image.open(ROOT / "samples" / "face.png").convert("RGB"))
    Image.fromarray(cv2.resize(image, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC)).save(twice)
    for path in (ROOT / "samples" / "face.png", twice, ROOT / "tests" / "data" / "grid-s1-bbaf3s-0.png",
                 ROOT / "tests" / "data" / "grid-s1-bbaf3s-30.png"):
        photo = load_photo(path, RenderConfig())
        assert find_rims(photo.image_rgb, photo.landmarks_px) is None, path.name
