"""Held-out check of `measured` on LoCoMo: tune on all conversations but one, test on that one.

Issue 5 asks that `measured` be at least as good as the best of fifo, lru, accumulate and window
at every budget, with and without noise, on conversations it was not tuned on. With one LoCoMo
file this is done by leaving one conversation out at a time:

1. tune: for each setting of a small grid around the defaults, run `measured` on the other
   conversations (the `lagmem bench locomo` protocol: random placement, seeds 0-4, words tokens,
   every budget, noise 0 and the --noise value) and keep the setting with the best mean recall;
2. test: on the held-out conversation, compare that setting's recall with the best simple policy
   for each budget and noise: a win, a tie (equal to 4 decimals) or a loss.

    .venv/bin/python scripts/holdout.py [--data ../shared/data/locomo/locomo_dev.json] [--jobs 2]

Prints one line per fold and cell, then the count of wins, ties and losses. Placement is drawn
per subset (one random.Random(seed) shared across the conversations of the subset, in file
order), so a conversation's question times differ from those in the full-file benchmark.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import locomo, protocol, report  # noqa: E402
from memory.policies import Measured  # noqa: E402

BASELINES = ("fifo", "lru", "accumulate", "window")
GRID = {  # around the defaults (Measured's dataclass fields)
    "prior": (0.2, 0.4, 0.8),
    "size_power": (1.0, 1.5, 2.0),
    "background": (0.25, 0.5, 1.0),
}


def grid() -> list[dict[str, float]]:
    return [dict(zip(GRID, values)) for values in itertools.product(*GRID.values())]


@functools.cache
def _conversations(data: str, indices: tuple[int, ...]) -> tuple[list, list]:
    convs = [c for i, c in enumerate(locomo.load(data)) if i in indices]
    scale = locomo.token_scale("words")
    return convs, [[scale.count(t.text) for t in c.turns] for c in convs]


def recall(job: tuple) -> float:
    """Pooled evidence recall of one policy on some conversations, over seeds, at one budget."""
    data, indices, name, params, budget, noise, seeds = job
    convs, costs = _conversations(data, indices)
    scale = locomo.token_scale("words")
    spec = protocol.spec(name, **params)
    results = []
    for seed in seeds:
        results += protocol.run(convs, spec, budget, seed, scale, "random", noise, costs=costs)
    return report.metrics(results)["recall"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", default="../shared/data/locomo/locomo_dev.json", help="LoCoMo JSON file")
    p.add_argument("--budgets", default="1000,2000,4000", help="budgets in tokens")
    p.add_argument("--noise", type=int, default=2, help="the noisy setting (also run: noise 0)")
    p.add_argument("--seeds", default="0,1,2,3,4", help="placement seeds")
    p.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = p.parse_args(argv)
    from tqdm import tqdm

    budgets = [int(b) for b in args.budgets.split(",")]
    seeds = tuple(int(s) for s in args.seeds.split(","))
    noises = (0, args.noise)
    n = len(locomo.load(args.data))
    settings = grid()
    defaults = Measured()
    print(f"{n} conversations; grid of {len(settings)} settings of measured "
          f"({', '.join(f'{k} {v}' for k, v in GRID.items())}); defaults: "
          f"{', '.join(f'{k} {getattr(defaults, k)}' for k in GRID)}")
    wins = ties = losses = 0
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for held in range(n):
            train = tuple(i for i in range(n) if i != held)
            cells = [(b, k) for b in budgets for k in noises]
            jobs = [(args.data, train, "measured", s, b, k, seeds) for s in settings for b, k in cells]
            scores = list(tqdm(pool.map(recall, jobs), total=len(jobs), desc=f"tune without #{held}", file=sys.stderr))
            per = len(cells)
            best = max(range(len(settings)), key=lambda i: (sum(scores[i * per:(i + 1) * per]), -i))
            chosen = settings[best]
            test = [(args.data, (held,), "measured", chosen, b, k, seeds) for b, k in cells]
            test += [(args.data, (held,), name, {}, b, k, seeds) for b, k in cells for name in BASELINES]
            got = list(pool.map(recall, test))
            mine, base = got[:per], got[per:]
            print(f"held out #{held}: tuned on {list(train)} -> {chosen}")
            for c, (b, k) in enumerate(cells):
                others = dict(zip(BASELINES, base[c * len(BASELINES):(c + 1) * len(BASELINES)]))
                top = max(others, key=others.get)
                diff = round(mine[c], 4) - round(others[top], 4)
                verdict = "win" if diff > 0 else "tie" if diff == 0 else "loss"
                wins, ties, losses = wins + (verdict == "win"), ties + (verdict == "tie"), losses + (verdict == "loss")
                print(f"  B={b:<5} noise {k}: measured {mine[c]:.4f}  best simple {top} {others[top]:.4f}  {verdict}")
    print(f"held-out cells: {wins} wins, {ties} ties, {losses} losses")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
