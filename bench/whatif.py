"""`python -m bench.whatif`: how long a what-if replay of a long stored conversation takes.

A seeded conversation of ``--turns`` turns (default 10,000) is stored in a fresh SQLite file
through ``assistant.replay`` (in one transaction): user and assistant turns of 20-200 words, facts
cited again much later, recent turns cited, and pins, unpins, restores and feedback now and then.
Then, each timed ``--repeat`` times (median shown):

* load: read the stored conversation through the store (``assistant.whatif.load``);
* replay: one what-if under another policy and budget (``assistant.whatif.run``), as the
  inspector's panel and ``lagmem whatif`` do;
* compare: all five policies (the panel's side-by-side table).

Target: load + one what-if replay of 10,000 turns <= 2 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from assistant import whatif as W
from assistant.replay import replay, settings_from
from assistant.store import MemoryStore
from memory import transcript as T
from memory.tokens import WordsCounter
from storage.db import make_engine

WORDS = "plan trip budget garden recipe train ticket museum river dinner friday meeting notes call".split()


def conversation(turns: int, seed: int = 0) -> T.Transcript:
    """A long conversation in the saved format: facts stated once and asked about much later."""
    rng = random.Random(seed)
    items: list = []
    facts: list[int] = []
    n = 0
    while n < turns:
        n += 1
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 200)))
        items.append(T.TurnLine(n, "user", text))
        if rng.random() < 0.15:
            facts.append(n)
        if n >= turns:
            break
        n += 1
        cites = {rng.choice(facts)} if facts and rng.random() < 0.5 else set()
        cites |= set(rng.sample(range(max(1, n - 6), n), k=min(2, n - 1)))
        items.append(
            T.TurnLine(
                n,
                "assistant",
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120))),
                tuple((c, 1.0) for c in sorted(cites)),
            )
        )
        r = rng.random()
        if r < 0.01 and facts:
            items.append(T.EventLine("pin", rng.choice(facts)))
        elif r < 0.02 and facts:
            items.append(T.EventLine("unpin", rng.choice(facts)))
        elif r < 0.04:
            items.append(T.EventLine("restore", rng.randint(1, n)))
        elif r < 0.06:
            items.append(T.EventLine("feedback", n, rng.choice([-1.0, 1.0])))
    header = {
        "lagmem": 1,
        "title": f"what-if benchmark ({turns} turns)",
        "budget": 4000,
        "lag": 8,
        "policy": "measured",
    }
    return T.Transcript(header, items)


def _timed(fn, repeat: int) -> tuple[tuple[float, float], object]:
    """(median wall seconds, median CPU seconds of this process), and the last result. On a
    shared machine the CPU time is the steadier figure; the wall time is what a user waits."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return (statistics.median(walls), statistics.median(cpus)), out


def _fmt(t: tuple[float, float]) -> str:
    return f"{t[0]:6.3f} s wall  {t[1]:6.3f} s cpu"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.whatif", description=__doc__.split("\n\n")[0])
    p.add_argument("--turns", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lagmem-whatif-bench-") as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'bench.db'}")
        try:
            store = MemoryStore(engine)
            t = conversation(args.turns, args.seed)
            t0 = time.perf_counter()
            conv = replay(store, t, WordsCounter(), settings_from(t.header), atomic=True).conversation_id
            stored = time.perf_counter() - t0
            load_s, rec = _timed(lambda: W.load(store, conv), args.repeat)
            other = W.settings_for(rec.settings, policy="lru", budget=3000)
            run_s, result = _timed(lambda: W.run(rec, other), args.repeat)
            own_s, _ = _timed(lambda: W.run(rec), args.repeat)
            cmp_s, results = _timed(lambda: W.compare(rec), max(1, args.repeat // 2))
        finally:
            engine.dispose()
    print(
        f"What-if replay: {args.turns} turns stored in SQLite ({len(t.items)} lines; stored in {stored:.1f} s), "
        f"median of {args.repeat}"
    )
    slowest = max(run_s, own_s)
    print(f"load (read through the store):        {_fmt(load_s)}")
    print(
        f"what-if lru, budget 3000:             {_fmt(run_s)}  ({len(result.evictions)} evictions, {len(result.misses)} misses)"
    )
    print(f"what-if own settings (measured 4000): {_fmt(own_s)}")
    print(
        f"load + the slower what-if:            {_fmt((load_s[0] + slowest[0], load_s[1] + slowest[1]))}   (goal <= 2 s)"
    )
    print(f"all five policies (the table):        {_fmt(cmp_s)}")
    for r in W.comparison_rows(results):
        print(
            f"  {r['policy']:<11} misses {r['misses']:>5}  wanted kept {r['wanted_kept']}/{r['wanted_turns']}{'  best' if r['best'] else ''}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
