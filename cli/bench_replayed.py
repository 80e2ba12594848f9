"""`lagmem bench controlled` and `bench controlled-write`: controlled conversations scored by
replaying them through the product, as `lagmem replay FILE` does (``bench/replay_score.py``); and
the replay job `lagmem bench synthetic` shares (``cli/bench_synthetic.py``).

The computation lives in ``bench/`` (``controlled``, ``replay_score``); this module parses options,
fans the replays out over worker processes, and prints and writes the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

TEXT_POLICIES = "fifo,lru,accumulate,window,userfirst,largest,measured,measured[need=0]"
EVIDENCE_ALONE = "measured[need=0]"
GOAL_EACH, GOAL_OVER_ACCUMULATE, GOAL_SYNTHETIC = 0.8, 0.1, 0.9


def _variants(text: str):
    from bench.replay_score import parse_variant

    out = []
    for part in _split(text):
        try:
            out.append(parse_variant(part))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return out


def _split(text: str) -> list[str]:
    """Comma-separated policies, commas inside [...] kept: ``fifo,measured[a=1,b=2]``."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in parts + [cur] if p.strip()]


def register(sub, ints) -> None:
    """Add ``controlled`` and ``controlled-write`` to the bench subparsers."""
    c = sub.add_parser(
        "controlled",
        help="controlled conversations as text: share of needed facts still in memory when needed, per policy",
        description=(
            "Replay every saved conversation (*.jsonl) in --dir, or freshly generated ones (--seeds), through "
            "the product as `lagmem replay FILE --policy P --lag L` does, once per policy, and report per "
            "conversation the share of needed facts still in memory when an answer needed them (its citation "
            "was recorded). Needs come from FILE.needs.json when present (written by controlled-write), else "
            "every citation made --far or more steps after its turn. Ends with the goals: measured keeps >= "
            f"{GOAL_EACH} in each conversation and on average >= accumulate + {GOAL_OVER_ACCUMULATE}."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    c.add_argument(
        "--dir", type=Path, help="a folder of saved conversations (default with no --seeds: bench/controlled)"
    )
    c.add_argument("--seeds", type=ints, help="instead: generate conversations with these seeds (not written)")
    c.add_argument("--lag", type=int, default=None, help="lag (default: each file's header)")
    c.add_argument("--budget", type=int, default=None, help="budget in tokens (default: each file's header)")
    c.add_argument(
        "--policies",
        type=_variants,
        default=_variants(TEXT_POLICIES),
        metavar="P[,P[k=v]...]",
        help="policies; POLICY[NAME=NUMBER,...] sets parameters (measured[need=0]: evidence alone)",
    )
    c.add_argument(
        "--far", type=int, default=40, help="without a needs file: a citation this far after its turn is a need"
    )
    c.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    c.add_argument("--json", metavar="OUT", help="write every conversation's results and the settings as JSON")
    c.set_defaults(func=cmd_controlled)

    w = sub.add_parser(
        "controlled-write",
        help="write controlled conversations (saved format) and their needs files",
        description="Generate controlled conversations (bench/controlled.py: facts stated once, confirmed 1-8 "
        "steps later, needed 85-130 steps later, amid chatter cited 1-3 times) and write each as "
        "OUT/controlled-<seed>.jsonl with OUT/controlled-<seed>.needs.json.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    w.add_argument("--seeds", type=ints, required=True, help="generator seeds")
    w.add_argument("--out", type=Path, required=True, help="folder to write into (created)")
    w.add_argument("--exchanges", type=int, default=180, help="user turn + answer pairs per conversation")
    w.add_argument("--facts", type=int, default=12, help="facts per conversation")
    w.set_defaults(func=cmd_controlled_write)


_COUNTER = None


def counter():
    """The app's token counter, once per process (as `lagmem replay` prices turns)."""
    global _COUNTER
    if _COUNTER is None:
        from assistant.runtime import token_counter

        _COUNTER = token_counter()
    return _COUNTER


def _replay_job(job: tuple) -> tuple[str, str, list[bool]]:
    name, saved, needs, variant, lag, budget = job
    from bench import replay_score
    from memory import transcript as T

    transcript = T.parse(saved)
    settings = replay_score.settings_for(transcript.header, variant, lag=lag, budget=budget)
    return name, variant.title, replay_score.kept(transcript, needs, settings, counter())


def _conversations(args) -> list[tuple[str, str, list]]:
    """(name, saved text, needs) of every conversation to score."""
    from bench import controlled
    from memory import transcript as T

    if args.seeds:
        out = []
        for seed in args.seeds:
            c = controlled.generate(seed, counter().count)
            out.append((f"seed {seed}", T.write(c.transcript), c.needs))
        return out
    folder = args.dir or Path(__file__).resolve().parents[1] / "bench" / "controlled"
    files = sorted(folder.glob("*.jsonl"), key=_natural)
    if not files:
        raise SystemExit(f"no saved conversations (*.jsonl) in {folder}")
    out = []
    for f in files:
        text = f.read_text(encoding="utf-8")
        try:
            transcript = T.parse(text)
            needs, source = controlled.needs_of(transcript, f, args.far)
        except ValueError as exc:
            raise SystemExit(f"{f}: {exc}") from None
        if not needs:
            raise SystemExit(f"{f}: no needs ({source}): nothing to score")
        out.append((f.name, text, needs))
    return out


def _natural(path: Path) -> list:
    """controlled-2 before controlled-10."""
    import re

    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", path.name)]


def cmd_controlled(args) -> int:
    convs = _conversations(args)
    jobs = [(name, text, needs, v, args.lag, args.budget) for name, text, needs in convs for v in args.policies]
    from cli.bench_jobs import run_jobs

    got = {(name, title): k for name, title, k in run_jobs(_replay_job, jobs, args.jobs, "controlled")}
    titles = [v.title for v in args.policies]
    rows = [
        {"conversation": name, "needs": len(needs), "kept": {t: sum(got[(name, t)]) / len(needs) for t in titles}}
        for name, _, needs in convs
    ]
    print(
        format_table(
            rows,
            titles,
            f"Controlled conversations as text through the replay ({len(rows)}, "
            f"lag {args.lag if args.lag is not None else 'from each file'}, "
            f"budget {args.budget or 'from each file'}): share of needed facts in memory when needed",
        )
    )
    print(goals(rows, titles))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "results": rows,
                    "settings": {
                        "dir": str(args.dir) if args.dir else None,
                        "seeds": args.seeds,
                        "lag": args.lag,
                        "budget": args.budget,
                        "policies": titles,
                        "tokens": counter().name,
                    },
                },
                indent=2,
            )
        )
    return 0


def format_table(rows: list[dict], titles: list[str], title: str) -> str:
    width = max(len("conversation"), *(len(r["conversation"]) for r in rows))
    cols = [max(len(t), 5) for t in titles]
    lines = [title, f"{'conversation':<{width}}  needs  " + "  ".join(f"{t:>{w}}" for t, w in zip(titles, cols))]
    for r in rows:
        lines.append(
            f"{r['conversation']:<{width}}  {r['needs']:>5}  "
            + "  ".join(f"{r['kept'][t]:>{w}.3f}" for t, w in zip(titles, cols))
        )
    for label, fn in (("mean", statistics.fmean), ("min", min)):
        lines.append(
            f"{label:<{width}}  {'':>5}  "
            + "  ".join(f"{fn([r['kept'][t] for r in rows]):>{w}.3f}" for t, w in zip(titles, cols))
        )
    return "\n".join(lines)


def goals(rows: list[dict], titles: list[str]) -> str:
    """The controlled set's goals for measured, met or missed, in words."""
    if "measured" not in titles or "accumulate" not in titles:
        return "goals: need the measured and accumulate rows"
    m = [r["kept"]["measured"] for r in rows]
    a = statistics.fmean(r["kept"]["accumulate"] for r in rows)
    each = all(x >= GOAL_EACH for x in m)
    over = statistics.fmean(m) - a
    return (
        f"goal: measured >= {GOAL_EACH} in each conversation: {'met' if each else 'MISSED'} (lowest {min(m):.3f}); "
        f"mean >= accumulate + {GOAL_OVER_ACCUMULATE}: {'met' if over >= GOAL_OVER_ACCUMULATE - 1e-12 else 'MISSED'} "
        f"({statistics.fmean(m):.3f} vs {a:.3f}, {over:+.3f})"
    )


def cmd_controlled_write(args) -> int:
    from dataclasses import replace

    from bench import controlled

    args.out.mkdir(parents=True, exist_ok=True)
    settings = replace(controlled.Settings(), exchanges=args.exchanges, facts=args.facts)
    for seed in args.seeds:
        try:
            c = controlled.generate(seed, counter().count, settings)
        except ValueError as exc:
            raise SystemExit(f"seed {seed}: {exc}") from None
        path = args.out / f"controlled-{seed}.jsonl"
        controlled.write(c, path, counter().name)
        print(
            f"{path}: {len(c.transcript.turns)} turns, {len(c.needs)} needs, budget {c.transcript.header['budget']} "
            f"tokens ({counter().name}), lag {c.transcript.header['lag']}"
        )
    return 0
