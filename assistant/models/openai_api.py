"""OpenAI's own API: the profile of a model behind ``OPENAI_API_KEY`` (and api.openai.com).

It honours strict ``json_schema`` structured output, its newer models refuse ``max_tokens`` (its
replacement is accepted by all of them), nothing is sent without a key, and tiktoken counts its
models exactly.
"""

from __future__ import annotations

from assistant.config import LLMConfig
from assistant.models.profile import ModelProfile


def profile(config: LLMConfig) -> ModelProfile:
    return ModelProfile(
        where="OpenAI",
        structured="json_schema",
        limit_param="max_completion_tokens",
        needs_key=True,
    )
