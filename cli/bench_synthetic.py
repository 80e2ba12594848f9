"""`lagmem bench synthetic`: the synthetic traces, as text through the product's replay (the
headline) and as bare traces (the ablation, with the lag sweep). Options: ``cli/bench_replayed.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

from cli.bench_replayed import (
    GOAL_SYNTHETIC,
    TEXT_POLICIES,
    _replay_job,
    _variants,
    counter,
)


def register(sub, ints, names) -> None:
    """Add ``synthetic`` to the bench subparsers."""
    s = sub.add_parser(
        "synthetic",
        help="retention of sharply, late reused facts amid briefly cited chatter, as text through the replay",
        description=(
            "Generated conversations where a fact is stated once, confirmed once, and needed again "
            "40-200 steps later, amid chatter cited in a brief burst by answers that turn out wrong. "
            "Headline: each trace rendered as a text conversation and replayed through the product as "
            "`lagmem replay` does (need priors computed from the text by the shipped estimator): the share "
            "of reused facts still in memory when needed, per policy. Ablation: the same traces without "
            "text (no priors), per policy and for each lag of the sweep."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    s.add_argument("--seeds", type=ints, default=[0, 1, 2, 3, 4], help="generator seeds (pooled)")
    s.add_argument("--turns", type=int, default=600, help="turns per generated trace")
    s.add_argument(
        "--budget",
        type=int,
        default=None,
        help="trace budget in tokens (default: 1.5x the tokens of facts pending reuse, per trace)",
    )
    s.add_argument(
        "--policies",
        type=names,
        default=names("fifo,lru,accumulate,window,userfirst,largest,measured"),
        help="policies of the trace ablation and the lag sweep",
    )
    s.add_argument(
        "--text-policies",
        type=_variants,
        default=_variants(TEXT_POLICIES),
        metavar="P[,P[k=v]...]",
        help="policies of the text headline; POLICY[NAME=NUMBER,...] sets parameters",
    )
    s.add_argument(
        "--text-lag", type=int, default=None, help="lag of the text replay (default: bench.synthetic_text.TEXT_LAG)"
    )
    s.add_argument("--lags", type=ints, default=ints("0,1,2,4,8,16"), help="lag sweep values (traces)")
    s.add_argument(
        "--lag",
        type=int,
        default=None,
        help="lag of every policy in the trace table (default: bench.synthetic.SYNTHETIC_LAG, for all)",
    )
    s.add_argument(
        "--confirm",
        type=ints,
        default=[1, 3],
        metavar="LO,HI",
        help="steps from a fact's statement to its confirming citation (drawn in LO..HI)",
    )
    s.add_argument("--param", action="append", metavar="POLICY.NAME=VALUE", help="trace policy parameter (repeatable)")
    s.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes for the replays")
    s.add_argument("--no-text", action="store_true", help="skip the text headline (traces only)")
    s.add_argument("--plot", metavar="OUT.png", help="write retention vs lag, one line per policy")
    s.add_argument("--json", metavar="OUT", help="write results and settings as JSON")
    s.set_defaults(func=cmd_synthetic)


def _trace_job(args: tuple) -> tuple[str, int | None, int, int, int]:
    seed, turns, budget, sp, lag, confirm = args
    from bench import synthetic

    trace = synthetic.generate(seed, turns=turns, confirm=confirm)
    b = budget if budget is not None else synthetic.default_budget(trace)
    policy = sp.build()
    lag = sp.bench_lag() if lag is None else lag
    policy.lag = lag  # the sweep overrides a policy's own lag too (accumulate's 0)
    kept, needed = synthetic.run(trace, policy, b, lag)
    return sp.title, args[4], kept, needed, b


def _rendered(seeds, turns: int, confirm: tuple[int, int], lag: int) -> list[tuple[str, str, list, int, int]]:
    """(name, saved text, needs, budget, turns) of each seed's trace rendered as a conversation."""
    from bench import synthetic, synthetic_text
    from memory import transcript as T

    out = []
    for seed in seeds:
        transcript, needs = synthetic_text.render(
            synthetic.generate(seed, turns=turns, confirm=confirm), counter().count, lag
        )
        out.append((f"seed {seed}", T.write(transcript), needs, transcript.header["budget"], len(transcript.turns)))
    return out


def cmd_synthetic(args) -> int:
    from bench import protocol, report, synthetic, synthetic_text
    from cli.bench_jobs import params as parse_params
    from cli.bench_jobs import run_jobs as _run_jobs

    params = parse_params(args.param)
    if len(args.confirm) != 2 or not 1 <= args.confirm[0] <= args.confirm[1]:
        raise SystemExit(f"--confirm {args.confirm}: expected LO,HI with 1 <= LO <= HI")
    confirm = tuple(args.confirm)
    text_rows, text_settings = [], None
    if not args.no_text:
        lag = args.text_lag if args.text_lag is not None else synthetic_text.TEXT_LAG
        convs = _rendered(args.seeds, args.turns, confirm, lag)
        jobs = [(name, saved, needs, v, None, None) for name, saved, needs, *_ in convs for v in args.text_policies]
        got = {(n, t): k for n, t, k in _run_jobs(_replay_job, jobs, args.jobs, "synthetic as text")}
        for v in args.text_policies:
            hits = [x for name, *_ in convs for x in got[(name, v.title)]]
            per = [sum(got[(name, v.title)]) / len(got[(name, v.title)]) for name, *_ in convs]
            text_rows.append(
                {
                    "policy": v.title,
                    "lag": lag,
                    "retention": sum(hits) / max(1, len(hits)),
                    "reuses": len(hits),
                    "per_seed": per,
                }
            )
        text_settings = {
            "lag": lag,
            "budgets": [c[3] for c in convs],
            "turns": [c[4] for c in convs],
            "tokens": counter().name,
        }
    main_lag = args.lag if args.lag is not None else synthetic.SYNTHETIC_LAG  # every policy at the same lag
    specs = [protocol.spec(n, lag=main_lag, **params.get(n, {})) for n in args.policies]
    jobs = [(seed, args.turns, args.budget, sp, None, confirm) for sp in specs for seed in args.seeds]
    jobs += [(seed, args.turns, args.budget, sp, L, confirm) for sp in specs for L in args.lags for seed in args.seeds]
    acc: dict[tuple[str, int | None], list[int]] = {}
    budgets: set[int] = set()
    for title, lag, kept, needed, b in _run_jobs(_trace_job, jobs, 1, "synthetic traces"):
        a = acc.setdefault((title, lag), [0, 0])
        a[0] += kept
        a[1] += needed
        budgets.add(b)
    trace_rows = [
        {
            "policy": sp.title,
            "lag": sp.bench_lag(),
            "retention": acc[(sp.title, None)][0] / max(1, acc[(sp.title, None)][1]),
            "reuses": acc[(sp.title, None)][1],
        }
        for sp in specs
    ]
    sweep = [
        {"policy": sp.title, "lag": L, "retention": acc[(sp.title, L)][0] / max(1, acc[(sp.title, L)][1])}
        for sp in specs
        for L in args.lags
    ]
    head = (
        f"Synthetic: retention of reused facts ({len(args.seeds)} seeds x {args.turns} trace turns, confirmation "
        f"after {confirm[0]}-{confirm[1]} trace steps)"
    )
    print(head)
    if text_rows:
        print(
            f"\nas text through the replay (the headline): priors from the text, lag {text_settings['lag']}, "
            f"budget per conversation {','.join(map(str, text_settings['budgets']))} tokens ({counter().name}), "
            f"{','.join(map(str, text_settings['turns']))} turns"
        )
        _print_rows(text_rows, per_seed=True)
        m = next((r for r in text_rows if r["policy"] == "measured"), None)
        if m is not None:
            print(
                f"goal: measured as text >= {GOAL_SYNTHETIC}: {'met' if m['retention'] >= GOAL_SYNTHETIC else 'MISSED'} "
                f"({m['retention']:.3f})"
            )
    print(
        f"\ntraces without text (ablation: no priors), every policy at lag {main_lag}, budget "
        f"{args.budget or 'auto: ' + ','.join(map(str, sorted(budgets)))} tokens"
    )
    _print_rows(trace_rows)
    width = max(len(r["policy"]) for r in trace_rows)
    print("\nlag sweep (traces, retention):")
    print(f"{'policy'.ljust(width)}  " + "  ".join(f"L={L:<4}" for L in args.lags))
    for sp in specs:
        vals = [acc[(sp.title, L)][0] / max(1, acc[(sp.title, L)][1]) for L in args.lags]
        print(f"{sp.title.ljust(width)}  " + "  ".join(f"{v:.3f} " for v in vals))
    settings = {
        "seeds": args.seeds,
        "turns": args.turns,
        "budget": args.budget or sorted(budgets),
        "confirm": confirm,
        "lags": args.lags,
        "generator": synthetic.generate.__kwdefaults__ or "defaults",
        "text": text_settings,
    }
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"results": text_rows, "trace_results": trace_rows, "lag_sweep": sweep, "settings": settings},
                indent=2,
                default=str,
            )
        )
    if args.plot:
        report.plot_lines(
            sweep,
            "lag",
            "retention",
            args.plot,
            "Synthetic traces: retention of reused facts vs lag",
            "lag L (steps)",
            "retention",
        )
    return 0


def _print_rows(rows: list[dict], per_seed: bool = False) -> None:
    width = max(len("policy"), *(len(r["policy"]) for r in rows))
    print(f"{'policy'.ljust(width)}  lag  retention" + ("  min seed" if per_seed else ""))
    for r in rows:
        tail = f"  {min(r['per_seed']):>8.3f}" if per_seed else ""
        print(f"{r['policy'].ljust(width)}  {r['lag']:>3}  {r['retention']:>9.3f}{tail}")
    if per_seed and rows:
        print(
            f"(retention pooled over the seeds' reuses; min seed: the lowest seed's share; "
            f"mean of seeds for measured: {statistics.fmean(next((r['per_seed'] for r in rows if r['policy'] == 'measured'), [0.0])):.3f})"
        )
