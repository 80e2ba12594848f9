"""The exchange's candidates: what one exchange reads of a conversation, bounded by the memory.

An exchange needs the turns in memory (the retrieval step cites among them: the budget bounds
them) and, for miss detection, evicted turns' vectors. It reads, through the turns' state index
(``storage.candidates``), the rows in memory and the ``MISS_CANDIDATES`` newest evicted turns, never
every turn of the history, so its cost is the same at 1,000 turns as at 100,000.

**The miss search is a capped candidate set**, the newest evicted turns by turn number, not an
index over every evicted vector: a miss is evidence about an eviction decision, and the decisions
still being learned from are the recent ones (older evicted turns stay in the database, searchable
and restorable in the inspector); a capped set costs one bounded index read and one K x dim
product per exchange with no structure to keep in step with evictions and restores across
processes. Its limit: an old turn evicted long ago that a question wants is not logged as a miss.

A stored turn's text never changes, and its vector changes only with the embedding model, so both
are read once per process and kept (bounded by bytes). A turn in memory without a vector of the
model (an import's, or another model's) is embedded at once and its vector stored (the memory
bounds how many); an evicted one is left to the background worker (``assistant.vectors``) and joins
the miss search when its vector is ready.
"""

from __future__ import annotations

import logging
import sys

import numpy as np

from assistant.cache import ByteCache
from assistant.errors import StorageError
from assistant.models.embeddings import pack_vector, unpack_vector
from assistant.retrieval.step import Candidate
from assistant.vectors import VectorFiller

log = logging.getLogger(__name__)

CANDIDATE_CACHE_BYTES = 256 * 1024 * 1024  # stored turns' text and vectors kept per process
MISS_CANDIDATES = 1000  # the miss search looks at the newest this many evicted turns
EMBED_BATCH = 256


class CandidateReader:
    """Reads an exchange's candidates from ``store``, vectors by ``embedder``; one per service."""

    def __init__(self, store, embedder, *, miss_candidates: int = MISS_CANDIDATES):
        self.store, self.embedder, self.miss_candidates = store, embedder, miss_candidates
        # (conversation, turn) -> ((row id, created, embedding model), Candidate): text and vector
        # of stored turns, which never change once written (the vector: for one model)
        self._cache = ByteCache(CANDIDATE_CACHE_BYTES)
        self.vectors = VectorFiller(store, embedder, ready=self.keep)

    def read(self, conv_id: int, exclude: int) -> tuple[list[Candidate], list[Candidate], set[int]]:
        """(turns in memory but ``exclude``, the newest evicted turns with a vector ready, oldest
        first, at most ``miss_candidates``; the pinned turns in memory). Evicted candidates carry
        their vector only (``role`` and ``content`` empty): the miss search reads nothing else."""
        model = self.embedder.model_name
        with self.store.reading() as r:
            memory = r.memory_flags(conv_id, exclude=exclude)
            evicted = r.evicted_flags(conv_id, self.miss_candidates)
            # the row's id and creation time identify it: SQLite may reuse the ids of a deleted
            # conversation, and then the cached text must not be served for the new one
            active = {m.seq: self._hit(conv_id, m, model, text=True) for m in memory}
            gone = {e.seq: self._hit(conv_id, e, model, text=False) for e in evicted}
            rows = list(r.turn_texts(conv_id, [n for n, c in active.items() if c is None]))
            # an evicted turn without this model's vector is not read: the worker fills it
            ready = [e.seq for e in evicted if gone[e.seq] is None and e.embedding_model == model]
            vectors = list(r.turn_vectors(conv_id, ready))
        stale = [row for row in rows if not row.embedding or row.embedding_model != model]
        fresh = dict(zip([row.seq for row in stale], self._embed_many([row.content for row in stale])))
        if fresh:
            self._save(conv_id, fresh)
        by_seq = {m.seq: m for m in memory}
        for row in rows:
            vec = fresh[row.seq] if row.seq in fresh else unpack_vector(row.embedding, row.embedding_dim)
            active[row.seq] = self.keep(conv_id, row, vec)
        flags = {e.seq: e for e in evicted}
        for row in vectors:
            if row.embedding:
                gone[row.seq] = self._keep_vector(
                    conv_id, flags[row.seq], unpack_vector(row.embedding, row.embedding_dim)
                )
        if any(e.embedding_model != model for e in evicted):
            self.vectors.request(conv_id)  # evicted turns without a vector: in the background
        pinned = {n for n in active if by_seq[n].pinned}
        return list(active.values()), [gone[e.seq] for e in reversed(evicted) if gone[e.seq] is not None], pinned

    def _hit(self, conv_id: int, flags, model: str, *, text: bool) -> Candidate | None:
        """The cached candidate for this row, if it is the same row under the same model (and has
        its text, when ``text``)."""
        hit = self._cache.get((conv_id, flags.seq))
        if hit is None or hit[0] != (flags.id, flags.created_at, model):
            return None
        return hit[1] if not text or hit[1].content is not None else None

    def _keep_vector(self, conv_id: int, flags, vec: np.ndarray) -> Candidate:
        """An evicted turn's vector (no text), kept unless its text is kept already."""
        c = Candidate(flags.seq, "", None, vec)
        self._cache.put(
            (conv_id, flags.seq), ((flags.id, flags.created_at, self.embedder.model_name), c), vec.nbytes + 200
        )
        return c

    def keep(self, conv_id: int, row, vec: np.ndarray) -> Candidate:
        """A turn's row (seq, role, content, id, created_at) and vector, kept as a candidate."""
        c = Candidate(row.seq, row.role, row.content, vec)
        key = (row.id, row.created_at, self.embedder.model_name)
        self._cache.put((conv_id, row.seq), (key, c), sys.getsizeof(row.content) + vec.nbytes + 300)
        return c

    def pending(self, conv_id: int) -> int:
        """Turns of ``conv_id`` still without a vector of the embedding model (one counting read)."""
        with self.store.reading() as r:
            return r.count_without_vectors(conv_id, self.embedder.model_name)

    def close(self) -> None:
        self.vectors.close()

    def _embed_many(self, texts: list[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for start in range(0, len(texts), EMBED_BATCH):
            out += [np.asarray(v, dtype=np.float32) for v in self.embedder.encode(texts[start : start + EMBED_BATCH])]
        return out

    def _save(self, conv_id: int, fresh: dict[int, np.ndarray]) -> None:
        rows = [(seq, pack_vector(v), self.embedder.model_name, int(v.shape[0])) for seq, v in fresh.items()]
        try:
            self.store.save_vectors(conv_id, rows)
        except StorageError as exc:
            # busy or full: the vectors are in this process's cache and are computed again later
            log.warning(
                "conversation %d: %d turn vectors not stored (%s); they are computed again later",
                conv_id,
                len(rows),
                exc,
            )
