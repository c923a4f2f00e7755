"""The photo and the words to speak: the photo read and its face found; the text, a text file's text,
or a recording decoded and checked."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..artifacts import Script, Speech
from ..errors import InputError

from .job import Job, Stage

if TYPE_CHECKING:
    from ..photo import Landmarks


class PhotoStage(Stage):
    name = "photo"
    backend = "mediapipe-facemesh"
    writes = ("photo",)
    beside = True  # the face is found while the speech is made

    def __init__(self) -> None:
        self.read: dict[tuple, Any] = {}  # a batch's photos, read once each: by content and video size

    def applies(self, job: Job) -> bool:
        return job.photo is not None

    def run(self, job: Job) -> dict[str, Any]:
        from dataclasses import replace

        from ..photo import file_sha256, load_photo

        render = job.config.render
        sha256 = file_sha256(job.photo)
        key = (sha256, render.max_side, render.crop)
        if key in self.read:
            photo = replace(self.read[key], path=job.photo)
        else:
            photo = self.read[key] = load_photo(job.photo, render, sha256=sha256, landmarks_of=self._landmarks(job))
        job.artifacts.photo = photo
        job.input_hashes["photo_sha256"] = photo.sha256
        height, width = photo.image_rgb.shape[:2]
        return {"video_size": [width, height], "photo_size": list(photo.source_size)}

    def unload(self) -> None:
        self.read = {}

    @staticmethod
    def _landmarks(job: Job) -> Landmarks | None:
        """What finds a photo's landmarks: FaceMesh, its finds kept in the work cache by the image's
        content, so a photo used again (a cron job's one face) is not read again (0.3-0.4 s with
        mediapipe's import, on every render)."""
        import numpy as np

        from ..photo import find_landmarks, kept_landmarks

        cache = job.run.cache
        if cache is None:
            return None

        def landmarks_of(image: np.ndarray) -> np.ndarray | None:
            content = hashlib.sha256(np.ascontiguousarray(image).tobytes()).hexdigest()
            key = cache.key("landmarks", {"image": content, "shape": list(image.shape)})
            kept = cache.kept(key, lambda folder: kept_landmarks(np.load(folder / "landmarks.npy", allow_pickle=False),
                                                               image.shape))
            if kept is not None:
                return kept
            found = find_landmarks(image)
            if found is not None:
                cache.store(key, {"what": "the photo's face landmarks"},
                            lambda folder: np.save(folder / "landmarks.npy", found))
            return found

        return landmarks_of


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
