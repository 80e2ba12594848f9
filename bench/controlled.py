"""Controlled conversations as text: facts a person states once and needs much later, amid small talk.

A conversation is ``exchanges`` pairs of (user turn, assistant answer), saved in the product's
format (``memory/transcript.py``: answers carry ``cites``, feedback is an event), so it is scored by
replaying it exactly as ``lagmem replay FILE`` does, priors and all (``bench/replay_score.py``):

* a **fact** is a user turn stating something about the person's life (``controlled_text.fact``);
* it is **confirmed** ``confirm`` (1-8) steps later by an answer that cites it and stood: liked
  (feedback +1) with probability ``liked_confirm``, otherwise no feedback (not disliked);
* it is **needed** ``need_gap`` (85-130) steps after it was stated: the person asks about it, and
  the answer cites it. That citation is the need: it counts as kept when the fact was still in
  memory, so the product recorded it (a citation of an evicted turn is dropped, ``Tx.cite``);
* every other user turn is **chatter**, cited by 1-3 answers (``chatter_cites``) within
  ``chatter_delay`` steps; a quarter of those answers (``liked_chatter``) are liked, the rest get no
  feedback. An answer is itself cited once, later, with probability ``answer_cited``.

So a fact carries less evidence than most chatter (one citation against one to three): a policy
keeps it only by what it says (the prior from its text) and by the kind of evidence it got (an
answer that stood, then a long silence). The header's budget is ``budget_for``: twice what a policy
that knew the facts would need to keep each one through its need beside the protected lag window
(the factor was set on seeds 101-104 so that the evidence alone can keep most facts and counting
citations cannot: a difficulty setting of the benchmark, chosen before scoring any other seed).

The needs are written beside the file (``<name>.needs.json``), with the generator's settings and
seed; a file without one is scored by the rule in ``needs_of``. Deterministic for a seed and a
token counter.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench import controlled_text as text
from memory import transcript as T

NEEDS_SUFFIX = ".needs.json"
FAR = 40  # without a needs file: a citation this many steps or more after its turn is a need


@dataclass(frozen=True)
class Need:
    """Turn ``fact`` is needed by the answer ``answer`` (which cites it)."""

    fact: int
    answer: int


@dataclass(frozen=True)
class Settings:
    exchanges: int = 180
    facts: int = 12
    confirm: tuple[int, int] = (1, 8)
    need_gap: tuple[int, int] = (85, 130)
    chatter_cites: tuple[int, int] = (1, 3)
    chatter_delay: tuple[int, int] = (1, 12)
    liked_chatter: float = 0.25
    liked_confirm: float = 0.5
    answer_cited: float = 0.2
    lag: int = 6
    headroom: float = 2.0


@dataclass
class Controlled:
    seed: int
    settings: Settings
    transcript: T.Transcript
    facts: list[int]
    needs: list[Need]
    meta: dict = field(default_factory=dict)


def generate(seed: int, count: Callable[[str], int], settings: Settings = Settings(), title: str = "") -> Controlled:
    """One controlled conversation; ``count`` prices a text in the replay's tokens (the header's budget)."""
    rng = random.Random(f"controlled:{seed}")
    s = settings
    steps = 2 * s.exchanges
    plan = _plan(rng, s)
    facts = {f: text.fact(rng) for f in plan.facts}
    users: dict[int, str] = {}
    for f in plan.facts:
        users[f] = text.with_context(rng, facts[f].statement, 0.3)
    for f, a in plan.need_at.items():
        users[a - 1] = text.with_context(rng, facts[f].question, 0.3)
    for a in plan.confirm_at.values():
        if a - 1 not in users:
            users[a - 1] = text.with_context(rng, text.planning_request(rng))
    items: list = []
    for n in range(1, steps + 1):
        if n % 2:
            items.append(T.TurnLine(n, "user", users.get(n) or text.chatter(rng)))
            continue
        cites = sorted(plan.cites.get(n, ()))
        need = next((f for f, a in plan.need_at.items() if a == n), None)
        confirm = next((f for f, a in plan.confirm_at.items() if a == n), None)
        if need is not None:
            content = text.answer(rng, facts[need].gist, recalled=True)
        elif confirm is not None:
            content = text.answer(rng, facts[confirm].gist)
        else:
            content = text.answer(rng, ack=n - 1 in facts)
        items.append(T.TurnLine(n, "assistant", content, tuple((c, 1.0) for c in cites)))
        if plan.liked.get(n):
            items.append(T.EventLine("feedback", n, 1.0))
    transcript = T.Transcript({}, items)
    tokens = [count(t.content) for t in transcript.turns]
    needs = [Need(f, a) for f, a in sorted(plan.need_at.items())]
    budget = budget_for(tokens, plan.facts, needs, s.lag, s.headroom)
    transcript.header = {
        "lagmem": T.FORMAT_VERSION,
        "title": title or f"controlled seed {seed}",
        "budget": budget,
        "lag": s.lag,
        "policy": "measured",
    }
    return Controlled(seed, s, transcript, sorted(plan.facts), needs)


@dataclass
class _Plan:
    facts: list[int]
    need_at: dict[int, int]  # fact -> answer step that needs it
    confirm_at: dict[int, int]  # fact -> answer step that confirms it
    cites: dict[int, set[int]]  # answer step -> turns it cites
    liked: dict[int, bool]


def _plan(rng: random.Random, s: Settings) -> _Plan:
    """Where facts, confirmations, needs and chatter citations go (answers are the even steps)."""
    steps = 2 * s.exchanges
    fact_steps: list[int] = []
    need_at: dict[int, int] = {}
    confirm_at: dict[int, int] = {}
    busy_user: set[int] = set()  # user steps holding a fact or a need question
    busy_answer: set[int] = set()  # answers that confirm or need a fact
    candidates = [n for n in range(1, steps - s.need_gap[0]) if n % 2]
    rng.shuffle(candidates)
    for stated in candidates:
        if len(fact_steps) == s.facts:
            break
        if stated in busy_user:
            continue
        needs = [
            a
            for a in range(stated + s.need_gap[0], min(stated + s.need_gap[1], steps) + 1)
            if a % 2 == 0 and a not in busy_answer and a - 1 not in busy_user
        ]
        confirms = [
            a
            for a in range(stated + s.confirm[0], stated + s.confirm[1] + 1)
            if a % 2 == 0 and a <= steps and a not in busy_answer and a - 1 not in busy_user
        ]
        if not needs or not confirms:
            continue
        need, confirm = rng.choice(needs), rng.choice(confirms)
        fact_steps.append(stated)
        need_at[stated], confirm_at[stated] = need, confirm
        busy_user.update((stated, need - 1))
        busy_answer.update((need, confirm))
    if len(fact_steps) < s.facts:
        raise ValueError(f"cannot place {s.facts} facts in {s.exchanges} exchanges; give more exchanges")
    cites: dict[int, set[int]] = {}
    for f in fact_steps:
        cites.setdefault(need_at[f], set()).add(f)
        cites.setdefault(confirm_at[f], set()).add(f)
    liked = {a: rng.random() < s.liked_confirm for a in confirm_at.values()}
    free = [a for a in range(2, steps + 1, 2) if a not in busy_answer]
    chatter_answers: set[int] = set()
    for n in range(1, steps + 1):
        if n in busy_user or (n % 2 == 0 and rng.random() >= s.answer_cited):
            continue
        times = rng.randint(*s.chatter_cites) if n % 2 else 1
        window = [a for a in free if n + s.chatter_delay[0] <= a <= n + s.chatter_delay[1]]
        for a in rng.sample(window, min(times, len(window))):
            cites.setdefault(a, set()).add(n)
            chatter_answers.add(a)
    liked.update({a: rng.random() < s.liked_chatter for a in sorted(chatter_answers)})
    return _Plan(sorted(fact_steps), need_at, confirm_at, cites, liked)


def budget_for(tokens: Sequence[int], facts: Sequence[int], needs: Sequence[Need], lag: int, headroom: float) -> int:
    """``headroom`` x (the most tokens of facts pending (stated, their last need not yet asked) at any
    step + the most tokens the last ``lag`` turns ever hold, protected from eviction). With headroom
    1 a policy that knew the facts could keep every one until needed; chatter shares the rest."""
    last = {f: f for f in facts}
    for n in needs:
        last[n.fact] = max(last.get(n.fact, n.fact), n.answer)
    steps = len(tokens)
    pending = max(
        (sum(tokens[f - 1] for f, end in last.items() if f <= t < end) for t in range(1, steps + 1)), default=0
    )
    window = max((sum(tokens[max(0, t - lag) : t]) for t in range(1, steps + 1)), default=0)
    return max(1, round(headroom * (pending + window)))


# ----- files -----------------------------------------------------------------------------------
def write(c: Controlled, path: Path, counter_name: str) -> None:
    """The conversation as ``path`` (the saved format) and its needs beside it."""
    path.write_text(T.write(c.transcript), encoding="utf-8")
    meta = {
        "seed": c.seed,
        "settings": asdict(c.settings),
        "tokens": counter_name,
        "facts": c.facts,
        "needs": [asdict(n) for n in c.needs],
    }
    needs_path(path).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def needs_path(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".jsonl") + NEEDS_SUFFIX)


def needs_of(transcript: T.Transcript, path: Path | None = None, far: int = FAR) -> tuple[list[Need], str]:
    """The needs of a saved conversation and where they came from: its ``.needs.json`` when there is
    one, else every citation made ``far`` or more steps after the turn it cites (a fact confirmed
    within a few steps and asked about dozens later; chatter is cited only soon after it is said)."""
    if path is not None and needs_path(path).exists():
        meta = json.loads(needs_path(path).read_text(encoding="utf-8"))
        try:
            return [Need(int(n["fact"]), int(n["answer"])) for n in meta["needs"]], needs_path(path).name
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{needs_path(path)}: not a needs file ({exc})") from None
    out = [Need(c, t.number) for t in transcript.turns for c, _ in t.cites if t.number - c >= far]
    return out, f"citations {far}+ steps after their turn"
