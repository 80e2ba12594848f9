"""Application settings from the environment (one place; storage.db holds the database ones)."""

from __future__ import annotations

import os

DEFAULT_LOCAL_MODEL = "SmolLM2-135M-Instruct"


def env(name: str, default: str | None = None) -> str | None:
    """An environment variable, with an empty string treated as unset."""
    value = os.environ.get(name, "").strip()
    return value or default


def model_name() -> str:
    """The model that answers: LAGMEM_MODEL, else the OpenAI default when a key/URL is set, else local."""
    explicit = env("LAGMEM_MODEL")
    if explicit:
        return explicit
    if env("OPENAI_API_KEY") or env("OPENAI_BASE_URL"):
        return "gpt-4o-mini"
    return DEFAULT_LOCAL_MODEL
