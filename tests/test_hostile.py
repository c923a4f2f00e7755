"""Hostile input, one table per class of failure: each case is run as a user runs talker (a process),
and must end with its documented exit code, one line on stderr, nothing new at any output path,
and every input byte for byte as it was."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .conftest import ROOT, SAMPLES, ffprobe, still_preset


def digest(folder: Path) -> dict[str, str]:
    """Every file under the folder (links as their target's name) and its content's hash."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            out[str(path)] = "-> " + os.readlink(path)
        elif path.is_file():
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def talker(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "talker_cli", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


@pytest.fixture
def place(tmp_path):
    """A folder with a photo, a recording, a text and an output folder, as a user's working folder."""
    shutil.copy(SAMPLES / "face.png", tmp_path / "face.png")
    shutil.copy(SAMPLES / "speech.wav", tmp_path / "speech.wav")
    (tmp_path / "script.txt").write_text("Hello there.")
    (tmp_path / "out").mkdir()
    return tmp_path


def check_refused(place: Path, args: list[str], code: int, says: str, env: dict | None = None) -> None:
    before = digest(place)
    result = talker(place, *args, env=env)
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()  # progress lines of the stages that ran, then the error
    assert lines[-1].startswith("talker: error: ") and says in lines[-1], result.stderr
    assert all(line.startswith("talker: stage ") for line in lines[:-1]), result.stderr
    assert digest(place) == before  # no input changed, no output appeared


# 1. Inputs destroyed: no output file may be, or resolve to, an input.
def _links(place: Path) -> None:
    (place / "out" / "face.json").symlink_to(place / "script.txt")  # the manifest's name points at the text


def _hard_link(place: Path) -> None:
    os.link(place / "script.txt", place / "out" / "h.srt")


INPUTS_DESTROYED = [
    ("recording as the output", None, ["--photo", "face.png", "--audio", "out/x.mp4", "-o", "out/x.mp4"]),
    ("text file as the manifest", None, ["--photo", "face.png", "--text-file", "out/o.json", "-o", "out/o.mp4"]),
    ("photo named .mp4 as the output", None, ["--photo", "face.mp4", "--text", "Hi.", "-o", "face.mp4"]),
    ("text as the subtitles", None, ["--photo", "face.png", "--text-file", "out/t.srt", "-o", "out/t.mp4"]),
    ("a link from the manifest to the text", _links, ["--photo", "face.png", "--text-file", "script.txt",
                                                      "-o", "out/face.mp4"]),
    ("a hard link from the subtitles to the text", _hard_link, ["--photo", "face.png", "--text-file",
                                                                "script.txt", "-o", "out/h.mp4"]),
    ("output through ../ onto the photo", None, ["--photo", "face.mp4", "--text", "Hi.", "-o", "out/../face.mp4"]),
]


@pytest.mark.parametrize("what, setup, args", INPUTS_DESTROYED, ids=[c[0] for c in INPUTS_DESTROYED])
def test_no_output_overwrites_an_input(place, what, setup, args):
    shutil.copy(place / "speech.wav", place / "out" / "x.mp4")
    (place / "out" / "o.json").write_text("Hello there.")
    (place / "out" / "t.srt").write_text("Hello there.")
    shutil.copy(place / "face.png", place / "face.mp4")
    if setup:
        setup(place)
    check_refused(place, ["render", *args], 2, "would overwrite the input")


# 2. Outputs that clobber each other in a batch: every file a batch writes is its own.
CLOBBER = [
    ("an output named batch.mp4", ['{"photo": "face.png", "text": "Hi.", "output": "batch.mp4"}'], [],
     "the batch summary"),
    ("x.mp4 beside x.blendshapes.mp4", ['{"photo": "face.png", "text": "Hi.", "output": "x.mp4"}',
                                        '{"photo": "face.png", "text": "Hi.", "output": "x.blendshapes.mp4"}'], [],
     "the arkit-json of line 1 and the manifest of line 2"),
    ("the metrics file as a manifest", ['{"photo": "face.png", "text": "Hi.", "output": "a.mp4"}'],
     ["--metrics-file", "out/a.json"], "the metrics file"),
    ("the metrics file as the batch file", ['{"photo": "face.png", "text": "Hi.", "output": "a.mp4"}'],
     ["--metrics-file", "jobs.jsonl"], "would overwrite the input"),
    ("an output onto a job's photo", ['{"photo": "out/p.mp4", "text": "Hi.", "output": "p.mp4"}'], [],
     "would overwrite the input"),
    ("an animation stem beside a video of that name", ['{"photo": "face.png", "text": "Hi.", "output": "a.mp4"}',
                                                       '{"text": "Hi.", "output": "a"}'], [],
     "the manifest of line 1 and the manifest of line 2"),
    ("an animation's speech onto a job's recording", ['{"audio": "out/v.wav", "reply": true, "output": "v"}'], [],
     "would overwrite the input"),
    ("two formats' files onto one name", ['{"photo": "face.png", "text": "Hi.", "output": "a.mp4", "format": "rhubarb-json"}',
                                          '{"text": "Hi.", "output": "a.rhubarb", "format": "srt"}'], [],
     "the rhubarb-json of line 1 and the manifest of line 2"),
]


@pytest.mark.parametrize("what, lines, extra, says", CLOBBER, ids=[c[0] for c in CLOBBER])
def test_every_file_a_batch_writes_is_its_own(place, what, lines, extra, says):
    shutil.copy(place / "face.png", place / "out" / "p.mp4")
    (place / "jobs.jsonl").write_text("\n".join(lines) + "\n")
    check_refused(place, ["batch", "jobs.jsonl", "--out-dir", "out", "--allow", str(place), *extra], 2, says)


# 3. Security: links, foreign folders, playlists, presets outside the batch's folders.
def test_a_planted_link_in_the_lock_folder_is_not_followed(place):
    victim = place / "victim.txt"
    victim.write_text("precious")
    locks = place / "locks"
    locks.mkdir()
    (locks / "gpu-0.lock").symlink_to(victim)
    preset = place / "gpu.toml"
    preset.write_text('[asr]\ndevice = "cuda"\n')
    check_refused(place, ["render", "--photo", "face.png", "--audio", "speech.wav", "--preset", "gpu.toml",
                          "-o", "out/a.mp4"], 2, "cannot open the lock file", env={"TALKER_LOCK_DIR": str(locks)})
    assert victim.read_text() == "precious"


def test_a_private_lock_folder_that_others_may_write_is_refused(place, monkeypatch):
    import tempfile

    from talker_cli.gpu.locks import device_locks
    from talker_cli.errors import UsageError

    monkeypatch.delenv("TALKER_LOCK_DIR", raising=False)

    folder = Path(tempfile.gettempdir()) / f"talker-locks-{os.getuid()}"
    folder.mkdir(exist_ok=True)
    mode = folder.stat().st_mode & 0o7777
    try:
        folder.chmod(0o777)
        with pytest.raises(UsageError, match="others may write in it"):
            with device_locks(["cuda:0"], 0):
                pass
    finally:
        folder.chmod(mode)


def test_a_job_with_no_gpu_stage_takes_no_lock(place):
    locks = place / "locks"  # does not exist: a job that took a lock would make it or fail on it
    preset = place / "llm-gpu.toml"
    preset.write_text('[llm]\ndevice = "cuda"\n')  # the LLM is on a GPU, but this job has no reply
    before = digest(place)
    result = talker(place, "render", "--photo", "face.png", "--text", "Hi.", "--preset", "llm-gpu.toml",
                    "-o", "out/a.mp4", "-q", env={"TALKER_LOCK_DIR": str(locks)})
    assert result.returncode == 0, result.stderr
    assert not locks.exists()
    assert {k: v for k, v in digest(place).items() if "/out/" not in k} == before


@pytest.mark.slow
def test_a_playlist_cannot_make_ffmpeg_read_other_files(place):
    secret = place / "elsewhere" / "seg.wav"
    secret.parent.mkdir()
    shutil.copy(place / "speech.wav", secret)
    (place / "list.m3u8").write_text(f"#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:5.3,\n{secret}\n#EXT-X-ENDLIST\n")
    (place / "concat.txt").write_text(f"ffconcat version 1.0\nfile '{secret}'\n")
    for playlist in ("list.m3u8", "concat.txt"):
        check_refused(place, ["render", "--photo", "face.png", "--audio", playlist, "-o", "out/a.mp4"], 3,
                      "cannot read")


def test_a_batch_preset_file_outside_the_allowed_folders_is_refused(place):
    inside = place / "batch"
    inside.mkdir()
    shutil.copy(place / "face.png", inside / "face.png")
    (place / "outside.toml").write_text("[render]\nfps = 30\n")
    (inside / "jobs.jsonl").write_text('{"photo": "face.png", "text": "Hi.", "output": "a.mp4", '
                                       '"preset": "../outside.toml"}\n')
    check_refused(place, ["batch", "batch/jobs.jsonl", "--out-dir", "out"], 2, "outside the allowed folders")


def test_a_partial_file_is_stale_only_when_no_living_writer_holds_it(place):
    import fcntl

    from talker_cli.jobs.outputs import OutputSet, output_files

    live = OutputSet(output_files(place / "out" / "a.mp4", ("srt",)))  # a writer alive in this process, whatever PID others see
    live.write_text("srt", "1\n")
    dead = place / "out" / ".a.srt.partial-999999999-deadbeef"  # a writer killed outright
    dead.write_text("1\n")
    (place / "out" / ".a.json.partial-999999999-deadbeef").write_text("")
    second = OutputSet(output_files(place / "out" / "a.mp4", ("srt",)))
    assert live.temp("manifest").exists() and live.temp("srt").exists()
    assert not dead.exists()
    with open(live.temp("manifest"), "rb") as handle:  # the live one is still locked
        with pytest.raises(BlockingIOError):
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    live.discard()
    second.discard()


# 4. Tracebacks and exit 1: every error is one line with a documented code.
def _jobs(place: Path, text: str) -> None:
    (place / "jobs.jsonl").write_text(text)


ONE_LINE = [
    ("--out-dir is a file", lambda p: [(p / "afile").write_text("x"), _jobs(p, '{"photo": "face.png", "text": "Hi.", "output": "a.mp4"}\n')],
     ["batch", "jobs.jsonl", "--out-dir", "afile"], 2, "afile"),
    ("--metrics-file in a missing folder", lambda p: _jobs(p, '{"photo": "face.png", "text": "Hi.", "output": "a.mp4"}\n'),
     ["batch", "jobs.jsonl", "--out-dir", "out", "--metrics-file", "nope/m.prom"], 2, "does not exist"),
    ("a NUL byte in a batch field", lambda p: _jobs(p, '{"photo": "face\\u0000.png", "text": "Hi.", "output": "a.mp4"}\n'),
     ["batch", "jobs.jsonl", "--out-dir", "out"], 2, "without NUL"),
    ("a number as a batch field", lambda p: _jobs(p, '{"photo": 7, "text": "Hi.", "output": "a.mp4"}\n'),
     ["batch", "jobs.jsonl", "--out-dir", "out"], 2, "photo must be a text"),
    ("a preset that is a folder", lambda p: (p / "dir.toml").mkdir(),
     ["render", "--photo", "face.png", "--text", "Hi.", "--preset", "dir.toml", "-o", "out/a.mp4"], 2, "preset"),
    ("a preset that is not UTF-8", lambda p: (p / "bin.toml").write_bytes(b"\xff\xfe[render]"),
     ["render", "--photo", "face.png", "--text", "Hi.", "--preset", "bin.toml", "-o", "out/a.mp4"], 2, "not valid TOML"),
    ("an output folder that is missing", None,
     ["render", "--photo", "face.png", "--text", "Hi.", "-o", "missing/a.mp4"], 2, "does not exist"),
    ("a bad flag value", None, ["render", "--photo", "face.png", "--text", "Hi.", "--fps", "abc", "-o", "out/a.mp4"],
     2, "--fps"),
    ("--wait nan", None, ["render", "--photo", "face.png", "--audio", "speech.wav", "--preset", "gpu-24gb",
                          "--wait", "nan", "-o", "out/a.mp4"], 2, "--wait"),
]


@pytest.mark.parametrize("what, setup, args, code, says", ONE_LINE, ids=[c[0] for c in ONE_LINE])
def test_errors_are_one_line_with_their_code(place, what, setup, args, code, says):
    if setup:
        setup(place)
    check_refused(place, args, code, says)


def _checkpoints(place: Path) -> None:
    (place / "bad.pt").write_bytes(bytes(range(256)) * 4)
    (place / "zip.pt").write_bytes(b"PK\x03\x04 not really a zip")
    (place / "whisper.toml").write_text('[asr]\nbackend = "openai-whisper"\ndevice = "cuda"\n')


@pytest.mark.parametrize("checkpoint", ["bad.pt", "zip.pt"])
def test_check_gpu_with_a_damaged_checkpoint_says_so(place, checkpoint):
    _checkpoints(place)
    check_refused(place, ["check-gpu", "--preset", "whisper.toml", "--asr-model", checkpoint, "--audio", "speech.wav"],
                  4, "is not a readable PyTorch checkpoint")


def test_a_path_like_cuda_visible_devices_names_no_file(place):
    from talker_cli.gpu.locks import physical_id
    from talker_cli.errors import UsageError

    with pytest.raises(UsageError, match="not a GPU index or UUID"):
        physical_id("cuda:0", {"CUDA_VISIBLE_DEVICES": "../../etc/x"})
    assert physical_id("cuda:1", {"CUDA_VISIBLE_DEVICES": "3,GPU-8a1b"}) == "GPU-8a1b"


def test_verbose_shows_the_traceback_that_the_one_line_hides(place):
    args = ["render", "--photo", "face.png", "--text", "Hi.", "-o", "missing/a.mp4"]
    assert "Traceback" not in talker(place, *args).stderr
    assert "Traceback" in talker(place, "--verbose", *args).stderr
    assert "Traceback" in talker(place, *args, env={"TALKER_LOG": "debug"}).stderr


# 6. Bad input is reported as bad input (3), with what to do.
def _bomb(place: Path) -> None:
    from PIL import Image

    Image.new("L", (12000, 12000)).save(place / "bomb.png")


BAD_INPUT = [
    ("a decompression bomb", _bomb, ["--photo", "bomb.png", "--text", "Hi."], "megapixels"),
    ("invalid UTF-8 in the text", None, ["--photo", "face.png", "--text", "caf\udce9"], "not valid UTF-8"),
    ("an audio path that is a folder", lambda p: (p / "rec").mkdir(), ["--photo", "face.png", "--audio", "rec"],
     "is a folder"),
    ("a photo that is not an image", lambda p: (p / "fake.png").write_text("no"),
     ["--photo", "fake.png", "--text", "Hi."], "not a readable image"),
    ("a text file with NUL bytes", lambda p: (p / "nul.txt").write_bytes(b"Hello\0 there."),
     ["--photo", "face.png", "--text-file", "nul.txt"], "NUL bytes"),
    ("a text of emoji only", None, ["--photo", "face.png", "--text", "👍🏽🙂 ★"], "only emoji"),
    ("a recording with no speech", lambda p: shutil.copy(p / "face.png", p / "noise.wav"),
     ["--photo", "face.png", "--audio", "noise.wav"], "cannot read"),
]


@pytest.mark.slow
@pytest.mark.parametrize("what, setup, args, says", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_is_exit_3_with_what_to_do(place, what, setup, args, says):
    if setup:
        setup(place)
    env = {"PYTHONIOENCODING": "utf-8:surrogateescape"}
    check_refused(place, ["render", *args, "-o", "out/a.mp4"], 3, says, env=env)


def test_a_16_bit_photo_is_scaled_not_clipped():
    import numpy as np
    from PIL import Image

    from talker_cli.photo import read_image

    gray = np.asarray(Image.open(SAMPLES / "face.png").convert("L")).astype(np.uint16) * 257
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"face16-{os.getpid()}.png"
    Image.frombytes("I;16", (gray.shape[1], gray.shape[0]), gray.astype("<u2").tobytes()).save(path)
    try:
        rgb = read_image(path)
    finally:
        path.unlink()
    assert rgb.dtype == np.uint8 and rgb.shape[2] == 3
    assert abs(float(rgb.mean()) - float(gray.mean() / 257)) < 1.0  # not near-white


def test_a_csv_saved_by_excel_with_a_byte_order_mark_reads(place):
    from talker_cli.jobs.batch_file import read_batch

    (place / "jobs.csv").write_bytes("\ufeffphoto,text,output\nface.png,Hi.,a.mp4\n".encode())
    (spec,) = read_batch(place / "jobs.csv")
    assert spec.photo == place / "face.png" and spec.output == "a.mp4"


def test_a_text_file_saved_by_notepad_with_a_byte_order_mark_is_said_without_it(place):
    (place / "script.txt").write_bytes("\ufeffHello there.".encode())
    result = talker(place, "lipsync", "--text-file", "script.txt", "-o", "out/a", "--format", "vtt", "-q")
    assert result.returncode == 0, result.stderr
    assert "\nHello there.\n" in (place / "out" / "a.vtt").read_text(encoding="utf-8")


def test_a_stereo_recording_whose_channels_cancel_is_heard_from_its_first_channel(place):
    """Mixed to mono, a second channel that is the first inverted leaves silence: it was refused as silent."""
    import numpy as np
    import soundfile

    speech, rate = soundfile.read(place / "speech.wav")
    soundfile.write(place / "inverted.wav", np.stack([speech, -speech], axis=1), rate)
    result = talker(place, "lipsync", "--audio", "inverted.wav", "-o", "out/a", "--format", "vtt", "-q")
    assert result.returncode == 0, result.stderr
    assert "channels cancel out" in result.stderr and "first channel" in result.stderr
    assert "Good morning, this short recording" in (place / "out" / "a.vtt").read_text(encoding="utf-8")

# 7. One enumeration of exit codes, the one the README documents.
def test_the_readme_documents_every_exit_code():
    from talker_cli.errors import ExitCode

    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("### Exit codes"):readme.index("Errors are one line")]
    documented = {int(line.split("|")[1]) for line in table.splitlines() if line.startswith("| ") and line.split("|")[1].strip().isdigit()}
    assert documented == {int(code) for code in ExitCode}


def test_two_faces_side_by_side_animate_the_larger_one():
    import numpy as np
    from PIL import Image

    from talker_cli.photo import find_landmarks

    face = np.asarray(Image.open(SAMPLES / "face.png").convert("RGB"))
    smaller = np.asarray(Image.fromarray(face).resize((face.shape[1] * 3 // 4, face.shape[0] * 3 // 4)))
    canvas = np.full((face.shape[0], face.shape[1] * 2, 3), 200, np.uint8)
    canvas[:, face.shape[1]:] = face[:, ::-1]  # the larger face on the right
    canvas[: smaller.shape[0], : smaller.shape[1]] = smaller
    points = find_landmarks(canvas)
    assert points is not None and len(points) == 478
    assert points[:, 0].min() > face.shape[1]  # every point on the right-hand face


# 7. Endless or special text files are refused from what they are or their size, never read whole or
# waited on; the process is capped so that a regression cannot take the machine down.
def _capped():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))  # 2 GiB: /dev/zero read whole needs far more


SPECIAL_TEXT_FILES = [
    ("an endless device", lambda p: "/dev/zero", "is a device"),
    ("a FIFO nobody writes to", lambda p: (os.mkfifo(p / "fifo"), str(p / "fifo"))[1], "is a FIFO"),
    ("a folder", lambda p: (os.mkdir(p / "texts"), str(p / "texts"))[1], "is a folder"),
    ("a 100 MB file", lambda p: (os.truncate(open(p / "big.txt", "wb").name, 100_000_000), str(p / "big.txt"))[1],
     "over the 80,003 bytes"),
]


@pytest.mark.parametrize("what, make, says", SPECIAL_TEXT_FILES, ids=[c[0] for c in SPECIAL_TEXT_FILES])
def test_a_special_or_endless_text_file_is_refused_at_once(place, what, make, says):
    path = make(place)
    before = digest(place)
    result = subprocess.run([sys.executable, "-m", "talker_cli", "lipsync", "--text-file", path, "-o", "out/a", "-q"],
                            cwd=place, capture_output=True, text=True, timeout=60, preexec_fn=_capped)
    assert result.returncode == 3, result.stderr
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert digest(place) == before


def test_a_text_file_is_read_no_further_than_its_limit_allows(tmp_path):
    from talker_cli.errors import InputError
    from talker_cli.jobs.stages import read_text_file

    path = tmp_path / "long.txt"
    path.write_text("é" * 1000, encoding="utf-8")  # 2,000 bytes
    assert read_text_file(path, 1000) == "é" * 1000
    with pytest.raises(InputError, match="2,000 bytes, over the 403"):
        read_text_file(path, 100)


def test_a_work_cache_that_is_a_file_leaves_the_job_running_with_one_warning(place):
    (place / "cache").write_text("a file where the cache should be")
    result = talker(place, "lipsync", "--text", "Hello there.", "-o", "out/a", "--format", "srt",
                    env={"TALKER_WORK_CACHE": str(place / "cache")})
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "work cache" in line]
    assert len(warnings) == 1 and "not a folder" in warnings[0] and "goes on without it" in warnings[0]
    assert (place / "out" / "a.srt").is_file()


# 8. Each refusal says what the path really is.
def _fifo(name):
    return lambda p: (os.mkfifo(p / name), name)[1]


def _file(name):
    return lambda p: ((p / name).write_text("a file"), name)[1]


SAYS_WHAT_IT_IS = [
    ("a recording that is a FIFO", _fifo("rec.wav"), lambda path: ["lipsync", "--audio", path, "-o", "out/a"], 3,
     "rec.wav is a FIFO, not a file"),
    ("a recording that is a device", lambda p: "/dev/zero", lambda path: ["lipsync", "--audio", path, "-o", "out/a"], 3,
     "/dev/zero is a device, not a file"),
    ("a preset that is a FIFO", _fifo("p.toml"), lambda path: ["lipsync", "--text", "Hi.", "--preset", path, "-o", "out/a"],
     2, "preset file p.toml is a FIFO, not a file"),
    ("a batch file that is a FIFO", _fifo("jobs.csv"), lambda path: ["batch", path, "--out-dir", "out"], 2,
     "batch file jobs.csv is a FIFO, not a file"),
    ("an output under a file", _file("notes"), lambda path: ["lipsync", "--text", "Hi.", "-o", f"{path}/sub/a"], 2,
     "cannot exist: notes is a file, not a folder"),
]


@pytest.mark.parametrize("what, make, args, code, says", SAYS_WHAT_IT_IS, ids=[c[0] for c in SAYS_WHAT_IT_IS])
def test_a_refusal_says_what_the_path_is(place, what, make, args, code, says):
    path = make(place)
    before = digest(place)
    result = subprocess.run([sys.executable, "-m", "talker_cli", *args(path), "-q"] if args(path)[0] != "batch" else
                            [sys.executable, "-m", "talker_cli", *args(path)], cwd=place, capture_output=True,
                            text=True, timeout=60, preexec_fn=_capped)
    assert result.returncode == code, result.stderr
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert digest(place) == before


def test_a_recording_with_a_few_broken_samples_is_heard_not_called_silent(tmp_path, caplog):
    import soundfile

    from talker_cli.audio_io import SILENT_DBFS, check_not_silent, decode_audio, level_dbfs

    speech, rate = soundfile.read(SAMPLES / "speech.wav", dtype="float32")
    speech[[100, 5000, 9000]] = np.nan
    speech[[200, 7000]] = np.inf
    path = tmp_path / "broken.wav"
    soundfile.write(path, speech, rate, subtype="FLOAT")
    with caplog.at_level("WARNING", logger="talker"):
        samples = decode_audio(path, 16000)
    assert np.isfinite(samples).all() and level_dbfs(samples) > SILENT_DBFS
    check_not_silent(samples, path)  # it was "silent (-inf dBFS)"
    assert "not numbers" in caplog.text
    speech[:] = np.nan
    soundfile.write(path, speech, rate, subtype="FLOAT")
    with pytest.raises(Exception, match="no samples that are numbers"):
        decode_audio(path, 16000)


def test_a_text_whose_speech_would_run_past_the_recording_limit_is_refused_before_any_stage(place):
    """5,000 characters of Chinese are under the character limit but about 26 minutes of speech, where
    a recording over 15 is refused: it had been accepted and spoken for an hour and more."""
    (place / "long.txt").write_text("今天天气很好我们一起去公园散步吧。" * 300)
    result = talker(place, "lipsync", "--text-file", "long.txt", "-o", "out/a")
    assert result.returncode == 3, result.stderr
    line = result.stderr.strip()
    assert line.startswith("talker: error: the text would make about 25 min of speech") and "input.max_audio_s" in line
    assert not any((place / "out").iterdir())
    (place / "more.toml").write_text("[input]\nmax_audio_s = 3600\n")
    allowed = talker(place, "check-gpu", "--text-file", "long.txt", "--preset", str(place / "more.toml"))
    assert allowed.returncode == 0, allowed.stderr
    prompt = talker(place, "check-gpu", "--text-file", "long.txt", "--reply")  # a prompt is not spoken
    assert prompt.returncode == 0, prompt.stderr


def test_the_speech_a_text_makes_is_told_within_a_quarter_of_what_the_voices_say(place):
    from talker_cli.language import speech_seconds

    english = ("The quick brown fox jumps over the lazy dog. She had your dark suit in greasy wash water all "
               "year. Don't ask me to carry an oily rag like that.")
    chinese = "人工智能正在改变我们的工作和生活方式。今天天气很好，我们一起去公园散步吧。"
    for text, language in ((english, "en"), (chinese, "zh")):
        result = talker(place, "lipsync", "--text", text, "--language", language, "-o", f"out/{language}", "-q",
                        "--json")
        assert result.returncode == 0, result.stderr
        import json

        said = json.loads(result.stdout)["speech_s"]
        assert 0.75 * said <= speech_seconds(text) <= 1.25 * said, (language, said, speech_seconds(text))


@pytest.mark.slow
def test_a_prompt_cut_to_fit_the_reply_model_is_said_and_the_model_reports_its_progress(place):
    """A 20,000-character prompt sat in the LLM stage for minutes with no line; what was cut was said
    only in a warning."""
    import json

    (place / "prompt.txt").write_text(" ".join(f"Sentence number {i} is here." for i in range(200)) + " Why is the sky blue?")
    (place / "small.toml").write_text("[llm]\ncontext_tokens = 256\nmax_new_tokens = 12\n")
    result = talker(place, "lipsync", "--text-file", "prompt.txt", "--reply", "--preset", str(place / "small.toml"),
                    "-o", "out/a", "--json")
    assert result.returncode == 0, result.stderr
    llm = next(s for s in json.loads(result.stdout)["stages"] if s["name"] == "llm")["details"]
    assert llm["prompt_sentences"] == 201 and llm["prompt_sentences_dropped"] > 150 and llm["prompt_tokens"] <= 256 - 12
    said = result.stderr
    assert f"its oldest {llm['prompt_sentences_dropped']} of 201 sentences were dropped" in said
    assert f"read prompt: {llm['prompt_tokens']}/{llm['prompt_tokens']} tokens" in said
    assert "write reply: " in said


def test_a_recording_with_samples_that_are_not_numbers_makes_a_video_with_them_silent(place):
    """The input stage took them as silence, the soundtrack kept them and the AAC encoder failed
    (exit 6, raw ffmpeg text)."""
    import soundfile

    speech, rate = soundfile.read(SAMPLES / "speech.wav", dtype="float32")
    speech[[100, 5000, 9000]] = np.nan
    speech[[200, 7000]] = [np.inf, -np.inf]
    soundfile.write(place / "broken.wav", speech, rate, subtype="FLOAT")
    before = (place / "broken.wav").read_bytes()
    result = talker(place, "render", "--photo", "face.png", "--audio", "broken.wav", "--language", "en",
                    "--preset", str(still_preset(place)), "-o", "out/a.mp4", "-q")
    assert result.returncode == 0, result.stderr
    assert (place / "broken.wav").read_bytes() == before  # the input is not repaired in place
    track = ffprobe(place / "out" / "a.mp4")
    audio = [s for s in track["streams"] if s["codec_type"] == "audio"]
    assert audio and abs(float(audio[0]["duration"]) - len(speech) / rate) < 0.1


def test_a_planted_fifo_or_link_among_the_partial_files_neither_hangs_nor_redirects_a_run(place):
    """Another user's FIFO under a partial file's name had left the next run waiting forever on it;
    a link under the name this run will write is refused, never written through."""
    out = place / "out"
    os.mkfifo(out / ".a.json.partial-999-deadbeef")
    os.mkfifo(out / ".a.srt.partial-999-deadbeef")
    result = talker(place, "lipsync", "--text", "Hello there.", "-o", "out/a", "--format", "srt", "-q")
    assert result.returncode == 0, result.stderr
    assert json_file(out / "a.json")["spoken_text"] == "Hello there."
    assert (out / ".a.json.partial-999-deadbeef").exists()  # someone else's: left alone


def json_file(path: Path) -> dict:
    import json

    return json.loads(path.read_text())


def test_a_link_planted_where_a_run_writes_its_partial_manifest_is_not_followed(tmp_path, monkeypatch):
    import secrets

    from talker_cli.errors import TalkerError
    from talker_cli.jobs.outputs import OutputSet, output_files

    target = tmp_path / "victim.txt"
    target.write_text("keep me")
    monkeypatch.setattr(secrets, "token_hex", lambda n: "cafe0001")
    (tmp_path / f".a.json.partial-{os.getpid()}-cafe0001").symlink_to(target)
    with pytest.raises(TalkerError):
        OutputSet(output_files(tmp_path / "a.mp4", ("srt",)))
    assert target.read_text() == "keep me"


def test_a_photo_over_100_megapixels_is_refused_before_it_is_decoded(tmp_path):
    """The fast twin of the whole-run test: the limit itself, on a 144-megapixel PNG of one bit."""
    from PIL import Image

    from talker_cli.errors import InputError
    from talker_cli.photo import read_image

    Image.new("1", (12000, 12000)).save(tmp_path / "bomb.png")
    with pytest.raises(InputError, match="over 100 megapixels"):
        read_image(tmp_path / "bomb.png")


@pytest.mark.parametrize("make, says", [(lambda p: os.mkfifo(p) or p, "is a FIFO"), (lambda p: p.mkdir() or p, "is a folder")])
def test_a_photo_that_is_not_a_file_is_named_as_what_it_is(tmp_path, make, says):
    from talker_cli.errors import InputError
    from talker_cli.photo import read_image

    with pytest.raises(InputError, match=says):
        read_image(make(tmp_path / "face.png"))


def _denied_for(monkeypatch, path: Path) -> None:
    """Opening `path` is refused as it is for a user without read permission (the tests run as root,
    whom permissions do not stop): through os.open, io.open (pathlib) and the builtin open (Pillow)."""
    import builtins
    import errno
    import io

    def refusing(real):
        def opener(file, *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and Path(file).resolve() == path.resolve():
                raise PermissionError(errno.EACCES, "Permission denied", str(file))
            return real(file, *args, **kwargs)
        return opener

    for module, name in ((os, "open"), (io, "open"), (builtins, "open")):
        monkeypatch.setattr(module, name, refusing(getattr(module, name)))


@pytest.mark.parametrize("kind", ["photo", "text file", "recording", "preset"])
def test_an_input_the_user_cannot_read_is_bad_input_saying_so(place, monkeypatch, kind):
    from typer.testing import CliRunner

    from talker_cli import audio_io
    from talker_cli.cli import app

    (place / "mine.toml").write_text("[render]\nfps = 25\n")
    target = {"photo": place / "face.png", "text file": place / "script.txt", "recording": place / "speech.wav",
              "preset": place / "mine.toml"}[kind]
    _denied_for(monkeypatch, target)
    if kind == "recording":  # ffmpeg reads it, in its own process: ffmpeg as a user who may not
        refusing = place / "ffmpeg"
        refusing.write_text(f"#!/bin/sh\necho '{target}: Permission denied' >&2\nexit 1\n")
        refusing.chmod(0o755)
        monkeypatch.setattr(audio_io, "ffmpeg_exe", lambda: str(refusing))
    said = ["--audio", str(place / "speech.wav")] if kind == "recording" else ["--text-file", str(place / "script.txt")]
    args = ["render", "--photo", str(place / "face.png"), *said,
            "--preset", str(place / "mine.toml"), "-o", str(place / "out" / "a.mp4")]
    result = CliRunner().invoke(app, args)
    code = 2 if kind == "preset" else 3  # a preset is a setting (2), a photo, text or recording the input (3)
    assert result.exit_code == code, (result.exit_code, result.stderr)
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("talker: error: ") and str(target) in line and "ermission denied" in line, line
    assert not any((place / "out").iterdir())


def _as_a_user_who_cannot_read(folder: Path) -> list[str]:
    """The command prefix that runs talker as a user file permissions apply to: nobody, when this
    checkout is theirs to run; else root without the capabilities that read past permissions; no
    prefix for a user who is not root."""
    if os.getuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is not installed")
    for prefix in (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
                   ["setpriv", "--bounding-set", "-all", "--inh-caps", "-all"]):
        probe = subprocess.run([*prefix, sys.executable, "-c", "import talker_cli, sys; open(sys.argv[1]).close()",
                                str(folder / "face.png")], capture_output=True, cwd=folder)
        if probe.returncode == 0:
            return prefix
    pytest.skip("talker cannot be run here as a user without root's reading rights")


@pytest.mark.parametrize("kind", ["photo", "text file", "recording"])
@pytest.mark.parametrize("command", ["render", "lipsync", "check-gpu"])
def test_an_input_unreadable_to_the_user_running_talker_is_exit_3_before_any_stage(kind, command):
    """As a user who cannot read it (mode 000), not as root, who reads anything: talker opens every
    input itself before any stage, where the flag parser's own check said exit 2."""
    import tempfile

    place = Path(tempfile.mkdtemp(prefix="talker-unreadable-"))
    try:
        place.chmod(0o777)
        for name in ("face.png", "speech.wav"):
            shutil.copy(SAMPLES / name, place / name)
        (place / "script.txt").write_text("Hello there.")
        for path in place.iterdir():
            path.chmod(0o644)
        target = {"photo": place / "face.png", "text file": place / "script.txt", "recording": place / "speech.wav"}[kind]
        target.chmod(0)
        prefix = _as_a_user_who_cannot_read(place)
        said = ["--audio", str(place / "speech.wav")] if kind == "recording" else ["--text-file", str(place / "script.txt")]
        if command == "render":
            args = ["render", "--photo", str(place / "face.png"), *said, "-o", str(place / "a.mp4")]
        elif command == "lipsync":
            args = ["lipsync", *said, "-o", str(place / "a")]
        else:
            args = ["check-gpu", *said]
        if kind == "photo" and command != "render":
            pytest.skip("only render takes a photo")
        env = {**os.environ, "XDG_CACHE_HOME": str(place / "cache"), "HOME": str(place)}
        result = subprocess.run([*prefix, sys.executable, "-m", "talker_cli", *args], cwd=place, capture_output=True,
                                text=True, env=env, timeout=300)
        assert result.returncode == 3, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("talker: error: cannot read") and str(target) in lines[0], lines
        assert "Permission denied" in lines[0]
        assert sorted(p.name for p in place.iterdir() if p.name != "cache") == ["face.png", "script.txt", "speech.wav"]
    finally:
        for path in place.iterdir():
            path.chmod(0o644) if path.is_file() else None
        shutil.rmtree(place, ignore_errors=True)


@pytest.mark.parametrize("stage", ["PhotoStage", "InputStage", "TtsStage", "AlignmentStage", "VisemeStage",
                                   "ExportStage", "RenderStage", "manifest"])
def test_a_disk_that_fills_at_any_stage_is_exit_5_and_leaves_no_output(place, monkeypatch, stage):
    import errno

    from typer.testing import CliRunner

    from talker_cli.jobs import outputs
    from talker_cli.jobs import stages
    from talker_cli.cli import app

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(place / "out"))

    if stage == "manifest":  # the last write of all: the manifest, before the outputs are renamed into place
        monkeypatch.setattr(outputs.OutputSet, "write_json", full)
    else:
        monkeypatch.setattr(getattr(stages, stage), "run", full)
    result = CliRunner().invoke(app, ["render", "--photo", str(place / "face.png"), "--text", "Hello there.",
                                      "-o", str(place / "out" / "a.mp4"), "--force"])  # --force: every stage runs
    assert result.exit_code == 5, (stage, result.exit_code, result.stderr)
    assert "No space left on device" in result.stderr and "free some space" in result.stderr
    assert not any((place / "out").iterdir())  # nothing half-written stays
