"""Coqui TTS backend on a tiny random-init VITS saved the way Coqui's downloads are laid out."""

import json
from dataclasses import replace
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("TTS", reason="coqui-tts is not installed (pip install 'talker[coqui]')")

from talker_cli.cli import app  # noqa: E402
from talker_cli.voices.coqui_tts import (MAX_SEGMENT_CHARS, checkpoint_in, resolve_model_folder, speaker_table,  # noqa: E402
                                  split_segments)
from talker_cli.artifacts import Script  # noqa: E402
from talker_cli.config import TalkerConfig, TtsConfig  # noqa: E402
from talker_cli.jobs.stages import Job  # noqa: E402
from talker_cli.errors import ModelMissingError, UsageError  # noqa: E402
from talker_cli.gpu.model_specs import spec_from_coqui_folder  # noqa: E402
from talker_cli.gpu.preflight import JobSize, plan_job, text_size  # noqa: E402
from talker_cli.voices.tts import make_tts  # noqa: E402
from talker_cli.gpu.vram_plan import Workload, plan_stage  # noqa: E402

from .conftest import still_preset  # noqa: E402
from .model_builders import TINY_VITS, save_coqui_vits  # noqa: E402

runner = CliRunner()
TWO_SENTENCES = "Hello there, my friend. This is the second sentence!"


@pytest.fixture(scope="module")
def vits_folder(tmp_path_factory):
    return save_coqui_vits(tmp_path_factory.mktemp("coqui") / "vits", speakers=["alice", "bob"], **TINY_VITS)


@pytest.fixture(scope="module")
def engine(vits_folder):
    engine = make_tts(TtsConfig(backend="coqui", voice=str(vits_folder), speaker_name="bob"))
    engine.load()
    yield engine
    engine.unload()


def test_speech_has_native_phone_timings_that_cover_it(engine):
    speech = engine.synthesize(TWO_SENTENCES)
    assert speech.samples.dtype == np.float32 and np.abs(speech.samples).max() <= 1.0
    assert speech.sample_rate == 22050 and speech.origin == "tts"
    phones = speech.native_phones
    assert phones[0].start_s == pytest.approx(engine.config.lead_silence_s)
    assert all(abs(a.end_s - b.start_s) < 1e-6 for a, b in zip(phones, phones[1:]))  # contiguous
    spoken_end = speech.duration_s - engine.config.tail_silence_s
    assert phones[-1].end_s == pytest.approx(spoken_end, abs=0.02)
    assert {"HH", "EH", "L", "OW"} <= {p.label for p in phones}  # "hello" read through espeak-ng
    assert len(speech.native_words) == len(TWO_SENTENCES.split())


def test_each_inference_sees_one_segment_so_memory_does_not_grow_with_the_text(engine):
    seen = []
    inference = engine.model.inference

    def recording(x, aux_input=None):
        seen.append(x.shape[1])
        return inference(x, aux_input=aux_input)

    engine.model.inference = recording
    try:
        long_text = " ".join(["This sentence is one of many in a long text, read one at a time."] * 6)
        engine.synthesize(long_text + " " + "word, " * 120 + "end.")
    finally:
        engine.model.inference = inference
    assert len(seen) == 9  # six sentences, and the 724-character one cut in three
    longest_tokens = 2 * 3 * MAX_SEGMENT_CHARS  # blanks double the tokens; phonemes outnumber letters
    assert max(seen) < longest_tokens


def test_segments_break_at_sentences_then_commas():
    assert split_segments("One here. Two there! Three?") == ["One here.", "Two there!", "Three?"]
    long = ", ".join(["a clause of several words"] * 30) + "."
    parts = split_segments(long)
    assert all(len(p) <= MAX_SEGMENT_CHARS for p in parts) and len(parts) == 3
    assert all(p.endswith(",") for p in parts[:-1])  # cut after a comma, not inside a word
    assert " ".join(parts) == long
    assert split_segments("... !!") == []


def test_speakers_are_chosen_by_name_or_number(vits_folder, engine):
    import torch

    def say(**speaker):
        other = make_tts(TtsConfig(backend="coqui", voice=str(vits_folder), **speaker))
        other.load()
        torch.manual_seed(1)  # VITS samples noise: the same seed, so only the speaker differs
        return other.synthesize("Hello.").samples

    assert np.array_equal(say(speaker=1), say(speaker_name="bob"))
    assert not np.array_equal(say(speaker=0), say(speaker=1))
    with pytest.raises(UsageError, match="speaker 'carol' is not in .* it has: alice, bob"):
        make_tts(TtsConfig(backend="coqui", voice=str(vits_folder), speaker_name="carol")).load()


def test_speakers_are_read_from_the_speakers_file_without_the_model(vits_folder, tmp_path):
    assert speaker_table(vits_folder) == {"alice": 0, "bob": 1}
    # d-vector models list clips with their speaker's name: one id per name, in name order
    (tmp_path / "speakers.json").write_text(json.dumps({
        "c1.wav": {"name": "zoe", "embedding": [0.1]}, "c2.wav": {"name": "adam", "embedding": [0.2]},
        "c3.wav": {"name": "zoe", "embedding": [0.3]}}))
    assert speaker_table(tmp_path) == {"adam": 0, "zoe": 1}
    assert speaker_table(tmp_path / "nowhere") is None


@pytest.mark.parametrize("speaker, message", [({"speaker_name": "carol"}, "speaker 'carol' is not in .* it has: alice, bob"),
                                              ({"speaker": 7}, "speaker 7 is not in .* it has ids 0..1")])
def test_an_unknown_speaker_is_refused_before_any_stage_runs(vits_folder, face_photo, tmp_path, monkeypatch,
                                                            speaker, message):
    import TTS.tts.models

    from talker_cli.jobs.pipeline import run_job
    from talker_cli.jobs.stages import PreflightStage

    from .test_pipeline import Recorder

    events = []
    monkeypatch.setattr(TTS.tts.models, "setup_model", lambda *a: pytest.fail("the model was built"))
    job = Job(photo=face_photo, output=tmp_path / "out.mp4", text="Hello.",
              config=TalkerConfig(tts=TtsConfig(backend="coqui", voice=str(vits_folder), **speaker)))
    with pytest.raises(UsageError, match=message):
        run_job(job, [PreflightStage(), Recorder("photo", events)])
    assert events == [] and not (tmp_path / "out.mp4").exists()


def test_missing_model_names_the_path_and_the_flag(tmp_path, monkeypatch):
    with pytest.raises(ModelMissingError, match=f"not found at {tmp_path}/none .*--tts-model DIR"):
        make_tts(TtsConfig(backend="coqui", voice=str(tmp_path / "none"))).load()
    monkeypatch.setenv("TTS_HOME", str(tmp_path))
    folder = resolve_model_folder("tts_models/en/vctk/vits")
    assert folder == tmp_path / "tts" / "tts_models--en--vctk--vits"  # where Coqui keeps its downloads
    with pytest.raises(ModelMissingError, match="needs a model: pass --tts-model"):
        resolve_model_folder("")


def test_a_missing_or_broken_coqui_install_says_how_to_install(vits_folder, monkeypatch):
    monkeypatch.setitem(sys.modules, "TTS.config", None)  # import fails as when the package is absent
    with pytest.raises(ModelMissingError, match=r"coqui-tts cannot be loaded .*pip install 'talker\[coqui\]'"):
        make_tts(TtsConfig(backend="coqui", voice=str(vits_folder))).load()


def test_vram_plan_counts_the_checkpoint_and_grows_with_the_segment(vits_folder, engine):
    spec = spec_from_coqui_folder(vits_folder, checkpoint_in(vits_folder))
    assert spec.kind == "vits" and spec.dtype_bytes == 4
    assert spec.param_count == sum(p.numel() for p in engine.model.parameters())
    short, long = (plan_stage(spec, Workload(speech_s=s), "tts", "cuda:0") for s in (5, 30))
    assert short.weights_bytes == long.weights_bytes
    fixed = plan_stage(spec, Workload(speech_s=0), "tts", "cuda:0").activation_bytes  # what any segment costs
    assert long.activation_bytes - fixed == pytest.approx(6 * (short.activation_bytes - fixed), rel=0.01)
    config = TalkerConfig(tts=TtsConfig(backend="coqui", voice=str(vits_folder), device="cuda"))
    a_word, a_book = (plan_job(config, JobSize(text_chars=n))[0] for n in (10, 100_000))
    # Speech is made a segment at a time: a book plans no more than one long segment.
    assert a_word.peak_bytes < a_book.peak_bytes == plan_job(config, JobSize(text_chars=MAX_SEGMENT_CHARS))[0].peak_bytes
    # Many short sentences plan their longest sentence, not the longest segment there could be.
    chatty = text_size("This sentence is one of several, each said on its own. " * 12, False, config)
    assert chatty.longest_segment_chars == 54 and chatty.text_chars == 660
    assert plan_job(config, chatty)[0].peak_bytes == plan_job(config, JobSize(text_chars=54))[0].peak_bytes
    assert text_size("Hi. " * 200, True, config).longest_segment_chars == 0  # the reply is what is spoken
    slow = replace(config, tts=replace(config.tts, length_scale=1.5))  # 1.5 times the frames per character
    assert plan_job(slow, chatty)[0].detail == "8 s of speech in one piece" != plan_job(config, chatty)[0].detail


@pytest.mark.slow
def test_render_with_coqui_through_the_cli(vits_folder, face_photo, tmp_path):
    preset = still_preset(tmp_path, max_side=384)
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", TWO_SENTENCES, "--preset", str(preset),
                                 "--tts-backend", "coqui", "--tts-model", str(vits_folder), "--speaker", "alice",
                                 "-o", str(tmp_path / "out.mp4"), "--json"])
    assert result.exit_code == 0, result.stderr
    stages = {s["name"]: s for s in json.loads(result.stdout)["stages"]}
    assert stages["tts"]["backend"] == "coqui" and stages["tts"]["model"] == str(vits_folder)
    assert stages["alignment"]["backend"] == "native"
    assert (tmp_path / "out.mp4").stat().st_size > 0


def test_a_character_voice_goes_to_pocketsphinx_which_refuses_speech_that_is_not_the_text(tmp_path):
    from talker_cli.aligners.alignment import PocketsphinxAligner, make_aligner
    from talker_cli.config import AlignmentConfig
    from talker_cli.errors import InputError
    from talker_cli.jobs.stages import AlignmentStage

    folder = save_coqui_vits(tmp_path / "chars", phonemes=False, **TINY_VITS)
    engine = make_tts(TtsConfig(backend="coqui", voice=str(folder)))
    engine.load()
    speech = engine.synthesize("Hello there.")
    assert engine.speaker_id is None and speech.native_phones is None
    assert isinstance(make_aligner(AlignmentConfig(), speech), PocketsphinxAligner)
    # Random weights babble: forced alignment finds no path, nothing like speech is heard in it
    # either, and that is said in one line (exit 3).
    job = Job(photo=tmp_path / "p.png", output=tmp_path / "o.mp4", config=TalkerConfig(), text="Hello there.")
    job.artifacts.speech, job.artifacts.script = speech, Script("Hello there.", "text")
    stage = AlignmentStage()
    stage.load(job)
    with pytest.raises(InputError, match="no speech was found in the synthesized speech"):
        stage.run(job)


def test_models_lists_coqui_folders_with_their_vram(vits_folder, monkeypatch):
    monkeypatch.setenv("TTS_HOME", str(vits_folder.parent.parent))
    target = vits_folder.parent.parent / "tts" / "tts_models--en--tiny--vits"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(vits_folder)
    result = runner.invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.stderr
    coqui = next(b for b in json.loads(result.stdout) if b["backend"] == "coqui")
    assert coqui["installed"] and coqui["found"][0]["path"] == str(target)
    assert 0 < coqui["found"][0]["vram_bytes"] < 2**30


def test_a_coqui_voice_declares_its_languages_and_refuses_another(vits_folder, tmp_path):
    """A Coqui voice speaks the language its config names (its phonemizer's, its datasets'), or its
    model name's: a text or a job in another is refused (exit 2) naming the voice and the way out."""
    import json

    from talker_cli.config import TtsConfig
    from talker_cli.errors import UsageError
    from talker_cli.voices.tts import make_tts

    english = make_tts(TtsConfig(backend="coqui", voice=str(vits_folder)))
    assert english.languages() == ["en"]  # phoneme_language en-us
    english.check_language("Hello there.", "en")
    with pytest.raises(UsageError, match=r"Han \(Chinese characters\) script.*\(en\).*espeak-ng"):
        english.check_language("你好，世界。", "zh")
    with pytest.raises(UsageError, match="job's language is es"):
        english.check_language("Hola, amigo.", "es")
    spanish = tmp_path / "tts_models--es--css10--vits"
    spanish.mkdir()
    config = json.loads((vits_folder / "config.json").read_text())
    config.update(phoneme_language="es", datasets=[{"language": ""}])  # its phonemizer says it
    (spanish / "config.json").write_text(json.dumps(config))
    voice = make_tts(TtsConfig(backend="coqui", voice=str(spanish)))
    assert voice.languages() == ["es"]
    voice.check_language("Hola, amigo.", "es")
    with pytest.raises(UsageError, match="job's language is en"):
        voice.check_language("Hello there.", "en")
