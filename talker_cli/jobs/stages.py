"""The stages of `talker render` and `talker lipsync` in their order (render_stages), each a thin adapter
over its task module: the preflight (preflight_stage), the photo and the words (input_stages), the
ASR, LLM and TTS (model_stages), the track and the animation files (track_stages), the video
(render_stage), on the base of job.py.

A stage says when it applies, which of the job's artifact slots it reads and which it fills (the
runner checks both), and which backend and model serve it. The runner in pipeline.py alone decides
which stages run, and loads, runs and frees them.
"""

from __future__ import annotations

from .input_stages import InputStage, PhotoStage, check_script, check_speech_length, read_text_file, text_sha256
from .job import Job, ModelStage, RunContext, Stage
from .model_stages import AsrStage, LlmStage, TtsStage
from .preflight_stage import PreflightStage, check_inputs, check_job, check_text_language, job_size, verdict_summary
from .render_stage import RenderStage
from .track_stages import AlignmentStage, ExportStage, VisemeStage

__all__ = [
    "AlignmentStage", "AsrStage", "ExportStage", "InputStage", "Job", "LlmStage", "ModelStage", "PhotoStage",
    "PreflightStage", "RenderStage", "RunContext", "Stage", "TtsStage", "VisemeStage", "check_inputs", "check_job",
    "check_script", "check_speech_length", "check_text_language", "job_size", "read_text_file", "render_stages",
    "text_sha256", "verdict_summary",
]


def render_stages() -> list[Stage]:
    """Every stage of a job; without a photo (talker lipsync) the photo and render stages do not apply."""
    return [
        PreflightStage(), PhotoStage(), InputStage(), AsrStage(), LlmStage(), TtsStage(),
        AlignmentStage(), VisemeStage(), ExportStage(), RenderStage(),
    ]
