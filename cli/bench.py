"""`lagmem bench ...`: the benchmark front end (progress bar, table, plot, JSON).

The computation lives in ``bench/``; this module only parses options, fans the runs out over
processes, and writes what the user asked for. Eviction quality: ``locomo`` (here), ``synthetic``,
``controlled`` (``cli/bench_replayed.py``: scored through the product's replay); speed of
the layer, the retrieval step and the embedded model: ``speed``, ``retrieval``, ``model``; of an
exchange as the history grows: ``exchange``. ``register(subparsers)`` adds the ``bench`` command
to the ``lagmem`` CLI; ``python -m cli.bench bench ...`` works on its own too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from cli.bench_jobs import ints, names
from cli.bench_jobs import params as _params
from cli.bench_jobs import run_jobs as _run_jobs

# LoCoMo (CC BY-NC 4.0) is not shipped: the default is a copy in the current directory, else --data
DEFAULT_DATA = "locomo_dev.json"
LOCOMO_POLICIES = "fifo,lru,accumulate,window,userfirst,largest,measured,oracle"
LAGS = "0,1,2,4,8,16"
# default budgets (tokens) per kind of conversation: a person-assistant chat's answers are long (the
# LongMemEval ones average ~350 words), so its memory is larger
DEFAULT_BUDGETS = {"two people": [1000, 2000, 4000], "person-assistant": [1000, 2000, 4000, 8000]}


def register(subparsers) -> argparse.ArgumentParser:
    """Add ``bench`` (locomo, synthetic, controlled, speed, retrieval, model, pages, ...) to an argparse subparsers object."""
    bench = subparsers.add_parser(
        "bench",
        help="benchmarks: eviction quality (LoCoMo, LongMemEval, synthetic, controlled) and speed (layer, retrieval, model)",
        description="Benchmarks of the memory layer and the model around it. See `lagmem bench <name> --help`.",
    )
    sub = bench.add_subparsers(
        dest="bench_command",
        metavar="{locomo,holdout,need-train,cites,probes,synthetic,controlled,controlled-write,speed,retrieval,model,pages,exchange}",
        required=True,
    )

    p = sub.add_parser(
        "locomo",
        help="evidence recall against the oracle on LoCoMo conversations",
        description=(
            "Replay LoCoMo conversations (LoCoMo's own JSON format, or LongMemEval records chained into "
            "person-assistant conversations) through the memory layer under "
            "each policy and budget; at each question, score the share of its evidence turns still in "
            "memory, then let it cite them. Reports recall (micro over question/evidence pairs), mean "
            "per question, share of questions with all evidence kept, per category, and the share of "
            "the fifo->oracle gap closed."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--data",
        default=DEFAULT_DATA,
        help="LoCoMo JSON file (a list of conversations), or LongMemEval's own JSON (a list of records "
        "with haystack_sessions), chained into conversations (see --chain-seed)",
    )
    p.add_argument(
        "--chain-seed",
        type=int,
        default=7,
        help="LongMemEval only: records are sorted by question_id, shuffled with this seed and chained",
    )
    p.add_argument(
        "--chain-size", type=int, default=19, metavar="N", help="LongMemEval only: records per chained conversation"
    )
    p.add_argument(
        "--tokens",
        choices=("words", "cl100k"),
        default="words",
        help="token cost: words = len(text.split()) * 1.3 (exact, in tenths), cl100k = tiktoken",
    )
    p.add_argument(
        "--placement",
        choices=("end", "earliest", "random"),
        default="random",
        help="when questions are asked (questions carry no time)",
    )
    p.add_argument("--seeds", type=ints, default=[0, 1, 2, 3, 4], help="placement seeds; results pool their pairs")
    p.add_argument(
        "--budgets",
        type=ints,
        default=None,
        help="budgets in tokens (default: 1000,2000,4000 for two people, 1000,2000,4000,8000 for a "
        "person and an assistant)",
    )
    p.add_argument("--policies", type=names, default=names(LOCOMO_POLICIES), help="policies to run")
    p.add_argument(
        "--noise",
        type=int,
        default=0,
        metavar="K",
        help="each question also cites K random in-memory non-evidence turns",
    )
    p.add_argument(
        "--lag",
        type=int,
        default=None,
        help="lag for every policy except oracle, accumulate included (default: 0 for baselines, "
        "measured's benchmark lag for measured)",
    )
    p.add_argument(
        "--param",
        action="append",
        metavar="POLICY.NAME=VALUE",
        help="policy parameter, e.g. measured.decay=0.995 (repeatable)",
    )
    p.add_argument(
        "--priors",
        choices=("shipped", "heldout", "none"),
        default="shipped",
        help="measured's need priors: from the shipped need model (trained on the dev files: "
        "in-sample there), held out (each conversation's from a model trained as the shipped one on "
        "the LoCoMo and LongMemEval dev conversations other than it: minutes), or none (size prior only)",
    )
    p.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="worker processes")
    p.add_argument("--plot", metavar="OUT.png", help="write recall vs budget, one line per policy")
    p.add_argument("--json", metavar="OUT", help="write results and settings as JSON")
    p.add_argument(
        "--cites",
        type=names,
        default=["gold"],
        metavar="SOURCE[,SOURCE...]",
        help="who cites at each question: gold (its evidence in memory) or a retriever "
        "(embeddings, hybrid, local, ...) run over the turns in memory; one table each",
    )
    p.set_defaults(func=cmd_locomo)

    sp = sub.add_parser(
        "speed",
        help="per-step time of the layer (pure, persisted to SQLite) and a naive reference",
        description=(
            "Replay generated conversations of 1,000 / 10,000 / 100,000 turns through the memory "
            "layer (budget 4,000 tokens, lag 8, ~3 citations per step): per-step median and p99 for "
            "the pure layer, with SQLite persistence, and for a naive reference that recomputes over "
            "the whole history each step; peak memory."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    from bench import model_speed, pages, retrieval, speed

    speed.add_arguments(sp)
    rp = sub.add_parser(
        "retrieval",
        help="the retrieval step's own cost (LLM excluded) and the embedding model's time per turn",
        description=retrieval.__doc__.split("\n\n", 1)[1].replace("``", ""),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    retrieval.add_arguments(rp)
    mp = sub.add_parser(
        "model",
        help="the embedded model: server start, time to first token, tokens/s",
        description="Start the embedded SmolLM2 server and time streamed answers to short prompts "
        "and to a prompt the size of a full memory; prints one JSON object with the "
        "machine's load average before and after.",
    )
    model_speed.add_arguments(mp)
    pg = sub.add_parser(
        "pages",
        help="long conversations: import time, write-lock time, chat and inspector draw time",
        description=pages.__doc__.split("\n\n")[1],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    pages.add_arguments(pg)
    from bench import exchange

    ex = sub.add_parser(
        "exchange",
        help="one exchange's time as the history grows (fake model), and the first after an import",
        description=exchange.__doc__.split("\n\n")[1],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    exchange.add_arguments(ex)
    from cli.bench_need import add_parsers

    add_parsers(sub, DEFAULT_DATA, ints)
    from cli import cites

    cites.register(sub, DEFAULT_DATA)
    from cli import probes

    probes.register(sub)
    from cli import bench_replayed, bench_synthetic

    bench_synthetic.register(sub, ints, names)
    bench_replayed.register(sub, ints)
    return bench


# ----- locomo ---------------------------------------------------------------------------------
def _locomo_job(args: tuple) -> tuple[str, int, int, list, str]:
    data, tokens, placement, noise, policy, budget, seed, priors, cites = args
    from bench import locomo, need_train, protocol

    convs = _cached_load(data)
    scale = locomo.token_scale(tokens)
    if priors in ("shipped", "heldout") and policy.name == "measured":
        if (data, "priors") not in _CACHE:
            if priors == "heldout":  # they are computed once, before the pool: its workers inherit them
                raise RuntimeError("held-out priors are computed before the jobs run")
            _CACHE[(data, "priors")] = need_train.shipped_priors(convs)
        priors = _CACHE[(data, "priors")]
    else:
        priors = None
    source = None
    if cites != "gold":
        from bench.cite_source import RetrieverCites

        source = _CACHE.get(("cites", data, cites)) or _CACHE.setdefault(
            ("cites", data, cites), RetrieverCites(convs, cites)
        )
    res = protocol.run(
        convs,
        policy,
        budget,
        seed,
        scale,
        placement,
        noise,
        costs=_cached_costs(data, tokens),
        priors=priors,
        cite_source=source,
    )
    return policy.title, budget, seed, res, cites


_CACHE: dict = {}


def _cached_load(data):
    """The conversations of ``data``: a path, or (path, chain seed, chain size) for a LongMemEval file."""
    from bench import locomo

    if data not in _CACHE:
        path, *chain = (data,) if isinstance(data, str) else data
        _CACHE[data] = locomo.load(path, *chain)
    return _CACHE[data]


def _cached_costs(data, tokens: str):
    from bench import locomo

    key = (data, tokens)
    if key not in _CACHE:
        scale = locomo.token_scale(tokens)
        _CACHE[key] = [[scale.count(t.text) for t in c.turns] for c in _cached_load(data)]
    return _CACHE[key]


def cmd_locomo(args) -> int:
    from bench import locomo, protocol, report

    path = Path(args.data)
    if not path.exists():
        raise SystemExit(
            f"no LoCoMo file at {path}: pass --data PATH (a LoCoMo JSON list of conversations or a LongMemEval file)"
        )
    if args.chain_size < 1:
        raise SystemExit(f"--chain-size {args.chain_size}: at least 1 record per conversation")
    data = (str(path), args.chain_seed, args.chain_size)
    try:
        convs = _cached_load(data)
    except ValueError as exc:
        raise SystemExit(f"lagmem bench locomo: {exc}") from None
    if not any(c.questions for c in convs):
        raise SystemExit(f"{path}: no question with evidence to score")
    kind, chained = locomo.kind_of(convs), _is_chained(path)
    budgets = args.budgets or DEFAULT_BUDGETS[kind]
    if args.tokens == "cl100k":
        _cached_costs(data, "cl100k")  # fail early (and once) if tiktoken cannot load
    params = _params(args.param)
    specs = []
    for name in args.policies:
        lag = None if name == "oracle" else args.lag
        try:
            specs.append(protocol.spec(name, lag=lag, **params.get(name, {})))
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
    if args.priors == "shipped" and "measured" in args.policies:
        from bench import need_train

        _CACHE[(data, "priors")] = need_train.shipped_priors(convs)  # embeddings once, before the pool
    if args.priors == "heldout" and "measured" in args.policies:
        from bench import need_train
        from bench.holdout import DATA as DEV_FILES

        # the shipped model's training files, where the holdout protocol reads them (not --data's default)
        missing = [f for f in DEV_FILES if not Path(f).is_file()]
        if missing:
            raise SystemExit(
                f"--priors heldout trains on the dev conversations; not found from {Path.cwd()}: "
                + ", ".join(missing)
                + " (run from the repository's folder, or use --priors shipped or none)"
            )
        training = [c for f in DEV_FILES for c in locomo.load(f)]
        _CACHE[(data, "priors")] = need_train.heldout_priors(convs, training)  # once, before the pool
    from bench.cites import ALL_RETRIEVERS

    for c in args.cites:
        if c != "gold" and c not in ALL_RETRIEVERS:
            raise SystemExit(f"--cites {c!r}: choose gold or one of {', '.join(ALL_RETRIEVERS)}")
    jobs = [
        (data, args.tokens, args.placement, args.noise, sp, b, seed, args.priors, c)
        for c in args.cites
        for b in budgets
        for sp in specs
        for seed in args.seeds
    ]
    pooled: dict[tuple[str, int, str], list] = {}
    for title, budget, _seed, res, c in _run_jobs(_locomo_job, jobs, args.jobs, "locomo"):
        pooled.setdefault((title, budget, c), []).extend(res)
    rows = []
    for c in args.cites:
        part = []
        for b in budgets:
            for sp in specs:
                m = report.metrics(pooled[(sp.title, b, c)], report.category_names(kind))
                part.append(
                    {
                        "policy": sp.title,
                        "budget": b,
                        "cites": c,
                        **m,
                        "params": dict(sp.params),
                        "lag": protocol.ran_lag(sp),
                    }
                )
        rows += report.add_gap_closed(part)
    settings = {
        "data": str(path),
        "kind": kind,
        "chain": {"seed": args.chain_seed, "size": args.chain_size} if chained else None,
        "conversations": [c.sample_id for c in convs],
        "turns": [len(c.turns) for c in convs],
        "questions": sum(len(c.questions) for c in convs),
        "skipped_questions": sum(c.skipped_questions for c in convs),
        "dropped_evidence_ids": sum(c.dropped_ids for c in convs),
        "tokens": args.tokens,
        "placement": args.placement,
        "seeds": args.seeds,
        "budgets": budgets,
        "noise": args.noise,
        "priors": args.priors,
        "cites": args.cites,
        "policies": [{"policy": sp.title, "params": dict(sp.params), "lag": protocol.ran_lag(sp)} for sp in specs],
    }
    how = f" (LongMemEval records chained: seed {args.chain_seed}, {args.chain_size} a conversation)" if chained else ""
    title = (
        f"Evidence recall, {kind}: {len(convs)} conversations{how}, placement {args.placement}, "
        f"seeds {','.join(map(str, args.seeds))}, {args.tokens} tokens, noise {args.noise}"
    )
    names = report.category_names(kind)
    for c in args.cites:
        print(report.table([r for r in rows if r["cites"] == c], f"{title}, cites: {c}", names))
    if len(args.cites) > 1:
        from bench.cite_source import gain_kept

        print(gain_kept(rows, args.cites[0]))
    print(
        f"skipped questions (no evidence): {settings['skipped_questions']}; "
        f"evidence ids dropped after repair: {settings['dropped_evidence_ids']}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"results": rows, "settings": settings}, indent=2))
    if args.plot:
        report.plot_lines(
            rows,
            "budget",
            "recall",
            args.plot,
            f"Evidence recall vs budget, {kind} (noise {args.noise})",
            "budget (tokens)",
            "evidence recall",
        )
    return 0


def _is_chained(path: Path) -> bool:
    """Whether the file is LongMemEval's own format (its records were chained on loading)."""
    from bench import longmemeval

    return longmemeval.is_longmemeval(json.loads(path.read_text(encoding="utf-8")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lagmem", description="lagmem benchmarks")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
