"""The face rig and frame renderer on the sample photo with its real FaceMesh landmarks."""

from pathlib import Path

import numpy as np
import pytest

from talker_cli.artifacts import BlendshapeTrack
from talker_cli.face.blendshapes import INDEX, NAMES, VISEME_POSES
from talker_cli.config import RenderConfig
from talker_cli.face.rig import BASIS, LOWER_CUT, LOWER_INNER, UPPER_CUT, UPPER_INNER, build_rig, mouth_basis, mouth_frame
from talker_cli.photo import load_photo, video_size
from talker_cli.face.frames import FrameRenderer


@pytest.fixture(scope="module")
def photo(face_photo):
    return load_photo(face_photo, RenderConfig())


@pytest.fixture(scope="module")
def still_renderer(photo):
    return FrameRenderer(photo)


def pose_track(viseme, **extra):
    w = VISEME_POSES[viseme].copy()
    for name, value in extra.items():
        w[INDEX[name]] = value
    return BlendshapeTrack(25, NAMES, w[None])


def mouth_box(photo):
    lm = photo.landmarks_px
    x0, y0 = lm[[61, 0]].min(axis=0) - 6
    x1, y1 = lm[[291, 17]].max(axis=0) + 6
    return slice(int(y0), int(y1)), slice(int(x0), int(x1))


def test_video_size_caps_the_long_side_and_keeps_sides_even():
    assert video_size(1920, 1080, 512) == (512, 288)
    assert video_size(333, 501, 512) == (332, 500)


def test_a_photo_keeps_its_own_size_up_to_1024_px_and_a_framed_face_its_own_pixels(tmp_path, face_photo):
    """A filmed frame or a photo from the web (844 px) is drawn at its own size, as sharp as it came; a
    phone's photo is brought down to 1024 px; --crop face enlarges a small face to 512 px, but does not
    blow a larger one up to the cap."""
    from PIL import Image

    portrait = Image.open(face_photo).convert("RGB")
    portrait.resize((844, 844), Image.LANCZOS).save(tmp_path / "web.png")
    portrait.resize((2048, 2048), Image.LANCZOS).save(tmp_path / "phone.png")
    assert load_photo(tmp_path / "web.png", RenderConfig()).image_rgb.shape[:2] == (844, 844)
    assert load_photo(tmp_path / "phone.png", RenderConfig()).image_rgb.shape[:2] == (1024, 1024)
    wide = Image.new("RGB", (3000, 2400), (200, 200, 200))
    wide.paste(portrait.resize((1100, 1100), Image.LANCZOS), (900, 300))  # a face with room around it
    wide.save(tmp_path / "wide.png")
    framed = load_photo(tmp_path / "wide.png", RenderConfig(crop="face")).image_rgb.shape[:2]
    assert 512 < max(framed) < 1000, framed


def test_landmarks_sit_on_the_face(photo):
    lm = photo.landmarks_px
    assert lm.shape == (478, 2)
    # scikit-image's astronaut: the face is in the upper middle of the 512 x 512 picture
    assert 150 < lm[:, 0].mean() < 300 and 60 < lm[:, 1].mean() < 200
    assert lm[152, 1] > lm[14, 1] > lm[13, 1] > lm[1, 1]  # chin below lips below nose tip


def test_jaw_opens_below_the_seam_only(photo):
    rig = build_rig(photo.landmarks_px, photo.image_rgb.shape[1::-1])
    lower = mouth_basis(rig.frame, photo.landmarks_px[LOWER_INNER[2:-2]].astype(float), side=np.ones(7))
    upper = mouth_basis(rig.frame, photo.landmarks_px[UPPER_INNER[2:-2]].astype(float), side=-np.ones(7))
    jaw_lower = (lower["lipgap"] + lower["chin"]) @ rig.frame.ey
    assert jaw_lower.min() > 0.5  # the lower lip drops with the jaw (fields are pixels per unit)
    assert np.abs((upper["lipgap"] + upper["chin"]) @ rig.frame.ey).max() < 1e-6  # the upper lip stays up
    # and both lips' corners come in as the jaw drops (an oval, not a wider slit)
    for lip, points in ((upper, UPPER_INNER[2:-2]), (lower, LOWER_INNER[2:-2])):
        u, _ = rig.frame.to_uv(photo.landmarks_px[points].astype(float))
        inward = -np.sign(u) * (lip["lipgap"] @ rig.frame.ex)
        assert np.all(inward >= 0) and np.all(inward[np.abs(u) > 0.3] > 0.05)
    # mouthClose brings the lips towards each other
    assert ((lower["close"] - upper["close"]) @ rig.frame.ey).max() < 0
    assert rig.fields.shape[0] == len(BASIS)


def test_the_upper_lip_rises_as_a_whole_and_the_nose_stays(photo):
    """Filmed speakers' upper lips rise with their outer edge (the cupid's bow) nearly as far as the
    inner one (0.8-1.1 on natural speech): a lip whose bow stayed while its inner edge rose thinned into
    a line. The skin above takes up the motion before the nose."""
    from talker_cli.face.rig import UPPER_OUTER

    landmarks = photo.landmarks_px.astype(float)
    frame = mouth_frame(landmarks)
    rises = lambda points, side=None: -(mouth_basis(frame, landmarks[points], side)["upperUp"] @ frame.ey)  # noqa: E731
    bow, below = rises(UPPER_OUTER[3:8]), rises(UPPER_INNER[3:8], -np.ones(5))
    assert np.all(bow >= 0.9 * below), (bow, below)
    assert abs(rises([2])[0]) < 0.05 * below.max()  # the nose's base


def test_the_fields_are_summed_by_their_weights_and_resting_shapes_cost_nothing():
    """Each field is added over its own span, where it moves anything: a mouth shape's is a small part
    of the face's."""
    from talker_cli.face.rig import field_spans, weighted_fields

    rng = np.random.default_rng(5)
    fields = np.zeros((6, 7, 9, 2), np.float32)
    fields[1, 2:4, 3:6] = rng.normal(size=(2, 3, 2))
    fields[3] = rng.normal(size=(7, 9, 2))
    fields[4, 5:7, 1:3] = rng.normal(size=(2, 2, 2))
    fields[4, 0, 0] = 1e-6  # far under a thousandth of a pixel: left out
    spans = field_spans(fields)
    assert spans[1] == (slice(2, 4), slice(3, 6)) and spans[4] == (slice(5, 7), slice(1, 3))
    assert spans[3] == (slice(0, 7), slice(0, 9)) and spans[0] == (slice(0, 0), slice(0, 0))
    weights = np.array([0.0, 1.5, 0.0, -0.25, 2.0, 0.7], np.float32)  # the last moves nothing here
    assert np.allclose(weighted_fields(weights, fields, spans), np.tensordot(weights, fields, axes=1), atol=1e-5)
    fields[[0, 2, 5]] = np.nan  # a shape at rest, or one that moves nothing, is never read
    assert np.isfinite(weighted_fields(weights, fields, spans)).all()
    assert not weighted_fields(np.zeros(6, np.float32), fields, spans).any()
    assert weighted_fields(weights, fields, spans).dtype == np.float32


def _mouth_narrowed(landmarks, scale):
    """The same face with its mouth corners (FaceMesh 61, 291) drawn towards the mouth's middle."""
    narrowed = landmarks.astype(float).copy()
    middle = 0.5 * (narrowed[61] + narrowed[291])
    narrowed[[61, 291]] = middle + scale * (narrowed[[61, 291]] - middle)
    return narrowed


def _jaw_drop(frame, points):
    fields = mouth_basis(frame, points)
    return (fields["lipgap"] + fields["chin"]) @ frame.ey


@pytest.mark.parametrize("off_centre", [0.0, 0.08, -0.08])
def test_the_lips_part_to_a_point_at_each_corner_wherever_the_middle_of_the_lips_sits(photo, off_centre):
    """A wide opening between the inner lips closes to nothing at both corners and comes in over the
    last quarter of the half width, also when FaceMesh's middle of the lips (13, 14) sits off the
    mouth's centre (0.025 half widths on the Franck photo): it had stayed a few pixels open at one
    corner and risen to a fifth of the opening within 0.05 half widths of it, a wall of cavity."""
    landmarks = photo.landmarks_px.astype(float).copy()
    half = 0.5 * (landmarks[291] - landmarks[61])
    landmarks[[13, 14]] += off_centre * half  # the middle moved along the lips
    rig = build_rig(landmarks, photo.image_rgb.shape[1::-1])
    weights = np.zeros(len(BASIS), np.float32)
    weights[BASIS.index("lipgap")] = weights[BASIS.index("chin")] = 30.0  # pixels at the middle
    upper, lower = rig.opening(weights, from_lips=True)
    gap = (lower - upper) @ rig.frame.ey
    assert gap[0] < 0.3 and gap[-1] < 0.3, gap  # the corners (61, 291) stay shut
    u = rig.frame.to_uv(landmarks[UPPER_CUT])[0]  # where each of the edges' points lay in the photo
    near = (1 - np.abs(u)) < 0.15  # the corners and FaceMesh's inner corners (78, 308) beside them
    assert near.sum() >= 4 and np.all(gap[near] < 0.1 * gap.max()), (u[near], gap[near], gap.max())


def test_each_lip_moves_whole_nearer_the_corners_than_the_jaws_parting(photo):
    """The lips' own motion (the lower one rolled down, the upper raised) comes in over the last eighth
    of the half width, the jaw's parting over the last quarter: tapered as far, the lips shrank towards
    the corners and filmed speakers' narrow openings were drawn smaller (bench/mouth.py's range)."""
    rig = build_rig(photo.landmarks_px.astype(float), photo.image_rgb.shape[1::-1])
    u = rig.frame.to_uv(photo.landmarks_px[UPPER_CUT].astype(float))[0]
    beside = np.abs(u) == np.sort(np.abs(u))[-3]  # the inner lips' points next to the corners
    unshaped = np.clip(1 - u * u, 0, 1) ** 0.7  # the lips' profile before either taper

    def gap(**shapes):
        weights = np.zeros(len(BASIS), np.float32)
        for name, pixels in shapes.items():
            weights[BASIS.index(name)] = pixels
        upper, lower = rig.opening(weights, from_lips=True)
        opened = (lower - upper) @ rig.frame.ey - (rig.landmarks[LOWER_CUT] - rig.landmarks[UPPER_CUT]) @ rig.frame.ey
        return opened / opened.max()

    assert 0.85 < np.abs(u[beside]).min() < 0.95, u
    own = gap(lowerDown=10.0, upperUp=10.0)
    parting = gap(lipgap=10.0, chin=10.0)
    assert np.all(own[beside] > 0.35 * unshaped[beside]), (u[beside], own[beside], unshaped[beside])
    assert np.all(parting[beside] < 0.25 * unshaped[beside]), (u[beside], parting[beside])


@pytest.mark.parametrize("talking_width", [0.60, 0.80])
def test_while_speaking_the_mouth_relaxes_from_its_photo_width_towards_the_talking_width(photo, monkeypatch,
                                                                                         talking_width):
    """The sample smiles (its corners 0.71 eye distances apart): speaking, it talks narrower, as filmed
    smiles do; a mouth narrower than the talking width (here the width raised to 0.8) talks wider.
    Frames before the mouth first moves are the photo itself. (FaceMesh reads the smile's lips closed
    over its teeth, whole under them, 1-4% narrower than they are drawn: within 0.04 of the width
    asked; not relaxed, 0.08 and 0.12 off.)"""
    from talker_cli.face import frames
    from talker_cli.photo import read_mouths

    monkeypatch.setattr(frames, "TALKING_WIDTH", talking_width)
    renderer = FrameRenderer(photo)
    weights = np.zeros((45, len(NAMES)), np.float32)
    weights[10:, INDEX["jawOpen"]] = 0.02  # speaking from frame 10, the lips barely apart
    track = BlendshapeTrack(25, NAMES, weights)
    drawn = [renderer.render(track, k) for k in (0, 9, 44)]
    assert np.array_equal(drawn[0], photo.image_rgb) and np.array_equal(drawn[1], photo.image_rgb)
    rest_width, talking = read_mouths([photo.image_rgb, drawn[2]])[:, 1]
    expected = 1 + frames.WIDTH_RELAX * (talking_width / rest_width - 1)
    assert talking / rest_width == pytest.approx(expected, abs=0.04), (rest_width, talking)


@pytest.mark.parametrize("mouth_scale", [1.0, 0.75])
def test_the_jaw_carries_the_chin_as_wide_as_the_face_whatever_the_mouths_width(photo, mouth_scale):
    """The jaw is as wide as the face: half way down the chin, 0.4 eye distances to each side of the
    middle, the chin drops at least 0.55 as far as at the middle, on a narrow mouth too (the Mona
    Lisa's; a jaw as wide as 1.7 mouth half widths dropped her chin into a V: 0.45 here)."""
    landmarks = _mouth_narrowed(photo.landmarks_px, mouth_scale)
    frame = mouth_frame(landmarks)
    chin = 0.5 * (landmarks[17] + landmarks[152])
    drop = _jaw_drop(frame, chin + np.outer(np.array([-0.4, 0.0, 0.4]) * frame.eye_px, frame.ex))
    assert drop[1] > 0.5 and min(drop[0], drop[2]) > 0.55 * drop[1]


@pytest.mark.parametrize("mouth_scale", [1.0, 0.75])
def test_beyond_the_corners_the_cheek_stretches_without_a_step(photo, mouth_scale):
    """Where no lips part (0.6 half widths beyond a corner), the cheek's stretch across the lips'
    line is spread out: per pixel, at most 4 / the eye distance of the jaw's drop at the middle (a
    step of 0.11 per pixel there read as a tear at a wide opening: 6.8 / eye distance)."""
    frame = mouth_frame(_mouth_narrowed(photo.landmarks_px, mouth_scale))
    for side in (-1.6, 1.6):
        line = frame.centre + side * frame.half_width_px * frame.ex + np.outer(np.arange(-60.0, 60.0), frame.ey)
        strain = np.abs(np.diff(_jaw_drop(frame, line))).max()
        assert strain * frame.eye_px < 4.0


def test_rest_pose_is_the_photo(photo, still_renderer):
    frame = still_renderer.render(pose_track("sil"), 0)
    assert np.abs(frame.astype(int) - photo.image_rgb.astype(int)).mean() < 0.5


def test_open_mouth_darkens_the_mouth_and_leaves_the_background(photo, still_renderer):
    rest = still_renderer.render(pose_track("sil"), 0).astype(int)
    open_ = still_renderer.render(pose_track("aa", jawOpen=0.8), 0).astype(int)
    ys, xs = mouth_box(photo)
    skin = np.median(photo.image_rgb[ys, xs].mean(axis=2))

    def dark(image):
        return int((image[ys, xs].mean(axis=2) < 0.45 * skin).sum())

    assert dark(open_) > dark(photo.image_rgb.astype(int)) + 40  # a dark cavity appears
    assert np.abs(open_[:, :100] - rest[:, :100]).max() == 0  # far from the face nothing moves


def test_rounded_mouth_is_narrower_than_open_mouth(photo, still_renderer):
    ys, xs = mouth_box(photo)

    def dark_width(frame):
        dark = frame[ys, xs].mean(axis=2) < 90
        cols = np.nonzero(dark.any(axis=0))[0]
        return cols.max() - cols.min() if len(cols) else 0

    assert dark_width(still_renderer.render(pose_track("U", jawOpen=0.7), 0)) < dark_width(
        still_renderer.render(pose_track("aa"), 0))


def test_blink_changes_the_eyes_not_the_mouth(photo, still_renderer):
    rest = still_renderer.render(pose_track("sil"), 0).astype(int)
    blink = still_renderer.render(pose_track("sil", eyeBlinkLeft=1.0, eyeBlinkRight=1.0), 0).astype(int)
    eye = photo.landmarks_px[159].round().astype(int)
    ys, xs = mouth_box(photo)
    assert np.abs(blink[eye[1] - 3:eye[1] + 6, eye[0] - 6:eye[0] + 6] - rest[eye[1] - 3:eye[1] + 6, eye[0] - 6:eye[0] + 6]).mean() > 5
    assert np.abs(blink[ys, xs] - rest[ys, xs]).max() == 0


def test_a_closed_eye_is_covered_by_its_lid_and_leaves_cheek_and_brow(photo, still_renderer):
    rest = still_renderer.render(pose_track("sil"), 0).astype(int)
    blink = still_renderer.render(pose_track("sil", eyeBlinkLeft=1.0, eyeBlinkRight=1.0), 0).astype(int)
    lm = photo.landmarks_px
    for upper, lower, brow in ((159, 145, 105), (386, 374, 334)):
        top, bottom = lm[upper], lm[lower]
        gap = bottom[1] - top[1]
        x = int(round((top[0] + bottom[0]) / 2))
        # The open eye's middle (iris) is replaced by lighter lid skin.
        y = int(round(top[1] + 0.4 * gap))
        assert blink[y, x - 2:x + 3].mean() > rest[y, x - 2:x + 3].mean() + 15
        # Below the lower lid and at the brow almost nothing moves (no smear onto the cheek).
        cheek = int(round(bottom[1] + max(3, 0.5 * gap)))
        assert np.abs(blink[cheek:cheek + 4, x - 4:x + 5] - rest[cheek:cheek + 4, x - 4:x + 5]).mean() < 4
        bx, by = lm[brow].round().astype(int)
        assert np.abs(blink[by - 2:by + 3, bx - 3:bx + 4] - rest[by - 2:by + 3, bx - 3:bx + 4]).mean() < 4


def test_head_motion_moves_the_head_over_a_still_background(photo):
    from talker_cli.face.blendshapes import head_track

    renderer = FrameRenderer(photo)
    track = BlendshapeTrack(25, NAMES, np.zeros((100, len(NAMES)), np.float32), head=head_track(100, 25, 1.0, 0))
    a, b = renderer.render(track, 0).astype(int), renderer.render(track, 99).astype(int)
    lm = photo.landmarks_px
    x0, y0 = lm.min(axis=0).astype(int)
    x1, y1 = lm.max(axis=0).astype(int)
    assert np.abs(a[y0:y1, x0:x1] - b[y0:y1, x0:x1]).mean() > 1.0  # the face moved
    assert np.array_equal(a[:, :60], b[:, :60]) and np.array_equal(a[-40:], b[-40:])  # the rest did not
    bx0, by0, bx1, by1 = renderer.box
    outside = renderer.matte == 0  # in the drawn box, beyond the head's feathered edge
    assert outside.sum() > 1000 and np.array_equal(b[by0:by1, bx0:bx1][outside], photo.image_rgb[by0:by1, bx0:bx1][outside])
    still = FrameRenderer(photo).render(BlendshapeTrack(25, NAMES, track.weights[:1]), 0)
    ys, xs = mouth_box(photo)
    nose, chin = int(photo.landmarks_px[2][1]), int(photo.landmarks_px[152][1]) + 12
    # a smile's lips meet at rest, the skin from the nose to the chin taking up their motion
    still[nose:chin, xs] = photo.image_rgb[nose:chin, xs]
    assert np.array_equal(still, photo.image_rgb)  # at rest, the photo itself




def test_finding_a_face_leaves_matplotlib_unloaded_until_something_uses_it(face_photo):
    """mediapipe's drawing helpers import pyplot (0.3 s of every render) and its audio tasks
    sounddevice; talker stands in for them during mediapipe's import (matplotlib, its package, too),
    and whatever uses them afterwards gets the real ones."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from talker_cli.photo import load_photo; "
            "from talker_cli.config import RenderConfig; "
            f"load_photo(Path({str(face_photo)!r}), RenderConfig()); "
            "print(*(name in sys.modules for name in ('matplotlib', 'matplotlib.pyplot', 'sounddevice'))); "
            "import mediapipe.python.solutions.drawing_utils as du; figure = du.plt.figure; "
            "import matplotlib.pyplot as plt; print(figure is plt.figure)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "False", "True"]


def test_a_disk_that_fills_while_encoding_is_short_of_resources_not_a_failed_stage(tmp_path, monkeypatch):
    """ffmpeg's "No space left on device" is exit 5, as every other full disk (it was exit 6)."""
    from talker_cli.config import VideoConfig
    from talker_cli.errors import ResourceError
    from talker_cli.face import video

    full = ["sh", "-c", "cat > /dev/null; echo 'av_interleaved_write_frame(): No space left on device' >&2; exit 1"]
    monkeypatch.setattr(video, "encode_command", lambda *args: full)
    frames = (np.zeros((4, 4, 3), np.uint8) for _ in range(3))
    with pytest.raises(ResourceError) as raised:
        video.write_mp4(frames, 4, 4, 25, 3, tmp_path / "a.wav", tmp_path / "a.mp4", VideoConfig())
    assert raised.value.exit_code == 5 and "disk is full" in str(raised.value)


def test_a_face_seen_near_profile_is_warned_of(face_photo, monkeypatch, caplog):
    """The warp and the mouth are drawn for a face that looks at the camera: a profile (FaceMesh puts
    the hidden side's points behind the nose, which lands past the cheek: 1.37 of the face's width on
    scikit-image's cameraman) renders with its mouth's inside past the cheek, so it is said."""
    import logging

    import talker_cli.photo as photo_module
    from talker_cli.photo import turned_away

    frontal = load_photo(face_photo, RenderConfig()).landmarks_px
    grid = load_photo(Path(__file__).parent / "data" / "grid-s1-bbaf3s-0.png", RenderConfig()).landmarks_px
    assert not turned_away(frontal) and not turned_away(grid)
    profile = frontal.copy()
    left, right = profile[234, 0], profile[454, 0]
    profile[1, 0] = left + 1.37 * (right - left)
    assert turned_away(profile)
    monkeypatch.setattr(photo_module, "find_landmarks", lambda image: profile)
    with caplog.at_level(logging.WARNING, logger="talker"):
        load_photo(face_photo, RenderConfig())
    assert any("turned away" in record.getMessage() for record in caplog.records)
