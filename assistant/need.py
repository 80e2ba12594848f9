"""The need estimator in the product: loads the shipped model file and computes a new turn's prior.

``need_model.json`` beside this module is the model ``lagmem bench holdout --model-out`` (or
``lagmem bench need-train --out``) fitted on the LoCoMo dev conversations; it is versioned by its
``version`` field and read once per process. The prior is computed once, when a turn is stored
(``Tx.add_turn`` calls ``prior_for``), from the turn's text and its place among the turns before
it, and stored with the turn: replays and rebuilt layers read the stored number, never recompute.

A chat has no LoCoMo sessions: a new session starts after ``SESSION_GAP`` without a turn (the
previous turns' ``created_at``). The estimator reads the last ``CONTEXT_TURNS`` turns: the words
they used (a turn's novelty, ``memory.need.NOVELTY_TURNS``) and the position in the session,
counted over them at most (the longest LoCoMo sessions are about half as long).

The file holds either kind of model (``memory.need_models``: logistic regression or boosted trees);
both are evaluated with numpy, so the product never imports scikit-learn.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from memory.need import NOVELTY_TURNS, ArrivalContext, content_words, model_from_dict
from memory.need_models import NeedModel, TreeNeedModel

MODEL_FILE = Path(__file__).with_name("need_model.json")
SESSION_GAP = timedelta(minutes=30)
CONTEXT_TURNS = NOVELTY_TURNS


@dataclass(frozen=True)
class Previous:
    """A turn stored before the new one, as much of it as the features need."""

    content: str
    created_at: datetime | None = None
    vector: np.ndarray | None = None

    @cached_property
    def words(self) -> frozenset[str]:
        """Its content words (computed once: a transaction keeps its recent turns across turns)."""
        return content_words(self.content)


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


def prior_for(content: str, previous: Sequence[Previous] = (), vector: np.ndarray | None = None,
              now: datetime | None = None, model: Model | None = None) -> float:
    """The expected need of a turn arriving now after ``previous`` (oldest first).

    The arrival context is set directly from the previous turns (what ``ArrivalContext`` would
    hold after seeing them one by one: the turns since the last gap, the last turn, the recent
    questions' vectors, the recent turns' words); a ``Previous`` computes its words once, so a
    transaction that stores many turns does not re-read the same texts for each."""
    model = model or load_model()
    previous = list(previous)[-CONTEXT_TURNS:]
    ctx = ArrivalContext()
    if previous and _same_session(previous[-1].created_at, now):
        run = 1
        while run < len(previous) and _same_session(previous[-run - 1].created_at, previous[-run].created_at):
            run += 1
        ctx.session_index = run
    if previous:
        ctx.prev_text, ctx.prev_vector = previous[-1].content, previous[-1].vector
        for p in previous:
            if "?" in p.content and p.vector is not None:
                ctx.questions.append(p.vector)
            ctx.recent_words.append(p.words)
    return model.predict(ctx.features(content, vector), vector)
