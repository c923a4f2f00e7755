"""Each model stage on its real offline default: the models that ship in the wheels."""

import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from talker_cli.aligners.alignment import PocketsphinxAligner, make_aligner
from talker_cli.artifacts import Speech
from talker_cli.listening.asr import ASR_RATE, make_asr
from talker_cli.audio_io import decode_audio, resample
from talker_cli.config import AlignmentConfig, AsrConfig, LlmConfig, TtsConfig
from talker_cli.llms.llm import make_llm, spoken_reply
from talker_cli.voices.tts import make_tts


@pytest.fixture(scope="module")
def spoken():
    tts = make_tts(TtsConfig())
    tts.load()
    try:
        yield tts.synthesize("Hello there. My name is Bob, and I love apples.")
    finally:
        tts.unload()


@pytest.fixture(scope="module")
def recording(speech_wav):
    return Speech(decode_audio(speech_wav, ASR_RATE), ASR_RATE, "recording", source_path=speech_wav)


def test_piper_speaks_with_its_own_phoneme_timings(spoken):
    assert spoken.sample_rate >= 16000
    assert 2.0 < spoken.duration_s < 8.0
    assert np.abs(spoken.samples).max() > 0.3  # real sound, not silence
    phones = spoken.native_phones
    labels = [p.label for p in phones]
    assert "B" in labels and "AA" in labels and "P" in labels  # Bob, apples
    for a, b in zip(phones, phones[1:]):
        assert a.end_s == pytest.approx(b.start_s, abs=1e-6)
    assert phones[-1].end_s <= spoken.duration_s
    assert len(spoken.native_words) == 10


def test_native_alignment_labels_words_from_the_script(spoken):
    aligner = make_aligner(AlignmentConfig(), spoken)
    track = aligner.align(spoken, "Hello there. My name is Bob, and I love apples.")
    assert track.source == "tts-native"
    assert [w.text for w in track.words][:2] == ["Hello", "there."]


def test_whisper_transcribes_the_sample_recording(recording, speech_text):
    asr = make_asr(AsrConfig())
    asr.load()
    try:
        transcript = asr.transcribe(recording)
    finally:
        asr.unload()
    said = set(re.findall(r"[a-z]+", transcript.text.lower()))
    expected = set(re.findall(r"[a-z]+", speech_text.lower()))
    assert len(said & expected) >= 0.7 * len(expected)
    assert transcript.words[0].start_s < transcript.words[-1].end_s <= recording.duration_s + 0.5


def test_pocketsphinx_aligns_known_text_to_the_recording(recording, speech_text):
    aligner = PocketsphinxAligner()
    aligner.load()
    try:
        track = aligner.align(recording, speech_text)
    finally:
        aligner.unload()
    speech_phones = [p for p in track.phones if p.label != "SIL"]
    assert len(speech_phones) > 30
    assert track.phones[-1].end_s <= recording.duration_s + 0.05
    # the sample has 0.3 s of silence first: speech must not be placed inside it
    assert speech_phones[0].start_s >= 0.2
    assert [w.text for w in track.words][:2] == ["Good", "morning."]


def test_pocketsphinx_pronounces_words_missing_from_its_dictionary(spoken):
    aligner = PocketsphinxAligner()
    aligner.load()
    try:
        speech16 = Speech(resample(spoken.samples, spoken.sample_rate, 16000), 16000, "tts")
        track = aligner.align(speech16, "Hello there. My name is Blorptastic, and I love apples.")
    finally:
        aligner.unload()
    assert any(w.text.startswith("Blorptastic") for w in track.words)


def smollm2(**settings) -> LlmConfig:
    """SmolLM2 on transformers, whatever else is installed (the multilingual model is the default then)."""
    from talker_cli.llms.models import smollm2_gguf

    return LlmConfig(model=str(smollm2_gguf()), **settings)


@pytest.mark.slow
def test_smollm_replies_deterministically():
    llm = make_llm(smollm2(max_new_tokens=40))
    assert llm.name == "transformers"
    llm.load()
    try:
        first = llm.reply("What is the capital of France?")
        second = llm.reply("What is the capital of France?")
    finally:
        llm.unload()
    assert first == second
    assert "Paris" in first
    assert spoken_reply(first).text


def test_llm_context_limit_drops_the_oldest_sentences_first():
    llm = make_llm(smollm2(context_tokens=120, max_new_tokens=20))
    llm.load()
    try:
        prompt = " ".join(f"Sentence number {i} is here." for i in range(40)) + " What is the capital of France?"
        inputs = llm.fit_context(prompt)
        text = llm.tokenizer.decode(inputs["input_ids"][0])
        assert inputs["input_ids"].shape[1] <= 100
        assert "capital of France" in text and "Sentence number 0 " not in text
        assert "Sentence number 39" in text  # the newest are kept
        with pytest.raises(Exception, match="the last sentence alone"):
            llm.fit_context("word " * 300)
    finally:
        llm.unload()


@pytest.mark.slow
def test_llm_stage_leaves_no_tensor_behind():
    """Everything the LLM stage allocated is gone once the runner has freed it."""
    import gc
    import warnings

    import torch

    from talker_cli.config import TalkerConfig
    from talker_cli.jobs.stages import Job, LlmStage

    def tensor_bytes():
        gc.collect()
        with warnings.catch_warnings():  # isinstance() on torch's deprecated aliases warns
            warnings.simplefilter("ignore", FutureWarning)
            return sum(o.numel() * o.element_size() for o in gc.get_objects()
                       if isinstance(o, torch.Tensor) and not o.is_meta)

    from dataclasses import replace

    before = tensor_bytes()
    job = Job(photo=None, output=None, config=replace(TalkerConfig(), llm=smollm2()), text="Hi.", reply=True)
    from talker_cli.artifacts import Script

    job.artifacts.script = Script("What is the capital of France?", "text")
    stage = LlmStage()
    stage.load(job)
    during = tensor_bytes()
    stage.run(job)
    stage.unload()
    assert during - before > 100 * 2**20  # the weights were there
    assert tensor_bytes() - before < 1 * 2**20  # and now nothing is: weights, KV cache, logits


def test_the_speech_cache_key_follows_every_tts_setting():
    from dataclasses import replace

    from talker_cli.artifacts import Script
    from talker_cli.config import TalkerConfig
    from talker_cli.jobs.stages import Job, TtsStage

    def key(config):
        job = Job(photo=Path("p.png"), output=Path("o.mp4"), config=config, text="Hi.")
        job.artifacts.script = Script("Hi.", "text")
        return TtsStage().cache_parts(job)

    base = TalkerConfig()
    assert key(base) == key(TalkerConfig())
    for change in ({"length_scale": 1.3}, {"speaker": 1}, {"voice": "/v.onnx"}, {"lead_silence_s": 0.1}):
        assert key(replace(base, tts=replace(base.tts, **change))) != key(base), change


def test_the_speech_cache_key_follows_the_voice_that_speaks_not_only_the_settings(monkeypatch):
    """The same settings may mean another voice (Mandarin's default went from espeak-ng to Kokoro):
    speech made by the old one is not reused."""
    from talker_cli.voices import tts
    from talker_cli.artifacts import Script
    from talker_cli.config import TalkerConfig
    from talker_cli.jobs.stages import Job, TtsStage

    def key():
        job = Job(photo=Path("p.png"), output=Path("o.mp4"), config=TalkerConfig(), text="你好。", language="zh")
        job.artifacts.script = Script("你好。", "text")
        return TtsStage().cache_parts(job)

    with_kokoro = key()
    monkeypatch.setattr(tts, "kokoro_installed", lambda: False)
    assert key() != with_kokoro and key()["voice"][0] == "espeak-ng"


def test_a_new_copy_of_the_voice_removes_its_copies_made_over_a_day_ago_only(tmp_path, monkeypatch):
    """Copies were named by the voice file's mtime: every reinstall left another 63 MB (30 here)."""
    from talker_cli.voices.tts import aligned_voice, bundled_piper_voice

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    voice = bundled_piper_voice()
    folder = tmp_path / "talker" / "piper"
    folder.mkdir(parents=True)
    names = {"old": f"{voice.stem}-63201294-1796299665600524916.onnx", "older": f"{voice.stem}-0123456789abcdef.onnx",
             "recent": f"{voice.stem}-63201294-1796299665600524917.onnx", "other voice": f"{voice.stem}-x-0123456789abcdef.onnx"}
    for what, name in names.items():
        (folder / name).write_bytes(b"copy")
        age = 3600 if what == "recent" else 2 * 86400
        os.utime(folder / name, (time.time() - age, time.time() - age))
    made = aligned_voice(voice)
    kept = sorted(p.name for p in folder.iterdir() if not p.name.endswith(".stamp"))  # each copy's stamp beside it
    assert kept == sorted([made.name, names["recent"], names["other voice"]])


def test_the_piper_voice_is_patched_for_alignments_once_and_kept(tmp_path, monkeypatch):
    """Piper reports phone timings only from a voice patched with an alignment output: talker makes
    that copy once in its cache (0.3 s of every TTS stage before), and patches in memory when the
    cache cannot take it; the phone timings come either way."""
    import onnxruntime

    from talker_cli.config import TtsConfig
    from talker_cli.voices.tts import aligned_voice, bundled_piper_voice, make_tts

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    voice = bundled_piper_voice()
    first = aligned_voice(voice)
    assert first.parent == tmp_path / "talker" / "piper" and first.is_file()
    made = first.stat().st_mtime_ns
    assert aligned_voice(voice) == first and first.stat().st_mtime_ns == made  # made once
    reinstalled = tmp_path / "venv2" / voice.name  # the same voice in another environment: another mtime
    reinstalled.parent.mkdir()
    shutil.copy(voice, reinstalled)
    os.utime(reinstalled, ns=(made + 10**9, made + 10**9))
    assert aligned_voice(reinstalled) == first and first.stat().st_mtime_ns == made  # the same copy
    session = onnxruntime.InferenceSession(str(first), providers=["CPUExecutionProvider"])
    assert len(session.get_outputs()) == 2  # the audio and the alignment
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))  # no folder can be made there
    assert aligned_voice(voice) is None
    engine = make_tts(TtsConfig())
    engine.load()
    assert engine.synthesize("Hello there.").native_phones  # patched in memory instead


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_voices_take_their_graphs_as_they_are_spare_the_cores_and_still_speak_with_timings(language):
    """onnxruntime's graph optimizations cost 0.4 s of each Piper load and 0.3 s of Kokoro's for no
    faster speech, and its threads spun on cores the encoder could use (bench/voice_load.py): the
    loaded voices' sessions have neither."""
    import onnxruntime

    from talker_cli.config import TtsConfig
    from talker_cli.voices.kokoro_tts import installed as kokoro_installed
    from talker_cli.voices.tts import make_tts

    if language == "zh" and not kokoro_installed():
        pytest.skip("Kokoro is not installed")
    engine = make_tts(TtsConfig(), language)
    engine.load()
    session = engine.voice.session if language == "en" else engine.session
    options = session.get_session_options()
    assert options.graph_optimization_level == onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    speech = engine.synthesize("Hello there." if language == "en" else "你好。")
    assert len(speech.samples) > 0.3 * speech.sample_rate and speech.native_phones


def test_a_reply_to_a_recording_is_spoken_by_the_voice_and_the_face_follows_that_speech(tmp_path):
    """The fast twin of the whole reply render: the TTS stage runs for a recording with --reply, and
    the face moves to the synthesized speech, not to the recording."""
    import numpy as np

    from talker_cli.artifacts import Artifacts, Speech
    from talker_cli.config import TalkerConfig
    from talker_cli.jobs.stages import Job, TtsStage

    recording = Speech(np.zeros(16000, np.float32), 16000, "recording")
    job = Job(photo=None, output=tmp_path / "a", config=TalkerConfig(), audio=tmp_path / "r.wav", reply=True)
    assert TtsStage().applies(job)
    assert not TtsStage().applies(Job(photo=None, output=tmp_path / "b", config=TalkerConfig(), audio=tmp_path / "r.wav"))
    speech = Speech(np.zeros(22050, np.float32), 22050, "tts")
    artifacts = Artifacts(recording=recording, speech=speech)
    assert artifacts.voice is speech
