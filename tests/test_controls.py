"""Controls over the face: each changes what it should and nothing else, in the track and the video."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from talker_cli.artifacts import BlendshapeTrack, Phone, Word
from talker_cli.face.blendshapes import EMOTION_POSES, INDEX, NAMES, blendshape_track
from talker_cli.cli import app
from talker_cli.config import RenderConfig, VisemeConfig
from talker_cli.face.emotions import BLEND_S, EMOTIONS, emotion_weights, mark_times, split_tags
from talker_cli.photo import load_photo
from talker_cli.face.frames import FrameRenderer
from talker_cli.face.visemes import viseme_track

from .test_end_to_end import decode_frames

runner = CliRunner()
PHONES = [Phone("SIL", 0, 0.5), Phone("M", 0.5, 0.6), Phone("AA", 0.6, 0.9), Phone("P", 0.9, 0.97),
          Phone("IY", 0.97, 1.3), Phone("SIL", 1.3, 3.0)]


def track_with(**render) -> BlendshapeTrack:
    config = VisemeConfig()
    return blendshape_track(viseme_track(PHONES, config), 3.0, config, RenderConfig(**render))


def column(track, name):
    return track.weights[:, INDEX[name]]


# --- emotions ---------------------------------------------------------------------------------

def test_emotion_tags_are_taken_out_of_the_spoken_text_with_their_places():
    assert split_tags("[happy] Hello there. [SAD] I lost it.") == ("Hello there. I lost it.", ((0, "happy"), (13, "sad")))
    assert split_tags("Hello [surprised]world") == ("Hello world", ((6, "surprised"),))
    assert split_tags("see [note 1] and [laughs]") == ("see [note 1] and [laughs]", ())  # not an emotion: spoken


def test_a_tag_takes_effect_at_the_first_word_after_it():
    words = [Word("Hello", 0.4, 0.7), Word("there.", 0.7, 1.1), Word("I", 1.5, 1.6), Word("lost", 1.6, 1.9)]
    text, marks = split_tags("[happy] Hello there. [sad] I lost")
    assert mark_times(marks, text, words) == [(0.0, "happy"), (1.5, "sad")]
    # no spaces between words: by the share of characters over the spoken span
    hanzi, marks = split_tags("你好。[sad]再见")
    assert mark_times(marks, hanzi, [Word("", 1.0, 3.0)]) == [(pytest.approx(1.0 + 2.0 * 3 / 5), "sad")]


def test_emotions_blend_over_a_few_frames_and_always_sum_to_one():
    w = emotion_weights([(1.0, "angry")], "happy", 50, 25)
    happy, angry = w[:, EMOTIONS.index("happy")], w[:, EMOTIONS.index("angry")]
    assert np.allclose(w.sum(axis=1), 1)
    assert happy[:20].min() == 1 and angry[-10:].min() == 1
    between = np.flatnonzero((angry > 0) & (angry < 1))
    assert len(between) >= int(BLEND_S * 25) - 1  # a crossfade, not a cut


@pytest.mark.parametrize("emotion", [e for e in EMOTIONS if e != "neutral"])
def test_an_emotion_moves_only_its_own_shapes_and_keeps_the_closures(emotion):
    neutral, moved = track_with(emotion="neutral"), track_with(emotion=emotion)
    changed = {NAMES[i] for i in np.flatnonzero(np.abs(moved.weights - neutral.weights).max(axis=0) > 1e-6)}
    assert changed and changed <= {NAMES[i] for i in np.flatnonzero(EMOTION_POSES[emotion])}
    assert column(moved, "mouthClose")[int(0.52 * 25)] >= 0.89 and column(moved, "mouthClose")[int(0.92 * 25)] >= 0.89
    assert column(moved, "jawOpen")[int(0.92 * 25)] <= 0.08
    assert np.array_equal(column(moved, "eyeBlinkLeft") >= 0.9, column(neutral, "eyeBlinkLeft") >= 0.9)  # blinks as before


def test_an_emotion_shows_in_the_video_on_the_brows_and_mouth_corners_and_not_the_background(face_photo):
    photo = load_photo(face_photo, RenderConfig())
    renderer = FrameRenderer(photo)
    frame = {e: renderer.render(BlendshapeTrack(25, NAMES, EMOTION_POSES[e][None].copy()), 0).astype(int) for e in EMOTIONS}
    lm = photo.landmarks_px
    brows = tuple(slice(int(a) - 8, int(b) + 8) for a, b in zip(lm[[70, 105, 334, 300], ::-1].min(0), lm[[70, 105, 334, 300], ::-1].max(0)))
    corners = tuple(slice(int(a) - 8, int(b) + 8) for a, b in zip(lm[[61, 291], ::-1].min(0), lm[[61, 291], ::-1].max(0)))
    change = lambda e, box: np.abs(frame[e][box] - frame["neutral"][box]).mean()  # noqa: E731
    assert change("angry", brows) > 2 and change("surprised", brows) > 2 and change("sad", brows) > 1
    assert change("sad", corners) > 1 and change("happy", corners) > 1
    for e in EMOTIONS:
        assert np.abs(frame[e][:, :60] - frame["neutral"][:, :60]).max() == 0  # the background stays


# --- head motion, blinks, mouth scale ------------------------------------------------------------

def test_head_motion_scales_the_head_track_and_zero_keeps_it_still():
    still, moving, double = track_with(head_motion=0.0), track_with(head_motion=1.0), track_with(head_motion=2.0)
    assert np.abs(still.head).max() == 0 and np.abs(moving.head).max() > 0.3
    assert np.allclose(double.head, 2 * moving.head)
    assert np.array_equal(still.weights, moving.weights)  # the face itself is untouched


def test_blink_rate_sets_how_often_the_eyes_close():
    config = VisemeConfig()
    phones = [Phone("SIL", 0, 60.0)]

    def blinks(rate):
        track = blendshape_track(viseme_track(phones, config), 60.0, config, RenderConfig(blink_rate=rate))
        closed = column(track, "eyeBlinkLeft") >= 0.9
        return int(np.sum(closed[1:] & ~closed[:-1]) + closed[0])

    assert blinks(0) == 0
    assert 8 <= blinks(12) <= 17 and 22 <= blinks(30) <= 40


def test_mouth_scale_scales_speech_and_never_opens_a_closure():
    normal, small, big = track_with(), track_with(mouth_open_scale=0.5), track_with(mouth_open_scale=2.0)
    assert column(small, "jawOpen").max() == pytest.approx(0.5 * column(normal, "jawOpen").max(), rel=1e-4)
    assert column(big, "jawOpen").max() > column(normal, "jawOpen").max()
    for track in (small, big):
        assert column(track, "mouthClose")[int(0.92 * 25)] >= 0.89 and column(track, "jawOpen")[int(0.92 * 25)] <= 0.08
        assert np.array_equal(column(track, "eyeBlinkLeft"), column(normal, "eyeBlinkLeft"))


@pytest.mark.slow
@pytest.mark.parametrize("head_motion", [0.0, 1.0])
def test_the_background_stays_still_the_head_moves_as_asked_and_blinks_go_on(tmp_path, face_photo, head_motion):
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", "Hello there, how are you today?",
                                 "--head-motion", str(head_motion), "--blink-rate", "40", "--seed", "3",
                                 "-o", str(tmp_path / "a.mp4"), "--json"])
    assert result.exit_code == 0, result.stderr
    manifest = json.loads(result.stdout)
    assert manifest["controls"]["head_motion"] == head_motion and manifest["controls"]["blink_rate"] == 40
    frames = decode_frames(tmp_path / "a.mp4", 512, 512).astype(np.int16)
    background = np.abs(frames[:, :, :60] - frames[0, :, :60])
    assert background.mean() < 0.5 and background.max() <= 10  # encoder noise only, head moving or not
    photo = load_photo(face_photo, RenderConfig())
    x, y = photo.landmarks_px[[10, 151]].mean(axis=0).round().astype(int)  # the forehead: no shape moves it
    forehead = np.abs(frames[:, y - 10:y + 10, x - 30:x + 30] - frames[0, y - 10:y + 10, x - 30:x + 30]).mean(axis=(1, 2, 3)).max()
    assert (forehead < 1.5) if head_motion == 0 else (forehead > 3 * 1.5)
    track = json.loads((tmp_path / "a.blendshapes.json").read_text())
    blink = np.array(track["frames"])[:, track["names"].index("eyeBlinkLeft")]
    assert blink.max() > 0.9
    x, y = photo.landmarks_px[159].round().astype(int)
    eye = frames[:, y - 3:y + 6, x - 6:x + 7].mean(axis=(1, 2, 3))
    assert np.abs(eye[int(np.argmax(blink))] - eye[int(np.argmin(blink))]) > 5  # the lid is seen closing


# --- crop ----------------------------------------------------------------------------------------

def test_crop_face_frames_the_head_and_shoulders_at_the_video_size(face_photo):
    full = load_photo(face_photo, RenderConfig())
    face = load_photo(face_photo, RenderConfig(crop="face"))
    share = lambda p: np.ptp(p.landmarks_px[:, 0]) / p.image_rgb.shape[1]  # noqa: E731
    assert share(face) > 1.6 * share(full)
    assert max(face.image_rgb.shape[:2]) == 512 and face.image_rgb.shape[0] % 2 == face.image_rgb.shape[1] % 2 == 0
    lm = face.landmarks_px
    assert lm[:, 1].min() > 0.1 * face.image_rgb.shape[0] and lm[:, 1].max() < 0.8 * face.image_rgb.shape[0]
    assert face.image_rgb.shape[0] > face.image_rgb.shape[1]  # a portrait: room for the shoulders


@pytest.mark.slow
def test_controls_come_from_a_batch_file_per_job_and_a_job_without_a_photo_writes_animation(tmp_path, face_photo):
    (tmp_path / "face.png").write_bytes(face_photo.read_bytes())
    (tmp_path / "jobs.csv").write_text(
        "photo,text,output,format,emotion,head_motion,blink_rate\n"
        "face.png,Hello there.,a.mp4,arkit-json,sad,0,0\n"
        ",[happy] Hi again.,b,rhubarb-tsv,,,\n")
    result = runner.invoke(app, ["batch", str(tmp_path / "jobs.csv"), "--out-dir", str(tmp_path / "out")])
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["a.mp4", "a.json", "a.blendshapes.json", "b.json", "b.tsv", "b.wav", "batch.json"])
    a, b = (json.loads((out / f"{n}.json").read_text()) for n in "ab")
    assert a["controls"]["emotion"] == "sad" and a["controls"]["head_motion"] == 0 and a["controls"]["blink_rate"] == 0
    assert b["controls"]["emotion"] == "neutral" and b["controls"]["emotion_changes"] == [[0.0, "happy"]]
    assert b["video"] is None and (out / "b.tsv").read_text().startswith("0.00\tX\n")
    rerun = runner.invoke(app, ["batch", str(tmp_path / "jobs.csv"), "--out-dir", str(out), "--json"])
    assert [j["status"] for j in json.loads(rerun.stdout)["jobs"]] == ["skipped", "skipped"]  # complete: not redone


def test_a_face_too_small_in_the_whole_photo_is_framed_by_crop_face(tmp_path, face_photo):
    from PIL import Image

    from talker_cli.errors import InputError

    portrait = np.asarray(Image.open(face_photo).convert("RGB"))
    wide = np.full((1800, 1400, 3), 200, np.uint8)  # the portrait small in a large picture, as a full-body shot
    wide[200:712, 450:962] = portrait
    Image.fromarray(wide).save(tmp_path / "far.png")
    with pytest.raises(InputError, match="--crop face"):  # at a 512 px video the face is under 48 px wide
        load_photo(tmp_path / "far.png", RenderConfig(max_side=512))
    framed = load_photo(tmp_path / "far.png", RenderConfig(max_side=512, crop="face"))
    assert np.ptp(framed.landmarks_px[:, 0]) > 100 and max(framed.image_rgb.shape[:2]) == 512


def test_a_tag_finds_its_word_in_a_text_with_line_breaks_and_double_spaces():
    words = [Word(w, i * 0.5, i * 0.5 + 0.4) for i, w in enumerate("One. Two three. Four".split())]
    text, marks = split_tags("One.\n\n[sad] Two  three.   [happy] Four")
    assert mark_times(marks, text, words) == [(0.5, "sad"), (1.5, "happy")]
