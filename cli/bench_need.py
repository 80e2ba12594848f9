"""`lagmem bench need-train`: the need estimator's training as a command (the computation lives in
``bench/need_train.py``; this module parses options, prints, writes). It also registers `lagmem
bench holdout`, which lives in ``cli/bench_holdout.py``.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parsers(sub, default_data: str, ints) -> None:
    from cli import bench_holdout

    bench_holdout.add_parser(sub, ints)

    t = sub.add_parser(
        "need-train",
        help="train the need estimator on LoCoMo evidence labels; print leave-one-out validation",
        description=(
            "Compute each turn's arrival features (and MiniLM embedding, cached in a temp dir), compare "
            "the candidate models (logistic regressions, boosted trees) by leave-one-conversation-out "
            "log loss and AUC, fit the "
            "chosen model on all conversations and (with --out) write it as the versioned JSON file the "
            "app loads (assistant/need_model.json)."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    t.add_argument("--data", default=default_data, help="LoCoMo JSON file (a list of conversations)")
    t.add_argument("--out", metavar="PATH", help="write the fitted model (JSON) here")
    t.set_defaults(func=cmd_need_train)


def _tables(path: Path):
    from bench import locomo, need_data

    if not path.exists():
        raise SystemExit(f"no LoCoMo file at {path}: pass --data PATH (a LoCoMo JSON list of conversations)")
    convs = locomo.load(path)
    if len(convs) < 3:
        raise SystemExit(f"{path} holds {len(convs)} conversation(s); the protocol needs at least 3")
    return convs, [need_data.table(c, need_data.embeddings(c)) for c in convs]


def cmd_need_train(args) -> int:
    from bench import need_train
    from memory.need_models import model_json

    convs, tables = _tables(Path(args.data))
    model, rows = need_train.train(tables)
    print(
        f"need estimator: {len(convs)} conversations, {sum(len(t.y) for t in tables)} turns, "
        f"evidence rate {model.meta['evidence_rate']:.3f}; leave-one-conversation-out:"
    )
    print(need_train.format_rows(rows, need_train.choose(rows)))
    print(need_train.describe(model))
    if args.out:
        Path(args.out).write_text(model_json(model))
        print(f"wrote {args.out}")
    return 0
