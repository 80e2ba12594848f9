"""What the answering model can do, declared once: a :class:`ModelProfile`.

Callers read the profile, never a backend name (as simonw/llm's callers read ``can_stream`` or
``supports_schema`` on a model): how the answer is composed, how much history the model is shown,
the default memory budget, whether the model or the ranker cites, its token counter, the shape of
structured output it accepts, the request details of its API, how to warm it up and how the UI
names it. Each backend declares its profile in its own module (``embedded``, ``openai_api``,
``compatible``); ``assistant.models.backends`` maps a configuration to one of them.

The defaults describe a model the user connected and nothing more is known about: it streams an
answer from the in-memory turns, chooses its own citations among a shortlist, accepts plain text
only, and is counted with tiktoken (an estimate unless tiktoken knows the model). A client that
declares no profile (a test's scripted fake) gets these defaults (:func:`profile_of`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assistant.models.tokens import counter_for
from memory.tokens import TokenCounter
from memory.types import MemorySettings

ANSWER_MODES = ("grounded", "context")
CITERS = ("model", "ranker")
STRUCTURED_KINDS = ("json_schema", "json_object_schema", "none")

# An 8k-token window (the smallest common one), less the answer's room: every model gets a cap,
# since with a long lag the protected turns alone can outgrow any window.
CONTEXT_TOKENS = 7500
SHORTLIST = 8  # turns offered to the retrieval step besides the pinned ones
ANSWER_TEMPERATURE = 0.7


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class ModelProfile:
    """The answering model's capabilities and defaults. Built once per configuration
    (``assistant.models.backends.profile_for``); frozen.

    * ``answer_mode``: ``context`` streams an answer from the in-memory turns; ``grounded`` answers
      a question from the cited turns only, checked against them (else a quote of them), and a
      statement with a short checked reply: for a model too small to be trusted with the context.
    * ``context_tokens``: the most history the model is shown in an answer's prompt.
    * ``default_budget``: the memory budget of new and imported conversations (None: the memory's
      own default, ``MemorySettings.budget``).
    * ``cites``: ``model`` (the model chooses among the ranker's ``shortlist``) or ``ranker`` (the
      calibrated ranker cites alone, no model call).
    * ``structured``: the structured output the server accepts (OpenAI's strict ``json_schema``,
      llama.cpp's ``json_object_schema``, or ``none``: plain text and the ``[T12]`` parser).
    * ``answer_temperature``; ``limit_param`` (the name of the answer-length field);
      ``needs_key`` (refuse to send without an API key); ``default_model`` (when none is configured).
    * ``serve``: starts lagmem's own server for this model and returns its base URL (None: the model
      lives at the configured URL); ``warm_up`` / ``shut_down`` start and stop it ahead of time.
    * ``counter``: builds the token counter for a client of this model.
    * ``where`` names where the model runs for people; ``wait_note`` is said while the first answer
      is awaited; ``upgrade_note`` says that a larger model can be connected; ``unreachable`` is
      the message when its server stops answering (``{where}``: which request).
    """

    where: str = ""
    answer_mode: str = "context"
    context_tokens: int = CONTEXT_TOKENS
    default_budget: int | None = None
    cites: str = "model"
    shortlist: int = SHORTLIST
    structured: str = "none"
    answer_temperature: float = ANSWER_TEMPERATURE
    limit_param: str = "max_tokens"
    needs_key: bool = False
    default_model: str | None = None
    serve: Callable[[], str] | None = None
    warm_up: Callable[[], None] = _nothing
    shut_down: Callable[[], None] = _nothing
    counter: Callable[[Any], TokenCounter] = counter_for
    wait_note: str = ""
    upgrade_note: str = ""
    unreachable: str = ""

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("answer_mode", self.answer_mode, ANSWER_MODES),
            ("cites", self.cites, CITERS),
            ("structured", self.structured, STRUCTURED_KINDS),
        ):
            if value not in allowed:
                raise ValueError(f"ModelProfile.{name} must be one of {allowed}, got {value!r}")
        if self.context_tokens < 1 or self.shortlist < 1:
            raise ValueError("ModelProfile.context_tokens and .shortlist must be positive")

    @property
    def streams(self) -> bool:
        """Whether the answer's text arrives as it is written (else whole, once checked)."""
        return self.answer_mode == "context"

    @property
    def embedded(self) -> bool:
        """Whether lagmem runs the model itself (no key, no network: nothing was configured)."""
        return self.serve is not None

    @property
    def default_settings(self) -> MemorySettings:
        """The settings of new and imported conversations."""
        if self.default_budget is None:
            return MemorySettings()
        return MemorySettings(budget=self.default_budget)


CONFIGURED = ModelProfile()  # a model nothing more is known about


def profile_of(client: Any) -> ModelProfile:
    """The profile ``client`` declares (``LLMClient.profile``); :data:`CONFIGURED` for a client
    that declares none, such as a test's scripted fake."""
    profile = getattr(client, "profile", None)
    return profile if isinstance(profile, ModelProfile) else CONFIGURED
