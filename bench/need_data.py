"""LoCoMo turns as the need estimator sees them: features at arrival, embeddings, evidence labels.

A turn's content is its text without the ``"<speaker>: "`` prefix (what a chat turn holds in the
app); a new LoCoMo session starts a new ``ArrivalContext`` session; its role is the one the app
would store (``user`` for both people of a LoCoMo conversation, the speaker in a person-assistant
one: ``bench.locomo.Turn.role``). The label of a turn is 1 when
any (repaired) question of its conversation names it as evidence.

Embeddings (MiniLM, as the app computes them) are cached per conversation in a temporary directory
(``$LAGMEM_BENCH_CACHE`` or ``<tmp>/lagmem-bench-cache``), keyed by a hash of the texts and the
model name: never in the repository, and recomputed whenever a text changes.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.locomo import Conversation
from memory.need import FEATURES, ArrivalContext, vector


def content(turn) -> str:
    prefix = f"{turn.speaker}: "
    return turn.text[len(prefix) :] if turn.text.startswith(prefix) else turn.text


def cache_dir() -> Path:
    d = Path(os.environ.get("LAGMEM_BENCH_CACHE") or Path(tempfile.gettempdir()) / "lagmem-bench-cache")
    d.mkdir(parents=True, exist_ok=True)
    return d


def embeddings(conv: Conversation, embedder=None) -> np.ndarray:
    """The conversation's turn embeddings (rows in turn order), from the cache when it has them."""
    texts = [content(t) for t in conv.turns]
    if embedder is None:
        from assistant.models.embeddings import MODEL_NAME

        name = MODEL_NAME
    else:
        name = embedder.model_name
    key = hashlib.sha1(("\n".join([name, *texts])).encode("utf-8")).hexdigest()[:20]
    path = cache_dir() / f"emb-{key}.npy"
    if path.exists():
        return np.load(path)
    if embedder is None:
        from assistant.models.embeddings import get_embedder

        embedder = get_embedder()
    out = np.asarray(embedder.encode(texts), dtype=np.float32)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
    np.save(tmp, out)
    os.replace(tmp, path)
    return out


@dataclass
class TurnTable:
    """One conversation's turns as rows: features ``X`` (``FEATURES`` order), embeddings ``E``,
    labels ``y`` (evidence of some question), and the conversation's kind."""

    sample_id: str
    X: np.ndarray
    E: np.ndarray
    y: np.ndarray
    kind: str = ""  # the conversation's kind (``bench.locomo.Conversation.kind``): two people, person-assistant


def table(conv: Conversation, emb: np.ndarray) -> TurnTable:
    ctx = ArrivalContext()
    rows = []
    prev_session = None
    for t, v in zip(conv.turns, emb):
        f = ctx.features(content(t), v, new_session=t.session != prev_session, role=t.role)
        prev_session = t.session
        rows.append(vector(f, FEATURES))
    evidence = {e for q in conv.questions for e in q.evidence}
    y = np.array([1.0 if t.number in evidence else 0.0 for t in conv.turns])
    return TurnTable(conv.sample_id, np.array(rows), emb.astype(np.float64), y, conv.kind)
