"""The transformers runtime: a Hugging Face model folder, or a GGUF file dequantized on load (tens of
seconds), saved once under the user cache so later runs load that; on the CPU or a CUDA device,
quantized there by bitsandbytes when asked."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from ..config import LlmConfig
from ..errors import ModelMissingError, UsageError
from ..offline import cache_root
from ..stamps import sha256_of, stamp, verified
from ..jobs.progress import Meter, no_meter
from .chat import FittedPrompt, fit_prompt, system_prompt
from .models import model_file, resolve_llm_path, split_parts_of

log = logging.getLogger("talker")


def _dequantized_dir(gguf: Path) -> Path:
    stat = gguf.stat()
    return cache_root() / "llm" / f"{gguf.stem}-{stat.st_size}"


class _Counted:
    """A generate() streamer that only counts: its first put() is the prompt, read; each later one a
    token written."""

    def __init__(self, prompt_read, written):
        self.prompt_read, self.written, self.count = prompt_read, written, -1

    def put(self, value) -> None:
        self.count += 1
        if self.count:
            self.written(self.count)
        else:
            self.prompt_read()

    def end(self) -> None:
        pass


def _weights_whole(folder: Path) -> bool:
    """A dequantized model saved here, its weights as they were saved (stamps.py)."""
    weights = list(folder.glob("*.safetensors")) if (folder / "config.json").is_file() else []
    return bool(weights) and all(verified(w) for w in weights)


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
        split = split_parts_of(path)
        if split:
            split.part_paths()  # joined when loaded
            return
        if path.is_dir() and not (path / "config.json").is_file():
            raise ModelMissingError(f"no config.json in LLM folder {path}; pass --llm-model DIR of a transformers model")
        if not path.is_dir() and not (path.suffix == ".gguf" and path.is_file()):
            raise ModelMissingError(f"LLM not found at {path}; pass --llm-model DIR (transformers folder) or FILE.gguf")

    def load(self) -> None:
        self.locate()
        path = model_file(Path(self.model_path))
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
        if _weights_whole(cached):
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
            for weights in partial.glob("*.safetensors"):
                stamp(weights, sha256_of(weights))
            if cached.exists():  # damaged since it was saved
                shutil.rmtree(cached)
            partial.rename(cached)
        except OSError:
            pass
        return tokenizer, model.to(self._dtype())

    def _encode(self, text: str, language: str):
        messages = [{"role": "system", "content": system_prompt(self.config, language)},
                    {"role": "user", "content": text}]
        return self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                                  return_dict=True)

    def fit(self, prompt: str, language: str = "en") -> FittedPrompt:
        """The prompt cut to llm.context_tokens with room for the reply (fit_prompt)."""
        return fit_prompt(prompt, lambda t: self._encode(t, language)["input_ids"].shape[1], self.config)

    def fit_context(self, prompt: str, language: str = "en"):
        """The chat's inputs, the prompt cut to fit (fit)."""
        return self._encode(self.fit(prompt, language).text, language)

    def reply(self, prompt: str, language: str = "en", meter: Meter = no_meter) -> str:
        """The model's answer, asked for in the job's language."""
        import torch

        inputs = self.fit_context(prompt, language)
        inputs = {k: v.to(self.model.device) for k, v in inputs.items()}
        prompt_tokens = int(inputs["input_ids"].shape[1])
        meter("read prompt", 0, prompt_tokens, "tokens")
        written = _Counted(lambda: meter("read prompt", prompt_tokens, prompt_tokens, "tokens"),
                           lambda n: meter("write reply", n, self.config.max_new_tokens, "tokens at most"))
        with torch.inference_mode():
            output = self.model.generate(
                **inputs, max_new_tokens=self.config.max_new_tokens, do_sample=False,
                repetition_penalty=self.config.repetition_penalty,
                pad_token_id=self.tokenizer.eos_token_id, streamer=written,
            )
        new_tokens = output[0, inputs["input_ids"].shape[1]:]
        meter("write reply", len(new_tokens), len(new_tokens), "tokens")
        return self.tokenizer.decode(new_tokens, skip_special_tokens=True).strip()

    def unload(self) -> None:
        self.model = None
        self.tokenizer = None
