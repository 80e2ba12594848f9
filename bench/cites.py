"""``lagmem bench cites``: how good is the evidence the app's retrieval step really records?

For each LoCoMo question (placed as in ``bench locomo``: after the session of its latest evidence
turn or later, by seed), the app's own retrieval step -- ``assistant.retrieval.step.retrieve``, the
code a chat message runs -- is run over the turns so far, with the question as the message. The
turns it cites are compared with the question's gold evidence:

* precision, recall, F1: micro over questions (cited evidence / cited, cited evidence / evidence);
* recall@k of the ranking (k = 5, 10, 20): the share of evidence turns among the k best ranked
  candidates, the shortlist a model would be offered;
* mean citations per question, latency of the step per question (median, p95), by category.

Retrievers: ``embeddings`` (cosine top 5 cited, no model), ``hybrid`` (the hybrid ranker cites
the turns above its calibrated threshold, no model), ``local`` (the embedded default exactly as
the app runs it: today the hybrid ranker cites alone, so its citations equal ``hybrid``'s),
``local-choose`` (the embedded model picks among the hybrid
ranker's best 5), ``openai`` (the configured model picking among the hybrid shortlist, as the app
runs it; skipped when nothing is configured).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from assistant.retrieval.step import Candidate, RetrievalConfig, retrieve
from bench.locomo import CATEGORIES, Conversation, Question, app_text, place

KS = (5, 10, 20)
NO_KEY_RETRIEVERS = ("embeddings", "hybrid", "local")
ALL_RETRIEVERS = (*NO_KEY_RETRIEVERS, "local-choose", "openai")


@dataclass(frozen=True)
class Ask:
    """One question asked at one point of one conversation."""

    conv: int  # index into the conversations list
    at: int  # asked right after this turn
    question: Question
    seed: int


@dataclass
class Tally:
    questions: int = 0
    evidence: int = 0
    cited: int = 0
    hits: int = 0
    at_k: dict[int, int] = field(default_factory=lambda: {k: 0 for k in KS})
    latency_ms: list[float] = field(default_factory=list)

    def add(self, evidence: set[int], cited: Sequence[int], ranked: Sequence[int], ms: float) -> None:
        self.questions += 1
        self.evidence += len(evidence)
        self.cited += len(cited)
        self.hits += len(evidence & set(cited))
        for k in KS:
            self.at_k[k] += len(evidence & set(ranked[:k]))
        self.latency_ms.append(ms)

    def summary(self) -> dict:
        p = self.hits / self.cited if self.cited else 0.0
        r = self.hits / self.evidence if self.evidence else 0.0
        lat = sorted(self.latency_ms)
        return {
            "questions": self.questions,
            "evidence": self.evidence,
            "precision": round(p, 4),
            "recall": round(r, 4),
            "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
            "recall_at": {str(k): round(v / self.evidence, 4) if self.evidence else 0.0 for k, v in self.at_k.items()},
            "cites_per_question": round(self.cited / self.questions, 3) if self.questions else 0.0,
            "latency_ms": {
                "median": round(statistics.median(lat), 2) if lat else 0.0,
                "p95": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 2) if lat else 0.0,
            },
        }


def asks(
    conversations: Sequence[Conversation], seeds: Iterable[int], placement: str = "random", limit: int | None = None
) -> list[Ask]:
    """Every (question, placement) of the seeds, in order; ``limit``: evenly spaced subset."""
    out = []
    for seed in seeds:
        for ci, schedule in enumerate(place(conversations, placement, seed)):
            for at in sorted(schedule):
                out += [Ask(ci, at, q, seed) for q in schedule[at]]
    if limit is not None and 0 < limit < len(out):
        step = len(out) / limit
        out = [out[int(i * step)] for i in range(limit)]
    return out


class Corpus:
    """Turn and question vectors of the conversations (embedded once, cached on disk)."""

    def __init__(self, conversations: Sequence[Conversation], embed: Callable[[list[str]], np.ndarray]):
        self.conversations = conversations
        self.turns: list[list[Candidate]] = []
        self.questions: list[dict[int, np.ndarray]] = []
        for c in conversations:
            texts = [app_text(c, t) for t in c.turns]  # as the app stores them, with their roles
            vecs = embed(texts)
            self.turns.append([Candidate(t.number, t.role, x, v) for t, x, v in zip(c.turns, texts, vecs)])
            qv = embed([q.question for q in c.questions]) if c.questions else []
            self.questions.append({q.index: v for q, v in zip(c.questions, qv)})


def run(
    corpus: Corpus,
    items: Sequence[Ask],
    client,
    config: RetrievalConfig,
    progress: Callable[[Iterable], Iterable] = lambda x: x,
    candidates: Callable[[Ask], Sequence[Candidate]] | None = None,
) -> dict:
    """One retriever over the asks: overall summary plus ``by_category``."""
    total, cats = Tally(), {}
    for a in progress(items):
        cands = candidates(a) if candidates else corpus.turns[a.conv][: a.at]
        evidence = set(a.question.evidence)
        t0 = time.perf_counter()
        res = retrieve(client, a.question.question, corpus.questions[a.conv][a.question.index], cands, (), config)
        ms = (time.perf_counter() - t0) * 1000.0
        for tally in (total, cats.setdefault(a.question.category, Tally())):
            tally.add(evidence, res.cited_ids, res.ranked, ms)
    out = total.summary()
    out["by_category"] = {str(k): {"name": CATEGORIES.get(k, str(k)), **t.summary()} for k, t in sorted(cats.items())}
    return out


def table(results: Sequence[dict]) -> str:
    head = (
        f"{'retriever':<12} {'n':>5} {'prec':>6} {'recall':>6} {'F1':>6} {'R@5':>6} {'R@10':>6} "
        f"{'R@20':>6} {'cites/q':>7} {'med ms':>8} {'p95 ms':>8}"
    )
    lines = [head]
    for r in results:
        ra = r["recall_at"]
        lines.append(
            f"{r['retriever']:<12} {r['questions']:>5} {r['precision']:>6.3f} {r['recall']:>6.3f} "
            f"{r['f1']:>6.3f} {ra['5']:>6.3f} {ra['10']:>6.3f} {ra['20']:>6.3f} "
            f"{r['cites_per_question']:>7.2f} {r['latency_ms']['median']:>8.1f} "
            f"{r['latency_ms']['p95']:>8.1f}"
        )
    lines.append("\nby category (F1 / R@5):")
    cats = sorted({k for r in results for k in r["by_category"]}, key=int)
    lines.append(f"{'retriever':<12} " + " ".join(f"{CATEGORIES.get(int(k), k):>18}" for k in cats))
    for r in results:
        cells = []
        for k in cats:
            c = r["by_category"].get(k)
            cells.append(f"{c['f1']:.3f} / {c['recall_at']['5']:.3f} (n={c['questions']})".rjust(18) if c else " " * 18)
        lines.append(f"{r['retriever']:<12} " + " ".join(cells))
    return "\n".join(lines)


def _embeddings():
    from assistant.retrieval.step import RetrievalConfig

    return None, RetrievalConfig(ranker="embeddings", ask_model=False, k=5)


def _hybrid():
    from assistant.retrieval.step import RetrievalConfig

    return None, replace(RetrievalConfig(), ask_model=False)


def _model(config, *, choose: bool = False):
    """The client for ``config`` and the retrieval step the app runs for it (``choose``: the model
    picks among the shortlist even where its profile has the ranker cite alone)."""
    from assistant.models.llm import make_llm
    from assistant.models.profile import profile_of
    from assistant.retrieval.step import app_config

    client = make_llm(config)
    step = app_config(profile_of(client))
    return client, replace(step, ask_model=True) if choose else step


def _embedded(*, choose: bool = False):
    from assistant.config import LLMConfig

    return _model(LLMConfig(backend="local"), choose=choose)


def _configured():
    from assistant.config import LLMConfig
    from assistant.models.backends import profile_for

    config = LLMConfig.from_env()
    if profile_for(config).embedded:
        return None, "skipped: no model configured (set OPENAI_API_KEY and/or OPENAI_BASE_URL)"
    return _model(config)


RETRIEVERS = {
    "embeddings": _embeddings,
    "hybrid": _hybrid,
    "local": _embedded,
    "local-choose": lambda: _embedded(choose=True),  # the embedded model picks among the ranker's best 5
    "openai": _configured,
}


def retriever(name: str):
    """(client, RetrievalConfig) for a retriever name, or (None, reason) when it cannot run."""
    if name not in RETRIEVERS:
        raise ValueError(f"unknown retriever {name!r}; choose from {', '.join(ALL_RETRIEVERS)}")
    return RETRIEVERS[name]()
