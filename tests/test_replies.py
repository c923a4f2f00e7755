"""The reply models and their runtimes: which runtime runs which model, the multilingual model joined
from its parts, the llama.cpp runtime's chat and decoding, and real replies in English and Chinese."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from talker_cli.config import LlmConfig
from talker_cli.errors import ModelMissingError, StageError, UsageError
from talker_cli.llms import llm
from talker_cli.llms.models import QWEN_CODER_1_5B, SplitModel, joined, smollm2_gguf
from talker_cli.stamps import stamp_path

from .conftest import damage_keeping_times
from talker_cli.llms.llama_cpp_llm import CHATML, chat_template, penalized, render_chat, runtime_installed
from talker_cli.llms.chat import fit_prompt
from talker_cli.llms.llm import check_reply_language, choose_backend, make_llm, spoken_reply

needs_runtime = pytest.mark.skipif(not runtime_installed(), reason="ik-llama-cpp-python is not installed")
needs_multilingual = pytest.mark.skipif(not QWEN_CODER_1_5B.installed(),
                                        reason="the multilingual reply model is not installed")


def test_auto_runs_a_gguf_on_llama_cpp_on_the_cpu_and_everything_else_on_transformers(tmp_path, monkeypatch):
    monkeypatch.setattr("talker_cli.llms.llama_cpp_llm.runtime_installed", lambda: True)
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    assert choose_backend(LlmConfig(model=str(gguf))) == "llama-cpp"
    assert choose_backend(LlmConfig(model=str(gguf), device="cuda")) == "transformers"  # the GPU is transformers'
    assert choose_backend(LlmConfig(model=str(tmp_path))) == "transformers"  # a model folder
    assert choose_backend(LlmConfig(model=str(gguf), backend="transformers")) == "transformers"
    # SmolLM2's 4-bit weights end its answers before a word in llama.cpp's kernels
    assert choose_backend(LlmConfig(model=str(smollm2_gguf()))) == "transformers"
    monkeypatch.setattr("talker_cli.llms.llama_cpp_llm.runtime_installed", lambda: False)
    assert choose_backend(LlmConfig(model=str(gguf))) == "transformers"


def test_the_llama_cpp_backend_is_refused_on_a_gpu():
    from talker_cli.config import load_config

    with pytest.raises(UsageError, match="llama-cpp backend runs on the CPU"):
        load_config("cpu", {"llm": {"backend": "llama-cpp", "device": "cuda"}})


def test_without_the_multilingual_model_a_chinese_reply_is_refused_naming_the_fix(monkeypatch):
    monkeypatch.setattr(llm, "multilingual_default", lambda: False)
    with pytest.raises(UsageError, match=r"talker\[multilingual\]"):
        check_reply_language(LlmConfig(), "zh")
    check_reply_language(LlmConfig(), "en")
    check_reply_language(LlmConfig(model="/models/qwen"), "zh")  # the user's model is trusted to speak it
    monkeypatch.setattr(llm, "multilingual_default", lambda: True)
    check_reply_language(LlmConfig(), "zh")


def split_model(tmp_path: Path, monkeypatch, data: bytes, parts: int = 3, sha256: str | None = None) -> SplitModel:
    """Packages fakepartN/data/partNN.bin holding data in `parts` pieces, and talker's cache under tmp_path."""
    size = -(-len(data) // parts)
    for n in range(1, parts + 1):
        folder = tmp_path / "site" / f"fakepart{n}" / "data"
        folder.mkdir(parents=True)
        (folder.parent / "__init__.py").write_text("")
        (folder / f"part{n:02d}.bin").write_bytes(data[(n - 1) * size:n * size])
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return SplitModel("model.gguf", "fakepart", parts, len(data), sha256 or hashlib.sha256(data).hexdigest())


def test_the_parts_are_joined_in_order_once(tmp_path, monkeypatch):
    data = bytes(range(256)) * 1000
    model = split_model(tmp_path, monkeypatch, data)
    path = joined(model)
    assert path.read_bytes() == data and path.parent == tmp_path / "cache" / "talker" / "llm"
    mtime = path.stat().st_mtime_ns
    assert joined(model) == path and path.stat().st_mtime_ns == mtime  # made once
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, stamp_path(path).name])  # no temporary file


@pytest.mark.parametrize("offset", [0, 100_000])  # the GGUF magic, or 16 bytes in the middle
def test_a_joined_model_damaged_since_is_joined_again_before_use(tmp_path, monkeypatch, offset):
    data = bytes(range(256)) * 1000
    model = split_model(tmp_path, monkeypatch, data)
    path = joined(model)
    damage_keeping_times(path, offset, b"!" * 16)
    assert path.stat().st_size == model.size
    assert joined(model) == path and path.read_bytes() == data


def test_a_joined_model_without_its_stamp_is_hashed_once_and_kept(tmp_path, monkeypatch):
    data = bytes(range(256)) * 1000
    model = split_model(tmp_path, monkeypatch, data)
    path = joined(model)
    stamp_path(path).unlink()
    inode = path.stat().st_ino
    assert joined(model) == path and path.stat().st_ino == inode  # its hash matched: not joined again
    assert stamp_path(path).is_file()


def test_a_damaged_joined_model_whose_parts_are_gone_is_refused_naming_the_fix(tmp_path, monkeypatch):
    data = bytes(range(256)) * 1000
    model = split_model(tmp_path, monkeypatch, data)
    path = joined(model)
    damage_keeping_times(path, 0, b"\0" * 4)
    gone = SplitModel(model.file_name, "nopackage", model.parts, model.size, model.sha256)
    monkeypatch.setattr(SplitModel, "joined_path", property(lambda self: path))
    with pytest.raises(ModelMissingError, match=rf"{path} does not match.*talker\[multilingual\]") as refused:
        joined(gone)
    assert refused.value.exit_code == 4


def test_a_reply_model_cache_that_is_a_file_is_one_line_naming_the_folder(tmp_path, monkeypatch):
    model = split_model(tmp_path, monkeypatch, b"x" * 10_000)
    folder = tmp_path / "cache" / "talker" / "llm"
    folder.parent.mkdir(parents=True)
    folder.write_text("not a folder")
    with pytest.raises(ModelMissingError, match=rf"cannot be joined in {folder} \(it is not a folder\).*XDG_CACHE_HOME"):
        joined(model)
    assert folder.read_text() == "not a folder"


def test_a_reply_model_cache_of_another_user_is_refused(tmp_path, monkeypatch):
    import os

    model = split_model(tmp_path, monkeypatch, b"x" * 10_000)
    folder = tmp_path / "cache" / "talker" / "llm"
    folder.mkdir(parents=True)
    monkeypatch.setattr(os, "getuid", lambda: 4242)  # the folder is root's, or the test user's: not 4242's
    with pytest.raises(ModelMissingError, match="another user's"):
        joined(model)
    assert not any(folder.iterdir())


def test_a_full_disk_while_joining_names_the_folder_with_exit_5(tmp_path, monkeypatch):
    import errno

    from talker_cli.errors import ResourceError
    from talker_cli.llms import models

    model = split_model(tmp_path, monkeypatch, b"x" * 10_000)

    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(models, "_join", full)
    with pytest.raises(ResourceError, match=str(tmp_path / "cache" / "talker" / "llm")) as refused:
        joined(model)
    assert refused.value.exit_code == 5


def test_parts_that_do_not_match_the_pinned_hash_are_refused_and_nothing_is_left(tmp_path, monkeypatch):
    model = split_model(tmp_path, monkeypatch, b"x" * 10_000, sha256="0" * 64)
    with pytest.raises(ModelMissingError, match="do not match its SHA-256"):
        joined(model)
    assert not any((tmp_path / "cache" / "talker" / "llm").iterdir())


def test_a_missing_part_is_an_error_naming_the_extra(tmp_path, monkeypatch):
    model = split_model(tmp_path, monkeypatch, b"x" * 10_000)
    missing = SplitModel(model.file_name, model.package_prefix, 4, model.size, model.sha256)
    assert not missing.installed()
    with pytest.raises(ModelMissingError, match=r"part 4 of 4 missing.*talker\[multilingual\]"):
        joined(missing)


def test_the_repetition_penalty_is_the_one_transformers_applies():
    import torch
    from transformers import RepetitionPenaltyLogitsProcessor

    rng = np.random.default_rng(0)
    logits = rng.normal(0, 5, 50).astype(np.float32)
    seen = np.array([3, 7, 7, 11, 40])
    expected = RepetitionPenaltyLogitsProcessor(1.15)(torch.tensor(seen)[None], torch.tensor(logits)[None])[0].numpy()
    assert np.allclose(penalized(logits, np.unique(seen), 1.15), expected)
    assert penalized(logits, seen, 1.0) is logits


def test_the_chat_is_the_model_s_own_template_rendered_in_a_sandbox():
    template = chat_template(smollm2_gguf())  # read from the GGUF header
    chat = render_chat(template, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"}])
    assert chat == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi?<|im_end|>\n<|im_start|>assistant\n"
    assert render_chat(CHATML, [{"role": "user", "content": "Hi?"}]).endswith("<|im_start|>assistant\n")
    with pytest.raises(StageError, match="chat template"):  # a model file's template is not trusted code
        render_chat("{{ ''.__class__.__mro__[1].__subclasses__() }}", [])


def test_a_long_prompt_drops_its_oldest_sentences_first_whatever_counts_the_tokens():
    config = LlmConfig(context_tokens=40, max_new_tokens=10)
    kept = fit_prompt("One is here. Two is here. Three is here. Four?", len, config)
    assert kept.text == "Three is here. Four?"  # within 30 characters, the newest sentences
    assert (kept.sentences, kept.dropped, kept.tokens) == (4, 2, len(kept.text))
    with pytest.raises(Exception, match="the last sentence alone"):
        fit_prompt("x" * 31, len, config)


@pytest.mark.slow
@needs_runtime
@needs_multilingual
def test_the_multilingual_model_answers_in_english_and_in_chinese_deterministically():
    engine = make_llm(LlmConfig())
    assert engine.name == "llama-cpp"
    engine.load()
    try:
        english = engine.reply("What is the capital of France?")
        chinese = engine.reply("天空为什么是蓝色的？", "zh")
        again = engine.reply("天空为什么是蓝色的？", "zh")
    finally:
        engine.unload()
    assert "Paris" in english
    assert chinese == again
    assert "散射" in chinese  # scattering: the answer, in Chinese characters
    assert spoken_reply(chinese, "zh").text


def test_before_it_is_joined_a_split_model_s_header_is_read_from_its_first_part(tmp_path, monkeypatch):
    from talker_cli.llms import models

    data = b"GGUF" + bytes(5000)
    model = split_model(tmp_path, monkeypatch, data)
    monkeypatch.setattr(models, "QWEN_CODER_1_5B", model)
    first = tmp_path / "site" / "fakepart1" / "data" / "part01.bin"
    assert models.header_file(model.joined_path) == first
    assert models.model_file(model.joined_path).read_bytes() == data  # joined when loaded
    assert models.header_file(model.joined_path) == model.joined_path
    other = tmp_path / "mine.gguf"
    assert models.header_file(other) == models.model_file(other) == other


@needs_multilingual
def test_the_multilingual_model_is_planned_from_its_gguf_header_on_a_gpu():
    from talker_cli.config import load_config
    from talker_cli.gpu.model_specs import spec_from_gguf
    from talker_cli.gpu.preflight import default_spec

    config = load_config("cpu", {"llm": {"device": "cuda", "dtype": "bfloat16"}})
    spec = default_spec("llm", config)
    from dataclasses import replace

    assert replace(spec, name="") == replace(spec_from_gguf(QWEN_CODER_1_5B.part_paths()[0], "bfloat16"), name="")
    assert 1.5e9 < spec.param_count < 1.9e9 and spec.dtype_bytes == 2  # Qwen2.5 1.5B, dequantized to bf16
    assert default_spec("llm", load_config("cpu", {})) is None  # llama.cpp on the CPU holds no VRAM
