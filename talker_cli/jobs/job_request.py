"""A job as a command asks for it (render, lipsync, check-gpu): one record from the command line to the run, its
inputs checked in one place (input_files), its settings over the preset, its outputs never an input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

# flag -> (preset table, key): the command line's settings win over the preset
FLAG_SETTINGS = {
    "fps": ("render", "fps"), "max_side": ("render", "max_side"), "seed": ("render", "seed"),
    "tts_model": ("tts", "voice"), "tts_backend": ("tts", "backend"), "speaker": ("tts", "speaker"),
    "speaker_name": ("tts", "speaker_name"), "asr_model": ("asr", "model"), "llm_model": ("llm", "model"),
    "language": ("input", "language"), "formats": ("output", "formats"), "dat_frame_rate": ("output", "dat_frame_rate"),
    "emotion": ("render", "emotion"), "head_motion": ("render", "head_motion"), "blink_rate": ("render", "blink_rate"),
    "mouth_scale": ("render", "mouth_open_scale"), "crop": ("render", "crop"), "mem_ratio": ("gpu", "mem_ratio"),
}


def settings_of(**flags: Any) -> dict[str, dict[str, Any]]:
    """Flags given (not None) as preset tables. A --speaker of digits is the speaker's number, any
    other its name; "srt, vtt" is read as "srt,vtt"."""
    speaker = flags.pop("speaker", None)
    if speaker is not None:
        flags["speaker" if str(speaker).isdigit() else "speaker_name"] = int(speaker) if str(speaker).isdigit() else speaker
    tables: dict[str, dict[str, Any]] = {}
    for key, value in flags.items():
        if value is not None:
            table, name = FLAG_SETTINGS[key]
            tables.setdefault(table, {})[name] = str(value) if isinstance(value, Path) else value
    if "formats" in tables.get("output", {}):
        tables["output"]["formats"] = tables["output"]["formats"].replace(" ", "")
    return tables


@dataclass(frozen=True)
class JobRequest:
    output: Path
    photo: Path | None = None  # None: animation files only (lipsync)
    text: str | None = None
    text_file: Path | None = None
    audio: Path | None = None
    transcript: str | None = None  # the recording's words, when the user knows them
    reply: bool = False
    preset: str = "cpu"
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)  # over the preset (settings_of)
    wait_s: float = 0.0
    force: bool = False

    def job(self, planned_only: bool = False):
        """The pipeline's Job: its config resolved, its paths checked (no output is an input, the text
        file read within its limit), before any stage runs. planned_only: the job check-gpu plans,
        which writes nothing and may have no input at all: no output is checked, and a recording is
        checked to be a file here, as no stage will read it."""
        from ..config import load_config, preset_path
        from .input_files import check_file
        from .outputs import check_paths
        from .input_stages import read_text_file
        from .job import Job, RunContext
        from .work_cache import WorkCache

        given = sum(s is not None for s in (self.text, self.text_file, self.audio))
        if given > 1 or (given == 0 and not planned_only):
            raise UsageError(f"give {'at most' if planned_only else 'exactly'} one of --text, --text-file or --audio")
        if self.transcript is not None and self.audio is None:
            raise UsageError("--transcript gives the words of a recording: pass it with --audio")
        if self.transcript is not None and not any(c.isalnum() for c in self.transcript):
            raise UsageError("--transcript has no words; pass the recording's words, or leave it out to have them heard")
        config = load_config(self.preset, self.settings)
        job = Job(photo=self.photo, output=self.output, config=config, text=self.text, audio=self.audio,
                  transcript=self.transcript, reply=self.reply, run=RunContext(cache=WorkCache(read=not self.force)))
        if planned_only:
            if self.audio is not None:
                check_file(self.audio, "audio file")
        else:
            check_paths([(f"the {kind}", path) for kind, path in job.output_files().items()],
                        [self.photo, self.audio, self.text_file, preset_path(self.preset)])
        if self.text_file is not None:
            job.text = read_text_file(self.text_file, config.input.max_chars)
        return job
