"""`lagmem bench cites`: the options, the retrievers as the app builds them, the table and JSON.

The measuring lives in ``bench/cites.py`` (and the fitting in ``bench/calibrate.py``); this module
only turns options into runs and writes what the user asked for.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from bench.cites import ALL_RETRIEVERS, NO_KEY_RETRIEVERS, retriever
from cli.bench_jobs import ints, names


def register(sub, default_data: str) -> None:
    p = sub.add_parser(
        "cites",
        help="citation quality of the app's retrieval step against LoCoMo's gold evidence",
        description=(
            "Run the app's own retrieval step over the turns so far for each LoCoMo question and "
            "score its citations against the gold evidence: precision, recall, F1, recall@5/10/20 "
            "of the ranking, citations per question, latency, by category. Retrievers: embeddings "
            "(cosine top 5, no model), hybrid (BM25 + embeddings, calibrated threshold, no model), "
            "local (the embedded default as the app runs it: the hybrid ranker alone), local-choose "
            "(the embedded model picks among the hybrid best 5: seconds a question, use --limit), "
            "openai (the configured model; skipped when none is)."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--data", default=default_data, help="LoCoMo JSON file (a list of conversations)")
    p.add_argument(
        "--retrievers",
        type=names,
        default=list(NO_KEY_RETRIEVERS),
        help=f"comma-separated, from {', '.join(ALL_RETRIEVERS)} (default: those needing no key)",
    )
    p.add_argument("--placement", choices=("end", "earliest", "random"), default="random")
    p.add_argument("--seeds", type=ints, default=[0, 1, 2, 3, 4], help="placement seeds (pooled)")
    p.add_argument(
        "--conversations",
        type=names,
        default=None,
        help="conversations to use: sample ids or 1-based positions (default: all)",
    )
    p.add_argument("--limit", type=int, default=None, help="at most N questions (evenly spaced)")
    p.add_argument(
        "--fit",
        action="store_true",
        help="fit the hybrid ranker's constants on the chosen conversations and print them",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="with --fit: write the constants and their provenance as a ranker file "
        "(assistant/retrieval/ranker.json is the one the app ranks with)",
    )
    p.add_argument(
        "--policy",
        default=None,
        help="score over the turns this policy keeps in memory (with --budget), fed the "
        "retriever's own citations, instead of over every turn so far",
    )
    p.add_argument("--budget", type=int, default=None, help="memory budget in tokens for --policy")
    p.add_argument("--json", metavar="OUT", help="write results and settings as JSON")
    p.set_defaults(func=cmd_cites)


def select(convs: list, wanted: list[str] | None) -> list:
    if not wanted:
        return convs
    out = []
    for w in wanted:
        if w.isdigit() and 1 <= int(w) <= len(convs):
            out.append(convs[int(w) - 1])
            continue
        match = [c for c in convs if c.sample_id == w]
        if not match:
            raise SystemExit(
                f"--conversations: no conversation {w!r} (sample ids: "
                f"{', '.join(c.sample_id for c in convs)}; or 1..{len(convs)})"
            )
        out += match
    return out


def cmd_cites(args) -> int:
    from tqdm import tqdm

    from assistant.models.embeddings import get_embedder
    from bench import cites, embed_cache, locomo

    path = Path(args.data)
    if not path.exists():
        raise SystemExit(f"no LoCoMo file at {path}: pass --data PATH (a LoCoMo JSON list of conversations)")
    for name in args.retrievers:
        if name not in ALL_RETRIEVERS:
            raise SystemExit(f"unknown retriever {name!r}; choose from {', '.join(ALL_RETRIEVERS)}")
    convs = select(locomo.load(path), args.conversations)
    embedder = get_embedder()
    print(
        f"embedding {sum(len(c.turns) + len(c.questions) for c in convs)} texts (cached in {embed_cache.cache_dir()})",
        file=sys.stderr,
    )
    corpus = cites.Corpus(convs, lambda texts: embed_cache.embed(embedder, texts))
    items = cites.asks(convs, args.seeds, args.placement, args.limit)
    if args.fit:
        from bench import calibrate

        params, fit_stats = calibrate.fit(corpus, items)
        print(f"fitted on {', '.join(c.sample_id for c in convs)} ({fit_stats}):\n{params!r}")
        if args.out:
            fitted_on = {
                "data": path.name,
                "conversations": [c.sample_id for c in convs],
                "placement": args.placement,
                "seeds": args.seeds,
                "limit": args.limit,
            }
            calibrate.write(Path(args.out), params, calibrate.provenance(fitted_on, fit_command(args), fit_stats))
            print(f"wrote {args.out}")
        return 0
    if args.out:
        raise SystemExit("--out writes a fit: use it with --fit")
    results, skipped = [], {}
    for name in args.retrievers:
        client, config = retriever(name)
        if isinstance(config, str):
            skipped[name] = config
            print(f"{name}: {config}")
            continue
        bar = lambda xs, name=name: tqdm(xs, desc=name, unit="q", file=sys.stderr)  # noqa: E731
        try:
            if args.policy:
                results.append({"retriever": name, **in_memory(convs, name, args)})
                continue
            results.append({"retriever": name, **cites.run(corpus, items, client, config, bar)})
        finally:
            if client is not None:  # a model server lagmem started for this retriever
                from assistant.models.profile import profile_of

                profile_of(client).shut_down()
    where = f"over the turns {args.policy} keeps in {args.budget} tokens" if args.policy else "over every turn so far"
    print(
        f"LoCoMo citations {where}: {len(convs)} conversations, placement {args.placement}, "
        f"seeds {','.join(map(str, args.seeds))}"
    )
    if results:
        print(cites.table(results))
    if args.json:
        settings = {
            "data": str(path),
            "conversations": [c.sample_id for c in convs],
            "placement": args.placement,
            "seeds": args.seeds,
            "limit": args.limit,
            "policy": args.policy,
            "budget": args.budget,
            "skipped": skipped,
        }
        Path(args.json).write_text(json.dumps({"results": results, "settings": settings}, indent=2))
    return 0


def fit_command(args) -> str:
    """The ``lagmem bench cites --fit`` command that repeats this fit (recorded in the ranker file)."""
    parts = ["lagmem bench cites", f"--data {shlex.quote(args.data)}"]
    if args.conversations:
        parts.append(f"--conversations {','.join(args.conversations)}")
    parts += [f"--placement {args.placement}", f"--seeds {','.join(map(str, args.seeds))}"]
    if args.limit is not None:
        parts.append(f"--limit {args.limit}")
    parts += ["--fit", f"--out {shlex.quote(args.out)}"]
    return " ".join(parts)


def in_memory(convs: list, name: str, args) -> dict:
    """One retriever as the memory's citation source under ``--policy``/``--budget``, every seed;
    each question's step is scored against its gold evidence (``--limit`` does not apply)."""
    from bench import locomo, protocol
    from bench.cite_source import TalliedCites

    if args.budget is None:
        raise SystemExit("--policy needs --budget (tokens)")
    try:
        spec = protocol.spec(args.policy)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    source = TalliedCites(convs, name)
    scale = locomo.token_scale("words")
    for seed in args.seeds:
        protocol.run(convs, spec, args.budget, seed, scale, args.placement, cite_source=source)
    return source.summary()
