"""The runner around the stages, with small stand-in stages: order, freeing, and cleanup on failure."""

from pathlib import Path

import pytest

from talker_cli.config import AsrConfig, LlmConfig, TalkerConfig, TtsConfig
from talker_cli.errors import InputError, ModelMissingError, StageError
from talker_cli.jobs.pipeline import run_job
from talker_cli.jobs.stages import Job, PreflightStage, RunContext, Stage


class Recorder(Stage):
    def __init__(self, name, events, fail=None, applies=True):
        self.name, self.events, self.fail, self._applies = name, events, fail, applies

    def applies(self, job):
        return self._applies

    def load(self, job):
        self.events.append(f"load {self.name}")
        self.engine = object()

    def run(self, job):
        self.events.append(f"run {self.name}")
        job.run.outputs.write_text("srt", "partial")
        if self.fail:
            raise self.fail
        return {"ok": True}

    def unload(self):
        self.events.append(f"unload {self.name}")
        self.engine = None


def job_for(tmp_path):
    return Job(photo=tmp_path / "p.png", output=tmp_path / "o.mp4", config=TalkerConfig(), text="hi")


def test_stages_load_run_unload_in_turn_and_skipped_ones_are_recorded(tmp_path):
    events = []
    stages = [Recorder("a", events), Recorder("b", events, applies=False), Recorder("c", events)]
    manifest = run_job(job_for(tmp_path), stages)
    assert events == ["load a", "run a", "unload a", "load c", "run c", "unload c"]
    assert [(s["name"], s["ran"]) for s in manifest["stages"]] == [("a", True), ("b", False), ("c", True)]
    assert (tmp_path / "o.json").exists() and (tmp_path / "o.srt").exists()


def test_a_failing_stage_is_freed_and_leaves_no_files(tmp_path):
    events = []
    stages = [Recorder("a", events), Recorder("b", events, fail=RuntimeError("boom")), Recorder("c", events)]
    with pytest.raises(StageError, match="stage b failed: RuntimeError: boom") as raised:
        run_job(job_for(tmp_path), stages)
    assert raised.value.exit_code == 6
    assert events[-1] == "unload b" and "load c" not in events
    assert list(tmp_path.iterdir()) == []


def test_input_errors_keep_their_class_and_exit_code(tmp_path):
    with pytest.raises(InputError):
        run_job(job_for(tmp_path), [Recorder("a", [], fail=InputError("bad"))])
    assert list(tmp_path.iterdir()) == []


def test_interrupt_leaves_no_files(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        run_job(job_for(tmp_path), [Recorder("a", [], fail=KeyboardInterrupt())])
    assert list(tmp_path.iterdir()) == []


def test_existing_output_is_untouched_when_a_job_fails(tmp_path):
    (tmp_path / "o.mp4").write_bytes(b"previous good video")
    with pytest.raises(StageError):
        run_job(job_for(tmp_path), [Recorder("a", [], fail=ValueError("x"))])
    assert (tmp_path / "o.mp4").read_bytes() == b"previous good video"


class OutOfMemoryError(RuntimeError):
    """Named like torch.cuda.OutOfMemoryError, which the runner recognises by name."""


class OutOfMemory(Recorder):
    def run(self, job):
        self.events.append("run")
        raise OutOfMemoryError("CUDA out of memory")


def test_gpu_oom_fails_the_job_with_the_stage_named_and_is_not_retried(tmp_path):
    from talker_cli.errors import ResourceError

    events = []
    with pytest.raises(ResourceError, match="stage asr ran out of GPU memory on cpu") as raised:
        run_job(job_for(tmp_path), [OutOfMemory("asr", events)])
    assert raised.value.exit_code == 5 and events.count("run") == 1
    assert list(tmp_path.iterdir()) == []


class Made(Recorder):
    """A stage whose result is kept in the work cache: the text, upper-cased, in made.txt."""
    writes = ("prompt",)

    def cache_parts(self, job):
        return {"text": job.text}

    def run(self, job):
        self.events.append("run made")
        job.artifacts.prompt = job.text.upper()
        return {"n": 1}

    def save(self, job, folder):
        (folder / "made.txt").write_text(job.artifacts.prompt)

    def restore(self, job, folder):
        text = (folder / "made.txt").read_text()
        if not text.isupper():
            raise ValueError(f"not a result: {text!r}")
        job.artifacts.prompt = text


def test_finished_stages_are_reused_after_a_failure_and_force_redoes_them(tmp_path):
    from talker_cli.jobs.work_cache import WorkCache

    class Flaky(Recorder):
        fail_next = True

        def run(self, job):
            if Flaky.fail_next:
                Flaky.fail_next = False
                raise RuntimeError("power cut")
            assert job.artifacts.prompt == "HI"
            return {}

    cache = WorkCache(tmp_path / "cache")
    out = tmp_path / "out"
    out.mkdir()

    def job(read=True):
        j = Job(photo=out / "p.png", output=out / "o.mp4", config=TalkerConfig(), text="hi",
                run=RunContext(cache=WorkCache(cache.root, read=read)))
        return j

    events = []
    with pytest.raises(StageError, match="power cut"):
        run_job(job(), [Made("tts", events), Flaky("render", events)])
    assert events.count("run made") == 1 and list(out.iterdir()) == []
    events.clear()
    manifest = run_job(job(), [Made("tts", events), Flaky("render", events)])
    assert "run made" not in events and "load tts" not in events  # reused, not even loaded
    assert manifest["stages"][0]["details"] == {"n": 1, "cached": True}
    events.clear()
    run_job(job(read=False), [Made("tts", events), Flaky("render", events)])
    assert events.count("run made") == 1  # --force
    key = cache.key("tts", {"text": "hi"})
    assert cache.key("tts", {"text": "hi!"}) != key and cache.lookup(key) is not None


def cached_job(tmp_path, cache):
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return Job(photo=out / "p.png", output=out / "o.mp4", config=TalkerConfig(), text="hi", run=RunContext(cache=cache))


def test_a_damaged_work_cache_entry_is_made_again_not_a_failed_job(tmp_path, caplog):
    from talker_cli.jobs.work_cache import WorkCache

    cache = WorkCache(tmp_path / "cache")
    events = []
    run_job(cached_job(tmp_path, cache), [Made("tts", events)])
    entry = cache.lookup(cache.key("tts", {"text": "hi"}))
    (entry / "made.txt").write_text("HI, cut sh")  # not a result restore() accepts: a file cut short, say
    events.clear()
    job = cached_job(tmp_path, cache)
    manifest = run_job(job, [Made("tts", events)])
    assert events.count("run made") == 1 and job.artifacts.prompt == "HI" and "cached" not in manifest["stages"][0]["details"]
    assert "could not be read" in caplog.text and "the stage runs again" in caplog.text
    events.clear()
    run_job(cached_job(tmp_path, cache), [Made("tts", events)])
    assert "run made" not in events  # the entry was made again, whole


@pytest.mark.parametrize("spoil", ["others may write", "another user's", "a link"])
def test_a_work_cache_entry_someone_else_could_have_made_is_not_used(tmp_path, monkeypatch, spoil):
    """A cache folder a team shares (TALKER_WORK_CACHE): another user could plant any result under a key."""
    import os

    from talker_cli.jobs.work_cache import WorkCache

    cache = WorkCache(tmp_path / "cache")
    key = cache.key("tts", {"text": "hi"})
    cache.store(key, {"backend": "b", "model": "m", "details": {}}, lambda folder: (folder / "made.txt").write_text("PLANTED"))
    entry = cache.root / key
    assert cache.lookup(key) == entry
    if spoil == "others may write":
        entry.chmod(0o777)
    elif spoil == "another user's":
        real_uid = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: real_uid + 1)
    else:
        entry.rename(tmp_path / "elsewhere")
        entry.symlink_to(tmp_path / "elsewhere")
    assert cache.lookup(key) is None
    events = []
    job = cached_job(tmp_path, cache)
    run_job(job, [Made("tts", events)])
    assert events.count("run made") == 1 and job.artifacts.prompt == "HI"

@pytest.mark.parametrize("sections, inputs, message", [
    ({"llm": LlmConfig(model="/no/such/llm")}, {"text": "hi", "reply": True}, "LLM not found at /no/such/llm; pass --llm-model"),
    ({"asr": AsrConfig(backend="openai-whisper", model="/no/such.pt")}, {"audio": "speech.wav"},
     "openai-whisper checkpoint not found at /no/such.pt; pass --asr-model"),
    ({"tts": TtsConfig(voice="/no/voice.onnx")}, {"text": "hi"}, "Piper voice not found at /no/voice.onnx"),
])
def test_a_missing_model_is_refused_before_any_stage_runs_on_the_cpu_too(tmp_path, speech_wav, sections, inputs, message):
    events = []
    if "audio" in inputs:
        inputs = {"audio": speech_wav}
    job = Job(photo=tmp_path / "p.png", output=tmp_path / "o.mp4", config=TalkerConfig(**sections), **inputs)
    with pytest.raises(ModelMissingError, match=message):
        run_job(job, [PreflightStage(), Recorder("photo", events)])
    assert events == []


def test_outputs_are_renamed_into_place_not_copied(tmp_path):
    from talker_cli.jobs.outputs import OutputSet, output_files

    outputs = OutputSet(output_files(tmp_path / "o.mp4", ()))
    outputs.temp("video").write_bytes(b"video")
    outputs.write_text("manifest", "{}")
    inodes = {key: outputs.temp(key).stat().st_ino for key in ("video", "manifest")}
    final = outputs.commit()
    assert {key: final[key].stat().st_ino for key in inodes} == inodes  # the same files, now complete
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.json", "o.mp4"]


def test_two_runs_finishing_one_output_take_turns(tmp_path):
    """Two processes rendering to the same name renamed their files into place at the same time: the
    folder could be left with one run's subtitles beside the other's manifest, exit 0 for both."""
    import fcntl
    import os
    import threading

    from talker_cli.jobs.outputs import OutputSet, output_files

    outputs = OutputSet(output_files(tmp_path / "o.mp4", ("srt",)))
    outputs.write_text("srt", "mine")
    outputs.write_text("manifest", "{}")
    other = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(other, fcntl.LOCK_EX)  # the other run, renaming its files now
    committing = threading.Thread(target=outputs.commit)
    committing.start()
    committing.join(0.3)
    assert committing.is_alive() and not (tmp_path / "o.srt").exists()  # waits for its turn
    os.close(other)
    committing.join(5)
    assert (tmp_path / "o.srt").read_text() == "mine" and (tmp_path / "o.json").is_file()


def test_a_stage_is_loaded_once_per_placement_and_each_job_runs_where_it_was_placed(tmp_path):
    """In a batch preflight may place one job's LLM on the CPU and another's on a GPU: the model is
    loaded once per placement, and each job runs on its own."""
    from dataclasses import replace

    from talker_cli.jobs.pipeline import run_jobs

    events = []

    class Placed(Recorder):
        def load(self, job):
            events.append(f"load on {job.config.llm.device}")

        def run(self, job):
            events.append(f"run {job.text} on {job.config.llm.device}")
            return {}

    def job(text, device):
        config = replace(TalkerConfig(), llm=replace(LlmConfig(), device=device))
        return Job(photo=tmp_path / "p.png", output=tmp_path / f"{text}.mp4", config=config, text=text)

    results = run_jobs([job("a", "cuda"), job("b", "cpu"), job("c", "cuda")], [Placed("llm", events)])
    assert all(r.error is None for r in results)
    assert events == ["load on cuda", "run a on cuda", "run c on cuda", "unload llm",
                      "load on cpu", "run b on cpu", "unload llm"]
    assert [r.reports[0].device for r in results] == ["cuda:0", "cpu", "cuda:0"]


def test_a_stage_may_fill_only_the_slots_it_declares_and_needs_what_it_reads(tmp_path):
    """The runner holds each stage to its declared artifacts: a stage that fills a slot it does not
    declare, or runs before what it reads exists, is a bug in talker (exit 6), not a silent mix-up."""
    from talker_cli.artifacts import Script

    class Sneaky(Recorder):
        writes = ("prompt",)

        def run(self, job):
            job.artifacts.script = Script("changed", "text")  # not its slot
            return {}

    with pytest.raises(StageError, match="stage a failed: .*changed script, which it does not declare"):
        run_job(job_for(tmp_path), [Sneaky("a", [])])

    class Needy(Recorder):
        reads = ("phones",)

    with pytest.raises(StageError, match="stage b failed: .*reads phones, which no stage before it made"):
        run_job(job_for(tmp_path), [Needy("b", [])])
    assert list(tmp_path.iterdir()) == []


def test_the_work_cache_keeps_what_was_used_lately_within_its_size(tmp_path, monkeypatch):
    """It had no bound: a cron job's speech, kept forever, fills the disk."""
    import os
    import time

    from talker_cli.jobs.work_cache import WorkCache

    cache = WorkCache(tmp_path / "cache", max_bytes=3100, keep_unused_s=86400)  # three entries
    now = time.time()

    def entry(name: str, age_s: float, size: int = 1000) -> None:
        key = cache.key("tts", {"text": name})
        cache.store(key, {}, lambda folder: (folder / "speech.bin").write_bytes(b"x" * size))
        os.utime(cache.root / key / "meta.json", (now - age_s, now - age_s))

    for name, age in [("a", 2 * 86400), ("b", 3000), ("c", 2000), ("d", 1000), ("e", 10)]:
        entry(name, age)
    assert cache.lookup(cache.key("tts", {"text": "b"}))  # used now: b is the newest
    half_written = cache.root / ".tts-x.abandoned"
    half_written.mkdir()
    os.utime(half_written, (now - 2 * 86400, now - 2 * 86400))
    writing = cache.root / ".tts-y.writing"
    writing.mkdir()
    cache.prune(now)
    left = {name for name in "abcde" if (cache.root / cache.key("tts", {"text": name})).is_dir()}
    assert left == {"b", "d", "e"}  # a unused for two days; then c, the least recently used past 3100 bytes
    assert not half_written.exists() and writing.exists()
    real_uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real_uid + 1)
    WorkCache(cache.root, max_bytes=0).prune(now + 10 * 86400)  # another user's run leaves them be
    assert len([p for p in cache.root.iterdir() if not p.name.startswith(".")]) == 3


def test_a_run_prunes_the_work_cache_once_when_it_stores(tmp_path, monkeypatch):
    from talker_cli.jobs.work_cache import WorkCache

    cache = WorkCache(tmp_path / "cache")
    calls = []
    monkeypatch.setattr(cache, "prune", lambda: calls.append(1))
    for n in range(3):
        cache.store(cache.key("tts", {"text": str(n)}), {}, lambda folder: None)
    assert calls == [1]


def test_a_work_cache_that_cannot_be_written_is_said_once_and_the_job_goes_on(tmp_path, caplog):
    import errno

    from talker_cli.jobs.work_cache import WorkCache

    def full_disk(folder):
        raise OSError(errno.ENOSPC, "No space left on device")

    cache = WorkCache(tmp_path / "cache")
    with caplog.at_level("WARNING", logger="talker"):
        cache.store("tts-a", {}, full_disk)
        cache.store("tts-b", {}, lambda folder: (folder / "x").write_text("x"))  # not tried again this run
    warnings = [r.getMessage() for r in caplog.records if "work cache" in r.getMessage()]
    assert len(warnings) == 1 and "No space left" in warnings[0]
    assert not [p for p in (tmp_path / "cache").iterdir()]  # nothing half-written left behind
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    caplog.clear()
    with caplog.at_level("WARNING", logger="talker"):
        WorkCache(blocked).store("tts-c", {}, lambda folder: None)
    assert "it is not a folder" in caplog.text


def test_a_batch_reports_its_jobs_done_failed_ones_included(tmp_path):
    from talker_cli.jobs.batch import run_batch
    from talker_cli.jobs.batch_file import JobSpec

    class FailsOnJob2(Recorder):
        def run(self, job):
            if job.output.name == "j2":
                raise InputError("bad")
            return super().run(job)

    specs = [JobSpec(line=n, photo=None, output=f"j{n}", text="hi") for n in (1, 2, 3)]
    seen = []
    summary = run_batch(specs, tmp_path, "cpu", stages_factory=lambda: [FailsOnJob2("a", [])], summary_file=False,
                        meter=lambda *report: seen.append(report))
    assert seen[0] == ("jobs", 0, 3, "jobs") and seen[-1] == ("jobs", 3, 3, "jobs")
    assert [report[1] for report in seen] == sorted(report[1] for report in seen)
    assert [row["status"] for row in summary["jobs"]] == ["ok", "failed", "ok"]


def test_a_change_to_talkers_code_is_a_new_work_cache_key(tmp_path, monkeypatch):
    """A changed ASR hears other words in the same recording: a transcript cached by the code before
    must not be taken as this code's (the version number is not bumped for every change)."""
    import shutil

    import talker_cli
    from talker_cli.jobs import work_cache
    from talker_cli.jobs.work_cache import WorkCache, code_fingerprint, fingerprint

    assert code_fingerprint() == fingerprint(Path(talker_cli.__file__).parent)  # all of talker, not one package
    package = tmp_path / "talker_cli"
    shutil.copytree(Path(talker_cli.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    before = fingerprint(package)
    (package / "listening" / "asr.py").write_text((package / "listening" / "asr.py").read_text() + "\n# changed\n")
    assert fingerprint(package) != before
    parts = {"audio_sha256": "ab" * 32, "asr": {"model": ""}}
    key = WorkCache.key("asr", parts)
    monkeypatch.setattr(work_cache, "code_fingerprint", lambda: "another")
    assert WorkCache.key("asr", parts) != key


def test_a_run_whose_code_changes_under_it_keeps_nothing_more(tmp_path, monkeypatch, caplog):
    """The key names the code read when the run began; a module imported after an upgrade or an edit
    is other code: what the run makes from then on is not stored under that key."""
    import os

    from talker_cli.jobs import work_cache
    from talker_cli.jobs.work_cache import WorkCache

    package = tmp_path / "talker_cli"
    package.mkdir()
    (package / "asr.py").write_text("HEARS = 1\n")
    monkeypatch.setattr(work_cache, "PACKAGE", package)
    work_cache._code_read.cache_clear()
    try:
        cache = WorkCache(tmp_path / "cache")
        first, second = WorkCache.key("asr", {"n": 1}), WorkCache.key("asr", {"n": 2})
        cache.store(first, {}, lambda folder: (folder / "made.txt").write_text("1"))
        assert cache.lookup(first) is not None
        (package / "asr.py").write_text("HEARS = 2\n")  # upgraded while the run goes on
        os.utime(package / "asr.py", ns=(1, os.stat(package / "asr.py").st_mtime_ns + 10**9))
        cache.store(second, {}, lambda folder: (folder / "made.txt").write_text("2"))
        assert cache.lookup(second) is None and "code changed while this run went on" in caplog.text
        assert WorkCache.key("asr", {"n": 2}) == second  # the run's key stays what it began with
    finally:
        work_cache._code_read.cache_clear()  # the real package's, for the tests after


class Beside(Stage):
    """A stand-in for the photo stage: it runs beside the stages after it, and fills `prompt`."""

    name, writes, beside = "side", ("prompt",), True

    def __init__(self, started, release, fail=None):
        self.started, self.release, self.fail = started, release, fail

    def run(self, job):
        import threading

        self.thread = threading.current_thread()
        self.started.set()
        assert self.release.wait(10), "the stage after it never ran"
        if self.fail:
            raise self.fail
        job.artifacts.prompt = "made beside"
        job.input_hashes["side_sha256"] = "s"
        return {}


class After(Recorder):
    """A stage after it that needs nothing of it: it lets the side stage finish, so they overlapped."""

    def __init__(self, name, events, release, fail=None):
        super().__init__(name, events, fail)
        self.release = release

    def run(self, job):
        self.release.set()
        return super().run(job)


class Reader(Recorder):
    reads = ("prompt",)

    def run(self, job):
        self.events.append(f"read {job.artifacts.prompt}")
        return {}


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr("talker_cli.jobs.pipeline.beside_pays", lambda: True)


def test_a_stage_that_reads_nothing_runs_beside_the_next_and_is_waited_for_by_its_reader(tmp_path, two_cores):
    """The photo is read while the speech is made: the side stage finishes only once the stage after
    it has run (run in turn, it would wait forever), the stage that reads its slot sees it filled, and
    the manifest lists the stages in their order, as run in turn."""
    import threading

    events, started, release = [], threading.Event(), threading.Event()
    stages = [Beside(started, release), After("tts", events, release), Reader("render", events)]
    manifest = run_job(job_for(tmp_path), stages)
    assert events == ["load tts", "run tts", "unload tts", "load render", "read made beside", "unload render"]
    assert stages[0].thread is not threading.main_thread()
    assert [s["name"] for s in manifest["stages"]] == ["side", "tts", "render"]
    assert manifest["inputs"]["side_sha256"] == "s"


def test_a_stage_run_beside_others_fails_its_job_as_if_run_in_turn(tmp_path, two_cores):
    """Its error is the job's, not a later stage's, and the job's files are gone."""
    import threading

    from talker_cli.errors import InputError

    events, started, release = [], threading.Event(), threading.Event()
    stages = [Beside(started, release, fail=InputError("no face found")), After("tts", events, release, fail=RuntimeError("late")),
              Reader("render", events)]
    with pytest.raises(InputError, match="no face found"):
        run_job(job_for(tmp_path), stages)
    assert "load render" not in events
    assert list(tmp_path.iterdir()) == []


def test_on_one_core_nothing_runs_beside(tmp_path, monkeypatch):
    import threading

    monkeypatch.setattr("talker_cli.jobs.pipeline.beside_pays", lambda: False)
    events, started, release = [], threading.Event(), threading.Event()
    release.set()  # in turn, the side stage runs first, alone
    stages = [Beside(started, release), After("tts", events, threading.Event()), Reader("render", events)]
    run_job(job_for(tmp_path), stages)
    assert stages[0].thread is threading.main_thread()
    assert events == ["load tts", "run tts", "unload tts", "load render", "read made beside", "unload render"]


def test_a_stage_run_beside_others_that_fails_stops_its_job_at_the_next_stage(tmp_path, two_cores):
    """A photo without a face is told at the next stage boundary, not after every stage of the speech."""
    import threading
    import time

    from talker_cli.errors import InputError

    events, started, release = [], threading.Event(), threading.Event()
    release.set()

    class Slow(Recorder):
        def run(self, job):
            deadline = time.monotonic() + 5
            while any(t.name == "talker-side" for t in threading.enumerate()) and time.monotonic() < deadline:
                time.sleep(0.01)  # until the side stage has failed
            return super().run(job)

    stages = [Beside(started, release, fail=InputError("no face found")), Slow("tts", events),
              Recorder("align", events), Reader("render", events)]
    with pytest.raises(InputError, match="no face found"):
        run_job(job_for(tmp_path), stages)
    assert "run tts" in events and "load align" not in events


def test_a_batchs_photo_is_read_once_for_all_the_jobs_that_share_it(tmp_path, monkeypatch):
    """Twenty jobs of one photo find its face once: by its content (another name for the same bytes
    is the same photo; a different photo is read anew), each job's photo keeping its own path."""
    import shutil

    import numpy as np
    from PIL import Image

    import talker_cli.photo
    from talker_cli.jobs.pipeline import run_jobs
    from talker_cli.jobs.stages import PhotoStage

    face = Path(__file__).resolve().parent.parent / "samples" / "face.png"
    shutil.copy(face, tmp_path / "a.png")
    shutil.copy(face, tmp_path / "b.png")
    Image.open(face).transpose(Image.Transpose.FLIP_LEFT_RIGHT).save(tmp_path / "other.png")
    read, real = [], talker_cli.photo.load_photo
    monkeypatch.setattr(talker_cli.photo, "load_photo",
                        lambda path, config, **known: read.append(path.name) or real(path, config, **known))
    jobs = [Job(photo=tmp_path / name, output=tmp_path / f"{i}.mp4", config=TalkerConfig(), text="hi")
            for i, name in enumerate(["a.png", "b.png", "a.png", "other.png"])]
    results = run_jobs(jobs, [PhotoStage()])
    assert [r.error for r in results] == [None] * 4
    assert read == ["a.png", "other.png"]
    photos = [r.job.artifacts.photo for r in results]
    assert [p.path.name for p in photos] == ["a.png", "b.png", "a.png", "other.png"]
    assert np.array_equal(photos[1].image_rgb, photos[0].image_rgb)
    assert not np.array_equal(photos[3].image_rgb, photos[0].image_rgb)
