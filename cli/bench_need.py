"""`lagmem bench holdout` and `lagmem bench need-train`: the held-out protocol and the need
estimator's training, as commands (the computation lives in ``bench/holdout.py`` and
``bench/need_train.py``; this module parses options, fans runs out over processes, prints, writes).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def add_parsers(sub, default_data: str, ints) -> None:
    h = sub.add_parser(
        "holdout",
        help="leave-one-conversation-out: fit everything on the others, pool the held-out scores",
        description=(
            "For each LoCoMo conversation: fit the need estimator and tune measured's constants and lag "
            "on the other conversations only, then score measured, its ablations, the baselines and the "
            "oracle on the held-out one. Prints pooled held-out recall and gap closed per budget and "
            "noise with 95%% bootstrap intervals over questions, and wins/ties/losses per cell. Ends "
            "with the same fit on all conversations: the shipped defaults."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    h.add_argument("--data", default=default_data, help="LoCoMo JSON file (a list of conversations)")
    h.add_argument("--folds", type=int, default=0, help="k folds (conversation i in fold i %% k); 0: leave one out")
    h.add_argument("--budgets", type=ints, default=[1000, 2000, 4000], help="budgets in tokens")
    h.add_argument("--noise", type=int, default=2, metavar="K", help="the noisy setting (noise 0 always runs)")
    h.add_argument("--seeds", type=ints, default=[0, 1, 2, 3, 4], help="placement seeds for the held-out scores")
    h.add_argument("--tune-seeds", type=ints, default=[0, 1], help="placement seeds for tuning")
    h.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    h.add_argument("--no-final", action="store_true", help="skip the fit on all conversations")
    h.add_argument("--model-out", metavar="PATH", help="write the need model fitted on all conversations here")
    h.add_argument("--json", metavar="OUT", help="write everything as JSON")
    h.set_defaults(func=cmd_holdout)

    t = sub.add_parser(
        "need-train",
        help="train the need estimator on evidence labels of LoCoMo and LongMemEval; print held-out figures",
        description=(
            "Compute each turn's arrival features (and MiniLM embedding, cached in a temp dir) in every "
            "--data file (LoCoMo's format or LongMemEval's own), compare the candidate models (logistic "
            "regressions, boosted trees) by leave-one-conversation-out log loss over all conversations "
            "(each kind of conversation counting the same), report the chosen one held out per kind, "
            "across kinds (fitted on one, scored on the other) and with and without the role features, "
            "fit it on all conversations and (with --out) write it as the versioned JSON file the app "
            "loads (assistant/need_model.json), with its provenance beside it."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    t.add_argument(
        "--data",
        action="append",
        help=f"a LoCoMo or LongMemEval JSON file; repeat for several (default: {default_data} and {DEFAULT_LME})",
    )
    t.add_argument("--out", metavar="PATH", help="write the fitted model (JSON) here, its provenance beside it")
    t.add_argument("--report", metavar="PATH", help="write the printed report here (and PATH with .json: the figures)")
    t.set_defaults(func=cmd_need_train, default_data=default_data)


def _tables(path: Path):
    from bench import locomo, need_data

    if not path.exists():
        raise SystemExit(f"no LoCoMo file at {path}: pass --data PATH (a LoCoMo JSON list of conversations)")
    convs = locomo.load(path)
    if len(convs) < 3:
        raise SystemExit(f"{path} holds {len(convs)} conversation(s); the protocol needs at least 3")
    return convs, [need_data.table(c, need_data.embeddings(c)) for c in convs]


def cmd_need_train(args) -> int:
    from bench import locomo, need_data, need_report, need_train
    from memory.need_models import model_json

    paths = [Path(p) for p in (args.data or [args.default_data, DEFAULT_LME])]
    convs, tables, files = [], [], []
    for path in paths:
        if not path.exists():
            raise SystemExit(f"no data file at {path}: pass --data PATH (LoCoMo or LongMemEval JSON)")
        got = locomo.load(path)
        convs += got
        tables += [need_data.table(c, need_data.embeddings(c)) for c in got]
        files.append({"path": str(path), "sha256": _sha256(path), "conversations": [c.sample_id for c in got]})
    model, rows = need_train.train(tables)
    pick = need_train.choose(rows)
    out = [
        f"need estimator: {len(convs)} conversations ({_kinds(tables)}), {sum(len(t.y) for t in tables)} turns, "
        f"evidence rate {model.meta['evidence_rate']:.3f}",
        "candidates, leave one conversation out over all of them (log_loss, auc: mean over kinds):",
        need_train.format_rows(rows, pick),
        "",
        f"the chosen one held out, per kind and across kinds ({pick['model']}; the ablation without the role features):",
        need_report.format_report(report := need_report.report(tables, pick["spec"])),
        "",
        "shipped: the chosen one fitted on all conversations: " + need_train.describe(model),
    ]
    print("\n".join(out))
    command = "lagmem bench need-train " + " ".join(f"--data {p}" for p in paths)
    if args.out:
        Path(args.out).write_text(model_json(model))
        prov = Path(args.out).with_suffix(".provenance.json")
        prov.write_text(json.dumps(_provenance(model, pick, files, command, args.out), indent=1) + "\n")
        print(f"wrote {args.out} and {prov}")
    if args.report:
        Path(args.report).write_text("\n".join([f"$ {command}", *out]) + "\n")
        figures = {"command": command, "files": files, "candidates": rows, "chosen": pick["model"], "report": report}
        Path(args.report).with_suffix(".json").write_text(json.dumps(figures, indent=1, default=float) + "\n")
        print(f"wrote {args.report} and its .json")
    return 0


DEFAULT_LME = "../shared/data/longmemeval/longmemeval_dev.json"


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _kinds(tables) -> str:
    from collections import Counter

    return ", ".join(f"{n} {k}" for k, n in Counter(t.kind for t in tables).items())


def _provenance(model, pick: dict, files: list[dict], command: str, out: str) -> dict:
    """What the model file was fitted on and how: the data files (with their hashes), the command,
    the candidate chosen and its held-out validation, the libraries' versions."""
    import numpy
    import sklearn

    return {
        "model_file": Path(out).name,
        "version": model.version,
        "command": command + f" --out {out}",
        "fitted_on": files,
        "turns": model.meta["turns"],
        "evidence_rate": model.meta["evidence_rate"],
        "model": pick["model"],
        "spec": pick["spec"],
        "features": list(model.names),
        "chosen_by": "leave-one-conversation-out log loss over all conversations, mean over kinds",
        "held_out": {"log_loss": pick["log_loss"], "auc": pick["auc"], "per_kind": pick["per_kind"]},
        "libraries": {"scikit-learn": sklearn.__version__, "numpy": numpy.__version__},
    }


def cmd_holdout(args) -> int:
    from tqdm import tqdm

    from bench import holdout
    from memory.need_models import model_json

    t0 = time.time()
    path = Path(args.data)
    convs, tables = _tables(path)
    n = len(convs)
    k = args.folds or n
    groups = [[i for i in range(n) if i % k == f] for f in range(k)]
    budgets, noises = tuple(args.budgets), (0, args.noise) if args.noise else (0,)
    fits = [tuple(i for i in range(n) if i not in g) for g in groups] + ([] if args.no_final else [tuple(range(n))])
    total = sum(holdout.tune_jobs(len(tr), budgets, noises) for tr in fits)
    total += n * len(holdout.held_out_specs(holdout.START)) * len(budgets) * len(noises)
    results: dict[tuple, list] = {}
    fitted: dict[int, holdout.Fit] = {}
    final = None
    with (
        ProcessPoolExecutor(max_workers=args.jobs) if args.jobs > 1 else _InProcess() as pool,
        tqdm(total=total, desc="holdout", unit="run", file=sys.stderr) as bar,
    ):

        def mapper(fn, jobs):
            return pool.map(fn, jobs)

        for g, train in zip(groups + [None], fits):
            f = holdout.fit(str(path), train, tables, mapper, budgets, noises, tuple(args.tune_seeds), bar.update)
            if g is None:
                final = f
                continue
            jobs = [
                j
                for held in g
                for j in holdout.score_jobs(str(path), held, f, tables[held], budgets, noises, tuple(args.seeds))
            ]
            for key, res in zip((k for k, _ in jobs), pool.map(holdout.run_job, (j for _, j in jobs))):
                results[key] = res
                bar.update(1)
            for held in g:
                fitted[held] = f
        bar.total = bar.n  # the tuning cache saved some of the runs counted up front
        bar.refresh()
    folds = list(range(n))
    pooled = holdout.pool(results, budgets, noises, folds)
    print(
        f"Held-out LoCoMo ({path.name}: {n} conversations, {'leave one out' if k == n else f'{k} folds'}; "
        f"placement random, seeds {','.join(map(str, args.seeds))} held out, "
        f"{','.join(map(str, args.tune_seeds))} for tuning; words tokens)"
    )
    for held in folds:
        f = fitted[held]
        print(f"  held out {convs[held].sample_id}: need model {f.model.meta['model']}; tuned {_fmt_params(f.params)}")
    print()
    print(holdout.format_pooled(pooled))
    if final is not None:
        print(
            f"\nfit on all {n} conversations (the shipped defaults): need model {final.model.meta['model']}; "
            f"{_fmt_params(final.params)}"
        )
        if args.model_out:
            Path(args.model_out).write_text(model_json(final.model))
            print(f"wrote {args.model_out}")
    print(f"time: {time.time() - t0:.0f} s with {args.jobs} worker process(es)")
    if args.json:
        out = {
            "settings": {
                "data": str(path),
                "conversations": [c.sample_id for c in convs],
                "folds": groups,
                "budgets": budgets,
                "noises": noises,
                "seeds": args.seeds,
                "tune_seeds": args.tune_seeds,
                "grid": holdout.GRID,
                "start": holdout.START,
                "passes": holdout.PASSES,
                "ablations": holdout.ABLATIONS,
                "bootstrap": holdout.BOOTSTRAP,
            },
            "folds": [
                {
                    "held_out": convs[h].sample_id,
                    "params": fitted[h].params,
                    "need_model": fitted[h].model.meta,
                    "tuning_trail": fitted[h].trail,
                }
                for h in folds
            ],
            "final": None
            if final is None
            else {"params": final.params, "need_model": final.model.as_dict(), "tuning_trail": final.trail},
            **pooled,
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


def _fmt_params(p: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in p.items())
