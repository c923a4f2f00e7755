"""From speech to the face's track: the phones aligned, the visemes and blendshape track, the
animation files."""

from __future__ import annotations

from typing import Any
from ..artifacts import Speech

from .job import Job, Stage


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
