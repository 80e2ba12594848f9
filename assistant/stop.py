"""Ending an answer being written: a stop signal set from another thread (the chat's Stop button),
and the watch that closes a model's stream at its deadline or when stopped.

Whoever is waiting on the model registers what ends its wait (``on_stop``: close the HTTP
response); ``stop()`` runs it at once, so a server that sends nothing, or only keep-alives, does
not keep the answer going. The exchange checks ``stopped`` before it stores anything.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from assistant.errors import LagmemError, LLMTimeout, Stopped

log = logging.getLogger(__name__)


class StopSignal:
    """Set once; the callbacks registered before or after run once each, when it is set."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._hooks: list[Callable[[], None]] = []

    @property
    def stopped(self) -> bool:
        return self._set

    def stop(self) -> None:
        with self._lock:
            if self._set:
                return
            self._set = True
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook()

    def on_stop(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Run ``hook`` when stopped (now, if already); returns what unregisters it."""
        with self._lock:
            if not self._set:
                self._hooks.append(hook)
                return lambda: self._forget(hook)
        hook()
        return lambda: None

    def _forget(self, hook: Callable[[], None]) -> None:
        with self._lock:
            if hook in self._hooks:
                self._hooks.remove(hook)


class StreamWatch:
    """Ends a model's stream from another thread, at its deadline (seconds from ``started``) or
    when stopped, by closing it (``stream.close()``): the reader's next read then fails (or the
    iteration ends), and ``why`` says which it was; ``error()`` is what the reader raises then."""

    def __init__(self, sdk_stream: Any, deadline: float, started: float, stop: StopSignal | None) -> None:
        self.why: str | None = None
        self.deadline = deadline
        self._stream, self._lock, self._ended = sdk_stream, threading.Lock(), False
        self._timer = threading.Timer(max(0.0, started + deadline - time.monotonic()), self._fire, ("deadline",))
        self._timer.daemon = True
        self._timer.start()
        self._unhook = stop.on_stop(lambda: self._fire("stopped")) if stop is not None else (lambda: None)

    def _fire(self, why: str) -> None:
        with self._lock:
            if self.why is not None or self._ended:
                return
            self.why = why
        try:
            self._stream.close()
        except Exception as exc:  # the reader sees the close either way; nothing else to do
            log.debug("closing a stream (%s) raised %r", why, exc)

    def end(self) -> None:
        with self._lock:
            self._ended = True
        self._timer.cancel()
        self._unhook()

    def error(self) -> LagmemError:
        if self.why == "stopped":
            return Stopped()
        return LLMTimeout(
            f"The model had not finished its answer after {self.deadline:g} seconds (LAGMEM_LLM_DEADLINE): "
            "nothing of it was stored. Your message is kept; try again."
        )
