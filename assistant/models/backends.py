"""Which answering models lagmem knows: one line per backend, each declaring its profile in its own
module. A new backend is a module with ``profile(config) -> ModelProfile`` and a line here (and its
name among ``assistant.config.BACKENDS``, where the configuration chooses it)."""

from __future__ import annotations

import functools
from collections.abc import Callable

from assistant.config import LLMConfig
from assistant.models import compatible, embedded, openai_api
from assistant.models.profile import ModelProfile

PROFILES: dict[str, Callable[[LLMConfig], ModelProfile]] = {
    "local": embedded.profile,
    "openai": openai_api.profile,
    "compatible": compatible.profile,
}


@functools.lru_cache(maxsize=32)
def profile_for(config: LLMConfig) -> ModelProfile:
    """The profile of the model ``config`` names (built once per configuration)."""
    return PROFILES[config.backend](config)
