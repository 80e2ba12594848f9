"""The need estimator in the product: loads the shipped model file and computes a new turn's prior.

``need_model.json`` beside this module is the model ``lagmem bench need-train --out`` fitted on the
conversations of both kinds the project trains on (``need_model.provenance.json`` beside it says
which files, with their hashes, the command and the held-out validation); it is versioned by its
``version`` field and read once per process. The prior is computed once per stored turn, from the
turn's text and its place among the turns before it, and stored with the turn: replays and rebuilt
layers read the stored number, never recompute. It is computed before the turn's unit of work
(:func:`arrive`, from a :class:`Context` read or carried from the last unit of work), so no write
lock is held for it; ``Tx.add_turn`` uses that :class:`Arrival` only if the conversation is still
at the clock it was computed for, and computes it again inside otherwise (another tab stored a
turn in between), so a turn's prior is always the one the turns really before it give.

A chat has no LoCoMo sessions: a new session starts after ``SESSION_GAP`` without a turn (the
previous turns' ``created_at``). The estimator reads the last ``CONTEXT_TURNS`` turns: the words
they used (a turn's novelty, ``memory.need.NOVELTY_TURNS``) and the position in the session,
counted over them at most (the longest LoCoMo sessions are about half as long).

A turn's role (``user`` or ``assistant``, as stored) is a feature: every caller passes it (the
exchange, the replay and import path, the what-if recording), and a previous turn carries its own.

The file holds either kind of model (``memory.need_models``: logistic regression or boosted trees);
both are evaluated with numpy, so the product never imports scikit-learn.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path

import numpy as np

from assistant.models.embeddings import unpack_vector
from memory.need import NOVELTY_TURNS, ROLE_TURNS, ArrivalContext, content_words, log_words, model_from_dict
from memory.need_models import NeedModel, TreeNeedModel
from memory.need_text import names

MODEL_FILE = Path(__file__).with_name("need_model.json")
SESSION_GAP = timedelta(minutes=30)
CONTEXT_TURNS = NOVELTY_TURNS


@dataclass(frozen=True)
class Previous:
    """A turn stored before the new one, as much of it as the features need."""

    content: str
    created_at: datetime | None = None
    vector: np.ndarray | None = None
    role: str = "user"

    @cached_property
    def words(self) -> frozenset[str]:
        """Its content words (computed once: a transaction keeps its recent turns across turns)."""
        return content_words(self.content)

    @cached_property
    def log_words(self) -> float:
        return log_words(self.content)

    @cached_property
    def names(self) -> frozenset[str]:
        return frozenset(names(self.content))


@dataclass(frozen=True)
class Context:
    """The turns stored last (oldest first, at most ``CONTEXT_TURNS``), as of clock ``at``: the
    conversation's (creation time, step), which names one state of one conversation."""

    at: tuple
    recent: list[Previous]


@dataclass(frozen=True)
class Arrival:
    """A new turn's prior computed for clock ``at``, and the context the turn after it will see."""

    at: tuple
    prior: float
    after: list[Previous]


Model = NeedModel | TreeNeedModel
_model: Model | None = None
_lock = threading.Lock()


def load_model(path: Path | str | None = None) -> Model:
    """The shipped model (cached), or the one at ``path``; a bad file is a clear error."""
    global _model
    if path is not None:
        return _read(Path(path))
    if _model is None:
        with _lock:
            if _model is None:
                _model = _read(MODEL_FILE)
    return _model


def _read(path: Path) -> Model:
    try:
        return model_from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"cannot read the need model {path}: {exc}") from exc


def _same_session(a: datetime | None, b: datetime | None) -> bool:
    if a is None or b is None:
        return True
    if (a.tzinfo is None) != (b.tzinfo is None):
        a, b = a.replace(tzinfo=None), b.replace(tzinfo=None)
    return abs(b - a) <= SESSION_GAP


def prior_for(
    content: str,
    previous: Sequence[Previous] = (),
    vector: np.ndarray | None = None,
    now: datetime | None = None,
    model: Model | None = None,
    role: str = "user",
) -> float:
    """The expected need of a turn by ``role`` arriving now after ``previous`` (oldest first).

    The arrival context is set directly from the previous turns (what ``ArrivalContext`` would
    hold after seeing them one by one: the turns since the last gap and the user turns among them,
    the last turn and its role, the last user turn's length, the recent questions' vectors, the
    recent turns' words, names and lengths by role); a ``Previous`` computes its words once, so a
    transaction that stores many turns does not re-read the same texts for each."""
    model = model or load_model()
    previous = list(previous)[-CONTEXT_TURNS:]
    ctx = ArrivalContext()
    if previous and _same_session(previous[-1].created_at, now):
        run = 1
        while run < len(previous) and _same_session(previous[-run - 1].created_at, previous[-run].created_at):
            run += 1
        ctx.session_index = run
        ctx.session_users = sum(1 for p in previous[-run:] if p.role != "assistant")
    if previous:
        last = previous[-1]
        ctx.prev_text, ctx.prev_vector, ctx.prev_role = last.content, last.vector, last.role
        ctx.prev_user_words = next((p.log_words for p in reversed(previous) if p.role != "assistant"), 0.0)
        for p in previous:
            if "?" in p.content and p.vector is not None:
                ctx.questions.append(p.vector)
            ctx.recent_words.append(p.words)
            ctx.recent_names.append(p.names)
        ctx.recent_lengths.extend((p.role, p.log_words) for p in previous[-ROLE_TURNS:])
        ctx.recent_roles.extend(p.role for p in previous)
    return model.predict(ctx.features(content, vector, role=role), vector)


def vector_of(embedding: bytes | None, dim: int | None = None) -> np.ndarray | None:
    """A stored turn's vector as the model reads it (None when the model reads no vectors)."""
    return unpack_vector(embedding, dim) if embedding and load_model().uses_vectors else None


def arrive(
    context: Context,
    content: str,
    now: datetime | None = None,
    *,
    role: str = "user",
    embedding: bytes | None = None,
    embedding_dim: int | None = None,
    **_row,
) -> Arrival:
    """The prior of a turn by ``role`` arriving ``now`` (default: now, UTC) after ``context``
    (``_row``: the rest of the turn's row, ignored), and the context after it."""
    now = now or datetime.now(UTC)
    vector = vector_of(embedding, embedding_dim)
    prior = prior_for(content, context.recent, vector, now, role=role)
    after = list(context.recent) + [Previous(content, now, vector, role)]
    return Arrival(context.at, prior, after[-CONTEXT_TURNS:])
