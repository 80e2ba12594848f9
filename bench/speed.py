"""`lagmem bench speed`: per-step cost of the memory layer as a conversation grows.

A step is what the chat service does per stored turn: add the turn, cite the turns the answer leaned
on (the retrieval step), enforce the budget. Budget 4,000, lag 8, the default ``measured`` policy. Two
generated conversations (seeded), each in its own table (``--roles``):

* user: one speaker, every turn the person's, token costs 20-200, 3 turns in memory cited every step
  (no answer ids). Only one role ever has a prior, so the role, reuse and nearby factors of the
  decision (``Arrivals.factors``) are never measured.
* alternate: a person and an assistant, as the product stores them. User and assistant turns
  alternate; user turns cost 20-95 tokens and assistant turns 160-720 (LongMemEval's turns average
  44 and 347 words, about 57 and 450 tokens); a user turn is added and the budget enforced, an
  assistant turn is added, cites 3 turns in memory for its answer (``answer_turn``), 97% of the cites
  to user turns as in LongMemEval's evidence, and the budget is enforced. Assistant turns get lower
  priors. Here the role, reuse and nearby factors act as they do in the product.

The pure run gives each turn a fixed pattern of priors; the persisted run stores each turn as the app
does, its prior computed by the need model. Columns of each table (the JSON adds ``user_cite_share``):

* pure: ``MemoryLayer`` alone, every step timed.
* persisted: the same steps through ``assistant.store.MemoryStore`` on a fresh SQLite file (one unit
  of work per step: lock, layer from cache, rows written, commit), every step timed.
* naive: the seed's algorithm, which recomputes every turn's score from the whole citation log and
  re-sorts the whole history each step. It is O(history) per step, so it is timed on the last
  ``--naive-steps`` steps of each size (its state built by the pure run), not on every step.
* peak_mb: peak resident memory of the worker process that ran that size (each size runs in a
  fresh process).

Goal: persisted median <= 3 ms, pure median <= 0.2 ms, 1,000 -> 100,000 growth <= 1.3x.
A step's cost follows the number of turns in memory (the candidates scored at a decision), so the
table also shows the mean turns in memory and the pure median per turn in memory: under
``measured`` the memory holds more, shorter turns as a conversation goes on (importance is per
token), which moves the per-step median even though no step looks at the history.
"""

from __future__ import annotations

import json
import random
import resource
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

BUDGET = 4000
LAG = 8
CITES = 3
CONVERSATIONS = ("user", "alternate")
USER_TOKENS, ASSISTANT_TOKENS = (20, 95), (160, 720)  # alternate: LongMemEval's mix of turn lengths
USER_CITE_SHARE = 0.97  # alternate: the share of cites that go to user turns (LongMemEval's evidence)


def add_arguments(p) -> None:
    p.add_argument("--sizes", default="1000,10000,100000", help="conversation lengths in turns")
    p.add_argument("--seed", type=int, default=0, help="generator seed")
    p.add_argument(
        "--roles",
        default="user,alternate",
        help="conversations, one table each: user (one speaker) and/or alternate (a person and an assistant)",
    )
    p.add_argument("--no-persisted", action="store_true", help="skip the SQLite-persisted run")
    p.add_argument("--naive-steps", type=int, default=50, help="steps timed for the naive reference")
    p.add_argument("--json", metavar="OUT", help="write results as JSON")
    p.set_defaults(func=cmd_speed)


def plan(turns: int, seed: int, roles: str = "user") -> tuple[list[str], list[int], random.Random]:
    """(role, token cost) of each turn of a generated conversation, and the generator that goes on to
    choose its cites (``choose_cites``). ``user``: one speaker; ``alternate``: user and assistant
    turns in turn, the assistant's longer (module docstring)."""
    rng = random.Random(seed)
    if roles == "user":
        return ["user"] * turns, [rng.randint(20, 200) for _ in range(turns)], rng
    if roles != "alternate":
        raise ValueError(f"unknown conversation {roles!r}; one of {', '.join(CONVERSATIONS)}")
    who = ["user" if n % 2 else "assistant" for n in range(1, turns + 1)]
    return who, [rng.randint(*(USER_TOKENS if r == "user" else ASSISTANT_TOKENS)) for r in who], rng


def prior_of(n: int, role: str) -> float:
    """A turn's need prior, as the app gives one (assistant turns lower): a fixed pattern, no I/O."""
    return (0.05 if role == "user" else 0.01) + (0.5 if role == "user" else 0.1) * ((n * 7919) % 100) / 100


def choose_cites(rng: random.Random, roles: str, role: str, active: list[int], who: list[str]) -> list[int]:
    """The turns a step cites, among ``active`` (in memory before the step's turn arrived). ``user``:
    3 of them, every step. ``alternate``: none for a user turn (the question); for an assistant turn 3,
    each a user turn with probability ``USER_CITE_SHARE``."""
    if roles == "user":
        return rng.sample(active, min(CITES, len(active)))
    if role == "user":
        return []
    users = [n for n in active if who[n - 1] == "user"]
    others = [n for n in active if who[n - 1] != "user"]
    to_others = sum(rng.random() >= USER_CITE_SHARE for _ in range(CITES))
    pick = rng.sample(others, min(to_others, len(others)))
    return pick + rng.sample(users, min(CITES - len(pick), len(users)))


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def _naive_step(turns: dict, log: list, now: int, budget: int, lag: int, decay: float = 0.999) -> list[int]:
    """The seed's way: score every stored turn from the full log, sort all, evict down to budget."""
    score = {n: 0.0 for n in turns}
    for turn, step in log:
        score[turn] += decay ** (now - step)
    active = [n for n, (tok, on) in turns.items() if on]
    used = sum(turns[n][0] for n in active)
    victims = []
    for n in sorted(active, key=lambda n: (score[n], n)):
        if used <= budget:
            break
        if now - n < lag:
            continue
        victims.append(n)
        used -= turns[n][0]
    return victims


def run_size(turns: int, seed: int = 0, persisted: bool = True, naive_steps: int = 50, roles: str = "user") -> dict:
    from memory.layer import MemoryLayer
    from memory.types import MemorySettings

    who, costs, rng = plan(turns, seed, roles)
    answers = roles != "user"  # an assistant turn's cites name it as their answer, as the service's do
    settings = MemorySettings(budget=BUDGET, lag=LAG)
    layer = MemoryLayer(settings)
    pure: list[float] = []
    in_memory: list[int] = []  # turns in memory after each step: what the cost should follow
    cites_plan: list[list[int]] = []
    perf = time.perf_counter
    for n in range(1, turns + 1):
        role = who[n - 1]
        pick = choose_cites(rng, roles, role, layer.active_numbers(), who)  # the cite choice is not timed
        cites_plan.append(pick)
        t0 = perf()
        layer.add_turn(role, costs[n - 1], prior=prior_of(n, role))  # as the app: a need prior
        if pick:
            layer.cite(pick, answer_turn=n if answers else None)
        layer.enforce_budget()
        pure.append(perf() - t0)
        in_memory.append(len(layer.active_numbers()))
    # naive reference on the last steps, from the full history the pure run built
    naive: list[float] = []
    state = {t.number: (t.tokens, t.active) for t in layer.turns()}
    log = [(c.turn, c.step) for c in layer.citations()]
    for k in range(naive_steps):
        t0 = perf()
        _naive_step(state, log, turns + k, BUDGET, LAG)
        naive.append(perf() - t0)
    cited = [who[c - 1] for pick in cites_plan for c in pick]
    out = {
        "conversation": roles,
        "turns": turns,
        "user_cite_share": cited.count("user") / len(cited) if cited else None,
        "pure_median_ms": 1e3 * statistics.median(pure),
        "pure_p99_ms": 1e3 * _pct(pure, 0.99),
        "mean_active_turns": statistics.mean(in_memory),
        "pure_us_per_active_turn": 1e6 * statistics.median(pure) / statistics.mean(in_memory),
        "naive_median_ms": 1e3 * statistics.median(naive) if naive else None,
        "persisted_median_ms": None,
        "persisted_p99_ms": None,
    }
    if persisted:
        out.update(_persisted(who, costs, cites_plan, settings, answers))
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _persisted(who: list[str], costs: list[int], cites_plan: list[list[int]], settings, answers: bool) -> dict:
    from assistant.store import MemoryStore
    from storage.db import make_engine

    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'speed.db'}")
        store = MemoryStore(engine)
        conv = store.create("speed", settings)
        perf = time.perf_counter
        for n, (role, cost, pick) in enumerate(zip(who, costs, cites_plan), start=1):
            t0 = perf()
            with store.transaction(conv) as tx:
                tx.add_turn(role, f"turn {n}", cost)
                if pick:
                    tx.cite(pick, answer_turn=n if answers else None)
                tx.enforce()
            times.append(perf() - t0)
        engine.dispose()
    return {"persisted_median_ms": 1e3 * statistics.median(times), "persisted_p99_ms": 1e3 * _pct(times, 0.99)}


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.3f}"


TITLES = {
    "user": "one speaker (every turn the user's), 3 citations per step",
    "alternate": (
        f"a person and an assistant (alternating; user turns {USER_TOKENS[0]}-{USER_TOKENS[1]} tokens, "
        f"assistant {ASSISTANT_TOKENS[0]}-{ASSISTANT_TOKENS[1]}; {CITES} citations per answer, "
        f"{USER_CITE_SHARE:.0%} to user turns)"
    ),
}
HEAD = [
    "turns",
    "mean_active_turns",
    "pure_median_ms",
    "pure_p99_ms",
    "pure_us_per_active_turn",
    "persisted_median_ms",
    "persisted_p99_ms",
    "naive_median_ms",
    "peak_mb",
]


def _table(roles: str, results: list[dict]) -> None:
    print(f"Speed, {TITLES[roles]}: budget {BUDGET} tokens, lag {LAG}, policy measured")
    print("  ".join(HEAD))
    for r in results:
        print("  ".join(str(r[h]).rjust(len(h)) if h == "turns" else _fmt(r[h]).rjust(len(h)) for h in HEAD))
    if len(results) > 1:
        a, b = results[0], results[-1]
        for key in ("pure_median_ms", "pure_us_per_active_turn", "persisted_median_ms"):
            if a[key] and b[key]:
                print(f"growth {a['turns']} -> {b['turns']} turns, {key}: {b[key] / a[key]:.2f}x")


def cmd_speed(args) -> int:
    sizes = [int(x) for x in str(args.sizes).split(",") if x.strip()]
    kinds = [x.strip() for x in str(args.roles).split(",") if x.strip()]
    unknown = [k for k in kinds if k not in CONVERSATIONS]
    if unknown or not kinds:
        print(f"--roles takes {' and/or '.join(CONVERSATIONS)}, got {args.roles!r}", file=sys.stderr)
        return 2
    results = []
    for n, roles in enumerate(kinds):
        mine = []
        for size in sizes:
            print(f"running {roles}, {size} turns ...", file=sys.stderr, flush=True)
            # a fresh process per size, so peak memory is that size's own
            with ProcessPoolExecutor(max_workers=1) as pool:
                job = pool.submit(run_size, size, args.seed, not args.no_persisted, args.naive_steps, roles)
                mine.append(job.result())
        if n:
            print()
        _table(roles, mine)
        results += mine
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "results": results,
                    "settings": {
                        "budget": BUDGET,
                        "lag": LAG,
                        "cites_per_step": CITES,
                        "seed": args.seed,
                        "naive_steps": args.naive_steps,
                        "conversations": kinds,
                    },
                },
                indent=2,
            )
        )
    return 0
