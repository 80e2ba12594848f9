"""Citation sources for ``lagmem bench locomo --cites``: who cites at each question.

``gold`` (None here): the question cites its evidence turns still in memory, the protocol's
perfect evidence. A retriever name (``embeddings``, ``hybrid``, ``local``, ...): the question runs
the app's retrieval step (``assistant.retrieval.step.retrieve``) over the turns *in memory* and cites
what it cites, with the retriever's confidence as the weight, exactly as the app records a
chat message's citations. Feedback stays derived from the gold evidence (the user's thumbs).
"""

from __future__ import annotations

from collections.abc import Sequence

from assistant.models.embeddings import MODEL_NAME
from assistant.retrieval.step import retrieve
from bench.cites import Corpus, retriever
from bench.embed_cache import embed
from bench.holdout_pool import BASELINES
from bench.locomo import Conversation, Question


class LazyEmbedder:
    """Loads MiniLM only when the on-disk cache misses (worker processes usually never do)."""

    model_name = MODEL_NAME

    def __init__(self) -> None:
        self._model = None

    def encode(self, texts):
        if self._model is None:
            from assistant.models.embeddings import get_embedder

            self._model = get_embedder()
        return self._model.encode(texts)


class RetrieverCites:
    """A ``protocol.CiteSource`` running one retriever over the turns in memory."""

    def __init__(self, conversations: Sequence[Conversation], name: str):
        client, config = retriever(name)
        if isinstance(config, str):
            raise ValueError(f"retriever {name}: {config}")
        self.name, self.client, self.config = name, client, config
        embedder = LazyEmbedder()
        self.corpus = Corpus(conversations, lambda texts: embed(embedder, texts))
        self.index = {c.sample_id: i for i, c in enumerate(conversations)}

    def step(self, conv: Conversation, q: Question, active: list[int]):
        """The retrieval step's result for ``q`` over the turns ``active`` (in memory)."""
        i = self.index[conv.sample_id]
        turns = self.corpus.turns[i]
        cands = [turns[n - 1] for n in active]
        return retrieve(self.client, q.question, self.corpus.questions[i][q.index], cands, (), self.config)

    def __call__(self, conv: Conversation, q: Question, active: list[int]) -> list[tuple[int, float]]:
        return [(c.turn, c.weight) for c in self.step(conv, q, active).cited]


class TalliedCites(RetrieverCites):
    """Also scores each step against the question's gold evidence (``bench cites --policy``):
    evidence already evicted counts as missed, so recall is what the user really gets."""

    def __init__(self, conversations: Sequence[Conversation], name: str):
        super().__init__(conversations, name)
        from bench.cites import Tally

        self.total, self.cats = Tally(), {}

    def __call__(self, conv: Conversation, q: Question, active: list[int]) -> list[tuple[int, float]]:
        import time

        t0 = time.perf_counter()
        res = self.step(conv, q, active)
        ms = (time.perf_counter() - t0) * 1000.0
        for tally in (self.total, self.cats.setdefault(q.category, type(self.total)())):
            tally.add(set(q.evidence), res.cited_ids, res.ranked, ms)
        return [(c.turn, c.weight) for c in res.cited]

    def summary(self) -> dict:
        from bench.locomo import CATEGORIES

        out = self.total.summary()
        out["by_category"] = {
            str(k): {"name": CATEGORIES.get(k, str(k)), **t.summary()} for k, t in sorted(self.cats.items())
        }
        return out


def gain_kept(rows: Sequence[dict], reference: str = "gold") -> str:
    """Per source and budget: does ``measured`` beat every baseline, and how much of its gain over
    fifo under the ``reference`` citations survives ((measured - fifo) / same under reference)."""
    recall = {(r["cites"], r["budget"], r["policy"]): r["recall"] for r in rows}
    lines = [f"measured under each citation source (gain over fifo kept, vs {reference}):"]
    for c in dict.fromkeys(r["cites"] for r in rows):
        for b in sorted({r["budget"] for r in rows}):
            m, f = recall.get((c, b, "measured")), recall.get((c, b, "fifo"))
            if m is None or f is None:
                continue
            beaten = [p for p in BASELINES if (c, b, p) in recall and recall[(c, b, p)] > m + 1e-12]
            ref = recall.get((reference, b, "measured"), 0) - recall.get((reference, b, "fifo"), 0)
            kept = f"{(m - f) / ref:.0%}" if ref > 1e-12 else "n/a"
            lines.append(
                f"  {c:<12} B={b:<5} measured {m:.3f}, fifo {f:.3f}, gain kept {kept}; "
                + (f"beaten by {', '.join(beaten)}" if beaten else ">= every baseline")
            )
    return "\n".join(lines)
