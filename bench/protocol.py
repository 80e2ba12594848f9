"""Runs one policy through the LoCoMo protocol on a ``MemoryLayer``; one result per question.

Per conversation: turns arrive in order (turn n at step n), each with its role (``Turn.role``: the
speaker in a person-assistant chat, ``user`` for LoCoMo's two people), and the budget is enforced
after each arrival. After turn n, the questions placed there are asked in file order. A question is not a turn:
it takes no budget and does not advance the step. For each question:

1. score: how many of its evidence turns are in memory (active in the layer) right now;
2. then it acts as a retrieval step: it cites its evidence turns still in memory (so a question
   never helps itself) plus, with ``noise`` K, K random in-memory non-evidence turns, all under a
   unique negative answer id (``-(qa index + 1)``); with a ``cite_source`` (a retriever, see
   ``bench/cite_source.py``) it cites what that retriever picks among the turns in memory instead;
3. feedback on that answer id: +1 when all its evidence was in memory, else ``kept / evidence - 1``
   (-1 when none was kept; partial credit, -0.5 when half was, see ``memory.evidence.credit``): the
   correctness signal a policy may weight by; given with and without noise, baselines ignore it.

Lag: baselines (fifo, lru, window, accumulate, userfirst, largest) run with lag 0, which reproduces the reference
figures; ``measured`` runs with its own benchmark lag (``MEASURED_BENCH_LAG``) unless one is given.
A lag given to a spec reaches every policy, accumulate included (its own lag 0 is its default, not
an override): ``build`` sets the policy's lag to the spec's, so the layer runs with exactly the lag
``bench_lag`` reports, and ``ran_lag`` reads it back from a layer for the JSON. With lag 0 a turn
larger than the whole budget is evicted on arrival (after the policy's lower-ranked turns), so
"in memory" always means active in the layer and within budget.

Noise draws use ``random.Random(f"noise:{seed}:{sample_id}")``: deterministic per run.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bench.locomo import Conversation, Question, TokenScale, place
from bench.oracle import OraclePolicy, needs_from_schedule, solve
from memory.layer import MemoryLayer
from memory.policies import POLICIES, Policy, make_policy
from memory.types import MemorySettings

# Lag each policy runs with in the benchmark unless the caller sets one.
BENCH_LAGS = {"fifo": 0, "lru": 0, "window": 0, "accumulate": 0, "userfirst": 0, "largest": 0, "oracle": 0}
MEASURED_BENCH_LAG = 0  # what ``lagmem bench holdout`` selects on LoCoMo (lag 4 loses at B = 1000)


# (conversation, question, turns in memory) -> the turns the question's retrieval step cites,
# as numbers or (number, weight)
CiteSource = Callable[[Conversation, Question, list[int]], Sequence[int | tuple[int, float]]]


@dataclass(frozen=True, slots=True)
class QuestionResult:
    sample_id: str
    index: int
    category: int
    evidence: int
    kept: int


@dataclass(frozen=True)
class PolicySpec:
    """A policy by name with parameters; ``label`` names it in tables (default: the name)."""

    name: str
    params: tuple[tuple[str, object], ...] = ()
    label: str = ""
    lag: int | None = None

    @property
    def title(self) -> str:
        return self.label or self.name

    def build(self) -> Policy:
        """The policy, with its lag set to ``bench_lag()`` when it has a lag of its own (accumulate),
        so that lag cannot silently override the one the benchmark asked for."""
        policy = make_policy(self.name, **dict(self.params))
        if policy.lag is not None:
            policy.lag = self.bench_lag()
        return policy

    def bench_lag(self) -> int:
        if self.lag is not None:
            return self.lag
        return BENCH_LAGS.get(self.name, MEASURED_BENCH_LAG)


def spec(name: str, label: str = "", lag: int | None = None, **params) -> PolicySpec:
    if name != "oracle" and name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; choose from {', '.join([*POLICIES, 'oracle'])}")
    return PolicySpec(name, tuple(sorted(params.items())), label, lag)


def ran_lag(policy: PolicySpec) -> int:
    """The lag a layer actually runs with for this spec (what ``run`` gives the layer), read back
    from a layer built the way ``run_conversation`` builds it: what the JSON records."""
    if policy.name == "oracle":
        return OraclePolicy({}).lag or 0
    return MemoryLayer(MemorySettings(budget=1, lag=policy.bench_lag()), policy.build()).lag


def run_conversation(
    conv: Conversation,
    schedule: Mapping[int, Sequence[Question]],
    policy: Policy,
    budget: int,
    lag: int,
    costs: Sequence[int],
    noise: int = 0,
    noise_rng: random.Random | None = None,
    priors: Sequence[float] | None = None,
    cite_source: CiteSource | None = None,
) -> list[QuestionResult]:
    """Run one conversation; ``costs[i]`` is turn i+1's integer cost, ``budget`` in the same units;
    ``priors[i]`` (optional) is turn i+1's expected need at arrival, from the need estimator."""
    layer = MemoryLayer(MemorySettings(budget=budget, lag=lag), policy)
    rng = noise_rng or random.Random(0)
    out: list[QuestionResult] = []
    for turn in conv.turns:
        layer.add_turn(turn.role, costs[turn.number - 1], prior=priors[turn.number - 1] if priors else None)
        layer.enforce_budget()
        questions = schedule.get(turn.number, ())
        active = set(layer.active_numbers()) if questions else set()  # citing does not change it
        for q in questions:
            kept = [e for e in q.evidence if e in active]
            out.append(QuestionResult(conv.sample_id, q.index, q.category, len(q.evidence), len(kept)))
            cites = list(kept) if cite_source is None else list(cite_source(conv, q, sorted(active)))
            if noise:
                ev = set(q.evidence)
                pool = [n for n in sorted(active) if n not in ev]
                cites += rng.sample(pool, min(noise, len(pool)))
            answer = -(q.index + 1)
            layer.cite(cites, answer_turn=answer)
            layer.feedback(answer, 1.0 if len(kept) == len(q.evidence) else len(kept) / len(q.evidence) - 1.0)
    return out


def run(
    conversations: Sequence[Conversation],
    policy: PolicySpec,
    budget_tokens: int,
    seed: int,
    scale: TokenScale,
    placement: str = "random",
    noise: int = 0,
    costs: Sequence[Sequence[int]] | None = None,
    priors: Sequence[Sequence[float]] | None = None,
    cite_source: CiteSource | None = None,
) -> list[QuestionResult]:
    """All conversations of a file under one policy, budget and seed (placement rng shared).
    ``priors`` (one list per conversation) are the need estimator's priors, given to the layer."""
    schedules = place(conversations, placement, seed)
    if costs is None:
        costs = [[scale.count(t.text) for t in c.turns] for c in conversations]
    budget = scale.budget(budget_tokens)
    results: list[QuestionResult] = []
    for k, (conv, schedule, cost) in enumerate(zip(conversations, schedules, costs)):
        if policy.name == "oracle":
            value, plan = solve({i + 1: c for i, c in enumerate(cost)}, needs_from_schedule(schedule), budget)
            pol: Policy = OraclePolicy(plan)
        else:
            pol = policy.build()
        rng = random.Random(f"noise:{seed}:{conv.sample_id}")
        res = run_conversation(
            conv,
            schedule,
            pol,
            budget,
            policy.bench_lag(),
            cost,
            noise,
            rng,
            priors[k] if priors is not None else None,
            cite_source,
        )
        if policy.name == "oracle" and sum(r.kept for r in res) != round(value):
            raise AssertionError(f"oracle replay scored {sum(r.kept for r in res)}, plan {value}")
        results.extend(res)
    return results
