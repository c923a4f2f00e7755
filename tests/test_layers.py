"""The lips drawn forward in two layers cut along the inner lips (face/layers.py), the filmed
interior's bank (face/interior.py), and what a viewer sees of them on real photos: the frame at rest
is the photo, the lips part as whole surfaces with the opening between them, a photo's own teeth are
kept when the mouth opens and covered when it closes."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from talker_cli.artifacts import BlendshapeTrack
from talker_cli.config import RenderConfig
from talker_cli.face.blendshapes import INDEX, JAW_OPENING, NAMES, VISEME_POSES
from talker_cli.face.frames import FrameRenderer, basis_weights
from talker_cli.face.interior import luminance
from talker_cli.photo import load_photo, read_mouth_openings

from .conftest import mouth_box

DATA = Path(__file__).parent / "data"

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))  # the blink sheet's wide-eyed photo
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))  # the appearance benchmark's SSIM


def _jaw(opening: float, frames: int = 1) -> BlendshapeTrack:
    weights = np.zeros((frames, len(NAMES)), np.float32)
    weights[:, INDEX["jawOpen"]] = opening / JAW_OPENING
    return BlendshapeTrack(25, NAMES, weights)


def test_the_first_frame_is_the_photo_whatever_pose_the_heads_motion_starts_in(closed_lips):
    """A video begins on the photo itself, not a degree off it: the head's motion comes in over the
    first half second (the mouth's box read 0.92-0.98 of the photo by SSIM at the first frame of
    natural clips, where a photo whose lips are shut should read >= 0.98), and then moves as the
    track asks, around the photo's pose (drawn from the first frame's pose instead, it sat to one
    side for a whole clip)."""
    from talker_cli.face.frames import head_offset

    photo, renderer = closed_lips
    head = np.tile(np.array([[0.9, 1.05, -0.19]], np.float32), (30, 1)) + 0.1 * np.arange(30, dtype=np.float32)[:, None]
    track = BlendshapeTrack(25, NAMES, np.zeros((30, len(NAMES)), np.float32), head=head)
    angle, dx, dy = head_offset(head[29])
    expected = renderer.cv2.getRotationMatrix2D(tuple(map(float, renderer.pivot)), angle, 1.0)
    expected[:, 2] += (dx * renderer.face_width, dy * renderer.face_width)
    assert np.allclose(renderer.head_transform(track, 29), expected)  # the track's own pose, once eased in
    rows, cols = mouth_box(photo)
    grey = lambda image: image[rows, cols] @ np.array([0.299, 0.587, 0.114])  # noqa: E731
    first = renderer.render(track, 0)
    from appearance import _ssim

    assert _ssim(grey(first), grey(photo.image_rgb)) >= 0.98
    assert np.abs(first.astype(int) - photo.image_rgb.astype(int)).max() == 0
    assert np.abs(renderer.render(track, 20).astype(int) - photo.image_rgb.astype(int)).mean() > 0.5  # and it moves


def test_lips_a_hair_apart_in_the_photo_stay_so_at_rest():
    """A photo whose lips are shut but a hair apart (GRID s1's bram2n: 0.019 eye distances at the
    middle, under the 0.03 of a mouth open at rest): at rest the frame is the photo, pixel for pixel
    (the interior had come in faintly over the hair: 13 levels off on 58 pixels); opened, it opens."""
    photo = load_photo(DATA / "grid-s1-bram2n-0.png", RenderConfig())
    renderer = FrameRenderer(photo)
    assert 0.01 < renderer.rig.frame.rest_gap_px / renderer.rig.frame.eye_px < 0.03  # the test's premise
    assert renderer.painter.look.open_gap_px == 0.0
    rest = renderer.render(_jaw(0.0), 0).astype(int)
    assert np.abs(rest - photo.image_rgb.astype(int)).max() == 0
    rows, cols = mouth_box(photo)
    opened = renderer.render(_jaw(0.12), 0).astype(int)
    assert (np.abs(opened - rest)[rows, cols].max(axis=2) > 30).sum() > 50  # and it opens


def test_the_lips_part_along_their_cut_and_the_opening_is_between_them(closed_lips):
    """Drawn forward, the upper lip stays and the lower one drops as a whole: the opening the
    interior fills runs from the upper lip's moved edge to the lower lip's, at the mouth's centre to
    a pixel and a half; nothing of it lies above the upper lip or below the lower one; with no motion
    the lips are the photo."""
    import cv2

    from talker_cli.face.layers import draw_lips

    photo, renderer = closed_lips
    x0, y0, x1, y1 = renderer.lips_box
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    still = basis_weights(_jaw(0.0), 0, renderer.scale)
    pixels, hole = draw_lips(renderer.layers, photo.image_rgb, still, xs, ys, 0.0, cv2)
    assert np.array_equal(pixels, photo.image_rgb[y0:y1, x0:x1]) and hole.max() < 0.5

    weights = basis_weights(_jaw(0.15), 0, renderer.scale)
    upper, lower = renderer.rig.opening(weights, from_lips=True)
    pixels, hole = draw_lips(renderer.layers, photo.image_rgb, weights, xs, ys, 1.0, cv2)
    centre = int(np.argmin(np.abs(upper[:, 0] - photo.landmarks_px[13][0])))
    column = int(round(upper[centre, 0])) - x0
    opened = np.flatnonzero(hole[:, column] > 0.5) + y0
    assert len(opened) > 5
    assert abs(opened[0] - upper[centre, 1]) <= 1.5 and abs(opened[-1] - lower[centre, 1]) <= 1.5, (opened, upper[centre], lower[centre])
    assert np.all(np.diff(opened) == 1)  # one opening, no lip drawn across it


def test_lips_closing_over_a_photos_open_mouth_leave_its_inside_where_it_was():
    """A photo open at rest without teeth (GRID's frame, 0.08 eye distances open), drawn half as open:
    the lips close over what lies between them and the dark between them stays as dark (closed by
    the backward map, the two halves slid together and the darkest rows went first: 78 -> 90)."""
    photo = load_photo(DATA / "grid-s1-bbaf3s-30.png", RenderConfig())
    renderer = FrameRenderer(photo)
    assert not renderer.painter.photo_teeth and renderer.painter.look.open_gap_px > 0  # the premise
    lm = photo.landmarks_px
    x, top, bottom = int(round(lm[13][0])), int(lm[0][1]), int(lm[17][1]) + 1

    def darkest(image: np.ndarray) -> float:
        return float(luminance(image[top:bottom, x - 3:x + 4].astype(np.float32)).mean(axis=1).min())

    half = renderer._drawn_open(0.04)
    assert darkest(half) < darkest(photo.image_rgb) + 4, (darkest(half), darkest(photo.image_rgb))
    assert read_mouth_openings([half])[0] < 0.06  # and it is closing
    assert read_mouth_openings([renderer._drawn_open(0.0)])[0] < 0.02  # shut, the lips meet


def test_the_lower_lip_is_drawn_once_and_whole_as_the_jaw_drops(closed_lips):
    """Below the opening the lower lip is one band as thick as the photo's (a backward map doubled it,
    the skin under the parted lips taking the lips' motion): at the mouth's centre the lip-red run
    under the opening runs as the photo's does below its lips, the lip within 0.7-1.5 of the photo's."""
    photo, renderer = closed_lips

    def lip_runs(image: np.ndarray, x: int, y_from: int, y_to: int) -> list[int]:
        column = image[y_from:y_to, x - 1:x + 2].astype(float).mean(axis=1)
        red = (column[:, 0] - column[:, 1]) > 0.5 * np.max(column[:, 0] - column[:, 1])
        edges = np.flatnonzero(np.diff(np.concatenate([[0], red.astype(int), [0]])))
        return list(edges[1::2] - edges[::2])

    lm = photo.landmarks_px
    x = int(round(lm[14][0]))
    unit = float(np.linalg.norm(lm[263] - lm[33]))
    own = lip_runs(photo.image_rgb, x, int(lm[14][1]) + 1, int(lm[17][1] + 0.1 * unit))
    weights = basis_weights(_jaw(0.15), 0, renderer.scale)
    _, lower = renderer.rig.opening(weights, from_lips=True)
    centre = int(np.argmin(np.abs(lower[:, 0] - x)))
    frame = renderer.render(_jaw(0.15), 0)
    drawn = lip_runs(frame, x, int(lower[centre, 1]) - 2, int(lower[centre, 1] + (lm[17][1] - lm[14][1]) + 0.1 * unit))
    assert len(drawn) == len(own), (own, drawn)  # the lip, and the chin's shading under it: no second lip
    assert 0.7 * own[0] <= drawn[0] <= 1.5 * own[0], (own, drawn)


def test_a_photos_own_teeth_open_with_the_mouth_and_are_covered_when_the_lips_close(smiling):
    """The sample photo smiles with its teeth: open, they stay where they were (with the upper jaw),
    an opening under them; at a closure (M, B, P) the lips meet over them, so no tooth is left on or
    between the lips."""
    photo, renderer = smiling
    lm = photo.landmarks_px
    x = int(round(lm[13][0]))
    top, split = int(np.ceil(lm[13][1])) + 1, lm[13][1] + renderer.rig.frame.split * (lm[14][1] - lm[13][1])
    teeth = (slice(top, int(split) - 1), slice(x - 6, x + 7))
    own = photo.image_rgb[teeth].astype(float)
    assert own.mean() > 150  # the photo's teeth
    opened = renderer.render(BlendshapeTrack(25, NAMES, VISEME_POSES["aa"][None].copy()), 0)[teeth].astype(float)
    assert np.abs(opened - own).mean() < 12
    closed = renderer.render(BlendshapeTrack(25, NAMES, VISEME_POSES["PP"][None].copy()), 0)[teeth].astype(float)
    assert luminance(closed).mean() < 0.85 * luminance(own).mean()
    assert np.mean(closed[..., 0] - closed[..., 2]) > np.mean(own[..., 0] - own[..., 2]) + 15  # lips, not teeth


def test_lips_closing_over_a_photos_teeth_leave_them_where_they_are(smile_twice):
    """Half way shut, a smile's lips come together over its teeth, which stay as the photo shows them
    between the lips (squeezed together with the lips by the backward map, they went into the seam: a
    natural speaker's closures read shut in 40 of 44 frames, 42 with the teeth kept)."""
    from .conftest import _renderer

    photo, renderer = _renderer(smile_twice)
    lm = photo.landmarks_px
    own = renderer.rig.frame.rest_gap_px / renderer.rig.frame.eye_px
    half = 0.25 * (lm[291][0] - lm[61][0])
    box = (slice(int(lm[13][1]), int(lm[14][1]) + 1), slice(int(lm[13][0] - half), int(lm[13][0] + half)))
    frame = renderer.render(_jaw(0.5 * own), 0)[box].astype(float)
    teeth = luminance(frame) > 0.8 * luminance(renderer.painter.look.teeth_rgb)
    assert teeth.sum() > 200  # the premise: teeth show between the lips half way shut
    moved = np.abs(frame - photo.image_rgb[box].astype(float))[teeth].mean()
    assert moved < 21, moved  # squeezed into the seam: 26 (kept: 17, the lips come over their edges)


@pytest.fixture(scope="module")
def smile_twice(face_photo, tmp_path_factory):
    """The sample smile at twice its size (its mouth 11 pixels open, not 6), as a file."""
    import cv2
    from PIL import Image

    image = cv2.resize(np.array(Image.open(face_photo).convert("RGB")), None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC)
    path = tmp_path_factory.mktemp("smile") / "smile-twice.png"
    Image.fromarray(image).save(path)
    return path


@pytest.fixture(scope="module")
def wide_open(closed_lips, tmp_path_factory):
    """A GRID speaker's frame with its lips opened 0.3 eye distances by the renderer, as a file: a mouth
    open wider than its lips are thick."""
    from PIL import Image

    _, opener = closed_lips
    path = tmp_path_factory.mktemp("wide") / "wide-open.png"
    Image.fromarray(opener.render(_jaw(0.3), 0)).save(path)
    return path


def test_the_band_opened_under_a_photos_own_teeth_is_not_those_teeth_again(smile_twice):
    """Opened less than its own opening again, a smile's mouth was its photo stretched: the band that
    opens under the jaw's split took the rows of teeth above it, a second copy of the upper row (on
    a natural speaker's photo, with a light line drawn across the mouth at the split). Each row of
    the band is the opening's inside, not one of the photo's rows above the split (stretched: the
    nearest of them 3-4 levels off on average)."""
    from .conftest import _renderer

    photo, renderer = _renderer(smile_twice)
    lm = photo.landmarks_px
    half, x = int(0.3 * (lm[291][0] - lm[61][0])), int(round(lm[13][0]))
    split = lm[13][1] + renderer.rig.frame.split * (lm[14][1] - lm[13][1])
    assert renderer.painter.photo_teeth and renderer.rig.frame.rest_gap_px > 0.08 * renderer.rig.frame.eye_px
    above = luminance(photo.image_rgb[int(np.ceil(lm[13][1])):int(split), x - half:x + half])
    for opening in (0.15, 0.16, 0.17):  # the photo's own is 0.09
        track = _jaw(opening)
        seam = renderer.rig.opening(basis_weights(track, 0, renderer.scale), from_lips=False)[1]
        drop = float(seam[len(seam) // 2, 1] - split)
        assert drop >= 4  # the test's premise: a band opened
        band = luminance(renderer.render(track, 0)[int(split) + 1:int(split + drop), x - half:x + half])
        nearest = [float(np.abs(above - row).mean(axis=1).min()) for row in band]
        assert np.median(nearest) > 15, (opening, nearest)


def test_a_photos_teeth_part_at_the_dark_line_between_its_rows(smile_twice, tmp_path):
    """Where a photo shows a dark line between its rows of teeth, the jaw parts there: the lower row
    drops with the jaw and the upper one stays (parted near the lower lip, the lower row stayed with
    the skull and the opening came in under it, a band across the lower teeth). The sample smile,
    with such a line drawn between its rows half way down."""
    import cv2
    from PIL import Image

    from talker_cli.face.rig import LOWER_INNER, UPPER_INNER

    from .conftest import _renderer

    plain, _ = _renderer(smile_twice)
    image = np.array(Image.open(smile_twice).convert("RGB"))
    upper, lower = plain.landmarks_px[UPPER_INNER], plain.landmarks_px[LOWER_INNER]
    line = np.round(upper + 0.55 * (lower - upper)).astype(np.int32)
    cv2.polylines(image, [line[2:-2]], False, (40, 25, 25), 2, cv2.LINE_AA)
    Image.fromarray(image).save(tmp_path / "dark-line.png")
    photo, renderer = _renderer(tmp_path / "dark-line.png")
    assert abs(renderer.rig.frame.split - 0.55) <= 0.1, renderer.rig.frame.split
    lm = photo.landmarks_px
    x, half = int(round(lm[13][0])), int(0.25 * (lm[291][0] - lm[61][0]))
    cut = lm[13][1] + 0.55 * (lm[14][1] - lm[13][1])
    rows = lambda image, y0: luminance(image[y0:y0 + 3, x - half:x + half]).ravel()  # noqa: E731
    frame = renderer.render(_jaw(0.25), 0)
    seam = renderer.rig.opening(basis_weights(_jaw(0.25), 0, renderer.scale), from_lips=False)[1]
    drop = float(seam[len(seam) // 2, 1] - cut)
    assert drop > 4  # the test's premise: the jaw dropped by pixels
    lower_teeth, upper_teeth = int(cut) + 3, int(cut) - 5

    def found(y0: int) -> int:  # where the photo's rows at y0 are in the frame, searching downwards
        scores = [np.corrcoef(rows(photo.image_rgb, y0), rows(frame, y0 + d))[0, 1] for d in range(0, int(drop) + 4)]
        return int(np.argmax(scores))

    assert found(upper_teeth) <= 1  # the upper row stays with the skull
    assert abs(found(lower_teeth) - drop) <= 2, (found(lower_teeth), drop)  # the lower row drops with the jaw


def test_a_photo_open_wider_than_its_lips_are_thick_closes_at_m_b_p(wide_open):
    """A photo whose mouth is open wider than its lips are thick (a filmed speaker's first frame caught
    mid-word): at a closure its lips meet, as a tracker reads them. Closed by moving only a band
    about the midline, the lips and everything between them were squeezed into the seam, a streak
    FaceMesh read as a mouth 0.18 eye distances open; a filmed speaker's wide-open frame was shown
    closed in 0 of 11 of its closed frames. The photo: a GRID speaker's frame opened 0.3 eye
    distances by the renderer itself."""
    from talker_cli.photo import read_mouths

    from .conftest import _renderer

    photo, renderer = _renderer(wide_open)
    frame = renderer.rig.frame
    assert frame.centre_gap_px > 2 * frame.upper_thickness * frame.half_width_px  # the test's premise
    closed = renderer.render(BlendshapeTrack(25, NAMES, VISEME_POSES["PP"][None].copy()), 0)
    seen = read_mouths([photo.image_rgb, closed, closed])[:, 0]
    assert seen[0] > 0.25 and max(seen[1:]) < 0.03, seen


def test_closing_lips_take_the_skin_with_them_without_a_fold(wide_open, smile_twice):
    """As a wide-open mouth closes, each photo row the closure draws comes from further along than the
    one before it (no fold) and the skin stretches at most 2.5 times: the skin beyond the lips took up
    their motion over a lip's thickness alone, and above and below a thin lip the map folded back on
    itself (rows drawn twice, a tooth's edge or a pore a vertical streak). Down the middle of the
    mouth, on a GRID frame opened 0.3 eye distances by the renderer and on the sample smile."""
    from talker_cli.face.rig import mouth_basis, mouth_frame

    from .conftest import _renderer

    for path in (wide_open, smile_twice):
        photo, _ = _renderer(path)
        frame = mouth_frame(photo.landmarks_px)
        middle, eye = 0.5 * (photo.landmarks_px[13] + photo.landmarks_px[14]), frame.eye_px
        for side, rows in ((-1.0, np.arange(middle[1] - 0.35 * eye, middle[1] - 1, 0.25)),
                           (1.0, np.arange(middle[1] + 1, middle[1] + 0.5 * eye, 0.25))):
            points = np.stack([np.full_like(rows, middle[0]), rows], axis=1)
            moved = mouth_basis(frame, points, side=np.full(len(rows), side))["close"][:, 1]  # mouthClose 1
            slope = np.gradient(rows - moved, rows)  # photo rows per drawn row
            assert slope.min() >= 0.4, (path.name, side, slope.min())


def test_the_banks_light_round_trips_and_its_mouths_open_in_order():
    from talker_cli.face.interior import GRID_T, GRID_U, in_light, light_units, load_bank

    bank = load_bank()
    assert bank.textures.shape[1:] == (GRID_T, GRID_U, 3) and len(bank.textures) >= 6
    assert np.all(np.diff(bank.openings) > 0)
    texture = np.random.default_rng(0).uniform(0, 255, (GRID_T, GRID_U, 3)).astype(np.float32)
    skin = np.array([190.0, 140.0, 90.0], np.float32)
    assert np.allclose(in_light(light_units(texture, skin), skin), texture, atol=1e-3)
    # between two filmed openings, the two crossfaded; beyond the last, the last
    a, b = bank.openings[2], bank.openings[3]
    assert np.allclose(bank.texture(0.5 * (a + b), bank.eye_px), 0.5 * (bank.textures[2] + bank.textures[3]), atol=1e-4)
    assert np.array_equal(bank.texture(1.0, bank.eye_px), bank.textures[-1])
    assert 40 < bank.eye_px < 120  # GRID's faces, as filmed


def test_the_bank_takes_its_interiors_from_the_one_clip_that_has_most_openings():
    """Crossfaded, two interiors of different clips drew two sets of teeth at once: the bank's steps
    come from one clip, and from others only where it has none near."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from mouth_bank import choose

    def entry(clip: str, opening: float) -> dict:
        return {"clip": clip, "opening": opening}

    found = ([entry("many", x) for x in (0.04, 0.06, 0.08, 0.1)] + [entry("few", x) for x in (0.041, 0.12)]
             + [entry("near", 0.0605)])
    chosen = choose(found)
    assert [(e["clip"], e["opening"]) for e in chosen] == [
        ("many", 0.04), ("many", 0.06), ("many", 0.08), ("many", 0.1), ("few", 0.12)]


def test_an_opening_mouths_interior_changes_smoothly(closed_lips):
    """An opening sweep's frames change steadily: the bank's neighbouring interiors show the same
    teeth, so a crossfade moves them (with nine clips' interiors the steps wobbled: second
    differences up to 1.10 a pixel on this photo, 0.85 with one clip's)."""
    photo, renderer = closed_lips
    marks = photo.landmarks_px
    (x, y), eye = marks[[61, 291, 13, 14]].mean(axis=0).astype(int), int(np.linalg.norm(marks[263] - marks[33]))
    box = (slice(y - eye // 3, y + eye // 3), slice(x - eye // 2, x + eye // 2))  # the open mouth and its lips
    openings = np.linspace(0.05, 0.2, 40)
    weights = np.zeros((len(openings), len(NAMES)), np.float32)
    weights[:, INDEX["jawOpen"]] = openings / JAW_OPENING
    track = BlendshapeTrack(25, NAMES, weights)
    frames = np.stack([renderer.render(track, i)[box] for i in range(len(openings))]).astype(np.float32)
    wobble = np.abs(frames[2:] - 2 * frames[1:-1] + frames[:-2]).mean(axis=(1, 2, 3))
    assert wobble.max() < 1.0, wobble.max()


def test_the_frames_lips_are_the_layers_drawn_forward(closed_lips):
    """The renderer draws the parted lips with the layers (the backward map it keeps for the rest of
    the face differs from them by pixels along the lips: it drags the skin under the lips into the
    opening): outside the opening, in the lips' box, the frame is the layers' drawing (but for the
    opening's edge, softened over a few blur widths)."""
    import cv2

    from talker_cli.face.layers import draw_lips

    photo, renderer = closed_lips
    track = _jaw(0.15)
    weights = basis_weights(track, 0, renderer.scale)
    x0, y0, x1, y1 = renderer.lips_box
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    pixels, hole = draw_lips(renderer.layers, photo.image_rgb, weights, xs, ys, 1.0, cv2)
    frame = renderer.render(track, 0)[y0:y1, x0:x1].astype(int)
    away = cv2.distanceTransform((hole == 0).astype(np.uint8), cv2.DIST_L2, 5) > 3 * renderer.painter.look.edge_blur_px
    lips = away & (renderer.lips_feather == 1)
    assert lips.sum() > 1000
    assert np.abs(frame[lips] - pixels[lips].astype(int)).max() <= 1


def test_a_dim_photos_own_teeth_are_found_and_kept(tmp_path, face_photo):
    """Teeth are told by being about as bright as the skin beside the mouth and pale, not by an
    absolute brightness: in a dim video (a news clip's speaker: skin 91, teeth 86) they are kept as
    the mouth opens, not painted over (the sample photo's smile at half its light)."""
    renderer = FrameRenderer(load_photo(_relit(face_photo, 0.45, tmp_path / "dim.png"), RenderConfig()))
    assert renderer.painter.photo_teeth
    assert _upper_teeth_change_at_aa(renderer) < 6


def _relit(path: Path, light, out: Path) -> Path:
    """The photo at `path` under another light (a factor, or one per channel), saved to `out`."""
    from PIL import Image

    image = np.asarray(Image.open(path).convert("RGB")).astype(float)
    Image.fromarray(np.clip(image * np.asarray(light), 0, 255).astype(np.uint8)).save(out)
    return out


def _upper_teeth_change_at_aa(renderer) -> float:
    """How far (mean level) the photo's upper teeth above the jaw's split change when the mouth opens
    for AA: about nothing where they are kept, much where they are painted over."""
    photo = renderer.photo
    lm = photo.landmarks_px
    x = int(round(lm[13][0]))
    top, split = int(np.ceil(lm[13][1])) + 1, lm[13][1] + renderer.rig.frame.split * (lm[14][1] - lm[13][1])
    teeth = (slice(top, int(split) - 1), slice(x - 6, x + 7))
    opened = renderer.render(BlendshapeTrack(25, NAMES, VISEME_POSES["aa"][None].copy()), 0)[teeth].astype(float)
    return float(np.abs(opened - photo.image_rgb[teeth].astype(float)).mean())


def test_teeth_in_warm_light_are_found_and_kept(tmp_path, face_photo):
    """Teeth are pale in the photo's own light, not in absolute terms: under a warm light (or yellowish
    teeth, or a dark skin's warm cast) their colour is as strong as the lips' was in daylight. Two
    portraits' teeth, read as they were, were taken for lips and a shout drew a black hole over them.
    The sample's smile in warm light keeps its teeth as the mouth opens; GRID's open mouth in the same
    light, whose inside is lips and dark, is still not taken for teeth."""
    warm = [1.0, 0.72, 0.42]
    renderer = FrameRenderer(load_photo(_relit(face_photo, warm, tmp_path / "warm.png"), RenderConfig()))
    assert renderer.painter.photo_teeth
    assert _upper_teeth_change_at_aa(renderer) < 6
    grid = _relit(DATA / "grid-s1-bbaf3s-30.png", warm, tmp_path / "grid-warm.png")
    assert not FrameRenderer(load_photo(grid, RenderConfig())).painter.photo_teeth


def _open_and_shut(photo) -> tuple[np.ndarray, np.ndarray]:
    """The photo's face rendered with its eyes open and with both shut (a blink)."""
    weights = np.zeros((2, len(NAMES)), np.float32)
    weights[1, INDEX["eyeBlinkLeft"]] = weights[1, INDEX["eyeBlinkRight"]] = 1.0
    track = BlendshapeTrack(25, NAMES, weights)
    renderer = FrameRenderer(photo)
    return renderer.render(track, 0).astype(float), renderer.render(track, 1).astype(float)


def test_a_blink_closes_a_lid_over_large_eyes_and_leaves_the_brow(tmp_path, face_photo):
    """On large open eyes the lid slides down over the eye and the skin above it stretches, but the
    brow stays where it is: the band that stretches stops short of the brow (sized by the slide
    alone it reached up and dragged the brow's lower edge down, a brown smear into the eye)."""
    from PIL import Image

    from blink_sheet import taller_eyes

    Image.fromarray(taller_eyes(np.asarray(Image.open(face_photo).convert("RGB")), 1.7)).save(tmp_path / "large-eyes.png")
    photo = load_photo(tmp_path / "large-eyes.png", RenderConfig())
    rest, blink = _open_and_shut(photo)
    lm = photo.landmarks_px
    for upper, lower, brow_low in ((159, 145, 52), (386, 374, 282)):
        gap = lm[lower][1] - lm[upper][1]
        x, y = int(round(lm[upper][0])), int(round(lm[upper][1] + 0.4 * gap))
        assert blink[y, x - 2:x + 3].mean() > rest[y, x - 2:x + 3].mean() + 15  # the iris covered by the lid
        bx, by = lm[brow_low].round().astype(int)
        near_brow = int(round(by + 0.25 * (lm[upper][1] - by)))  # a quarter of the way down to the lid
        for row in (by, near_brow):
            assert np.abs(blink[row - 1:row + 2, bx - 3:bx + 4] - rest[row - 1:row + 2, bx - 3:bx + 4]).mean() < 5, (upper, row)


def test_a_blink_draws_the_lid_without_folding_it_on_small_and_large_eyes(tmp_path, face_photo):
    """A shut eye's lid is the skin above the eye stretched down over it, its lashes moved whole to
    where the lids meet: down every column the blink's field steps by less than a pixel per pixel, so
    no row of the photo is drawn twice (a band that slid as one folded over itself, 2.2 pixels per
    pixel: the lid's crease showed as a second eye inside the lid, and dark lashes as a zigzag)."""
    from PIL import Image

    from blink_sheet import taller_eyes
    from talker_cli.face.rig import BASIS

    Image.fromarray(taller_eyes(np.asarray(Image.open(face_photo).convert("RGB")), 1.7)).save(tmp_path / "large-eyes.png")
    for path in (face_photo, tmp_path / "large-eyes.png"):
        rig = FrameRenderer(load_photo(path, RenderConfig())).rig
        for name in ("blinkLeft", "blinkRight"):
            for blink in (0.3, 0.6, 1.0):
                weights = np.zeros(len(BASIS), np.float32)
                weights[BASIS.index(name)] = blink
                down = rig.displacement(weights)[..., 1]
                assert down.max() > 3.0 * blink  # the lid slides
                assert np.diff(down, axis=0).max() < 1.0, (path.name, name, blink)


def test_half_a_blink_covers_the_top_of_the_eye_and_leaves_the_rest_where_it_was(tmp_path, face_photo):
    """A lid closing covers the eye: below its edge the eye is as it was, its iris and pupil whole (a
    field that moved the eye down with the lid squeezed the iris into a slit, and left the catchlight
    at the meeting line of a shut eye); above it the lashes have come down."""
    from PIL import Image

    from blink_sheet import taller_eyes

    image = Image.fromarray(taller_eyes(np.asarray(Image.open(face_photo).convert("RGB")), 1.7))
    image.resize((2 * image.width, 2 * image.height), Image.LANCZOS).save(tmp_path / "large-eyes.png")
    photo = load_photo(tmp_path / "large-eyes.png", RenderConfig())
    renderer = FrameRenderer(photo)
    weights = np.zeros((1, len(NAMES)), np.float32)
    weights[0, INDEX["eyeBlinkLeft"]] = weights[0, INDEX["eyeBlinkRight"]] = 0.5
    half = renderer.render(BlendshapeTrack(25, NAMES, weights), 0).astype(float)
    rest = photo.image_rgb.astype(float)
    lm = photo.landmarks_px
    for upper, lower in ((159, 145), (386, 374)):
        gap = lm[lower][1] - lm[upper][1]
        x = int(round(lm[upper][0]))
        covered = int(round(lm[upper][1] + 0.15 * gap))  # under the lid's edge, a third of its slide down
        seen = slice(int(np.ceil(lm[upper][1] + 0.45 * gap)), int(np.floor(lm[lower][1] - 0.15 * gap)))
        assert seen.stop - seen.start >= 3  # the test's premise: rows of the eye the lid leaves open
        assert np.abs(half[seen, x - 2:x + 3] - rest[seen, x - 2:x + 3]).max() < 2, (upper, seen)
        assert np.abs(half[covered, x - 2:x + 3] - rest[covered, x - 2:x + 3]).mean() > 10, upper


def test_a_shut_lids_stretched_skin_is_not_drawn_as_streaks(tmp_path, face_photo):
    """A shut lid's skin is the band above its lashes stretched several times its height: drawn as it
    was, every lash tip, wrinkle and crack in it became a vertical streak down the lid (a bearded
    man's long lashes, Grace Hopper's wrinkles, the Mona Lisa's cracks). The sample's upper lids here
    carry fine vertical stripes, as wrinkled skin and long lashes do: on the shut lid, neighbouring
    columns of the stretched skin differ by under half as much as the photo's striped columns."""
    from PIL import Image

    from talker_cli.face.rig import BASIS

    image = np.asarray(Image.open(face_photo).convert("RGB")).astype(float)
    lm = load_photo(face_photo, RenderConfig()).landmarks_px
    stripes = np.where((np.arange(image.shape[1]) // 2) % 2 == 0, 25.0, -25.0)
    striped = np.zeros(image.shape[:2], bool)
    for outer, inner, top, brow_low in ((33, 133, 159, 52), (263, 362, 386, 282)):
        (x0, x1), y1 = sorted((int(lm[outer][0]), int(lm[inner][0]))), int(lm[top][1]) + 1
        striped[int(lm[brow_low][1]) + 2:y1, x0:x1] = True
    image[striped] += np.broadcast_to(stripes, image.shape[:2])[striped][:, None]
    Image.fromarray(image.clip(0, 255).astype(np.uint8)).save(tmp_path / "striped-lids.png")
    photo = load_photo(tmp_path / "striped-lids.png", RenderConfig())
    renderer = FrameRenderer(photo)
    rest, shut = (frame @ np.array([0.299, 0.587, 0.114]) for frame in _open_and_shut(photo))
    weights = np.zeros(len(BASIS), np.float32)
    weights[BASIS.index("blinkLeft")] = weights[BASIS.index("blinkRight")] = 1.0
    x0, y0, x1, _ = renderer.rig.roi
    stretched = np.zeros_like(striped)
    for _, points, share in renderer.rig.lid_skin(weights):
        rows, cols = np.unravel_index(points[share > 0.99], (renderer.rig.roi[3] - y0, x1 - x0))
        stretched[rows + y0, cols + x0] = True
    assert stretched.sum() > 50  # the test's premise: both lids stretch well past their height

    def across(luminance: np.ndarray, where: np.ndarray) -> float:
        both = where[:, :-1] & where[:, 1:]
        return float(np.abs(np.diff(luminance, axis=1))[both].mean())

    assert across(shut, stretched) < 0.5 * across(rest, striped)


def test_the_lashes_are_read_from_the_photo_as_the_dark_line_above_each_lid(face_photo):
    """How far each upper lid's lashes reach above FaceMesh's contour is read from the photo: a dark
    band one or two pixels tall over plain skin reads one or two pixels (in half eye widths), and a
    lid with no dark line above it takes the default."""
    from talker_cli.face.eyes import lash_bands
    from talker_cli.face.rig import EYES, LASH_BAND, eye_axes

    landmarks = load_photo(face_photo, RenderConfig()).landmarks_px

    def lids(thickness: int) -> np.ndarray:
        image = np.full((512, 512, 3), 200, np.uint8)
        for name, middle in (("Right", (160, 159, 158)), ("Left", (387, 386, 385))):
            _, _, ey, _ = eye_axes(landmarks, EYES[name])
            for point in landmarks[list(middle)]:
                for k in range(thickness):
                    x, y = np.round(point - k * ey).astype(int)
                    image[y, x] = 40
        return image

    for thickness in (1, 2):
        for name, reach in lash_bands(lids(thickness), landmarks).items():
            half = eye_axes(landmarks, EYES[name])[3]
            assert reach * half == pytest.approx(thickness, abs=0.6), (thickness, name)
    assert lash_bands(lids(0), landmarks) == {"Right": LASH_BAND, "Left": LASH_BAND}


def test_a_raised_upper_lip_bares_the_teeth_under_it_not_a_dark_rim(smiling):
    """The upper teeth stay with the skull: where the lip rises off them, more teeth show (a dark
    rim had opened between the lip and the teeth, a hole the painter filled with the cavity)."""
    import cv2

    from talker_cli.face.layers import _at, draw_lips

    photo, renderer = smiling
    x0, y0, x1, y1 = renderer.lips_box
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    from talker_cli.face.rig import BASIS

    weights = np.zeros(len(BASIS), np.float32)
    weights[BASIS.index("upperUp")] = 0.05 * renderer.rig.frame.eye_px  # pixels: a sneer's raise
    pixels, hole = draw_lips(renderer.layers, photo.image_rgb, weights, xs, ys, 1.0, cv2)
    cut = _at(renderer.layers.upper_cut, xs, ys, renderer.layers.box[:2], cv2)
    above_teeth = (cut < -0.5) & (cut > -0.1 * renderer.rig.frame.eye_px)  # the lip's lower part in the photo
    changed = (photo.image_rgb[y0:y1, x0:x1] != pixels).any(axis=-1)
    assert (changed & above_teeth).sum() >= 20  # the test's premise: the lip rose off the teeth
    assert hole[above_teeth].max() < 0.5  # nothing there is left to the painter


def test_a_raised_upper_lip_shows_the_teeth_taller_not_streaked(smile_twice):
    """Where the upper lip rises off a photo's own teeth, the teeth are drawn taller under it: the band
    it bares has the teeth's rows and light (drawn on from the row at the cut, every column was one
    pixel of the lip's edge repeated: pink and white streaks, 0.73 of the teeth's light)."""
    import cv2

    from talker_cli.face.layers import _at, draw_lips
    from talker_cli.face.rig import BASIS

    from .conftest import _renderer

    photo, renderer = _renderer(smile_twice)
    x0, y0, x1, y1 = renderer.lips_box
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    frame = renderer.rig.frame
    weights = np.zeros(len(BASIS), np.float32)
    weights[BASIS.index("upperUp")] = 0.08 * frame.eye_px  # pixels
    pixels, _ = draw_lips(renderer.layers, photo.image_rgb, weights, xs, ys, 1.0, cv2)
    cut, split = (_at(plane, xs, ys, renderer.layers.box[:2], cv2) for plane in (renderer.layers.upper_cut, renderer.layers.split))
    middle = np.abs(((xs - frame.centre[0]) * frame.ex[0] + (ys - frame.centre[1]) * frame.ex[1]) / frame.half_width_px) < 0.5
    bared = (cut < -1) & (cut > -0.6 * 0.08 * frame.eye_px) & middle  # above the teeth, under where the lip was
    teeth = luminance(photo.image_rgb[y0:y1, x0:x1][(cut > 1) & (split < -1) & middle].astype(np.float32)).mean()
    assert bared.sum() > 100  # the test's premise
    light = luminance(pixels.astype(np.float32))
    assert light[bared].mean() > 0.8 * teeth, (light[bared].mean(), teeth)
    spread = [light[:, x][bared[:, x]].std() for x in np.unique(np.nonzero(bared)[1]) if bared[:, x].sum() >= 3]
    assert np.median(spread) > 5, np.median(spread)  # each column the teeth's rows, not one pixel repeated


def test_a_blink_leaves_a_glasses_rim_above_the_eye_where_it_is(tmp_path, face_photo):
    """Glasses often sit with the rim just above the eye, below the brow: the lid skin that stretches
    over the eye is a band little taller than the lid's slide, so the rim stays where it is (a band
    one and a half slides tall dragged it down into a notch over each eye)."""
    from PIL import Image, ImageDraw

    image = Image.open(face_photo).convert("RGB")
    marks = load_photo(face_photo, RenderConfig()).landmarks_px
    scale = image.width / load_photo(face_photo, RenderConfig()).image_rgb.shape[1]
    draw = ImageDraw.Draw(image)
    for upper, lower, outer, inner in ((159, 145, 33, 133), (386, 374, 263, 362)):
        gap = marks[lower][1] - marks[upper][1]
        y = (marks[upper][1] - 0.7 * gap) * scale
        x0, x1 = sorted((marks[outer][0] * scale, marks[inner][0] * scale))
        draw.line([(x0 - 4, y), (x1 + 4, y)], fill=(40, 30, 30), width=max(2, round(0.25 * gap * scale)))
    image.save(tmp_path / "glasses.png")
    photo = load_photo(tmp_path / "glasses.png", RenderConfig())
    # Brows raised high above the eyes (as behind glasses they often are): the lid's band is sized by
    # the lid, not by the room up to the brow.
    raised = photo.landmarks_px.copy()
    for upper, lower, brow_low in ((159, 145, 52), (386, 374, 282)):
        raised[brow_low, 1] -= 2.0 * (raised[lower][1] - raised[upper][1])
    photo = replace(photo, landmarks_px=raised)
    rest, blink = _open_and_shut(photo)
    lm = photo.landmarks_px
    for upper, lower in ((159, 145), (386, 374)):
        gap = lm[lower][1] - lm[upper][1]
        x, y = int(round(lm[upper][0])), int(round(lm[upper][1] + 0.4 * gap))
        assert np.abs(blink[y, x - 3:x + 4] - rest[y, x - 3:x + 4]).mean() > 10  # the lid closed over the eye
        rim = slice(int(round(lm[upper][1] - 1.0 * gap)), int(round(lm[upper][1] - 0.45 * gap)) + 1)
        assert np.abs(blink[rim, x - 4:x + 5] - rest[rim, x - 4:x + 5]).mean() < 5, upper


def test_the_photos_own_teeth_end_in_a_smooth_edge_not_a_staircase(smiling):
    """Where the jaw parts below a photo's upper teeth, their edge is drawn with a pixel's width of
    soft edge, as the lips' are: down each column across it, the pixels at the edge lie part way
    between the teeth and the dark below them (a hard edge, a staircase along a sloping row, left
    2-3% of them part way; soft, about 27%)."""
    photo, renderer = smiling
    frame = renderer.render(BlendshapeTrack(25, NAMES, VISEME_POSES["aa"][None].copy()), 0).astype(float)
    light = frame @ [0.299, 0.587, 0.114]
    lm = photo.landmarks_px
    centre, half = (lm[61][0] + lm[291][0]) / 2, (lm[291][0] - lm[61][0]) / 2
    shares = []
    for x in range(int(centre - 0.6 * half), int(centre + 0.6 * half)):
        column = light[int(lm[13][1]) - 2:int(lm[14][1]) + int(0.3 * half), x]
        below = column[int(np.argmax(column)):]  # from the brightest of the teeth down
        teeth, dark = below[0], below.min()
        if teeth - dark < 40:
            continue  # no teeth over a dark mouth in this column
        edge = int(np.argmax(below < dark + 0.5 * (teeth - dark)))
        shares += [(below[edge - 1] - dark) / (teeth - dark), (below[edge] - dark) / (teeth - dark)]
    shares = np.array(shares)
    assert len(shares) > 40
    assert np.mean((shares > 0.25) & (shares < 0.75)) > 0.15


def test_a_shouts_upper_lip_edge_is_a_smooth_curve_not_a_saw(closed_lips, monkeypatch):
    """Raised far, the upper lip presses the skin above it together, and its inverse map jumps there:
    interpolated over the coarse grid it drew the lip's edge as a saw (GRID's speaker: the hole's
    edge up to 0.7 of a pixel off the exact inverse map's, six pixels over a quarter); found at every
    pixel where it jumps, the opening is where the exact inverse map puts it."""
    import cv2

    from talker_cli.face import layers
    from talker_cli.face.layers import draw_lips

    photo, renderer = closed_lips
    weights = VISEME_POSES["aa"][None].copy()
    weights[0, INDEX["jawOpen"]] = min(1.0, 1.6 * weights[0, INDEX["jawOpen"]])  # a shout
    track = BlendshapeTrack(25, NAMES, weights)
    x0, y0, x1, y1 = renderer.lips_box
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    shout = basis_weights(track, 0, renderer.scale)
    _, hole = draw_lips(renderer.layers, photo.image_rgb, shout, xs, ys, 1.0, cv2)
    monkeypatch.setattr(layers, "QUERY_STEP", 1)  # the inverse map found at every pixel
    _, exact = draw_lips(renderer.layers, photo.image_rgb, shout, xs, ys, 1.0, cv2)
    assert np.abs(hole - exact).max() < 0.1, np.abs(hole - exact).max()


def test_a_large_photos_mouth_opens(tmp_path):
    """A large photo's lips ask the inverse map at more points than one row of an OpenCV map holds
    (32767): the GRID photo at four times its size (1440 px) draws its open mouth like the small one."""
    from PIL import Image

    image = Image.open(DATA / "grid-s1-bbaf3s-0.png")
    image.resize((image.width * 4, image.height * 4), Image.LANCZOS).save(tmp_path / "photo.png")
    photo = load_photo(tmp_path / "photo.png", RenderConfig(max_side=1440))
    assert photo.image_rgb.shape[1] == 1440
    renderer = FrameRenderer(photo)  # its calibration draws open mouths too
    rows, columns = mouth_box(photo)
    opened = renderer.render(_jaw(0.5), 0)[rows, columns].astype(float)
    assert np.abs(opened - photo.image_rgb[rows, columns]).mean() > 5


def test_each_lips_pixels_come_from_where_its_motion_brings_them_at_a_shout(tmp_path):
    """Each lip's forward map q -> q + d(q) is inverted for every pixel of the mouth's box: across, one
    fixed-point step missed by up to 0.74 px here (4.7 px on a close-up's shout), where the motion
    across changes fast down the stretched lower lip beside the corners, and drew islands of lip in
    the opening and corners in steps. Every pixel's source now lands within half a pixel."""
    import cv2
    from PIL import Image

    from talker_cli.face.layers import FIELD_STEP, _invert
    from talker_cli.face.rig import weighted_fields

    image = Image.open(DATA / "grid-s1-bbaf3s-0.png")
    image.resize((image.width * 3, image.height * 3), Image.LANCZOS).save(tmp_path / "photo.png")
    photo = load_photo(tmp_path / "photo.png", RenderConfig())
    renderer = FrameRenderer(photo)
    shout = VISEME_POSES["aa"].copy()
    shout[INDEX["jawOpen"]] = min(1.0, 1.8 * shout[INDEX["jawOpen"]])
    weights = basis_weights(BlendshapeTrack(25, NAMES, shout[None]), 0, renderer.scale)
    layers = renderer.layers
    field = weighted_fields(weights, layers.fields, layers.field_spans)
    x0, y0, x1, y1 = renderer.lips_box
    py, px = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    qx, qy = _invert(field, px, py, layers.box[:2], cv2)
    width, half = px.shape[1], field.shape[1] // 2
    for lip in (0, 1):
        found = slice(lip * width, (lip + 1) * width)
        across = np.ascontiguousarray(field[:, lip * half:(lip + 1) * half, 0])
        moved = cv2.remap(across, (qx[:, found] - layers.box[0]) / FIELD_STEP, (qy[:, found] - layers.box[1]) / FIELD_STEP,
                          cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        miss = np.abs(qx[:, found] + moved - px)
        assert miss.max() < 0.5, (lip, float(miss.max()), int((miss > 0.5).sum()))


def test_a_lids_edge_is_drawn_as_finely_as_a_photo_four_times_larger_draws_it(face_photo, monkeypatch):
    """A pixel the lid's edge crosses mixes the lid and the eye by how much of it each covers: half a
    blink drawn on the photo comes closer to the same blink drawn four times larger and shrunk back
    than the edge drawn by one surface alone, a staircase along the lashes."""
    import cv2
    from PIL import Image

    from blink_sheet import taller_eyes
    from talker_cli.face import rig

    image = taller_eyes(np.asarray(Image.open(face_photo).convert("RGB")), 1.7)
    photo = load_photo(face_photo, RenderConfig())
    photo = replace(photo, image_rgb=cv2.resize(image, photo.image_rgb.shape[1::-1], interpolation=cv2.INTER_AREA))
    large = replace(photo, image_rgb=cv2.resize(photo.image_rgb, None, fx=4, fy=4, interpolation=cv2.INTER_CUBIC),
                    landmarks_px=photo.landmarks_px * 4 + 1.5)
    weights = np.zeros((1, len(NAMES)), np.float32)
    weights[0, INDEX["eyeBlinkLeft"]] = weights[0, INDEX["eyeBlinkRight"]] = 0.5
    track = BlendshapeTrack(25, NAMES, weights)
    size = photo.image_rgb.shape[1::-1]
    reference = cv2.resize(FrameRenderer(large).render(track, 0), size, interpolation=cv2.INTER_AREA).astype(float)
    blended = FrameRenderer(photo).render(track, 0).astype(float)
    monkeypatch.setattr(rig.FaceRig, "lid_edges", lambda self, weights: [])
    stepped = FrameRenderer(photo).render(track, 0).astype(float)
    lm = photo.landmarks_px
    for outer, inner, upper, lower in ((33, 133, 159, 145), (263, 362, 386, 374)):
        x0, x1 = sorted((int(lm[outer][0]), int(lm[inner][0])))
        y = int(round((lm[upper][1] + lm[lower][1]) / 2))
        eye = (slice(y - 12, y + 12), slice(x0, x1))
        error = lambda drawn: float(np.abs(drawn[eye] - reference[eye]).mean())  # noqa: E731
        assert error(blended) < 0.93 * error(stepped), (upper, error(blended), error(stepped))


def _smile_drawn_over(smile_twice, tmp_path: Path, name: str, top: float, bottom: float, colour) -> Path:
    """The sample smile at twice its size with the band from `top` to `bottom` of the way down its
    opening painted over in `colour`, as a file."""
    import cv2
    from PIL import Image

    from talker_cli.face.rig import LOWER_INNER, UPPER_INNER

    from .conftest import _renderer

    plain, _ = _renderer(smile_twice)
    image = np.array(Image.open(smile_twice).convert("RGB"))
    upper, lower = plain.landmarks_px[UPPER_INNER], plain.landmarks_px[LOWER_INNER]
    outline = np.vstack([upper + top * (lower - upper), (upper + bottom * (lower - upper))[::-1]])
    cv2.fillPoly(image, [np.round(outline * 4).astype(np.int32)], colour, cv2.LINE_AA, shift=2)
    Image.fromarray(image).save(tmp_path / name)
    return tmp_path / name


def test_the_dark_under_a_photos_teeth_opens_with_the_mouth_not_a_rim_on_the_lower_lip(smile_twice, tmp_path):
    """The dark under a photo's upper teeth is its mouth's inside seen through a slit: as the jaw drops,
    what of it lies below the split joins the opening, painted as the inside is, and the lower lip (or
    row) comes down without it (carried down with the jaw, it drew a dark rim along the lower lip of
    every open frame: a natural speaker's shouts). The sample smile with a dark shadow drawn over the
    bottom of its opening, above its lower lip."""
    from .conftest import _renderer

    photo, renderer = _renderer(_smile_drawn_over(smile_twice, tmp_path, "shadow.png", 0.8, 1.0, (20, 10, 10)))
    lm = photo.landmarks_px
    assert renderer.painter.look.dark_under_split.max() >= 1.5  # the premise: the shadow reaches under the split
    x, half = int(round(lm[13][0])), int(0.25 * (lm[291][0] - lm[61][0]))
    track = _jaw(0.25)
    seam = renderer.rig.opening(basis_weights(track, 0, renderer.scale), from_lips=False)[1]
    dropped = float(seam[len(seam) // 2, 1])  # the split's lower side, dropped with the jaw
    frame = renderer.render(track, 0)
    rows = [float(np.median(luminance(frame[y, x - half:x + half]))) for y in range(int(dropped) - 1, int(dropped) + 3)]
    assert min(rows) > 140, rows  # the band and the lip's top; the shadow carried down on the lip: 123


def test_under_teeth_over_a_dark_gap_the_opening_is_that_gaps_dark_not_a_second_row(smile_twice, tmp_path):
    """Where the photo shows a dark gap under its upper teeth (above a lower lip that hides the lower
    teeth, or between two rows), the band opened there as the jaw drops is the inside seen through that
    gap, as dark and as coloured as it (the filmed lower row lit as the teeth drew a second row of
    teeth, or a grey band between two rows; darkened, a grey slab). Where the photo's teeth fill its
    opening, the band holds the filmed lower row in the light of the photo's teeth (its lower lip hid
    them)."""
    from .conftest import _renderer

    def band(path: Path, jaw: float = 0.18) -> tuple[np.ndarray, float]:  # the band's pixels, the teeth's light
        photo, renderer = _renderer(path)
        assert (renderer.painter.look.gap_rgb is None) == (path == smile_twice)  # the premise: a gap read or not
        lm = photo.landmarks_px
        x, half = int(round(lm[13][0])), int(0.25 * (lm[291][0] - lm[61][0]))
        split = lm[13][1] + renderer.rig.frame.split * (lm[14][1] - lm[13][1])
        track = _jaw(jaw)
        seam = renderer.rig.opening(basis_weights(track, 0, renderer.scale), from_lips=False)[1]
        drop = float(seam[len(seam) // 2, 1] - split)
        assert drop > 4  # the test's premise: a band opened
        widest = (renderer.painter.look.open_gap_px + drop) / renderer.rig.frame.eye_px > renderer.painter.bank.openings[-1]
        assert widest == (jaw > 0.3)  # the premise: only the shout opens wider than any filmed mouth
        # The band's colour read with its edges drawn a pixel wide (their softening is another test's)
        renderer.painter.look = replace(renderer.painter.look, edge_blur_px=0.0)
        inside = renderer.render(track, 0)[int(split) + 2:int(split + drop) - 1, x - half:x + half]
        return inside.reshape(-1, 3).astype(float), float(luminance(renderer.painter.look.teeth_rgb))

    gap = (70, 30, 35)
    over = _smile_drawn_over(smile_twice, tmp_path, "lip.png", 0.65, 1.0, (165, 150, 145))  # no lower teeth: duller
    gapped = _smile_drawn_over(over, tmp_path, "gap.png", 0.45, 0.65, gap)
    hidden, teeth = band(gapped)
    assert np.percentile(luminance(hidden), 90) < float(luminance(np.array(gap, float))) + 10 < 0.45 * teeth
    assert np.median(hidden[:, 0] - hidden[:, 2]) > 0.5 * (gap[0] - gap[2])  # the gap's red, not grey
    # Shouted, wider than any filmed mouth, the cavity and the tongue open between the rows in their own
    # colours (taken into the gap's too, a flat slab no lighter than the gap: 43 here; the tongue 111)
    shout, _ = band(gapped, jaw=0.5)
    assert np.percentile(luminance(shout), 90) > float(luminance(np.array(gap, float))) + 30
    assert np.median(shout[:, 0] - shout[:, 2]) > 0.5 * (gap[0] - gap[2])
    gap = (60, 25, 30)
    between, teeth = band(_smile_drawn_over(smile_twice, tmp_path, "rows.png", 0.5, 0.6, gap))  # lower row below
    assert np.percentile(luminance(between), 90) < float(luminance(np.array(gap, float))) + 10 < 0.45 * teeth
    filled, teeth = band(smile_twice)
    assert np.percentile(luminance(filled), 90) > 0.7 * teeth
    # a line part teeth, lighter than filmed open mouths' dark: the band no lighter than half the skin's
    from talker_cli.face.painter import GAP_LIGHT_MAX

    light, _ = band(_smile_drawn_over(smile_twice, tmp_path, "light.png", 0.5, 0.6, (150, 110, 115)))
    skin = float(luminance(_renderer(smile_twice)[1].painter.look.skin_rgb))
    assert luminance(np.array((150, 110, 115), float)) > GAP_LIGHT_MAX * skin + 15  # the premise
    assert np.percentile(luminance(light), 90) < GAP_LIGHT_MAX * skin + 5


def _soft_photo(tmp_path: Path, blur_px: float) -> Path:
    """The GRID speaker's shut mouth three times its size (bicubic), blurred by blur_px more: a soft
    photo, as a video frame enlarged is."""
    import cv2
    from PIL import Image

    image = cv2.resize(np.array(Image.open(DATA / "grid-s1-bbaf3s-0.png").convert("RGB")), None, fx=3, fy=3,
                       interpolation=cv2.INTER_CUBIC)
    path = tmp_path / f"soft-{blur_px}.png"
    Image.fromarray(cv2.GaussianBlur(image, (0, 0), blur_px) if blur_px else image).save(path)
    return path


def test_the_cameras_blur_is_read_from_the_photos_edges_at_the_mouth(tmp_path):
    """The photo's own blur, read at its sharpest edges around the mouth: a GRID frame is sharp (its
    blur under the gradient operator's own spread), and blurring the same photo by 3 pixels more reads
    softer by over half a pixel (with fixed edge thresholds a blurred photo had no edges and read sharp)."""
    from talker_cli.face.painter import camera_blur

    def read(path: Path) -> float:
        photo = load_photo(path, RenderConfig())
        marks = photo.landmarks_px
        return camera_blur(photo.image_rgb, marks, float(np.linalg.norm(marks[33] - marks[263])))

    assert read(DATA / "grid-s1-bbaf3s-0.png") < 0.6
    enlarged, blurred = read(_soft_photo(tmp_path, 0)), read(_soft_photo(tmp_path, 3.0))
    assert blurred > enlarged + 0.5, (enlarged, blurred)


def test_the_openings_edge_is_as_sharp_as_the_photos_own_edges(tmp_path):
    """The opening's edge is drawn as the photo's camera would show it: on a soft photo (a video frame
    enlarged) its steepest steps are no steeper than the photo's own around the mouth (drawn a pixel
    wide, 2.6 times as steep: a cut-out), and on a sharp one not blurred past it."""
    import cv2

    from talker_cli.face.layers import draw_lips

    def steepest(path: Path) -> tuple[float, float]:  # the steps at the opening's edge, the photo's own
        photo = load_photo(path, RenderConfig())
        renderer = FrameRenderer(photo)
        track = _jaw(0.15)
        x0, y0, x1, y1 = renderer.lips_box
        ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        _, hole = draw_lips(renderer.layers, photo.image_rgb, basis_weights(track, 0, renderer.scale), xs, ys, 1.0, cv2)
        opening = (hole > 0.5).astype(np.uint8)
        assert opening.sum() > 50  # the premise: the mouth opened
        kernel = np.ones((5, 5), np.uint8)
        edge = (cv2.dilate(opening, kernel) - cv2.erode(opening, kernel)) > 0

        def steps(image: np.ndarray) -> np.ndarray:
            light = luminance(image[y0:y1, x0:x1].astype(np.float32))
            return np.hypot(cv2.Sobel(light, cv2.CV_32F, 1, 0), cv2.Sobel(light, cv2.CV_32F, 0, 1)) / 8

        drawn = steps(renderer.render(track, 0))[edge]
        return float(np.percentile(drawn, 99)), float(np.percentile(steps(photo.image_rgb), 99))

    drawn, own = steepest(_soft_photo(tmp_path, 1.5))
    assert drawn <= 1.1 * own, (drawn, own)
    drawn, own = steepest(DATA / "grid-s1-bbaf3s-0.png")
    assert drawn >= 0.5 * own, (drawn, own)
