"""The small domain error hierarchy of lagmem: model failures, bad settings, refused writes.

Why: the UI and the terminal commands must tell the user *what to do* when something fails ("set
OPENAI_API_KEY", "start your server", "wait a moment", "LAGMEM_LLM_TIMEOUT must be a number"),
without knowing which SDK or server produced the failure. SDK exceptions are mapped to these
classes at one boundary each: `assistant/models/llm.py` for the model (nothing above it catches an
`openai` exception), `assistant/store.py` for the database, `assistant/config.py` for settings.
The original exception is kept as ``__cause__`` (``raise ... from exc``) so tests and logs still
see the real traceback.

Every class carries a default, human message; callers may pass a more specific one.
"""

from __future__ import annotations


class LagmemError(Exception):
    """Root of every error lagmem raises on purpose."""

    default_message = "lagmem failed."

    def __init__(self, message: str | None = None) -> None:
        self.message = message or self.default_message
        super().__init__(self.message)


class LLMError(LagmemError):
    """The language model could not give a usable answer."""

    default_message = "The language model could not answer."


class NoAPIKey(LLMError):
    """The endpoint refused us for lack of (valid) credentials."""

    default_message = (
        "The model endpoint needs an API key: set OPENAI_API_KEY, or unset OPENAI_BASE_URL "
        "and OPENAI_API_KEY to use the embedded local model."
    )


class ServerUnreachable(LLMError):
    """No connection could be made (server down, wrong URL, local model died)."""

    default_message = "The model server could not be reached. Check OPENAI_BASE_URL and that the server is running."


class RateLimited(LLMError):
    """The endpoint said 'too many requests' even after our retries."""

    default_message = "The model endpoint is rate limiting us. Wait a moment and try again."


class ContextTooLong(LLMError):
    """The prompt does not fit the model's context window."""

    default_message = (
        "The conversation context is longer than the model accepts. Lower the memory budget "
        "or use a model with a larger context."
    )


class BadResponse(LLMError):
    """The endpoint answered, but not with something we can use (malformed, 5xx, empty)."""

    default_message = "The model endpoint returned a response lagmem could not use."


class LLMTimeout(LLMError):
    """The endpoint did not answer within the configured timeout."""

    default_message = "The model did not answer in time. It may be overloaded; try again or raise LAGMEM_LLM_TIMEOUT."


# ----- settings and storage ----------------------------------------------------------------------


class ConfigError(LagmemError, ValueError):
    """A setting (an environment variable) has a value lagmem cannot use.

    Raised by ``assistant.config`` when the configuration is built; the message names the variable,
    what it accepts and what it got. ``variable`` is the variable's name.
    """

    default_message = "A lagmem setting is invalid."

    def __init__(self, message: str | None = None, variable: str | None = None) -> None:
        super().__init__(message)
        self.variable = variable


class StorageError(LagmemError):
    """The database refused a write: disk full, read-only, or busy for too long.

    Mapped from SQLAlchemy's ``OperationalError`` (and PostgreSQL's read-only/disk-full states)
    in ``assistant.store.MemoryStore.transaction``; the transaction was rolled back, so nothing
    half-written is stored. ``kind`` is ``"full"``, ``"read_only"``, ``"locked"`` or ``"other"``.
    """

    default_message = "The database could not store the change; nothing was saved."

    def __init__(self, message: str | None = None, kind: str = "other") -> None:
        super().__init__(message)
        self.kind = kind


class AlreadyAnswered(LagmemError):
    """The user turn an answer was for has been answered meanwhile (another tab retried it): the
    answer is not stored, so a turn never gets two."""

    default_message = "This message was answered meanwhile (in another tab or window?): this answer was not stored."


class ConversationGone(LagmemError, LookupError):
    """The conversation an exchange was for is gone (deleted while its answer was being written):
    the answer is not stored, and never in another conversation."""

    default_message = "This conversation was deleted while its answer was being written: the answer was not stored."


class Stopped(LagmemError):
    """The person stopped the answer while it was being written: nothing of it is stored, and the
    question keeps its Retry."""

    default_message = "Stopped: the answer was not stored. Your message is kept; use Retry to answer it."


class TooMuchWork(LagmemError):
    """A replay (an import, a what-if comparison) passed its time budget and stopped; nothing was
    stored. Its message says how far it got, about how long the whole would take, and what to do."""

    default_message = "This took longer than its time limit and was stopped; nothing was stored."
