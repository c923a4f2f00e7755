"""The llama.cpp runtime (ik_llama.cpp, from the ik-llama-cpp-python wheel): a GGUF file run as it is
quantized, on the CPU. The multilingual default loads in under a second and writes about 25 tokens a
second on 2 cores, where transformers took a minute to dequantize it and wrote 2.5 (bench/replies.py).

The wheel's own chat helper forces one model family's template and its sampler loops over the
vocabulary in Python: the chat is built here from the model's own template (read from the GGUF
header, rendered in a sandbox: a model file is not trusted code), and greedy decoding is an argmax
over the logits.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np

from ..config import LlmConfig
from ..errors import ModelMissingError, StageError, UsageError
from .models import model_file, split_parts_of
from ..jobs.progress import Meter, no_meter
from .chat import FittedPrompt, fit_prompt, system_prompt
from .models import resolve_llm_path

RUNTIME_FIX = "pip install ik-llama-cpp-python==0.1.5"
# For a GGUF file with no template of its own: ChatML, which Qwen and SmolLM2 use.
CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def runtime_installed() -> bool:
    return importlib.util.find_spec("ik_llama_cpp") is not None


def chat_template(path: Path) -> str:
    from ..gpu.model_specs import read_gguf_header

    meta, _ = read_gguf_header(path)
    template = meta.get("tokenizer.chat_template")
    return template if isinstance(template, str) and template.strip() else CHATML


def render_chat(template: str, messages: list[dict], **variables) -> str:
    from jinja2 import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    try:
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        return env.from_string(template).render(messages=messages, add_generation_prompt=True, **variables)
    except TemplateError as e:
        raise StageError(f"the LLM's chat template could not be used ({e}); pass another --llm-model") from None


def penalized(logits: np.ndarray, seen: np.ndarray, penalty: float) -> np.ndarray:
    """The repetition penalty as transformers applies it: every token already in the chat has its
    logit divided by the penalty when positive, multiplied when negative."""
    if penalty == 1.0 or not len(seen):
        return logits
    out = logits.copy()
    values = out[seen]
    out[seen] = np.where(values > 0, values / penalty, values * penalty)
    return out


class LlamaCppLlm:
    name = "llama-cpp"

    def __init__(self, config: LlmConfig):
        if config.device.startswith("cuda"):
            raise UsageError("the llama-cpp LLM backend runs on the CPU only; set llm.device = \"cpu\" or "
                             "llm.backend = \"transformers\"")
        self.config = config
        self.model_path = str(resolve_llm_path(config.model))
        self.model = None
        self.context = None
        self.template = CHATML

    def locate(self) -> None:
        if not runtime_installed():
            raise ModelMissingError(f"the llama-cpp LLM backend needs ik-llama-cpp-python; run: {RUNTIME_FIX}")
        path = Path(self.model_path)
        split = split_parts_of(path)
        if split:
            split.part_paths()  # joined when loaded
            return
        if not (path.suffix == ".gguf" and path.is_file()):
            raise ModelMissingError(f"no GGUF file at {path}; the llama-cpp LLM backend runs FILE.gguf "
                                    "(pass --llm-model FILE.gguf, or llm.backend = \"transformers\" for a folder)")

    def load(self) -> None:
        self.locate()
        from ik_llama_cpp._internals import IkContext, IkModel

        from ..photo import quiet_native_logs

        path = model_file(Path(self.model_path))
        self.template = chat_template(path)
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        with quiet_native_logs():  # llama.cpp logs every tensor it loads to file descriptor 2
            try:
                self.model = IkModel(str(path))
                # flash attention off: without AVX-VNNI ik_llama.cpp's asserts on longer prompts
                self.context = IkContext(self.model, n_ctx=self.config.context_tokens, n_threads=threads,
                                         flash_attn=False)
            except RuntimeError as e:
                raise ModelMissingError(f"llama.cpp could not load {path} ({e}); pass another --llm-model") from None

    def _tokens(self, text: str, language: str) -> list[int]:
        messages = [{"role": "system", "content": system_prompt(self.config, language)},
                    {"role": "user", "content": text}]
        return self.model.tokenize(render_chat(self.template, messages), add_bos=False, special=True)

    def fit(self, prompt: str, language: str = "en") -> FittedPrompt:
        """The prompt cut to llm.context_tokens with room for the reply (fit_prompt)."""
        return fit_prompt(prompt, lambda t: len(self._tokens(t, language)), self.config)

    def reply(self, prompt: str, language: str = "en", meter: Meter = no_meter) -> str:
        from ik_llama_cpp import _ctypes_api as C
        from ik_llama_cpp._internals import make_batch_range, make_batch_single

        tokens = self._tokens(self.fit(prompt, language).text, language)
        context = self.context
        context.kv_cache_clear()
        step = context._n_ubatch
        for start in range(0, len(tokens), step):  # the prompt in batches the context takes
            batch = make_batch_range(tokens[start:start + step], pos_start=start,
                                     logits_last=start + step >= len(tokens))
            failed = context.decode(batch)
            C.llama_batch_free(batch)
            if failed:
                raise StageError(f"llama.cpp could not read the prompt (code {failed})")
            meter("read prompt", min(start + step, len(tokens)), len(tokens), "tokens")
        seen, answer = np.array(tokens, dtype=np.int64), []
        for position in range(len(tokens), len(tokens) + self.config.max_new_tokens):
            meter("write reply", len(answer), self.config.max_new_tokens, "tokens at most")
            logits = np.ctypeslib.as_array(context.get_logits(-1), shape=(self.model.n_vocab,))
            token = int(np.argmax(penalized(logits, np.unique(seen), self.config.repetition_penalty)))
            if C.llama_token_is_eog(self.model.model, token):
                break
            answer.append(token)
            seen = np.append(seen, token)
            batch = make_batch_single(token, position)
            failed = context.decode(batch)
            C.llama_batch_free(batch)
            if failed:
                break
        meter("write reply", len(answer), len(answer), "tokens")
        return self._text_of(answer).strip()

    def _text_of(self, tokens: list[int]) -> str:
        """The tokens' bytes joined before decoding: a Chinese character may span two tokens."""
        import ctypes

        from ik_llama_cpp import _ctypes_api as C

        buffer, pieces = ctypes.create_string_buffer(256), []
        for token in tokens:
            n = C.llama_token_to_piece(self.model.model, token, buffer, 256, 0, False)
            pieces.append(buffer.raw[:max(n, 0)])
        return b"".join(pieces).decode("utf-8", errors="replace")

    def unload(self) -> None:
        if self.context is not None:
            self.context.close()
        if self.model is not None:
            self.model.close()
        self.model = self.context = None
