"""How far a perfect arrival prior would take ``measured`` (a diagnostic: nothing ships it).

The need estimator says, when a turn arrives, how likely a later question is to need it. This script
gives ``measured`` the prior that knows the answer (``--hit`` for a turn some question names as
evidence, ``--miss`` for the others) and scores it as ``lagmem bench holdout`` scores a held-out
conversation: each conversation placed alone (random placement, the given seeds), evidence recall
pooled over questions, gap closed = (recall - fifo) / (oracle - fifo). What such a prior cannot
reach is *when* a turn is needed: that is the oracle's remaining lead.

    .venv/bin/python scripts/label_prior_ceiling.py --data ../shared/data/locomo/locomo_dev.json \
        --budgets 1000,2000 --param citations=0
"""

from __future__ import annotations

import argparse

from bench import holdout, locomo, protocol


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", required=True, help="LoCoMo or LongMemEval JSON")
    ap.add_argument("--budgets", default="1000,2000,4000", help="budgets in words (default: 1000,2000,4000)")
    ap.add_argument("--seeds", default="0,1,2", help="placement seeds (default: 0,1,2, as the holdout tables)")
    ap.add_argument("--hit", type=float, default=0.5, help="prior of an evidence turn (default: 0.5)")
    ap.add_argument("--miss", type=float, default=0.1, help="prior of any other turn (default: 0.1)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="measured's constant")
    args = ap.parse_args(argv)
    params = {k: float(v) for k, v in (p.split("=", 1) for p in args.param)}
    seeds = [int(s) for s in args.seeds.split(",")]
    convs = locomo.load(args.data)
    # each conversation's perfect prior, computed once for every budget
    perfect = []
    for conv in convs:
        evidence = {e for q in conv.questions for e in q.evidence}
        perfect.append([[args.hit if t.number in evidence else args.miss for t in conv.turns]])
    runs = (
        ("fifo", protocol.spec("fifo"), False),
        ("oracle", protocol.spec("oracle"), False),
        ("label", protocol.spec("measured", lag=0, **params), True),
    )
    print(f"{args.data}: {len(convs)} conversations, prior {args.hit} / {args.miss}, measured {params or 'shipped'}")
    print(f"{'B':>6} {'fifo':>7} {'label':>7} {'oracle':>7} {'gap':>6}")
    for budget in (int(b) for b in args.budgets.split(",")):
        results: dict[str, list] = {name: [] for name, _, _ in runs}
        for i in range(len(convs)):  # each conversation placed alone, as holdout scores a held-out one
            for name, spec, with_prior in runs:
                priors = perfect[i] if with_prior else None
                results[name] += holdout.run_job((args.data, (i,), spec, budget, 0, tuple(seeds), priors))
        r = {name: holdout.recall(res) for name, res in results.items()}
        span = r["oracle"] - r["fifo"]
        gap = (r["label"] - r["fifo"]) / span if span else 0.0
        print(f"{budget:>6} {r['fifo']:>7.4f} {r['label']:>7.4f} {r['oracle']:>7.4f} {gap:>6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
