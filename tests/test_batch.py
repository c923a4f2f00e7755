"""talker batch: batch-file checks, a mixed batch of good and bad jobs, resume, kills, locks, metrics."""

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from talker_cli.audio_io import ffmpeg_exe, write_wav
from talker_cli.jobs.batch_file import read_batch
from talker_cli.cli import app
from talker_cli.gpu.locks import BusyError, device_locks
from talker_cli.errors import UsageError

from .conftest import ROOT, ffprobe

runner = CliRunner()


@pytest.fixture
def workspace(tmp_path, face_photo, speech_wav):
    shutil.copy(face_photo, tmp_path / "face.png")
    shutil.copy(speech_wav, tmp_path / "speech.wav")
    return tmp_path


def write_jobs(folder, rows, name="jobs.jsonl"):
    path = folder / name
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_short_jobs_share_a_chunk_and_long_ones_are_held_a_few_at_a_time():
    """A batch loads each stage's model once per chunk of jobs: forty short texts in one chunk; texts of
    five minutes' speech three at a time; a recording or a reply, whose length is unknown, as a minute."""
    from talker_cli.jobs.batch import CHUNK_JOBS, CHUNK_SPEECH_S, chunks, expected_speech_s
    from talker_cli.jobs.job import Job
    from talker_cli.config import load_config

    config = load_config("cpu")
    job = lambda **kw: (None, Job(photo=None, output=Path("x"), config=config, **kw))  # noqa: E731
    short = [job(text="This is short job number one.") for _ in range(40)]
    assert [len(c) for c in chunks(short)] == [40]
    assert [len(c) for c in chunks(short * 2)] == [CHUNK_JOBS, 80 - CHUNK_JOBS]
    five_minutes = " ".join(["word"] * int(300 * 3.1))
    assert 290 < expected_speech_s(job(text=five_minutes)[1]) < 310
    assert [len(c) for c in chunks([job(text=five_minutes)] * 7)] == [3, 3, 1]
    recordings = [job(audio=Path("a.wav"))] * 20 + [job(text="Why?", reply=True)] * 20
    assert [len(c) for c in chunks(recordings)] == [16, 16, 8]
    assert CHUNK_SPEECH_S == 16 * expected_speech_s(recordings[0][1])
    assert [len(c) for c in chunks([job(text=" ".join(["word"] * 4000))])] == [1]  # longer than a chunk: alone


# --- the batch file ---------------------------------------------------------------------------

@pytest.mark.parametrize("line, message", [
    ('{"photo": "face.png", "text": "hi"', "not valid JSON"),
    ('{"photo": "face.png", "text": "hi", "output": "a.mp4", "colour": "red"}', "unknown column 'colour'"),
    ('{"photo": "face.png", "output": "a.mp4"}', "exactly one of text, text_file, audio"),
    ('{"photo": "face.png", "text": "hi", "audio": "speech.wav", "output": "a.mp4"}', "exactly one of"),
    ('{"text": "hi", "output": "a.mp4"}', "names a video but the job has no photo"),
    ('{"photo": "face.png", "text": "hi"}', "output is required"),
    ('{"photo": "../face.png", "text": "hi", "output": "a.mp4"}', "outside the allowed folders"),
    ('{"photo": "face.png", "text": "hi", "output": "sub/a.mp4"}', "plain file name"),
    ('{"photo": "face.png", "text": "hi", "output": "a.mp4", "reply": "maybe"}', "reply must be true or false"),
    ('{"photo": "face.png", "text": "hi", "transcript": "hi", "output": "a.mp4"}', "transcript gives the words of the audio"),
    ('{"photo": "face.png", "audio": "speech.wav", "transcript": " !", "output": "a.mp4"}', "and words"),
    ('[1, 2]', "must be a JSON object"),
])
def test_bad_batch_lines_are_named(workspace, line, message):
    path = workspace / "jobs.jsonl"
    path.write_text('{"photo": "face.png", "text": "ok", "output": "first.mp4"}\n' + line + "\n")
    with pytest.raises(UsageError, match=f"jobs.jsonl:2: .*{message}"):
        read_batch(path)


def test_duplicate_output_names_the_first_line(workspace):
    path = write_jobs(workspace, [{"photo": "face.png", "text": "a", "output": "x.mp4"},
                                  {"photo": "face.png", "text": "b", "output": "x.mp4"}])
    with pytest.raises(UsageError, match="jobs.jsonl:2: output 'x.mp4' is already used on line 1"):
        read_batch(path)


def test_csv_with_relative_paths_and_an_allowed_folder(workspace, tmp_path_factory):
    other = tmp_path_factory.mktemp("shared")
    (other / "script.txt").write_text("Hello from a shared folder.")
    path = workspace / "jobs.csv"
    path.write_text(f"photo,text_file,output,reply\nface.png,{other / 'script.txt'},a.mp4,yes\n")
    with pytest.raises(UsageError, match="outside the allowed folders"):
        read_batch(path)
    [spec] = read_batch(path, allowed=[other])
    assert spec.photo == (workspace / "face.png").resolve() and spec.reply is True
    path.write_text("photo,text,output\nface.png,hi\n")
    with pytest.raises(UsageError, match="jobs.csv:2: 2 fields, the header has 3"):
        read_batch(path)


def test_batch_file_errors_stop_before_any_work(workspace):
    path = write_jobs(workspace, [{"photo": "face.png", "text": "a", "output": "a.mp4"},
                                  {"photo": "face.png", "text": "b", "output": "b.mp4", "preset": "nope"}])
    result = runner.invoke(app, ["batch", str(path), "--out-dir", str(workspace / "out")])
    assert result.exit_code == 2 and "unknown preset 'nope'" in result.stderr
    assert not (workspace / "out").exists()


# --- a mixed batch ----------------------------------------------------------------------------

@pytest.mark.slow
def test_mixed_batch_of_twenty_two_jobs(workspace):
    blank = np.tile(np.linspace(0, 255, 200, dtype=np.uint8), (150, 1))
    Image.fromarray(np.stack([blank] * 3, axis=2)).save(workspace / "wall.png")
    (workspace / "notimage.jpg").write_text("not an image")
    write_wav(workspace / "silent.wav", np.zeros(32000, np.float32), 16000)
    (workspace / "garbage.wav").write_bytes(np.random.default_rng(1).bytes(4000))
    (workspace / "empty.wav").write_bytes(b"")
    (workspace / "script.txt").write_text("A line read from a file.")
    subprocess.run([ffmpeg_exe(), "-v", "error", "-i", str(workspace / "speech.wav"), "-ar", "48000", "-ac", "2",
                    str(workspace / "speech48.mp3")], check=True)
    (workspace / "tiny.toml").write_text("[input]\nmax_chars = 30\n")
    good = [{"photo": "face.png", "text": f"Job number {i} says hello.", "output": f"good{i:02d}.mp4"} for i in range(12)]
    good += [{"photo": "face.png", "text_file": "script.txt", "output": "fromfile.mp4"},
             {"photo": "face.png", "audio": "speech48.mp3", "output": "fromaudio.mp4"}]
    bad = {
        "missing.mp4": ({"photo": "nope.png", "text": "hi"}, 3, "photo not found"),
        "wall.mp4": ({"photo": "wall.png", "text": "hi"}, 3, "no face found"),
        "notimage.mp4": ({"photo": "notimage.jpg", "text": "hi"}, 3, "not a readable image"),
        "empty_text.mp4": ({"photo": "face.png", "text": "   "}, 3, "text is empty"),
        "silent.mp4": ({"photo": "face.png", "audio": "silent.wav"}, 3, "is silent"),
        "garbage.mp4": ({"photo": "face.png", "audio": "garbage.wav"}, 3, "cannot read"),
        "empty_audio.mp4": ({"photo": "face.png", "audio": "empty.wav"}, 3, "audio file is empty"),
        "toolong.mp4": ({"photo": "face.png", "text": "This text is longer than thirty characters.",
                         "preset": str(workspace / "tiny.toml")}, 3, "limit of 30"),
    }
    rows = good + [dict(spec, output=name) for name, (spec, _, _) in bad.items()]
    path = write_jobs(workspace, rows)
    out = workspace / "out"
    result = runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "--json", "-q",
                                 "--metrics-file", str(out / "talker.prom")])
    assert result.exit_code == 10, result.stderr  # some failed
    summary = json.loads(result.stdout)
    assert summary["counts"] == {"ok": 14, "skipped": 0, "failed": 8}
    by_name = {os.path.basename(j["output"]): j for j in summary["jobs"]}
    for name, (_, code, message) in bad.items():
        assert by_name[name]["status"] == "failed" and by_name[name]["exit_code"] == code
        assert message in by_name[name]["error"]
        assert not (out / name).exists()
    for row in good:
        video = out / row["output"]
        assert by_name[row["output"]]["status"] == "ok"
        info = ffprobe(video)
        assert {s["codec_type"] for s in info["streams"]} == {"video", "audio"}
        assert json.loads(video.with_suffix(".json").read_text())["video_bytes"] == video.stat().st_size
    assert not [p for p in out.iterdir() if ".partial" in p.name]  # nothing half-written
    on_disk = json.loads((out / "batch.json").read_text())
    assert on_disk["counts"] == summary["counts"] and on_disk["exit_code"] == 10
    metrics = (out / "talker.prom").read_text()
    assert 'talker_jobs{status="ok"} 14' in metrics and 'talker_jobs{status="failed"} 8' in metrics
    assert 'talker_stage_seconds{stage="tts"}' in metrics
    # The TTS model was loaded once for the 13 text jobs of the default preset.
    tts = next(s for s in summary["jobs"][0]["stages"] if s["name"] == "tts")
    assert tts["details"]["model_shared_by_jobs"] == 13


def test_a_recordings_known_words_are_its_subtitles_and_other_words_redo_the_job(workspace, speech_text):
    rows = [{"audio": "speech.wav", "transcript": speech_text, "output": "a", "format": "srt"}]
    path = write_jobs(workspace, rows)
    out = workspace / "out"
    assert runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "-q"]).exit_code == 0
    said = " ".join(line for line in (out / "a.srt").read_text().splitlines() if line[:1].isalpha())
    assert said.split() == speech_text.split()
    summary = json.loads(runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "-q", "--json"]).stdout)
    assert [j["status"] for j in summary["jobs"]] == ["skipped"]
    rows[0]["transcript"] = speech_text.replace("Good morning", "Good evening")
    write_jobs(workspace, rows)
    summary = json.loads(runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "-q", "--json"]).stdout)
    assert [j["status"] for j in summary["jobs"]] == ["ok"]


@pytest.mark.slow
def test_rerun_skips_complete_jobs_and_redoes_changed_or_forced_ones(workspace):
    rows = [{"photo": "face.png", "text": "First.", "output": "a.mp4"},
            {"photo": "face.png", "text": "Second.", "output": "b.mp4"}]
    path = write_jobs(workspace, rows)
    out = workspace / "out"
    assert runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "-q"]).exit_code == 0
    first_mtime = (out / "a.mp4").stat().st_mtime_ns
    rows[1]["text"] = "Second, changed."
    write_jobs(workspace, rows)
    summary = json.loads(runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "-q", "--json"]).stdout)
    assert [j["status"] for j in summary["jobs"]] == ["skipped", "ok"]
    assert (out / "a.mp4").stat().st_mtime_ns == first_mtime
    (out / "a.mp4").write_bytes(b"truncated")  # a damaged output is not complete
    summary = json.loads(runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "-q", "--json"]).stdout)
    assert [j["status"] for j in summary["jobs"]] == ["ok", "skipped"]
    summary = json.loads(runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "-q", "--json", "--force"]).stdout)
    assert [j["status"] for j in summary["jobs"]] == ["ok", "ok"]


def test_all_failed_batch_has_its_own_exit_code(workspace):
    path = write_jobs(workspace, [{"photo": "nope.png", "text": "a", "output": "a.mp4"}])
    assert runner.invoke(app, ["batch", str(path), "--out-dir", str(workspace / "out"), "-q"]).exit_code == 11


# --- kills ------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("delay_s", [1.0, 2.0, 3.5])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_render_leaves_no_corrupt_output_and_resumes(workspace, delay_s, sig):
    out = workspace / "out"
    out.mkdir()
    text = "This job is stopped by a signal part of the way through, and then run again. " * 3
    command = [sys.executable, "-m", "talker_cli", "render", "--photo", str(workspace / "face.png"),
               "--text", text, "-o", str(out / "k.mp4"), "-q"]
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE)
    time.sleep(delay_s)
    process.send_signal(sig)
    code = process.wait(timeout=60)
    if code == 0:  # finished before the signal: then it must be whole
        assert ffprobe(out / "k.mp4")["format"]["duration"]
    else:
        # SIGTERM before talker's handler is installed (still importing) ends it the default way
        assert code in ((143, -signal.SIGTERM) if sig == signal.SIGTERM else (-signal.SIGKILL,)), \
            process.stderr.read().decode(errors="replace")[-3000:]  # what talker said, if it failed otherwise
        # Killed between the renames at the end: what is there is whole, and the manifest, renamed
        # last, is there only when everything else is.
        finals = {"k.mp4", "k.blendshapes.json", "k.srt", "k.json"}
        assert {p.name for p in out.iterdir() if ".partial-" not in p.name} <= finals
        if (out / "k.mp4").exists():
            assert float(ffprobe(out / "k.mp4")["format"]["duration"]) > 5
        if (out / "k.json").exists():
            assert {p.name for p in out.iterdir()} >= finals
        if code == 143 and not (out / "k.json").exists():  # stopped before the job was whole
            assert list(out.iterdir()) == []  # a clean stop removes its partial files too
    path = write_jobs(workspace, [{"photo": "face.png", "text": text, "output": "k.mp4"}])
    result = runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "-q"])
    assert result.exit_code == 0
    assert float(ffprobe(out / "k.mp4")["format"]["duration"]) > 5
    assert not [p for p in out.iterdir() if ".partial-" in p.name]  # the killed run's leftovers are gone


# --- one GPU shared by several jobs ------------------------------------------------------------

def _hold(lock_dir, ready, release):
    os.environ["TALKER_LOCK_DIR"] = lock_dir
    with device_locks(["cuda:0"], wait_s=0):
        ready.set()
        release.wait(10)


def test_second_job_on_a_busy_gpu_waits_or_gives_up(tmp_path, monkeypatch):
    monkeypatch.setenv("TALKER_LOCK_DIR", str(tmp_path))
    ready, release = multiprocessing.Event(), multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold, args=(str(tmp_path), ready, release))
    holder.start()
    try:
        assert ready.wait(10)
        with pytest.raises(BusyError, match="in use by another talker job") as busy:
            with device_locks(["cuda:0"], wait_s=0.5):
                pass
        assert busy.value.exit_code == 12
        with device_locks(["cuda:1"], wait_s=0):  # another card is free
            pass
        started = time.monotonic()
        threading_release = multiprocessing.Process(target=_release_later, args=(release,))
        threading_release.start()
        with device_locks(["cuda:0"], wait_s=10):
            assert time.monotonic() - started >= 0.5  # it waited for the holder
        threading_release.join()
    finally:
        release.set()
        holder.join(10)


def _release_later(release):
    time.sleep(1.0)
    release.set()


def test_cuda_visible_devices_maps_locks_to_physical_cards(monkeypatch):
    from talker_cli.gpu.locks import physical_id

    assert physical_id("cuda:0", {"CUDA_VISIBLE_DEVICES": "3,1"}) == "3"
    assert physical_id("cuda:1", {"CUDA_VISIBLE_DEVICES": "3,1"}) == "1"
    assert physical_id("cuda", {}) == "0"


def test_render_on_a_busy_gpu_exits_busy(monkeypatch, tmp_path, face_photo):
    monkeypatch.setenv("TALKER_LOCK_DIR", str(tmp_path))
    with device_locks(["cuda:0"], wait_s=0):
        result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", "hi", "--reply",
                                     "--preset", "gpu-12gb", "-o", str(tmp_path / "a.mp4")])
    assert result.exit_code == 12 and "--wait" in result.stderr


# --- past one machine: Ray ----------------------------------------------------------------------

@pytest.mark.slow
def test_batch_on_a_local_ray_cluster(workspace):
    rows = [{"photo": "face.png", "text": "Rendered by a Ray task.", "output": "r1.mp4"},
            {"photo": "face.png", "text": "Another Ray task.", "output": "r2.mp4"},
            {"photo": "nope.png", "text": "This one fails.", "output": "r3.mp4"}]
    path = write_jobs(workspace, rows)
    out = workspace / "out"
    result = runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "--ray", "local", "--json", "-q"])
    assert result.exit_code == 10, result.output
    summary = json.loads(result.stdout)
    assert summary["engine"] == "ray (local)"
    assert [j["status"] for j in summary["jobs"]] == ["ok", "ok", "failed"]
    assert summary["jobs"][2]["exit_code"] == 3 and all("node" in j for j in summary["jobs"])
    for name in ("r1.mp4", "r2.mp4"):
        assert float(ffprobe(out / name)["format"]["duration"]) > 1
    assert not (out / "r3.mp4").exists()
    assert json.loads((out / "batch.json").read_text())["counts"] == {"ok": 2, "skipped": 0, "failed": 1}
    # A re-run on Ray skips the finished jobs too.
    again = json.loads(runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "--ray", "local", "--json", "-q"]).stdout)
    assert [j["status"] for j in again["jobs"]] == ["skipped", "skipped", "failed"]


def test_ray_gpu_requests_come_from_the_plan(workspace):
    from talker_cli.jobs.batch_file import JobSpec
    from talker_cli.jobs.ray_runner import gpus_for

    photo = workspace / "face.png"
    assert gpus_for(JobSpec(1, photo, "a.mp4", text="hi"), "gpu-12gb") == 0  # TTS runs on the CPU
    assert gpus_for(JobSpec(1, photo, "a.mp4", text="hi", reply=True), "gpu-12gb") == 1  # the LLM on a GPU
    assert gpus_for(JobSpec(1, photo, "a.mp4", audio=workspace / "speech.wav"), "gpu-24gb") == 1
    assert gpus_for(JobSpec(1, photo, "a.mp4", text="hi", reply=True), "cpu") == 0


@pytest.mark.slow
def test_a_rerun_with_another_config_redoes_the_job(workspace):
    path = write_jobs(workspace, [{"photo": "face.png", "text": "First.", "output": "a.mp4"}])
    out = workspace / "out"
    assert runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "-q"]).exit_code == 0
    preset = workspace / "thirty.toml"
    preset.write_text("[render]\nfps = 30\n")
    summary = json.loads(runner.invoke(app, ["batch", str(path), "--out-dir", str(out), "-q", "--json",
                                             "--preset", str(preset)]).stdout)
    assert [j["status"] for j in summary["jobs"]] == ["ok"]  # same inputs, other settings: not complete
    assert json.loads((out / "a.json").read_text())["video"]["fps"] == 30


def test_a_link_inside_the_batch_folder_to_a_file_outside_is_refused(workspace, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    shutil.copy(workspace / "face.png", outside / "secret.png")
    (workspace / "innocent.png").symlink_to(outside / "secret.png")
    path = write_jobs(workspace, [{"photo": "innocent.png", "text": "Hi.", "output": "a.mp4"}])
    with pytest.raises(UsageError, match="outside the allowed folders"):
        read_batch(path)


@pytest.mark.slow
def test_ctrl_c_stops_a_render_with_130_and_leaves_nothing(workspace):
    out = workspace / "out"
    out.mkdir()
    text = "This job is interrupted from the keyboard part of the way through. " * 16
    # --force: the work cache of an earlier run would make it too quick to interrupt; the signal comes
    # once the render stage reports its first frames, wherever the machine's speed puts that
    # Ctrl-C as a terminal's foreground job gets it: a suite started in the background (`make test &`)
    # hands its children SIGINT ignored, as POSIX shells do, and talker rightly keeps it ignored then
    process = subprocess.Popen([sys.executable, "-m", "talker_cli", "render", "--photo", str(workspace / "face.png"),
                                "--text", text, "-o", str(out / "k.mp4"), "--force"], stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    said = []
    for line in process.stderr:
        said.append(line)
        if line.startswith("talker: render: "):
            break
    process.send_signal(signal.SIGINT)
    said.append(process.stderr.read())
    assert said[-2].startswith("talker: render: "), "".join(said)  # interrupted while drawing, not after
    assert process.wait(timeout=60) == 130, "".join(said)
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("column, value, says", [
    ("emotion", "ecstatic", "column emotion: 'ecstatic' is not allowed; it must be neutral, happy"),
    ("format", "mp3", "column format: 'mp3' is not allowed; it must be a comma-separated list"),
    ("head_motion", "NaN", "column head_motion: nan is not allowed; it must be a number from"),
    ("mouth_scale", "1e999", "column mouth_scale: inf is not allowed"),
    ("blink_rate", "often", "column blink_rate: 'often' is not a number"),
])
def test_a_bad_value_in_a_batch_line_names_the_file_the_line_and_the_column(tmp_path, column, value, says):
    from talker_cli.jobs.batch_file import read_batch
    from talker_cli.errors import UsageError

    jobs = tmp_path / "jobs.csv"
    jobs.write_text(f"text,output,{column}\nHello.,a,\nHi.,b,{value}\n")
    with pytest.raises(UsageError) as refused:
        read_batch(jobs)
    assert str(refused.value).startswith(f"{jobs}:3: {says}"), str(refused.value)


def test_a_complete_output_made_with_another_config_is_not_complete(tmp_path):
    """The fast twin of the whole re-run: the completeness check itself compares the config's digest."""
    from talker_cli.jobs.batch import is_complete
    from talker_cli.config import load_config

    config, other = load_config("cpu", {}), load_config("cpu", {"render": {"fps": 30}})
    files = {"manifest": tmp_path / "a.json", "srt": tmp_path / "a.srt"}
    files["srt"].write_text("1\n")
    files["manifest"].write_text(json.dumps({"config_sha256": config.digest(), "inputs": {"text_sha256": "x"}}))
    assert is_complete(files, config, {"text_sha256": "x"})
    assert not is_complete(files, other, {"text_sha256": "x"})  # another config
    assert not is_complete(files, config, {"text_sha256": "y"})  # another text


def test_a_batchs_jobs_of_one_photo_read_it_and_calibrate_it_once_even_when_forced(workspace, monkeypatch):
    """--force redoes every stage, but three jobs of one photo (one of them by another name) need its
    face found and its mouth calibrated once; a job of another photo gets its own."""
    from talker_cli.face import frames

    shutil.copy(workspace / "face.png", workspace / "same.png")
    Image.open(workspace / "face.png").transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(workspace / "mirror.png")
    made, real = [], frames.calibrate

    def counted(*args, **kwargs):
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(frames, "calibrate", counted)
    rows = [{"photo": photo, "text": f"Job {i} says hello.", "output": f"j{i}.mp4"}
            for i, photo in enumerate(["face.png", "same.png", "face.png", "mirror.png"])]
    out = workspace / "out"
    result = runner.invoke(app, ["batch", str(write_jobs(workspace, rows)), "--out-dir", str(out), "-q", "--force"])
    assert result.exit_code == 0, result.stderr
    assert len(made) == 2  # face.png (and its copy), mirror.png
    assert all((out / f"j{i}.mp4").stat().st_size > 1000 for i in range(4))
