"""A stop signal for an answer being written: set from another thread (the chat's Stop button).

Whoever is waiting on the model registers what ends its wait (``on_stop``: close the HTTP
response); ``stop()`` runs it at once, so a server that sends nothing, or only keep-alives, does
not keep the answer going. The exchange checks ``stopped`` before it stores anything.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


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
