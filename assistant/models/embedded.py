"""The embedded model's profile: SmolLM2-135M-Instruct, run by lagmem itself when no other model is
configured (the server: ``assistant.models.local_model``), and its token counter.

A 135M model is tiny, so its profile keeps it on a short leash: it answers a question from the
cited turns only, checked against them (``grounded``); the calibrated ranker cites without asking
it; the memory and the prompt are small, because it reads prompts slowly on a CPU.

Its token counter is the GGUF file's own tokenizer, loaded vocab-only in this process (a few MB,
under a second; no server is started), so a turn costs the same whether the app stores it or
``lagmem import`` does, and counting never waits for the model server.
"""

from __future__ import annotations

import functools
import logging
import threading
from pathlib import Path

from assistant.config import LOCAL_MODEL_ALIAS, LLMConfig
from assistant.errors import LLMError
from assistant.models import local_model
from assistant.models.profile import ModelProfile

log = logging.getLogger(__name__)

# New and imported conversations: the model reads prompts slowly on a CPU, so a smaller memory
# answers faster.
DEFAULT_BUDGET = 1000
# The history shown in an answer's prompt (the server's window is LAGMEM_LOCAL_N_CTX, 4096 by
# default, which also holds the template and the answer).
CONTEXT_TOKENS = 1300
# The model does not choose: the hybrid ranker cites alone, among its best 5. Asked to pick among
# them it took 15 s a LoCoMo question on 2 busy cores, and on the probes its picks left half the
# questions with nothing cited; the calibrated ranker needs no model call at all.
SHORTLIST = 5
# At the usual 0.7 it drifts into other languages and invented names (tried on a handful of chat
# prompts at 0.0 / 0.3 / 0.7).
ANSWER_TEMPERATURE = 0.3


class GGUFTokenCounter:
    """Exact token counts from a GGUF model's own tokenizer, read in this process.

    The same tokenizer call the embedded server makes for a prompt (special tokens parsed), without
    a beginning-of-sequence token: what a turn adds to a prompt. Loaded on the first count.
    """

    exact = True

    def __init__(self, path: Path, model: str = LOCAL_MODEL_ALIAS):
        self.path, self.model = Path(path), model
        self.name = f"{model} tokenizer"
        self._vocab = None
        self._lock = threading.Lock()

    def _load(self):
        try:
            import llama_cpp

            # the wrapper llama_cpp.Llama itself loads models with; Llama would also build an
            # inference context (and log a warning) that counting does not need
            from llama_cpp._internals import LlamaModel
        except ImportError as exc:
            raise LLMError(
                "llama-cpp-python is not installed (run `make setup`), so the embedded "
                "model's tokenizer cannot count tokens."
            ) from exc
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        try:
            vocab = LlamaModel(path_model=str(self.path), params=params, verbose=False)
        except ValueError as exc:
            raise LLMError(f"The embedded model's tokenizer could not be read from {self.path}: {exc}") from exc
        log.info("counting tokens with %s's own tokenizer (%s)", self.model, self.path.name)
        return vocab

    def count(self, text: str) -> int:
        if not text:
            return 0
        with self._lock:  # one load; llama.cpp's tokenizer is not documented as thread-safe
            if self._vocab is None:
                self._vocab = self._load()
            return len(self._vocab.tokenize(text.encode("utf-8"), False, True))

    def describe(self) -> str:
        return f"exact ({self.model}'s own tokenizer)"


@functools.lru_cache(maxsize=4)
def gguf_counter(path: Path) -> GGUFTokenCounter:
    """One counter per model file and process (each loads its vocabulary once)."""
    return GGUFTokenCounter(path)


def _serve() -> str:
    return local_model.ensure_server().base_url


def _warm_up() -> None:
    local_model.ensure_server()


def profile(config: LLMConfig) -> ModelProfile:
    return ModelProfile(
        where="embedded local server",
        answer_mode="grounded",
        context_tokens=CONTEXT_TOKENS,
        default_budget=DEFAULT_BUDGET,
        cites="ranker",
        shortlist=SHORTLIST,
        structured="json_object_schema",  # llama-cpp-python's server: a JSON-object schema, or GBNF
        answer_temperature=ANSWER_TEMPERATURE,
        default_model=LOCAL_MODEL_ALIAS,
        serve=_serve,
        warm_up=_warm_up,
        shut_down=local_model.stop_server,
        counter=lambda client: gguf_counter(local_model.model_path()),
        wait_note="the embedded model's first answer takes a few seconds.",
        upgrade_note=(
            "It is tiny: a larger model can be connected (OPENAI_API_KEY, or OPENAI_BASE_URL "
            "for an OpenAI-compatible server)."
        ),
        # OPENAI_BASE_URL advice would mislead: the user configured nothing
        unreachable="The embedded model server stopped answering ({where}); it is restarted on the next request.",
    )
