"""The model stages: what a recording says (ASR), the reply (LLM) and the speech (TTS), each kept in
the work cache by what decides it."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any
from ..artifacts import Script, Speech
from ..errors import InputError

from .input_stages import check_script, in_the_jobs_characters, recording_language, transcript_script
from .job import Job, ModelStage


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
