"""The stages of `talker render` and `talker lipsync`, each a thin adapter over its task module.

A stage says when it applies, which of the job's artifact slots it reads and which it fills (the
runner checks both), and which backend and model serve it. The runner in pipeline.py alone decides
which stages run, and loads, runs and frees them.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..artifacts import Artifacts, Script, Speech
from ..config import TalkerConfig
from ..errors import InputError, NoGpuError, ResourceError
from .outputs import OutputSet
from .progress import Meter, no_meter

log = logging.getLogger("talker")


@dataclass
class RunContext:
    """Where a job runs, set up by the runner: its work folder, its outputs (under temporary names
    until the job succeeds), the GPU reservations a batch shares, and the work cache."""

    work_dir: Path = Path(".")
    outputs: OutputSet | None = None
    reservations: dict[str, Any] = field(default_factory=dict)  # device -> Reservation, shared in a batch
    cache: Any = None  # a WorkCache: finished stage results are reused from it and recorded in it
    meter: Meter = no_meter  # how far a long stage has come, for the user (progress.py)


@dataclass
class Job:
    """One job's inputs and what its stages decide and make: the config as asked, the placement of
    its model stages (preflight), its language, and its artifacts."""

    photo: Path | None  # None: animation files only (talker lipsync), no video
    output: Path  # the MP4; without a photo, the stem of the animation files
    config: TalkerConfig
    text: str | None = None
    audio: Path | None = None
    transcript: str | None = None  # the recording's words as the user knows them (--transcript)
    reply: bool = False
    run: RunContext = field(default_factory=RunContext)
    artifacts: Artifacts = field(default_factory=Artifacts)
    input_hashes: dict[str, str] = field(default_factory=dict)
    placement: dict[str, str] = field(default_factory=dict)  # model stage -> device, where preflight moved it
    reservation_plan: dict[str, int] = field(default_factory=dict)  # device -> bytes this job needs
    planned: dict[str, int] = field(default_factory=dict)  # stage -> planned peak bytes
    vram: dict[str, Any] = field(default_factory=dict)
    language: str = "en"  # ISO 639-1, decided before any stage (text) or by the ASR (recording)
    language_decided_by: str = ""

    def output_files(self) -> dict[str, Path]:
        """Every file this job writes (checked before any work, written by the stages)."""
        from ..exports import parse_formats
        from .outputs import output_files

        video = self.photo is not None
        speech = not video and (self.audio is None or self.reply)  # the voice of an animation is written too
        return output_files(self.output, parse_formats(self.config.output.formats), video=video, speech=speech)

    def placed(self, stage: str):
        """A model stage's settings as it runs: the config's, on the device preflight placed it on."""
        section = getattr(self.config, stage)
        return replace(section, device=self.placement[stage]) if stage in self.placement else section

    def stage_device(self, stage: str) -> str:
        """Where a stage runs, spelled as reservations are keyed: 'cuda' means 'cuda:0'."""
        device = self.placed(stage).device if stage in ("asr", "llm", "tts") else "cpu"
        return "cuda:0" if device == "cuda" else device


class Stage:
    """Base: a stage with no model. Model stages override load/unload and set backend/model."""

    name = ""
    backend = "builtin"
    model = ""
    reads: tuple[str, ...] = ()  # the artifact slots it needs filled
    writes: tuple[str, ...] = ()  # the only slots it may fill

    def applies(self, job: Job) -> bool:
        return True

    def load(self, job: Job) -> None:
        pass

    def run(self, job: Job) -> dict[str, Any]:
        """Do the work; return extra figures for the manifest."""
        raise NotImplementedError

    def after_all(self, jobs: list[Job]) -> None:
        """Work that needs every job's answer, after the stage ran for all of them."""

    # A stage whose result is worth keeping says what decides it (cache_parts), and how to write
    # (save) and read back (restore) its result; the runner does the rest.
    def cache_parts(self, job: Job) -> dict[str, Any] | None:
        return None

    def save(self, job: Job, folder: Path) -> None:
        raise NotImplementedError

    def restore(self, job: Job, folder: Path) -> None:
        raise NotImplementedError

    def unload(self) -> None:
        pass


class ModelStage(Stage):
    """A stage with a model (ASR, LLM, TTS): its engine made and loaded once for the jobs of a
    placement, dropped at unload; a subclass says how to make the engine for a job."""

    engine: Any = None

    def make_engine(self, job: Job):
        raise NotImplementedError

    def load(self, job: Job) -> None:
        self.engine = self.make_engine(job)
        self.backend, self.model = self.engine.name, self.engine.model_path
        self.engine.load()

    def unload(self) -> None:
        self.engine = None


class PreflightStage(Stage):
    """Plans every GPU stage for this input, refuses what cannot fit, reserves what will be used.

    Runs before any other stage. Stages that cannot fit and may run on the CPU are moved there
    (said in the log and the manifest); with no GPU at all the whole job runs on the CPU.
    """

    name = "preflight"
    backend = "vram-planner"

    def __init__(self, probe=None, torch_module=None):
        self.probe = probe  # injectable: tests answer for the device
        self.torch_module = torch_module

    def run(self, job: Job) -> dict[str, Any]:
        from ..gpu.preflight import decide, plan_job, stage_devices, stages_that_run, uses_gpu

        size = check_job(job)
        wanted = [s for s, d in stage_devices(job.config).items() if uses_gpu(d) and s in stages_that_run(size)]
        if not wanted:
            job.vram = {"gpu": "not used"}
            return {"gpu": "not used"}
        from ..gpu.probe import probe_devices

        devices = (self.probe or probe_devices)()
        verdict = decide(plan_job(job.config, size), devices, job.config)
        job.vram = verdict_summary(verdict)
        if not verdict.fits:
            error = ResourceError if verdict.gpu_usable else NoGpuError
            raise error("; ".join([verdict.message, *verdict.suggestions]))
        for stage, why in verdict.fallbacks.items():
            log.warning("stage %s runs on the CPU: %s", stage, why)
            job.placement[stage] = "cpu"
        job.planned = {p.stage: p.peak_bytes for p in verdict.plans if p.stage not in verdict.fallbacks}
        job.reservation_plan = {d.device: d.reservation_bytes for d in verdict.devices if d.reservation_bytes}
        return {"verdict": verdict.message, "fallbacks": verdict.fallbacks}

    def after_all(self, jobs: list[Job]) -> None:
        """One reservation per device, sized for the largest job, shared by all of them."""
        from ..gpu.reservation import Reservation, sanitize_alloc_conf

        wanted: dict[str, int] = {}
        for job in jobs:
            for device, size in job.reservation_plan.items():
                wanted[device] = max(wanted.get(device, 0), size)
        if not wanted:
            return
        sanitize_alloc_conf()
        shared = jobs[0].run.reservations
        for device, size in wanted.items():
            reservation = Reservation(device, size, jobs[0].config.gpu.mem_ratio, torch=self.torch_module)
            reservation.make()
            shared[device] = reservation


def check_job(job: Job):
    """What every preflight checks before planning memory (render, lipsync, batch, Ray and check-gpu
    alike): the job's size, every model its stages load found, its text's language and voice.
    Returns the JobSize the plan is made for."""
    from ..gpu.preflight import locate_models, stages_that_run

    size = job_size(job)
    stages = stages_that_run(size)
    locate_models(job.config, stages - {"tts"})
    check_text_language(job)  # a text's voice, of its language (and its --speaker), located there
    if job.text is None:  # a reply to a recording: its language is heard later
        locate_models(job.config, stages & {"tts"}, job.language or "en")
    check_inputs(job)
    return size


def check_inputs(job: Job) -> None:
    """The inputs the stages will read, after the settings are known good: a photo or a recording this
    user cannot read, and a text whose speech would run past the recording limit, are refused now."""
    from .input_files import check_file

    for what, path in (("photo", job.photo), ("audio file", job.audio)):
        if path is not None:
            check_file(path, what)
    if job.text is not None and not job.reply:  # a prompt is not spoken: its reply is bounded by its tokens
        check_speech_length(job.text, job.config.input.max_audio_s, "text")


def check_text_language(job: Job) -> None:
    """The job's language from the text (or as given), and its voice found and able to read the text:
    refused before any stage otherwise (a reply is checked when it is spoken)."""
    from ..language import as_spoken, decide_language
    from ..voices.tts import make_tts

    from ..face.emotions import split_tags

    if job.text is None:
        return
    text = split_tags(as_spoken(job.text))[0]
    job.language, job.language_decided_by = decide_language(text, job.config.input.language, job.output.name)
    if job.reply:
        from ..llms.llm import check_reply_language

        check_reply_language(job.config.llm, job.language)
    engine = make_tts(job.config.tts, job.language)
    engine.locate()
    if hasattr(engine, "check_language") and not job.reply:
        engine.check_language(text, job.language)


def job_size(job: Job):
    from ..audio_io import probe_duration_s
    from ..gpu.preflight import JobSize, text_size

    if job.audio is not None:
        return JobSize(audio_s=probe_duration_s(job.audio) if job.audio.is_file() else 0.0, reply=job.reply)
    return text_size(job.text or "", job.reply, job.config)


def verdict_summary(verdict) -> dict[str, Any]:
    from dataclasses import asdict

    return {
        "fits": verdict.fits, "gpu_usable": verdict.gpu_usable, "message": verdict.message,
        "devices": [asdict(d) for d in verdict.devices],
        "plans": [asdict(p) | {"peak_bytes": p.peak_bytes} for p in verdict.plans],
        "fallbacks": verdict.fallbacks, "suggestions": verdict.suggestions,
    }


class PhotoStage(Stage):
    name = "photo"
    backend = "mediapipe-facemesh"

    writes = ("photo",)

    def applies(self, job: Job) -> bool:
        return job.photo is not None

    def run(self, job: Job) -> dict[str, Any]:
        from ..photo import load_photo

        photo = load_photo(job.photo, job.config.render)
        job.artifacts.photo = photo
        job.input_hashes["photo_sha256"] = photo.sha256
        height, width = photo.image_rgb.shape[:2]
        return {"video_size": [width, height], "photo_size": list(photo.source_size)}


def read_text_file(path: Path, max_chars: int) -> str:
    """A UTF-8 text file's text, less the byte order mark Windows editors write first. A file that
    cannot hold max_chars characters or fewer (4 bytes each at most) is refused from its size, and
    nothing but a regular file is read (input_files)."""
    from .input_files import read_bounded

    data = read_bounded(path, "text file", 4 * max_chars + 3,
                        f"that {max_chars:,} characters can take (input.max_chars); shorten or split it")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"text file is not UTF-8 text: {path}") from None
    if "\0" in text:
        raise InputError(f"text file has NUL bytes, so it is not a text file: {path}")
    return text


def text_sha256(text: str) -> str:
    """The hash recorded for a script, as spoken (surrounding whitespace dropped)."""
    return hashlib.sha256(text.strip().encode()).hexdigest()


def check_script(text: str, max_chars: int, what: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes that were not UTF-8, passed through by the shell
        raise InputError(f"the {what} is not valid UTF-8 text; pass UTF-8") from None
    text = text.strip()
    if not text:
        raise InputError(f"the {what} is empty; pass words to speak")
    if len(text) > max_chars:
        raise InputError(
            f"the {what} is {len(text)} characters, over this preset's limit of {max_chars} "
            "(input.max_chars); shorten it, split it, or use a preset with a higher limit"
        )
    return text


def check_speech_length(text: str, max_audio_s: float, what: str) -> None:
    """A text is bounded by the speech it makes, as a recording is (input.max_audio_s), not only by its
    characters: 20,000 characters of Chinese are over an hour of speech."""
    from ..language import speech_seconds

    seconds = speech_seconds(text)
    if seconds > max_audio_s:
        raise InputError(
            f"the {what} would make about {seconds / 60:.0f} min of speech, over this preset's limit of "
            f"{max_audio_s:.0f} s (input.max_audio_s); shorten it, split it, or use a preset with a higher input.max_audio_s"
        )


class InputStage(Stage):
    name = "input"
    backend = "ffmpeg"
    writes = ("script", "recording")  # the text, or the decoded recording

    def run(self, job: Job) -> dict[str, Any]:
        limits = job.config.input
        if job.audio is None:
            from ..face.emotions import split_tags
            from ..language import as_spoken

            sayable = as_spoken(job.text or "")
            if not sayable.strip() and (job.text or "").strip():
                raise InputError("the text has only emoji or symbols, which are not spoken; pass words to speak")
            spoken, marks = split_tags(sayable)
            text = check_script(spoken, limits.max_chars, "text")
            job.artifacts.script = Script(text=text, origin="text", emotion_marks=marks)
            job.input_hashes["text_sha256"] = text_sha256(job.text or "")
            return {"chars": len(text), "emotion_tags": len(marks)}
        from ..listening.asr import ASR_RATE
        from ..audio_io import check_not_silent, decode_recording
        from ..photo import file_sha256
        from ..listening.voice_activity import voice_heard

        samples, silenced = decode_recording(job.audio, ASR_RATE)
        duration = len(samples) / ASR_RATE
        if duration < 0.2:
            raise InputError(f"{job.audio} is only {duration:.2f} s long; pass a recording of speech")
        if duration > limits.max_audio_s:
            raise InputError(
                f"{job.audio} is {duration:.0f} s long, over this preset's limit of {limits.max_audio_s:.0f} s "
                "(input.max_audio_s); cut it or use a preset with a higher limit"
            )
        check_not_silent(samples, job.audio)
        job.artifacts.recording = Speech(samples=samples, sample_rate=ASR_RATE, origin="recording", source_path=job.audio,
                                         voiced=voice_heard(samples), silenced=silenced)
        job.input_hashes["audio_sha256"] = file_sha256(job.audio)
        if job.transcript is not None:
            job.input_hashes["transcript_sha256"] = text_sha256(job.transcript)
        return {"audio_s": round(duration, 3)}


def recording_language(transcript, job: Job) -> tuple[str, str]:
    from ..language import primary_language

    given = job.config.input.language
    return (primary_language(given), "given") if given != "auto" else (transcript.language or "en", "asr")


def in_the_jobs_characters(transcript, job: Job):
    """A Chinese transcript in the characters the job asked for (simplified unless a traditional
    Chinese was given), its words too: subtitles, the manifest and a reply read it."""
    from ..artifacts import Transcript, Word
    from ..language import in_chinese_characters

    if transcript.language != "zh" or not transcript.text:
        return transcript
    texts = [transcript.text, *(w.text for w in transcript.words)]
    text, *words = in_chinese_characters(texts, job.config.input.language)
    return Transcript(text, tuple(Word(t, w.start_s, w.end_s) for t, w in zip(words, transcript.words)), transcript.language,
                      transcript.no_speech_prob)


def transcript_script(transcript, job: Job) -> Script:
    """What the face says of a recording. No recognized word is no error: the alignment then times
    the phones it hears (and refuses a recording with none); a reply needs words to answer."""
    if not transcript.text.strip() and not job.reply:
        return Script(text="", origin="transcript")
    if not transcript.text.strip():
        raise InputError("no words were recognized in the recording, so there is nothing to reply to; "
                         "pass a recording of clear speech")
    return Script(check_script(transcript.text, job.config.input.max_chars, "transcript"), "transcript")


class AsrStage(ModelStage):
    name = "asr"
    reads = ("recording",)
    writes = ("heard", "transcript", "script")

    def applies(self, job: Job) -> bool:
        return job.audio is not None

    def make_engine(self, job: Job):
        from ..listening.asr import make_asr
        from ..language import primary_language

        given = job.config.input.language
        return make_asr(job.placed("asr"), "" if given == "auto" else primary_language(given))

    def run(self, job: Job) -> dict[str, Any]:
        from ..listening.voice_activity import check_speech_heard

        recording = job.artifacts.recording
        self.engine.meter = job.run.meter  # how many seconds of the recording are transcribed
        try:
            transcript = in_the_jobs_characters(self.engine.transcribe(recording), job)
        except InputError:  # "the language could not be told": of music, say that no speech was found
            check_speech_heard(recording, None)
            raise
        check_speech_heard(recording, transcript)
        self.model = self.engine.model_path  # the model that transcribed: English, or multilingual
        keep_transcript(transcript, job)
        details = {"words": len(transcript.words), "language": transcript.language}
        if job.transcript is not None:
            details["words_given"] = len(job.artifacts.transcript.words)
        readings = getattr(self.engine, "readings", {})
        if readings.get("unsure_windows"):  # English read twice: how often the second reading won
            details["second_opinion"] = dict(readings)
        return details

    def cache_parts(self, job: Job) -> dict[str, Any]:
        return {"audio_sha256": job.input_hashes.get("audio_sha256"), "asr": asdict(job.placed("asr")),
                "language": job.config.input.language}

    def save(self, job: Job, folder: Path) -> None:
        t = job.artifacts.heard
        words = [[w.text, w.start_s, w.end_s] for w in t.words]
        (folder / "transcript.json").write_text(json.dumps({"text": t.text, "language": t.language, "words": words,
                                                            "no_speech_prob": t.no_speech_prob}))

    def restore(self, job: Job, folder: Path) -> None:
        from ..artifacts import Transcript, Word

        from ..listening.voice_activity import check_speech_heard

        data = json.loads((folder / "transcript.json").read_text())
        transcript = Transcript(data["text"], tuple(Word(*w) for w in data["words"]), data["language"],
                                data.get("no_speech_prob", 0.0))
        check_speech_heard(job.artifacts.recording, transcript)
        keep_transcript(transcript, job)


def keep_transcript(transcript, job: Job) -> None:
    """The ASR's transcript as the job's, or the user's words timed by it (--transcript); the language and
    what the face says follow from it. The work cache keeps what was heard."""
    job.artifacts.heard = transcript
    if job.transcript is not None:
        from ..aligners.known_words import with_given_words

        transcript = with_given_words(transcript, job.transcript)
    job.artifacts.transcript = transcript
    job.language, job.language_decided_by = recording_language(transcript, job)
    job.artifacts.script = transcript_script(transcript, job)


def reply_script(reply: str, job: Job) -> Script:
    """What the face says of a reply: emotion tags the model wrote are obeyed, not spoken."""
    from ..face.emotions import split_tags

    spoken, marks = split_tags(reply)
    return Script(check_script(spoken, job.config.input.max_chars, "reply"), "reply", marks)


class LlmStage(ModelStage):
    name = "llm"
    reads = ("script",)
    writes = ("prompt", "reply")

    def applies(self, job: Job) -> bool:
        return job.reply

    def make_engine(self, job: Job):
        from ..llms.llm import make_llm

        return make_llm(job.placed("llm"))

    def run(self, job: Job) -> dict[str, Any]:
        from ..llms.llm import check_reply_language, spoken_reply

        check_reply_language(job.config.llm, job.language)  # a recording's language is known only now
        prompt = job.artifacts.script.text
        fitted = self.engine.fit(prompt, job.language)  # a prompt cut to fit is said on stderr and here
        reply = spoken_reply(self.engine.reply(fitted.text, job.language, job.run.meter), job.language)
        job.artifacts.prompt = prompt
        job.artifacts.reply = reply_script(reply.text, job)
        return {"reply_chars": len(reply.text), "prompt_tokens": fitted.tokens,
                "prompt_sentences": fitted.sentences, "prompt_sentences_dropped": fitted.dropped}

    def cache_parts(self, job: Job) -> dict[str, Any]:
        from ..llms.models import model_identity

        return {"prompt": job.artifacts.script.text, "language": job.language, "llm": asdict(job.placed("llm")),
                "model": model_identity(job.config.llm)}

    def save(self, job: Job, folder: Path) -> None:
        reply = job.artifacts.reply
        data = {"prompt": job.artifacts.prompt, "reply": reply.text, "emotion_marks": reply.emotion_marks}
        (folder / "reply.json").write_text(json.dumps(data))

    def restore(self, job: Job, folder: Path) -> None:
        data = json.loads((folder / "reply.json").read_text())
        job.artifacts.prompt = data["prompt"]
        marks = tuple((offset, emotion) for offset, emotion in data.get("emotion_marks", ()))
        job.artifacts.reply = Script(data["reply"], "reply", marks)


class TtsStage(ModelStage):
    """One voice per language: a batch's jobs may speak several, each voice loaded once."""

    name = "tts"
    reads = ("spoken",)
    writes = ("speech",)

    def applies(self, job: Job) -> bool:
        return job.audio is None or job.reply  # a reply is spoken in a synthesized voice, not the recording's

    def make_engine(self, job: Job):
        from ..voices.tts import make_tts

        return make_tts(job.placed("tts"), job.language)

    def load(self, job: Job) -> None:
        super().load(job)
        self.engines = {job.language: self.engine}

    def engine_for(self, job: Job):
        """The voice of the job's language, loaded the first time a job speaks it."""
        if job.language not in self.engines:
            self.engines[job.language] = engine = self.make_engine(job)
            engine.load()
        self.engine = self.engines[job.language]
        self.backend, self.model = self.engine.name, self.engine.model_path
        return self.engine

    def run(self, job: Job) -> dict[str, Any]:
        engine = self.engine_for(job)
        if hasattr(engine, "check_language"):  # a reply or a transcript is known only now
            engine.check_language(job.artifacts.spoken.text, job.language)
        engine.meter = job.run.meter  # how many parts of the text are spoken
        speech = engine.synthesize(job.artifacts.spoken.text)
        job.artifacts.speech = speech
        return {"speech_s": round(speech.duration_s, 3), "sample_rate": speech.sample_rate}

    def cache_parts(self, job: Job) -> dict[str, Any]:
        voice = self.make_engine(job)  # which voice speaks, not only the settings: defaults change
        return {"text": job.artifacts.spoken.text, "tts": asdict(job.placed("tts")), "language": job.language,
                "voice": [voice.name, voice.model_path]}

    def save(self, job: Job, folder: Path) -> None:
        import numpy as np

        speech = job.artifacts.speech
        np.save(folder / "samples.npy", speech.samples)
        phones = [[p.label, p.start_s, p.end_s] for p in speech.native_phones or ()]
        words = [[w.text, w.start_s, w.end_s] for w in speech.native_words or ()]
        (folder / "speech.json").write_text(json.dumps({"sample_rate": speech.sample_rate, "phones": phones, "words": words}))

    def restore(self, job: Job, folder: Path) -> None:
        import numpy as np

        from ..artifacts import Phone, Word

        data = json.loads((folder / "speech.json").read_text())
        job.artifacts.speech = Speech(
            samples=np.load(folder / "samples.npy"), sample_rate=data["sample_rate"], origin="tts",
            native_phones=tuple(Phone(*p) for p in data["phones"]) or None,
            native_words=tuple(Word(*w) for w in data["words"]) or None,
        )

    def unload(self) -> None:
        super().unload()
        self.engines = {}


class AlignmentStage(Stage):
    """The aligner is chosen per job: TTS speech brings its own timings, a recording needs pocketsphinx."""

    name = "alignment"
    reads = ("voice", "spoken")
    writes = ("phones",)

    def run(self, job: Job) -> dict[str, Any]:
        from ..aligners.alignment import ALIGN_RATE, make_aligner
        from ..audio_io import resample

        speech = job.artifacts.voice
        aligner = make_aligner(job.config.alignment, speech, job.language)
        aligner.load()
        try:
            self.backend, self.model = aligner.name, aligner.model_path
            if aligner.name != "native" and speech.sample_rate != ALIGN_RATE:  # every acoustic aligner hears 16 kHz
                speech = Speech(resample(speech.samples, speech.sample_rate, ALIGN_RATE), ALIGN_RATE, speech.origin)
            transcript = job.artifacts.transcript if speech.origin == "recording" else None
            anchors = transcript.words if transcript is not None else ()
            track = aligner.align(speech, job.artifacts.spoken.text, anchors)
        finally:
            aligner.unload()
        job.artifacts.phones = track
        spans = [[s.start_s, s.end_s, s.source] for s in track.spans]
        return {"phones": len(track.phones), "words": len(track.words), "source": track.source, "spans": spans}


class VisemeStage(Stage):
    """Phones -> visemes -> the face's track (mouth, emotions, blinks, head)."""

    name = "visemes"
    backend = "ovr-15"
    reads = ("phones", "spoken", "voice")
    writes = ("visemes", "track", "emotion_changes")

    def run(self, job: Job) -> dict[str, Any]:
        from ..face.blendshapes import blendshape_track
        from ..face.emotions import mark_times
        from ..face.visemes import viseme_track

        c = job.config
        track, script = job.artifacts.phones, job.artifacts.spoken
        segments = viseme_track(track.phones, c.visemes)
        changes = mark_times(script.emotion_marks, script.text, track.words)
        weights = blendshape_track(segments, job.artifacts.voice.duration_s, c.visemes, c.render, changes)
        job.artifacts.visemes = tuple(segments)
        job.artifacts.track = weights
        job.artifacts.emotion_changes = tuple((round(t, 3), e) for t, e in changes)
        return {"segments": len(segments), "frames": weights.frame_count}


class ExportStage(Stage):
    """The track in every format the job asked for, the subtitles, and (animation only) the speech."""

    name = "export"
    backend = "talker-exports"
    reads = ("track", "visemes", "phones", "spoken", "voice")

    def run(self, job: Job) -> dict[str, Any]:
        from ..exports import Animation, parse_formats, render_format
        from ..subtitles import make_cues

        speech = job.artifacts.voice
        animation = Animation(
            track=job.artifacts.track, segments=job.artifacts.visemes,
            cues=make_cues(job.artifacts.phones.words, job.artifacts.spoken.text),
            duration_s=speech.duration_s, sound_file=speech.source_path or job.run.outputs.final.get("speech"),
            dat_frame_rate=job.config.output.dat_frame_rate, visemes=job.config.visemes,
            mouth_scale=job.config.render.mouth_open_scale,
        )
        formats = parse_formats(job.config.output.formats)
        for name in formats:
            job.run.outputs.write_bytes(name, render_format(name, animation))
        if "speech" in job.run.outputs.final:
            from ..audio_io import write_wav

            write_wav(job.run.outputs.temp("speech"), speech.samples, speech.sample_rate)
        return {"formats": list(formats)}


class RenderStage(Stage):
    """Draws each frame of the face from the track and streams it to the encoder: the MP4."""

    name = "render"
    backend = "landmark-warp+libx264"
    reads = ("photo", "track", "voice")
    writes = ("video",)

    def applies(self, job: Job) -> bool:
        return job.photo is not None

    def run(self, job: Job) -> dict[str, Any]:
        import time

        from ..audio_io import silenced_soundtrack, write_wav
        from ..face.calibration import curve_record
        from ..face.frames import FrameRenderer
        from ..face.video import write_mp4

        speech = job.artifacts.voice
        soundtrack = speech.source_path
        if soundtrack is not None and speech.silenced:
            soundtrack = silenced_soundtrack(soundtrack, job.run.work_dir)
        if soundtrack is None:
            soundtrack = job.run.work_dir / "speech.wav"
            write_wav(soundtrack, speech.samples, speech.sample_rate)
        key, curve = self._kept_calibration(job)
        renderer = FrameRenderer(job.artifacts.photo, curve)
        if key is not None and curve is None:
            made = curve_record(renderer.scale.curve)
            job.run.cache.store(key, {"calibration": made},
                                lambda folder: (folder / "curve.json").write_text(json.dumps(made)))
        track = job.artifacts.track
        height, width = job.artifacts.photo.image_rgb.shape[:2]
        draw_seconds = 0.0

        def timed_frames():
            nonlocal draw_seconds
            for index in range(track.frame_count):
                t = time.perf_counter()
                frame = renderer.render(track, index)
                draw_seconds += time.perf_counter() - t
                job.run.meter("render", index + 1, track.frame_count, "frames")
                yield frame

        video = write_mp4(timed_frames(), width, height, track.fps, track.frame_count, soundtrack,
                          job.run.outputs.temp("video"), job.config.video)
        job.artifacts.video = video
        return {
            "frames": video.frame_count, "duration_s": round(video.duration_s, 3),
            "draw_seconds": round(draw_seconds, 3),
            "draw_fps": round(video.frame_count / draw_seconds, 1) if draw_seconds else None,
        }


    @staticmethod
    def _kept_calibration(job: Job) -> tuple[str | None, Any]:
        """The work cache's key for this photo's mouth calibration (its pixels and landmarks as drawn,
        and talker's code, decide it) and the curve kept under it: None where there is none, or where
        what is there is not a curve calibration could have made (face/calibration.curve_from_record).
        Every render and every batch job of the same photo had calibrated it again."""
        import numpy as np

        from ..face.calibration import curve_from_record

        cache, photo = job.run.cache, job.artifacts.photo
        if cache is None:
            return None, None
        digest = hashlib.sha256(np.ascontiguousarray(photo.image_rgb).tobytes())
        digest.update(repr(photo.image_rgb.shape).encode())
        digest.update(np.ascontiguousarray(photo.landmarks_px, dtype=np.float32).tobytes())
        key = cache.key("calibration", {"photo": digest.hexdigest()})
        folder = cache.lookup(key)
        if folder is None:
            return key, None
        try:
            return key, curve_from_record(json.loads((folder / "curve.json").read_text()))
        except (OSError, ValueError):
            return key, None


def render_stages() -> list[Stage]:
    """Every stage of a job; without a photo (talker lipsync) the photo and render stages do not apply."""
    return [
        PreflightStage(), PhotoStage(), InputStage(), AsrStage(), LlmStage(), TtsStage(),
        AlignmentStage(), VisemeStage(), ExportStage(), RenderStage(),
    ]

