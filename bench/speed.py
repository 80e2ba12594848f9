"""`lagmem bench speed`: per-step cost of the memory layer as a conversation grows.

A step is what the chat service does per stored turn: add the turn, cite ~3 turns in memory (the
retrieval step), enforce the budget. Generated conversation: token costs 20-200 (seeded), budget
4,000, lag 8, the default ``measured`` policy.

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


def add_arguments(p) -> None:
    p.add_argument("--sizes", default="1000,10000,100000", help="conversation lengths in turns")
    p.add_argument("--seed", type=int, default=0, help="generator seed")
    p.add_argument("--no-persisted", action="store_true", help="skip the SQLite-persisted run")
    p.add_argument("--naive-steps", type=int, default=50, help="steps timed for the naive reference")
    p.add_argument("--json", metavar="OUT", help="write results as JSON")
    p.set_defaults(func=cmd_speed)


def _plan(turns: int, seed: int) -> tuple[list[int], random.Random]:
    rng = random.Random(seed)
    return [rng.randint(20, 200) for _ in range(turns)], rng


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


def run_size(turns: int, seed: int = 0, persisted: bool = True, naive_steps: int = 50) -> dict:
    from memory.layer import MemoryLayer
    from memory.types import MemorySettings

    costs, rng = _plan(turns, seed)
    settings = MemorySettings(budget=BUDGET, lag=LAG)
    layer = MemoryLayer(settings)
    pure: list[float] = []
    in_memory: list[int] = []  # turns in memory after each step: what the cost should follow
    cites_plan: list[list[int]] = []
    perf = time.perf_counter
    for n in range(1, turns + 1):
        active = layer.active_numbers()  # the cite choice is not timed
        pick = rng.sample(active, min(CITES, len(active)))
        cites_plan.append(pick)
        t0 = perf()
        layer.add_turn("user", costs[n - 1], prior=0.05 + 0.5 * ((n * 7919) % 100) / 100)  # as the app: a need prior
        layer.cite(pick)
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
    out = {
        "turns": turns,
        "pure_median_ms": 1e3 * statistics.median(pure),
        "pure_p99_ms": 1e3 * _pct(pure, 0.99),
        "mean_active_turns": statistics.mean(in_memory),
        "pure_us_per_active_turn": 1e6 * statistics.median(pure) / statistics.mean(in_memory),
        "naive_median_ms": 1e3 * statistics.median(naive) if naive else None,
        "persisted_median_ms": None,
        "persisted_p99_ms": None,
    }
    if persisted:
        out.update(_persisted(costs, cites_plan, settings))
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _persisted(costs: list[int], cites_plan: list[list[int]], settings) -> dict:
    from assistant.store import MemoryStore
    from storage.db import make_engine

    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'speed.db'}")
        store = MemoryStore(engine)
        conv = store.create("speed", settings)
        perf = time.perf_counter
        for n, (cost, pick) in enumerate(zip(costs, cites_plan), start=1):
            t0 = perf()
            with store.transaction(conv) as tx:
                tx.add_turn("user", f"turn {n}", cost)
                tx.cite(pick)
                tx.enforce()
            times.append(perf() - t0)
        engine.dispose()
    return {"persisted_median_ms": 1e3 * statistics.median(times), "persisted_p99_ms": 1e3 * _pct(times, 0.99)}


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def cmd_speed(args) -> int:
    sizes = [int(x) for x in str(args.sizes).split(",") if x.strip()]
    results = []
    for size in sizes:
        print(f"running {size} turns ...", file=sys.stderr, flush=True)
        # a fresh process per size, so peak memory is that size's own
        with ProcessPoolExecutor(max_workers=1) as pool:
            results.append(pool.submit(run_size, size, args.seed, not args.no_persisted, args.naive_steps).result())
    head = [
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
    print(f"Speed: budget {BUDGET} tokens, lag {LAG}, {CITES} citations per step, policy measured")
    print("  ".join(head))
    for r in results:
        print("  ".join(str(r[h]).rjust(len(h)) if h == "turns" else _fmt(r[h]).rjust(len(h)) for h in head))
    if len(results) > 1:
        a, b = results[0], results[-1]
        for key in ("pure_median_ms", "pure_us_per_active_turn", "persisted_median_ms"):
            if a[key] and b[key]:
                print(f"growth {a['turns']} -> {b['turns']} turns, {key}: {b[key] / a[key]:.2f}x")
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
                    },
                },
                indent=2,
            )
        )
    return 0
