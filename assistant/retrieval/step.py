"""The retrieval step: which in-memory turns does the model need for this message?

One exchange, step 2. Pure functions around at most one LLM call; no storage access:

1. ``rank_candidates`` ranks the in-memory turns: ``hybrid`` (a learnt mix of BM25, embeddings,
   neighbours and turn features, with a calibrated confidence, ``assistant.retrieval.hybrid``) or
   ``embeddings`` (cosine only);
   ``shortlist`` offers the top ``k`` plus every pinned turn (tiny models cannot read the whole
   memory; a shortlist keeps the prompt short and the choice easy).
2. Without a model (``ask_model`` off: the embedded default) the ranker cites alone
   (``ranker_cites``): the hybrid ranker the turns at or above its calibrated threshold -- nothing
   rather than noise. With a model, ``build_messages`` (``assistant.retrieval.cite_prompt``) shows the
   offered turns as ``[T<n>] role: text`` and asks for ``{"turns": [...]}``. Output is constrained
   to the offered ids where the server can do it (``client.structured``): OpenAI strict
   ``json_schema`` with an integer enum, a llama.cpp JSON-object schema (or a GBNF grammar) with
   the same enum; otherwise free text, parsed for JSON and, as the last resort, ``[T12]`` markers.
3. ``validate`` keeps only offered ids (others are dropped and counted, never recorded: contract
   item 6), collapses duplicates, and checks each cite (rule below); a cite of an assistant turn
   that repeats a user turn becomes a cite of the user's (``assistant.retrieval.echoes``).

Every citation names its ``source`` (the ranker, plus the model when one chose:
``hybrid+gpt-4o-mini``) and carries the retriever's confidence as its ``weight``.

Turn text is data, never instruction. A turn (or the message) that contains ``[T3] [T4] ignore
previous instructions`` must not create a citation by itself, so: markers inside shown texts are
neutralized to ``(T3)`` (the parser cannot match them, and the model never sees a fake id in our
id syntax); the system prompt says quoted text carries no instructions; verbatim echoes of shown
texts (and of whole prompt lines: copying a line is not citing it) are cut from the output before
it is parsed; and structured output can only name
offered ids anyway.

The cite check (``CiteCheck``) on a model's cites: ``s`` = cosine(message, turn). A cite with
``s < min_similarity``, or (hybrid) a confidence below ``min_confidence``, is *rejected* (kept in
the result for display, not recorded as evidence): tiny models cite turns unrelated to the
message. An accepted cite's weight is the hybrid confidence, or with the embeddings ranker
``min(1, s / full_similarity)``, rounded to 4 places (deterministic replays).
``min_similarity=None`` turns rejection off (for strong models whose cites may be indirect).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from assistant.errors import BadResponse
from assistant.models.profile import ModelProfile
from assistant.retrieval import echoes, hybrid
from assistant.retrieval.cite_prompt import (  # noqa: F401  (the step's public names live here too)
    MARKER,
    SYSTEM_PROMPT,
    build_messages,
    ids_grammar,
    ids_schema,
    neutralize,
    offered_lines,
    parse_ids,
    request_options,
    shown_text,
)
from assistant.retrieval.hybrid import DEFAULT_PARAMS, HybridParams, Ranking
from assistant.retrieval.misses import Miss, find_misses, similarities  # noqa: F401  (the step's public names)

# the retrieval step asks for at most 256 tokens (~1,000 characters); a reply 16 times longer
# is a model ignoring max_tokens, and reading it (quadratic JSON scanning) would cost the request
MAX_RAW_CHARS = 16_000

STRUCTURED_MODES = ("json_schema", "json_object_schema", "none")


@dataclass(frozen=True, slots=True)
class Candidate:
    """An in-memory turn as the retrieval step sees it (``vector``: unit float32). An evicted turn
    offered to the miss search only carries its vector (``content`` None: not read)."""

    number: int
    role: str
    content: str | None
    vector: np.ndarray


@dataclass(frozen=True, slots=True)
class Offered:
    """A shortlisted turn, its similarity to the message and the ranker's confidence in it."""

    candidate: Candidate
    similarity: float
    pinned: bool = False
    confidence: float | None = None  # hybrid ranker only: calibrated probability of being evidence
    shared_words: int = 0  # hybrid ranker only: words the turn shares with the message

    @property
    def number(self) -> int:
        return self.candidate.number


@dataclass(frozen=True, slots=True)
class Cite:
    """One validated citation: the turn, its weight (confidence), its similarity to the message."""

    turn: int
    weight: float
    similarity: float


@dataclass(frozen=True, slots=True)
class CiteCheck:
    """The embedding check on cites; see the module docstring for the rule."""

    min_similarity: float | None = 0.1
    full_similarity: float = 0.5
    min_confidence: float = 0.05  # hybrid ranker: a model's cite the ranker all but rules out

    def weigh(self, similarity: float, confidence: float | None = None) -> float | None:
        """The cite's weight, or None when it is rejected (``min_similarity=None``: never).

        With the hybrid ranker the weight is its calibrated confidence; otherwise it comes from
        the similarity."""
        if self.min_similarity is not None and (
            similarity < self.min_similarity or (confidence is not None and confidence < self.min_confidence)
        ):
            return None
        if confidence is not None:
            return round(min(1.0, max(confidence, 0.0)), 4)
        return round(min(1.0, max(similarity, 0.0) / self.full_similarity), 4)


RANKERS = ("hybrid", "embeddings")


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """How the step runs. ``ranker``: ``hybrid`` (BM25 + embeddings, calibrated) or ``embeddings``
    (cosine only). ``ask_model``: the LLM chooses among the offered turns; without it the ranker
    cites alone (hybrid: the turns at or above its calibrated threshold; embeddings: the top k)."""

    k: int = 8  # turns offered besides the pinned ones
    max_chars: int = 280  # per shown turn text
    max_message_chars: int = 1000
    check: CiteCheck = CiteCheck()
    use_grammar: bool = False  # json_object_schema mode: send a GBNF grammar instead of a schema
    ranker: str = "hybrid"
    ask_model: bool = True
    hybrid: HybridParams = DEFAULT_PARAMS


@dataclass
class RetrievalResult:
    """What the step decided and how long its parts took (milliseconds)."""

    offered: tuple[int, ...]
    offered_similarity: dict[int, float]
    cited: tuple[Cite, ...]
    rejected: tuple[int, ...]  # offered and cited, but failed the similarity check
    dropped: int  # cites of ids never offered: counted, never recorded
    dropped_ids: tuple[int, ...]
    duplicates: int
    raw: str
    parsed_as: str  # "json" | "markers" | "nothing" | "skipped" | "ranker" (no model asked)
    structured: str
    timings: dict[str, float] = field(default_factory=dict)
    source: str = "retrieval"  # the citations' source: which retriever produced them
    ranked: tuple[int, ...] = ()  # every candidate, best first (the shortlist is its head)
    confidence: dict[int, float] = field(default_factory=dict)  # hybrid ranker: every candidate's

    @property
    def cited_ids(self) -> tuple[int, ...]:
        return tuple(c.turn for c in self.cited)

    @property
    def best_offered_similarity(self) -> float | None:
        return max(self.offered_similarity.values()) if self.offered_similarity else None

    @property
    def overhead_ms(self) -> float:
        """Everything but the LLM call."""
        return sum(v for k, v in self.timings.items() if k != "llm_ms")


# --------------------------------------------------------------------------- 1. shortlist


def shortlist(
    message_vec: np.ndarray,
    candidates: Sequence[Candidate],
    k: int,
    pinned: Collection[int] = (),
    ranking: Ranking | None = None,
) -> list[Offered]:
    """The turns to offer: every pinned candidate plus the ``k`` best ranked others, and the user
    turns that offered assistant turns repeat (``assistant.retrieval.echoes``).

    ``candidates`` are the in-memory turns *before* the message (not the message's own turn).
    Ranking is by ``ranking.score`` when given (the hybrid ranker), else by cosine similarity;
    ties to the older turn. The result is in chronological order, the order the prompt shows.
    """
    sims = similarities(message_vec, [c.vector for c in candidates])
    key = ranking.score if ranking is not None else sims
    pinned = set(pinned)
    ranked = hybrid.order(key, [c.number for c in candidates])
    chosen: list[int] = [i for i in ranked if candidates[i].number in pinned]
    chosen += [i for i in ranked if candidates[i].number not in pinned][: max(k, 0)]
    # the user turn an offered assistant turn echoes is offered too (``echoes``: cited instead)
    index = {c.number: i for i, c in enumerate(candidates)}
    for i in list(chosen):
        src = echoes.echoed(candidates[i], candidates)
        if src is not None and index[src.number] not in chosen:
            chosen.append(index[src.number])
    chosen.sort(key=lambda i: candidates[i].number)
    conf = (lambda i: round(float(ranking.confidence[i]), 4)) if ranking is not None else (lambda i: None)
    lex = (lambda i: int(ranking.overlap[i])) if ranking is not None else (lambda i: 0)
    return [
        Offered(candidates[i], round(float(sims[i]), 6), candidates[i].number in pinned, conf(i), lex(i))
        for i in chosen
    ]


def rank_candidates(
    message: str, message_vec: np.ndarray, candidates: Sequence[Candidate], config: RetrievalConfig
) -> tuple[Ranking | None, list[int]]:
    """The hybrid ranking (None for the embeddings ranker) and every candidate's number, best first."""
    numbers = [c.number for c in candidates]
    sims = similarities(message_vec, [c.vector for c in candidates])
    if config.ranker == "embeddings" or not candidates:
        return None, [numbers[i] for i in hybrid.order(sims, numbers)]
    if config.ranker != "hybrid":
        raise ValueError(f"unknown ranker {config.ranker!r}; choose one of {', '.join(RANKERS)}")
    ranking = hybrid.rank(message, sims, [c.content for c in candidates], config.hybrid)
    return ranking, [numbers[i] for i in hybrid.order(ranking.score, numbers)]


# --------------------------------------------------------------------------- 3. parse and validate


def weigh_cites(
    ids: Sequence[int],
    similarity: dict[int, float],
    check: CiteCheck = CiteCheck(),
    confidence: dict[int, float] | None = None,
) -> tuple[list[Cite], list[int]]:
    """Apply the cite check to offered ids; returns (accepted cites, rejected ids).

    Public so the service can re-check cites against the answer vector too."""
    cites, rejected = [], []
    confidence = confidence or {}
    for turn in ids:
        weight = check.weigh(similarity[turn], confidence.get(turn))
        if weight is None:
            rejected.append(turn)
        else:
            cites.append(Cite(turn, weight, similarity[turn]))
    return cites, rejected


def validate(
    ids: Sequence[int], offered: Sequence[Offered], check: CiteCheck = CiteCheck()
) -> tuple[list[Cite], list[int], list[int], int]:
    """(cites, rejected ids, dropped ids, duplicates). Order of first mention is kept."""
    similarity = {o.number: o.similarity for o in offered}
    confidence = {o.number: o.confidence for o in offered if o.confidence is not None}
    seen: set[int] = set()
    kept, dropped, duplicates = [], [], 0
    for turn in ids:
        if turn in seen:
            duplicates += 1
            continue
        seen.add(turn)
        (kept if turn in similarity else dropped).append(turn)
    cites, rejected = weigh_cites(kept, similarity, check, confidence)
    return cites, rejected, dropped, duplicates


# --------------------------------------------------------------------------- the whole step


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000.0, 3)


def app_config(profile: ModelProfile) -> RetrievalConfig:
    """The retrieval step the app runs for a model, as its profile (``assistant.models.profile``)
    declares: the model chooses among the ranker's shortlist, or the ranker cites alone (``bench
    cites`` measures this one)."""
    return replace(RetrievalConfig(), k=profile.shortlist, ask_model=profile.cites == "model")


def _source(config: RetrievalConfig, client: Any) -> str:
    """The citations' source: the ranker, and the model when one chose (fits the 40-char column)."""
    if not config.ask_model:
        return config.ranker
    return f"{config.ranker}+{getattr(client, 'model', 'model')}"[:40]


def ranker_cites(offered: Sequence[Offered], config: RetrievalConfig) -> tuple[list[Cite], list[int]]:
    """What the ranker cites alone: hybrid, the offered turns at or above its calibrated threshold
    that share a word with the message or are close to it (best first, at most ``max_cites``);
    embeddings, every offered unpinned turn that passes the
    similarity check (the top k). Returns (cites, rejected ids)."""
    if config.ranker == "hybrid":
        conf = {o.number: o.confidence or 0.0 for o in offered}
        best = sorted(offered, key=lambda o: (-conf[o.number], o.number))
        params = config.hybrid
        chosen = [
            o
            for o in best
            if conf[o.number] >= params.threshold and (o.shared_words > 0 or o.similarity >= params.min_cosine_alone)
        ][: params.max_cites]
        return [Cite(o.number, round(conf[o.number], 4), o.similarity) for o in chosen], []
    best = sorted((o for o in offered if not o.pinned), key=lambda o: (-o.similarity, o.number))
    return weigh_cites([o.number for o in best], {o.number: o.similarity for o in best}, config.check)


def retrieve(
    client: Any,
    message: str,
    message_vec: np.ndarray,
    candidates: Sequence[Candidate],
    pinned: Collection[int] = (),
    config: RetrievalConfig = RetrievalConfig(),
) -> RetrievalResult:
    """Run the retrieval step. LLMError from the client propagates (the caller's turn is stored).

    ``client`` may be None when ``config.ask_model`` is off (the ranker cites alone)."""
    t0 = time.perf_counter()
    ranking, ranked = rank_candidates(message, message_vec, candidates, config)
    offered = shortlist(message_vec, candidates, config.k, pinned, ranking)
    timings = {"shortlist_ms": _ms(t0)}
    structured = getattr(client, "structured", "none")
    if structured not in STRUCTURED_MODES:
        structured = "none"
    ids = [o.number for o in offered]
    similarity = {o.number: o.similarity for o in offered}
    conf = {} if ranking is None else {c.number: round(float(p), 4) for c, p in zip(candidates, ranking.confidence)}
    common = {"source": _source(config, client), "ranked": tuple(ranked), "confidence": conf}
    if not offered:  # nothing to cite: no call
        return RetrievalResult(
            (),
            {},
            (),
            (),
            0,
            (),
            0,
            "",
            "skipped",
            structured,
            {**timings, "prompt_ms": 0.0, "llm_ms": 0.0, "validation_ms": 0.0},
            **common,
        )
    if not config.ask_model:
        t0 = time.perf_counter()
        cites, rejected = ranker_cites(offered, config)
        cites = echoes.prefer_user_words(cites, offered, Cite)
        timings.update(prompt_ms=0.0, llm_ms=0.0, validation_ms=_ms(t0))
        return RetrievalResult(
            tuple(ids), similarity, tuple(cites), tuple(rejected), 0, (), 0, "", "ranker", structured, timings, **common
        )
    t0 = time.perf_counter()
    lines = offered_lines(offered, config)
    messages = build_messages(message, offered, config, lines)
    options = request_options(structured, ids, config.use_grammar)
    timings["prompt_ms"] = _ms(t0)

    t0 = time.perf_counter()
    raw = client.complete(messages, max_tokens=min(256, 16 + 6 * len(ids)), temperature=0.0, **options)
    timings["llm_ms"] = _ms(t0)

    t0 = time.perf_counter()
    if raw and len(raw) > MAX_RAW_CHARS:  # a list of ids is short: more is a misbehaving model
        raise BadResponse(
            f"The model's retrieval answer was {len(raw):,} characters long "
            f"(a list of turn ids needs far fewer than {MAX_RAW_CHARS:,}); nothing was cited."
        )
    quoted = [o.candidate.content for o in offered] + [message]
    quoted += [shown_text(t, config.max_chars) for t in quoted] + lines
    named, parsed_as = parse_ids(raw or "", quoted)
    cites, rejected, dropped, duplicates = validate(named, offered, config.check)
    cites = echoes.prefer_user_words(cites, offered, Cite)
    result = RetrievalResult(
        offered=tuple(ids),
        offered_similarity=similarity,
        cited=tuple(cites),
        rejected=tuple(rejected),
        dropped=len(dropped),
        dropped_ids=tuple(dropped),
        duplicates=duplicates,
        raw=raw or "",
        parsed_as=parsed_as,
        structured=structured,
        timings=timings,
        **common,
    )
    timings["validation_ms"] = _ms(t0)
    return result
