"""`lagmem bench probes`: options, a throwaway database, the real service, the printout."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "probes",
        help="share of fact-recall probes the chat answers with the fact (the app's own path)",
        description=(
            "Send each scripted probe conversation (facts among chit-chat) through the chat service "
            "with the model and embeddings the app uses, then ask its question; print the share of "
            "answers containing the fact, who answered (the model, or an extractive quote), and the "
            "longest answer. A probe whose fact list is empty asks for something never stated and passes "
            "when the answer says it does not know."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--file",
        default=None,
        help="probe JSONL file (default: bench/probes.jsonl; bench/probes_heldout.jsonl is the "
        "second set, written after the answer rules)",
    )
    p.add_argument("--budget", type=int, default=150, help="memory budget of each probe conversation")
    p.add_argument("--lag", type=int, default=2, help="lag of each probe conversation")
    p.add_argument("--policy", default="measured")
    p.add_argument("--limit", type=int, default=None, help="first N probes only")
    p.add_argument("--json", metavar="OUT", help="write the results (every answer) as JSON")
    p.add_argument("--verbose", action="store_true", help="print every question and answer")
    p.set_defaults(func=cmd_probes)


def cmd_probes(args) -> int:
    from tqdm import tqdm

    from assistant.runtime import get_service
    from bench import probes
    from memory.types import MemorySettings

    try:
        items = probes.load(args.file or probes.PROBES)[: args.limit]
    except (OSError, ValueError) as exc:
        raise SystemExit(f"lagmem bench probes: {exc}")
    settings = MemorySettings(budget=args.budget, lag=args.lag, policy=args.policy)
    with tempfile.TemporaryDirectory() as tmp:
        svc = get_service(f"sqlite:///{Path(tmp) / 'probes.db'}")
        try:
            out = probes.run(svc, items, settings, lambda xs: tqdm(xs, desc="probes", unit="probe", file=sys.stderr))
        finally:
            svc.profile.shut_down()  # a model server lagmem started for the probes
    if args.verbose:
        for r in out["rows"]:
            print(f"{'ok ' if r['ok'] else 'NO '} {r['id']:<10} [{r['answered_by']}] {r['answer']}")
    unknown = (
        f"; no fact stated: {out['unknown_probes']}, answered 'I don't know': {out['abstained']:.1%} "
        f"(quoting no turn {out['abstained_plain']:.1%})"
        if out["unknown_probes"]
        else ""
    )
    print(
        f"probes: {out['fact_probes']}, answered with the fact: {out['with_fact']:.1%} "
        f"(without a hedge {out['with_fact_sure']:.1%}){unknown}; answered by "
        f"the model {out['answered_by']['model']}, extractive {out['answered_by']['extractive']}; "
        f"longest answer {out['max_answer_tokens']} tokens (cap {min(150, args.budget // 4)}); "
        f"question first-token median {out['question_ttft_ms_median']} ms; model {svc.llm.model}, "
        f"budget {args.budget}, lag {args.lag}, policy {args.policy}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, ensure_ascii=False))
    return 0
