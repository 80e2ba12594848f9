"""`lagmem bench holdout`: the held-out protocol over LoCoMo and LongMemEval as a command (the
computation lives in ``bench/holdout.py``; this module parses options, fans runs out over processes,
prints the tables and writes the JSON)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def add_parser(sub, ints) -> None:
    from bench import holdout

    h = sub.add_parser(
        "holdout",
        help="held out: fit on some conversations, score the others (within each dataset and across)",
        description=(
            "Within each --data file, hold each conversation out in turn (or --folds groups): fit the need "
            "estimator and tune measured's constants and lag on every other conversation, then score "
            "measured, its ablations (prior alone, evidence alone, the posterior, with and without the "
            "conversation's own recalibration), the baselines and the oracle on it. Across files: fit on "
            "the other files only, score every conversation of this one. Prints pooled recall and gap "
            "closed per budget and noise with 95%% bootstrap intervals over questions, and wins/ties/losses "
            "per cell. Ends with the same fit on all conversations: the shipped defaults, and a new "
            "conversation's lag and budget."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    h.add_argument(
        "--data", action="append", help=f"LoCoMo or LongMemEval JSON; repeat (default: {' and '.join(holdout.DATA)})"
    )
    h.add_argument("--folds", type=int, default=0, help="k folds per file (conversation i in fold i %% k); 0: each")
    h.add_argument("--noise", type=int, default=2, metavar="K", help="the noisy setting (noise 0 always runs)")
    h.add_argument("--seeds", type=ints, default=list(holdout.SEEDS), help="placement seeds for held-out scores")
    h.add_argument("--tune-seeds", type=ints, default=list(holdout.TUNE_SEEDS), help="placement seeds for tuning")
    h.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    h.add_argument("--no-across", action="store_true", help="skip the across-datasets tables")
    h.add_argument("--no-final", action="store_true", help="skip the fit on all conversations")
    h.add_argument("--model-out", metavar="PATH", help="write the need model fitted on all conversations here")
    h.add_argument("--json", metavar="OUT", help="write everything as JSON")
    h.set_defaults(func=cmd_holdout)


def _name(path: str) -> str:
    return Path(path).stem.split("_")[0]


def _plan(files: dict, kinds: dict, folds: int, across: bool, final: bool) -> list[tuple[str, tuple, tuple]]:
    """(table label, training conversations, held-out conversations) for every fit, in run order."""
    refs = [r for data in files for r in files[data]]
    plan = []
    for data, mine in files.items():
        k = folds or len(mine)
        for f in range(k):
            held = tuple(r for r in mine if r[1] % k == f)
            plan.append((f"within {_name(data)}", tuple(r for r in refs if r not in held), held))
    if across and len(files) > 1:
        for data, mine in files.items():
            others = tuple(r for r in refs if r[0] != data)
            names = "+".join(sorted({_name(r[0]) for r in others}))
            plan.append((f"across: fit {names}, score {_name(data)}", others, tuple(mine)))
    if final:
        plan.append(("final", tuple(refs), ()))
    return plan


def cmd_holdout(args) -> int:
    from tqdm import tqdm

    from bench import holdout, locomo, need_data
    from memory.need_models import model_json

    t0 = time.time()
    paths = args.data or list(holdout.DATA)
    files, tables, kinds, names = {}, {}, {}, {}
    for data in paths:
        if not Path(data).exists():
            raise SystemExit(f"no data file at {data}: pass --data PATH (LoCoMo or LongMemEval JSON)")
        convs = locomo.load(data)
        files[data] = tuple((data, i) for i in range(len(convs)))
        for i, c in enumerate(convs):
            tables[(data, i)] = need_data.table(c, need_data.embeddings(c))
            kinds[(data, i)] = c.kind
            names[(data, i)] = c.sample_id
    if len(kinds) < 3:
        raise SystemExit(f"{len(kinds)} conversation(s) in all: the protocol needs at least 3")
    noises = (0, args.noise) if args.noise else (0,)
    plan = _plan(files, kinds, args.folds, not args.no_across, not args.no_final)
    total = sum(holdout.tune_jobs(train, kinds, noises) for _, train, _ in plan)
    results: dict[str, dict] = {}
    fits: list[dict] = []
    final = None
    with (
        ProcessPoolExecutor(max_workers=args.jobs) if args.jobs > 1 else _InProcess() as pool,
        tqdm(total=total, desc="holdout", unit="run", file=sys.stderr) as bar,
    ):

        def mapper(fn, jobs):
            return list(pool.map(fn, jobs))

        shared: dict[tuple, list] = {}
        for ref, kind in kinds.items():
            jobs = holdout.baseline_jobs(ref, kind, noises, tuple(args.seeds))
            for key, res in zip((k for k, _ in jobs), mapper(holdout.run_job, [j for _, j in jobs])):
                shared[key] = res
        for label, train, held in plan:
            f = holdout.fit(train, tables, kinds, mapper, noises, tuple(args.tune_seeds), bar.update)
            if label == "final":
                final = f
                continue
            variants = holdout.ACROSS if label.startswith("across") else tuple(holdout.VARIANTS)
            jobs = [
                j
                for ref in held
                for j in holdout.variant_jobs(
                    label, ref, f, tables[ref], kinds[ref], variants, noises, tuple(args.seeds)
                )
            ]
            got = results.setdefault(label, {})
            for (_, ref, name, b, k), res in zip((k for k, _ in jobs), mapper(holdout.run_job, [j for _, j in jobs])):
                got[(names[ref], name, b, k)] = res
            for ref in held:
                for (r, name, b, k), res in shared.items():
                    if r == ref:
                        got[(names[ref], name, b, k)] = res
                fits.append({"table": label, "held_out": names[ref], "params": f.params, "need_model": f.model.meta})
        bar.total = bar.n  # the tuning cache saved some of the runs counted up front
        bar.refresh()
    pooled = {}
    for label, got in results.items():
        folds = list(dict.fromkeys(k[0] for k in got))
        budgets = sorted({k[2] for k in got})
        pooled[label] = holdout.pool(got, budgets, noises, folds)
    print(
        f"Held out ({', '.join(f'{Path(d).name}: {len(files[d])}' for d in files)} conversations; placement random, "
        f"seeds {','.join(map(str, args.seeds))} held out, {','.join(map(str, args.tune_seeds))} for tuning; "
        "words tokens)"
    )
    for row in fits:
        print(
            f"  {row['table']}, held out {row['held_out']}: need model {row['need_model']['model']}; {_fmt(row['params'])}"
        )
    for label, table in pooled.items():
        print(f"\n{label}\n{holdout.format_pooled(table)}")
    chosen = None
    if final is not None:
        assistant = [d for d in files if all(kinds[r] == locomo.PERSON_ASSISTANT for r in files[d])]
        within = pooled.get(f"within {_name(assistant[0])}") if assistant else None
        chosen = holdout.defaults(final, within)
        print(
            f"\nfit on all {len(kinds)} conversations (the shipped defaults): need model {final.model.meta['model']}; "
            f"{_fmt(final.params)}\na new conversation (a person and an assistant): lag {chosen['lag']}, budget "
            f"{chosen['budget']} (the smallest keeping {chosen['target_recall']} of the evidence held out)"
        )
        if args.model_out:
            Path(args.model_out).write_text(model_json(final.model))
            print(f"wrote {args.model_out}")
    print(f"time: {time.time() - t0:.0f} s with {args.jobs} worker process(es)")
    if args.json:
        out = {
            "settings": {
                "data": paths,
                "conversations": {d: [names[r] for r in files[d]] for d in files},
                "folds": args.folds,
                "budgets": holdout.BUDGETS,
                "noises": noises,
                "seeds": args.seeds,
                "tune_seeds": args.tune_seeds,
                "grid": holdout.GRID,
                "start": holdout.START,
                "passes": holdout.PASSES,
                "variants": holdout.VARIANTS,
            },
            "fits": fits,
            "final": None
            if final is None
            else {
                "params": final.params,
                "lags": final.lags,
                "need_model": final.model.as_dict(),
                "tuning_trail": final.trail,
                "defaults": chosen,
            },
            "tables": pooled,
        }
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 0


class _InProcess:
    """``--jobs 1``: the same calls, in this process (no pool to start)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, fn, jobs):
        return map(fn, jobs)


def _fmt(p: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in p.items())
