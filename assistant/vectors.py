"""Turn vectors filled in the background: an import's turns are stored without one.

An imported conversation's turns have no vectors (the import does not run the embedding model:
thousands of turns would hold it for minutes), and a turn stored under another embedding model
needs that model's vector. Embedding them all inside the first answer made that answer cost the
whole history (31 s for 10,000 turns). Instead ``VectorFiller`` embeds them in a background thread,
newest first (the miss search looks at the newest evicted turns), in batches of ``BATCH`` turns,
each batch's vectors stored in one short transaction with a pause after it, so other writers get
the lock; an exchange meanwhile uses the vectors that are ready (``ChatService``: the turns in
memory are embedded at once, since the budget bounds them; an evicted turn without its vector is
left out of the miss search until it has one). Exchanges come first: no batch starts while one
runs or has just run (``GRACE_S``; for up to ``YIELD_S``). ``progress(conv)`` says how far it is.

One worker thread per service, started on the first request and idle when the queue is empty; a
failure (the database busy or read-only, the model failing) is logged and that conversation is
tried again on its next request.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from assistant.errors import LagmemError
from assistant.models.embeddings import pack_vector

log = logging.getLogger(__name__)

BATCH = 256  # turns embedded and stored per transaction
# a batch waits while exchanges run (they come first), but never longer than this: a busy server
# still fills its vectors
YIELD_S = 1.0
# after each batch's write: lets a waiting writer (an exchange) take the lock; at least as long as
# the batch took, so the worker takes at most half of a core from the answers
PAUSE_S = 0.05
# after an exchange (or a part of one: storing the question, streaming its answer) or a request, no
# batch starts for this long: the next part of the exchange, or the first question after an
# import, usually follows at once, and a batch started in between would run beside it
GRACE_S = 0.25


@dataclass
class Progress:
    """Vectors filled so far in this pass over a conversation, of how many it found missing."""

    done: int
    total: int

    @property
    def left(self) -> int:
        return max(self.total - self.done, 0)


class VectorFiller:
    """Embeds the turns of a conversation that have no vector of ``embedder``'s model, in the
    background. ``ready(conv, seq, row, vector)`` is called for each vector made (the service
    keeps it in its candidate cache); ``pause`` is the sleep after each batch."""

    def __init__(self, store, embedder, ready: Callable | None = None, *, batch: int = BATCH, pause: float = PAUSE_S):
        self.store, self.embedder, self.ready = store, embedder, ready
        self.batch, self.pause = batch, pause
        self._queue: dict[int, None] = {}  # an ordered set of conversations waiting
        self._progress: dict[int, Progress] = {}
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._busy = 0  # exchanges running now (``exchange()``)
        self._quiet_from = 0.0  # monotonic time before which no batch starts (``GRACE_S``)

    # ----- asking ----------------------------------------------------------------------------
    def request(self, conv_id: int) -> None:
        """Fill ``conv_id``'s missing vectors in the background (a no-op while it is queued)."""
        with self._cond:
            if conv_id in self._queue or self._stop.is_set():
                return
            self._queue[conv_id] = None
            self._quiet_from = time.monotonic() + GRACE_S
            if self._thread is None or not self._thread.is_alive():
                if self._thread is None:
                    atexit.register(self.close)  # a batch's write is not cut off at exit
                self._thread = threading.Thread(target=self._work, name="lagmem-vectors", daemon=True)
                self._thread.start()
            self._cond.notify()

    def progress(self, conv_id: int) -> Progress | None:
        """How far the worker is with ``conv_id`` (None when it is not working on it or queued)."""
        with self._cond:
            p = self._progress.get(conv_id)
            if p is None and conv_id in self._queue:
                return Progress(0, 0)
            return None if p is None else Progress(p.done, p.total)

    @contextmanager
    def exchange(self) -> Iterator[None]:
        """Around an exchange: the worker starts no batch meanwhile (for up to ``YIELD_S``)."""
        with self._cond:
            self._busy += 1
        try:
            yield
        finally:
            with self._cond:
                self._busy -= 1
                self._quiet_from = time.monotonic() + GRACE_S
                self._cond.notify_all()

    def idle(self, timeout: float | None = None) -> bool:
        """Wait until nothing is queued or being filled (tests, the benchmark); True if so."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._progress, timeout)

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    # ----- working ---------------------------------------------------------------------------
    def fill(self, conv_id: int, progress: Callable[[Progress], None] | None = None) -> int:
        """Embed and store every missing vector of ``conv_id`` now, newest first; returns how many.

        The turns are read in keyset pages (``seq`` below the last batch's), so each batch costs
        its own rows, whatever the history's length."""
        model = self.embedder.model_name
        self._wait_turn()  # the count reads the whole history's rows: not beside an exchange either
        with self.store.reading() as r:
            total = r.count_without_vectors(conv_id, model)
        state = Progress(0, total)
        with self._cond:
            self._progress[conv_id] = state
        before = None
        while not self._stop.is_set():
            self._wait_turn()
            started = time.perf_counter()
            with self.store.reading() as r:
                rows = r.without_vectors(conv_id, model, before=before, limit=self.batch)
            if not rows:
                break
            vectors = [np.asarray(v, dtype=np.float32) for v in self.embedder.encode([row.content for row in rows])]
            self.store.save_vectors(
                conv_id, [(row.seq, pack_vector(v), model, int(v.shape[0])) for row, v in zip(rows, vectors)]
            )
            if self.ready is not None:
                for row, v in zip(rows, vectors):
                    self.ready(conv_id, row, v)
            before = rows[-1].seq
            with self._cond:
                state.done += len(rows)
                state.total = max(state.total, state.done)
            if progress is not None:
                progress(Progress(state.done, state.total))
            if self.pause:
                self._stop.wait(max(self.pause, time.perf_counter() - started))
        return state.done

    def _wait_turn(self) -> None:
        """Before a batch: wait while an exchange runs or has just run (``GRACE_S``), at most ``YIELD_S``."""
        give_up = time.monotonic() + YIELD_S
        with self._cond:
            while not self._stop.is_set():
                now = time.monotonic()
                if now >= give_up:
                    return
                if self._busy:
                    self._cond.wait(give_up - now)
                elif now < self._quiet_from:
                    self._cond.wait(min(self._quiet_from, give_up) - now)
                else:
                    return

    def _work(self) -> None:
        while not self._stop.is_set():
            with self._cond:
                while not self._queue and not self._stop.is_set():
                    self._cond.wait()
                if self._stop.is_set():
                    return
                conv_id = next(iter(self._queue))
            try:
                self.fill(conv_id)
            except LagmemError as exc:
                log.warning(
                    "conversation %d: turn vectors not filled (%s); tried again on the next request", conv_id, exc
                )
            except Exception:  # a model failure must not end the worker for every conversation
                log.exception("conversation %d: turn vectors not filled; tried again on the next request", conv_id)
            finally:
                with self._cond:
                    self._queue.pop(conv_id, None)
                    self._progress.pop(conv_id, None)
                    self._cond.notify_all()
