"""ChatService: one exchange, end to end.

    store the user's turn (committed before any model call)
    -> retrieval step (hybrid ranking; the ranker or the LLM cites; cites validated)
    -> answer (assistant.answering.answer), as the model's profile says (assistant.models.profile):
       grounded (the embedded model, assistant.answering.grounded) answers a question from the
       cited turns and its own message's fact, checked against them (else a quote of them, citing
       the turn it names; "I don't know" when none holds what is asked); context (a configured
       model) streams from the in-memory turns;
       capped at a quarter of the budget, no prompt syntax shown
    -> store the answer with its citations, log misses (or restore them: the second chance),
       enforce the budget: one transaction
    -> return the answer, its citations, the evictions, the misses, the model and timings.

A failed model call never loses the user's message: the turn is already stored, the exception
(an ``LLMError``) reaches the caller, and ``answer_pending()`` answers that turn (or any earlier
unanswered one) on retry. An answer the model ended at the token limit is stored marked
``incomplete``, with the limit noted, so the chat can say where it was cut. A
partial answer cut off mid-stream is *not* stored: the memory stays as it was after the user's
turn. An exchange carries its conversation's identity (id and creation time): an answer whose
conversation was deleted meanwhile raises ``ConversationGone`` and is stored nowhere; one stopped
(``Exchange.stop``, the chat's Stop button) raises ``Stopped`` and is not stored either. The order of
writes mirrors ``assistant.replay`` exactly (user turn + enforcement; restores + enforcement;
answer + citations + enforcement), so an exported conversation replays to the same memory state.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from assistant import need
from assistant.answering.cleaning import StreamCleaner, answer_cap, cap_text, clean_answer
from assistant.answering.grounded import grounded_reply
from assistant.answering.prompts import context_messages
from assistant.candidates import CandidateReader
from assistant.errors import AlreadyAnswered, ConversationGone, Stopped
from assistant.models.embeddings import pack_vector, unpack_vector
from assistant.models.profile import ModelProfile, profile_of
from assistant.retrieval import hybrid
from assistant.retrieval.step import (
    Miss,
    RetrievalConfig,
    RetrievalResult,
    app_config,
    find_misses,
    retrieve,
)
from assistant.stop import StopSignal
from assistant.store import MemoryStore, NotFound
from memory.tokens import TokenCounter
from memory.types import EvictionRecord

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 200_000


class EmptyMessage(ValueError):
    """An empty or whitespace-only message: nothing is stored."""


def clean_text(text: str) -> str:
    """Text that can be stored and shown: lone surrogates become U+FFFD, NUL is dropped."""
    return _SURROGATE.sub("\ufffd", text).replace("\x00", "")


_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class ExchangeResult:
    conversation_id: int
    user_turn: int
    answer_turn: int | None = None
    answer: str = ""
    cited: list[int] = field(default_factory=list)
    cite_weights: dict[int, float] = field(default_factory=dict)
    offered: list[int] = field(default_factory=list)
    dropped_cites: int = 0
    evictions: list[EvictionRecord] = field(default_factory=list)
    misses: list[Miss] = field(default_factory=list)
    restored: list[int] = field(default_factory=list)
    cut_at: int | None = None  # the answer reached this token limit (finish reason "length")
    model: str = ""
    # "model", "extractive" (quoted from the cited turns), "acknowledged", "unknown" ("I don't know") or
    # "unsure" (a question to the assistant whose free reply was refused: "I'm not sure.")
    answered_by: str = ""
    tokens: str = ""
    tokens_exact: bool = False
    timings: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "conversation": self.conversation_id,
            "user_turn": self.user_turn,
            "answer_turn": self.answer_turn,
            "answer": self.answer,
            "cited": self.cited,
            "cite_weights": {str(k): v for k, v in self.cite_weights.items()},
            "offered": self.offered,
            "dropped_cites": self.dropped_cites,
            "evictions": [r.as_dict() for r in self.evictions],
            "misses": [{"turn": m.turn, "similarity": m.similarity} for m in self.misses],
            "restored": self.restored,
            "cut_at": self.cut_at,
            "model": self.model,
            "answered_by": self.answered_by,
            "tokens": self.tokens,
            "tokens_exact": self.tokens_exact,
            "timings": self.timings,
        }


class Exchange:
    """A running exchange: iterate ``stream()`` for the answer's text; then read ``result``."""

    def __init__(
        self,
        service: ChatService,
        result: ExchangeResult,
        message: str,
        vec: np.ndarray,
        t0: float,
        owner,
        *,
        context=None,
        budget: int | None = None,
        created=None,
    ):
        self.service, self.result, self.message, self.vec, self.t0, self.owner = (
            service,
            result,
            message,
            vec,
            t0,
            owner,
        )
        # as the user turn's unit of work left the conversation: the answer's need context (its
        # prior is then computed without a read) and the budget (the answer's cap); None on a retry
        self.context, self.budget = context, budget
        # the conversation's identity with its id (ids of deleted conversations may be reused by
        # old SQLite databases): the answer is stored only in the conversation its question was
        self.created = created
        self.stop_signal = StopSignal()  # the chat's Stop button: nothing of the answer is stored
        # what the answer cites and what it was offered, when not the retrieval step's: a grounded
        # answer cites the notes it stands on (None: the retrieval step's cites and shortlist)
        self.cites: list[tuple[int, float]] | None = None
        self.offered: tuple[int, ...] | None = None
        self.done = False

    def stop(self) -> None:
        """End the answer now (from any thread): the stream is closed, the exchange raises
        ``Stopped`` and stores nothing; the question keeps its Retry."""
        self.stop_signal.stop()

    def stream(self) -> Iterator[str]:
        try:
            with self.service.candidates.vectors.exchange():  # the background vector worker waits
                yield from self.service._answer(self)
        except NotFound as exc:  # deleted (or given away) while its answer was being written
            raise ConversationGone() from exc
        self.done = True

    def run(self) -> ExchangeResult:
        for _ in self.stream():
            pass
        return self.result


class ChatService:
    """One exchange, end to end, for the model ``llm``; what the model can do is its profile
    (``profile``, default: the one the client declares), read once here."""

    def __init__(
        self,
        store: MemoryStore,
        llm,
        embedder,
        counter: TokenCounter,
        *,
        retrieval: RetrievalConfig | None = None,
        miss_threshold: float = 0.55,
        context_tokens: int | None = None,
        answer_tokens: int = 384,
        profile: ModelProfile | None = None,
    ):
        self.store, self.llm, self.embedder, self.counter = store, llm, embedder, counter
        self.profile = profile if profile is not None else profile_of(llm)
        self.retrieval = retrieval if retrieval is not None else app_config(self.profile)
        self.miss_threshold = miss_threshold
        # how much history the answering model may be shown (its context window, minus the answer)
        self.context_tokens = context_tokens if context_tokens is not None else self.profile.context_tokens
        self.answer_tokens = answer_tokens
        # "grounded": from the cited turns only, checked against them; "context": the whole
        # in-memory context, streamed
        self.answer_mode = self.profile.answer_mode
        # the exchange's reads of candidates, bounded by the memory; vectors filled in the background
        self.candidates = CandidateReader(store, embedder)

    # ----- the exchange --------------------------------------------------------------------
    def send(self, conv_id: int, message: str, *, owner: str | None = None) -> Exchange:
        """Store the user's turn (committed now) and return the exchange that will answer it."""
        with self.candidates.vectors.exchange():  # the background vector worker waits for this part too
            return self._send(conv_id, message, owner=owner)

    def _send(self, conv_id: int, message: str, *, owner: str | None) -> Exchange:
        t0 = time.perf_counter()
        message = clean_text(message)
        if not message.strip():
            raise EmptyMessage("The message is empty: nothing was sent.")
        if len(message) > MAX_MESSAGE_CHARS:
            raise ValueError(
                f"The message has {len(message):,} characters; the limit is {MAX_MESSAGE_CHARS:,}. Nothing was stored."
            )
        vec = self._embed(message)
        # before the unit of work, so the write lock waits for neither: the token count (it may ask
        # the model's server) and the need prior (it reads the turns before this one)
        tokens, row = self.counter.count(message), self._vector_row(vec)
        arrival = self.store.arrival(conv_id, message, role="user", owner=owner, **row)
        with self.store.transaction(conv_id, owner=owner) as tx:
            t = tx.add_turn("user", message, tokens, arrival=arrival, **row)
            evictions = tx.enforce("arrival", t.number)
            context, budget, created = tx.context(), tx.layer.settings.budget, tx.conv.created_at
        result = ExchangeResult(
            conv_id,
            t.number,
            evictions=list(evictions),
            model=self.llm.model,
            tokens=self.counter.name,
            tokens_exact=self.counter.exact,
        )
        result.timings["store_user_ms"] = _ms(t0)
        return Exchange(self, result, message, vec, t0, owner, context=context, budget=budget, created=created)

    def answer_pending(self, conv_id: int, *, owner: str | None = None, turn: int | None = None) -> Exchange | None:
        """Retry: answer user turn ``turn`` (default: the last turn) if it has no answer yet, or None.

        An earlier question's answer arrives as the newest turn; like every answer it stores the
        question it answers (``reply_to``), so the chat can say which. Two tabs retrying the same
        question store one answer: the second raises ``AlreadyAnswered``."""
        # the identity first: whatever is read after it belongs to this conversation or, if its id
        # was reused meanwhile, to one the answer's write refuses
        created = self.store.conversation(conv_id, owner=owner).created_at
        pending = self.store.pending_user_turn(conv_id, owner=owner, turn=turn)
        if pending is None:
            return None
        q, _ = pending
        same_model = q.embedding and q.embedding_model == self.embedder.model_name
        vec = unpack_vector(q.embedding, q.embedding_dim) if same_model else self._embed(q.content)
        result = ExchangeResult(
            conv_id, q.seq, model=self.llm.model, tokens=self.counter.name, tokens_exact=self.counter.exact
        )
        return Exchange(self, result, q.content, vec, time.perf_counter(), owner, created=created)

    def ask(self, conv_id: int, message: str, *, owner: str | None = None) -> ExchangeResult:
        return self.send(conv_id, message, owner=owner).run()

    def _answer(self, ex: Exchange) -> Iterator[str]:
        r = ex.result
        active, evicted, pinned = self._memory_turns(r.conversation_id, exclude=r.user_turn)
        t0 = time.perf_counter()
        retrieval = retrieve(self.llm, ex.message, ex.vec, active, pinned, self.retrieval)
        r.timings["retrieval_ms"] = _ms(t0)
        r.timings["retrieval_overhead_ms"] = round(retrieval.overhead_ms, 3)
        r.offered = list(retrieval.offered)
        misses = find_misses(ex.vec, evicted, retrieval.best_offered_similarity, self.miss_threshold)

        cap = answer_cap(ex.budget if ex.budget is not None else self._budget(r.conversation_id, ex.owner))
        t1 = time.perf_counter()
        if self.answer_mode == "grounded":
            # the embedded model: a question answered from its notes, checked, else quoted; a
            # statement acknowledged (assistant.answering.grounded); shown whole, once checked
            reply = grounded_reply(
                self.llm, self._embed, ex.message, r.user_turn, active, retrieval, cap, self.counter.count
            )
            r.timings["ttft_ms"], r.timings["answer_ttft_ms"] = _ms(ex.t0), _ms(t1)
            answer, avec, r.answered_by = reply.text, reply.vector, reply.how
            ex.cites, ex.offered = reply.cites, reply.offered
            yield answer
        else:
            messages = context_messages(
                active, retrieval.cited_ids, ex.message, self.counter.count, self.context_tokens
            )
            parts, cleaner = [], StreamCleaner()
            limit, info = min(self.answer_tokens, cap), {}
            for delta in self.llm.stream(messages, max_tokens=limit, info=info, stop=ex.stop_signal):
                if ex.stop_signal.stopped:
                    raise Stopped()
                if not parts:
                    r.timings["ttft_ms"] = _ms(ex.t0)
                    r.timings["answer_ttft_ms"] = _ms(t1)
                parts.append(delta)
                if shown := cleaner.feed(delta):
                    yield shown
            if tail := cleaner.flush():
                yield tail
            answer = cap_text(clean_answer(clean_text("".join(parts))), cap, self.counter.count) or "(no answer)"
            avec = self._embed(answer)
            r.answered_by = "model"
            r.cut_at = limit if info.get("finish_reason") == "length" else None
        if ex.stop_signal.stopped:  # stopped while the answer was composed (or after its last token)
            raise Stopped()
        self._record(ex, retrieval, misses, answer, avec)
        r.timings["total_ms"] = _ms(ex.t0)

    def _record(self, ex: Exchange, retrieval: RetrievalResult, misses: list[Miss], answer: str, avec) -> None:
        r = ex.result
        # before the unit of work: counting may ask the model's server; the prior from the context
        # the user turn's unit of work left (a retry has none: one read)
        tokens, vector = self.counter.count(answer), self._vector_row(avec)
        if ex.context is not None:
            arrival = need.arrive(ex.context, answer, role="assistant", **vector)
        else:
            arrival = self.store.arrival(r.conversation_id, answer, role="assistant", owner=ex.owner, **vector)
        with self.store.transaction(r.conversation_id, owner=ex.owner, created=ex.created) as tx:
            # checked under the conversation's lock (and by a unique key): a user turn gets one
            # answer, so two tabs retrying the same turn store one; the second is refused
            if tx.layer.turn(r.user_turn).role != "user" or tx.answered(r.user_turn):
                raise AlreadyAnswered()
            auto = tx.conv.auto_restore
            for m in misses:
                restored = auto and not tx.layer.turn(m.turn).active
                tx.miss(m.turn, m.similarity, restored)
                if restored:
                    r.evictions += tx.restore(m.turn, kind="auto_restore")
                    r.restored.append(m.turn)
            # every answer names the question it answers (a retry of an earlier one arrives later)
            t = tx.add_turn(
                "assistant",
                answer,
                tokens,
                arrival=arrival,
                model=self.llm.model,
                reply_to=r.user_turn,
                incomplete=r.cut_at is not None,
                **vector,
            )
            tx.answer_note(t.number, cut_at=r.cut_at)
            cites = ex.cites if ex.cites is not None else [(c.turn, c.weight) for c in retrieval.cited]
            out = tx.cite(
                cites,
                offered=ex.offered if ex.offered is not None else retrieval.offered,
                source=retrieval.source,
                answer_turn=t.number,
            )
            r.evictions += tx.enforce("arrival", t.number)
        r.answer_turn, r.answer = t.number, answer
        r.cited = [c.turn for c in out.recorded]
        r.cite_weights = {c.turn: c.weight for c in out.recorded}
        r.dropped_cites = retrieval.dropped + out.dropped
        r.misses = misses

    # ----- helpers -------------------------------------------------------------------------
    def _embed(self, text: str) -> np.ndarray:
        return np.asarray(self.embedder.encode([text])[0], dtype=np.float32)

    def _vector_row(self, vec: np.ndarray) -> dict:
        return {
            "embedding": pack_vector(vec),
            "embedding_model": self.embedder.model_name,
            "embedding_dim": int(vec.shape[0]),
        }

    def _memory_turns(self, conv_id: int, exclude: int):
        """In-memory turns, the miss search's evicted candidates, pinned numbers (``assistant.candidates``)."""
        return self.candidates.read(conv_id, exclude)

    def imported(self, conv_id: int) -> None:
        """After an import (its turns have no vectors): the turns in memory embedded and kept now
        (the budget bounds them), the others in the background, so the first answer costs what
        any answer does (the ranker's per-turn caches filled too)."""
        active, _, _ = self.candidates.read(conv_id, exclude=None)
        hybrid.warm([c.content for c in active])

    def vectors_pending(self, conv_id: int) -> int:
        """Turns of ``conv_id`` still without a vector of the embedding model."""
        return self.candidates.pending(conv_id)

    def close(self) -> None:
        """Stop the background vector worker (the process's services live as long as it)."""
        self.candidates.close()

    def _budget(self, conv_id: int, owner) -> int | None:
        return self.store.conversation(conv_id, owner=owner).budget


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000.0, 3)
