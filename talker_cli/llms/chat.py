"""The chat a reply model is asked: the system prompt in the job's language, and the prompt cut to the
model's context."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..config import LlmConfig
from ..errors import InputError

log = logging.getLogger("talker")


def system_prompt(config: LlmConfig, language: str) -> str:
    """The configured prompt, asking for the job's language when it is not English."""
    from ..language import language_name

    extra = f" Answer in {language_name(language)}." if language != "en" else ""
    return config.system_prompt + extra


@dataclass(frozen=True)
class FittedPrompt:
    """The prompt as the model reads it, and what was cut to fit its context (the manifest says it)."""
    text: str
    tokens: int  # of the whole chat, the system prompt included
    sentences: int  # in the prompt as written
    dropped: int  # the oldest of them, cut


def fit_prompt(prompt: str, tokens_of: Callable[[str], int], config: LlmConfig) -> FittedPrompt:
    """The prompt cut so that the whole chat (tokens_of counts it) leaves room for the reply within
    llm.context_tokens: the oldest sentences (the earliest turns of what was said) drop first; the
    system prompt and the last sentence stay."""
    # Sentences, each with the space before it: joined again, they are the prompt as written
    turns = [t for t in re.split(r"(?<=[.!?])(?=\s)|(?<=[。！？])", prompt.strip()) if t.strip()] or [prompt]
    total = len(turns)
    budget = config.context_tokens - config.max_new_tokens
    while True:
        text = "".join(turns).strip()
        count = tokens_of(text)
        if count <= budget:
            if len(turns) < total:
                log.warning("the LLM prompt was over %d tokens: its oldest %d of %d sentences were dropped",
                            config.context_tokens, total - len(turns), total)
            return FittedPrompt(text, count, total, total - len(turns))
        if len(turns) == 1:
            raise InputError(
                f"the last sentence alone is {count} tokens with the system prompt, over "
                f"llm.context_tokens={config.context_tokens} minus {config.max_new_tokens} for the reply; "
                "shorten it or raise the limit"
            )
        turns = turns[max(1, len(turns) // 4):]  # drop the oldest quarter, at least one
