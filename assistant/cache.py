"""ByteCache: a thread-safe least-recently-used cache bounded by bytes, not by entries.

The store keeps rebuilt memory layers and the service keeps stored turns' texts and vectors; one
entry may be a few hundred bytes or tens of megabytes (a turn may hold 8 MB of text, a layer
100,000 turns), so a bound on the number of entries bounds nothing. Each entry is weighed once
when it is put (``size``: the caller's estimate in bytes); the least recently used entries go
first when the total passes ``max_bytes``. An entry larger than the whole cache is not kept.
Losing an entry costs a re-read from the database, never data.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any


class ByteCache:
    def __init__(self, max_bytes: int):
        if max_bytes <= 0:
            raise ValueError("a cache needs a positive size in bytes")
        self.max_bytes = max_bytes
        self.bytes = 0
        self._items: OrderedDict[Hashable, tuple[int, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return default
            self._items.move_to_end(key)
            return item[1]

    def pop(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            item = self._items.pop(key, None)
            if item is None:
                return default
            self.bytes -= item[0]
            return item[1]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old[0]
            if size > self.max_bytes:
                return
            self._items[key] = (size, value)
            self.bytes += size
            while self.bytes > self.max_bytes:
                _, (dropped, _) = self._items.popitem(last=False)
                self.bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.bytes = 0
