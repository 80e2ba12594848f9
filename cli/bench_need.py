"""`lagmem bench need-train`: the need estimator's training as a command (the computation lives in
``bench/need_train.py``; this module parses options, prints, writes). It also registers `lagmem
bench holdout`, which lives in ``cli/bench_holdout.py``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_parsers(sub, default_data: str, ints) -> None:
    from cli import bench_holdout

    bench_holdout.add_parser(sub, ints)

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
