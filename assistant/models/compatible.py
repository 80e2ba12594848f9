"""Any other OpenAI-compatible server (Ollama, vLLM, llama.cpp server, LM Studio): its profile.

Nothing is known about its structured output, so the retrieval step asks in plain text and parses
``[T12]`` markers (``LAGMEM_STRUCTURED`` says otherwise). Its token counter is the server's own
tokenizer when it has one (llama.cpp's ``/tokenize``, llama-cpp-python's
``/extras/tokenize/count``; asked once, when the counter is built), else tiktoken's labelled
estimate.
"""

from __future__ import annotations

import logging

from assistant.config import LLMConfig
from assistant.models.model_tokens import CachedCounter, probe_server
from assistant.models.profile import ModelProfile
from assistant.models.tokens import counter_for
from memory.tokens import TokenCounter

log = logging.getLogger(__name__)


def server_counter(base_url: str | None, client) -> TokenCounter:
    """The server's own tokenizer (counts cached: each is an HTTP request), else tiktoken's
    estimate for ``client.model``."""
    server = probe_server(base_url, client.model or "") if base_url else None
    if server is not None:
        return CachedCounter(server)
    log.info("%s does not tokenize for %s: token counts are tiktoken's estimate", base_url, client.model)
    return counter_for(client)


def profile(config: LLMConfig) -> ModelProfile:
    return ModelProfile(
        where=config.base_url or "compatible server",
        counter=lambda client: server_counter(config.base_url, client),
    )
