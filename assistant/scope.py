"""OwnerScope: a MemoryStore seen by one signed-in user, so no page can pass the wrong owner.

Kept apart from ``assistant.store`` (which re-exports it) because it only wraps the store's methods;
it knows nothing of storage.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any


class OwnerScope:
    """A MemoryStore as one signed-in user sees it: every store method that takes an ``owner`` is
    called with this user's (another user's conversation is simply ``NotFound``; new conversations
    belong to them), whatever owner the caller passes. Attributes without an owner (the engine,
    ``reading``) are the shared store's."""

    def __init__(self, store: Any, owner: str):
        if not owner:
            raise ValueError("an OwnerScope needs an owner")
        self.store, self.owner = store, owner
        self._scoped: dict[str, object] = {}

    def __getattr__(self, name):
        if name.startswith("__") or name in ("store", "owner", "_scoped"):
            raise AttributeError(name)
        attr = getattr(self.store, name)
        if not callable(attr) or "owner" not in inspect.signature(attr).parameters:
            return attr
        scoped = self._scoped.get(name)
        if scoped is None:
            scoped = self._scoped[name] = self._scope(attr)
        return scoped

    def _scope(self, method):
        @functools.wraps(method)
        def scoped(*args, owner=None, **kwargs):  # the caller's owner is ignored: the scope's is the one
            return method(*args, owner=self.owner, **kwargs)

        return scoped
