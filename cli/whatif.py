"""``lagmem whatif CONV``: what a stored conversation would remember under other settings, and the
side-by-side table of every policy that ``lagmem replay FILE --compare`` prints for a file.

Read-only: the conversation is read through the store and replayed in memory (``assistant.whatif``).
"""

from __future__ import annotations

import argparse
import json
import sys

from cli.users import user_arg
from memory.policies import POLICIES

HINDSIGHT = (
    "judged with hindsight: a miss is a moment a stored citation (or the miss log) wanted a "
    "turn this setting had evicted; the settings the conversation ran with are favoured, "
    "since its answers could only cite what was in memory then"
)


def policies_arg(text: str) -> list[str]:
    from assistant.whatif import POLICY_NAMES

    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in POLICY_NAMES]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown polic{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown) or '(none)'}: "
            f"choose from {', '.join(POLICY_NAMES)}"
        )
    return names


def print_table(rows: list[dict], out=sys.stdout) -> None:
    """The all-policies table; ``*`` marks the best (fewest misses, then most wanted turns kept)."""
    print(
        f"{'policy':<12}{'lag':>4}{'turns kept':>12}{'tokens kept':>13}{'evictions':>11}{'misses':>8}"
        f"{'wanted kept':>14}",
        file=out,
    )
    for r in rows:
        mark = " *" if r["best"] else ""
        print(
            f"{r['policy']:<12}{r['lag']:>4}{r['turns_kept']:>12}{r['tokens_kept']:>13}{r['evictions']:>11}"
            f"{r['misses']:>8}{r['wanted_kept']:>8}/{r['wanted_turns']:<5}{mark}",
            file=out,
        )
    print(f"* best for this conversation, {HINDSIGHT}", file=out)


def _describe(result, now=None, out=sys.stdout) -> None:
    s = result.summary()
    print(
        f"what if: policy {s['policy']}, budget {s['budget']} tokens, lag {s['lag']}, "
        f"low watermark {s['low_watermark']:g}",
        file=out,
    )
    if now is not None:
        there, here = set(result.final.active), set(now.active)
        print(f"in memory now:  {len(now.active)} turns, {now.used_tokens} tokens", file=out)
        print(
            f"what if:        {s['turns_kept']} turns, {s['tokens_kept']} tokens"
            f"  (+{len(there - here)} not in memory now, -{len(here - there)} that are)",
            file=out,
        )
    evs = ", ".join(f"T{r.turn}@{r.step}" for r in result.evictions[-12:])
    more = f" (last 12 of {len(result.evictions)})" if len(result.evictions) > 12 else ""
    print(f"evictions (turn@step){more}: {evs or 'none'}", file=out)
    if result.misses:
        shown = ", ".join(f"T{m.turn} at step {m.step} (evicted at {m.evicted_at})" for m in result.misses[:12])
        print(f"misses: {len(result.misses)}: {shown}{' ...' if len(result.misses) > 12 else ''}", file=out)
    else:
        print("misses: none", file=out)


def cmd_whatif(args) -> int:
    from assistant import whatif as W
    from assistant.runtime import get_store

    store = get_store(args.db)
    try:
        rec = W.load(store, args.conversation, owner=args.user)
    except LookupError as exc:  # the store's NotFound: no such conversation (or not this user's)
        raise SystemExit(f"lagmem: {exc}")
    try:
        settings = W.settings_for(
            rec.settings, policy=args.policy, budget=args.budget, lag=args.lag, low_watermark=args.low_watermark
        )
    except ValueError as exc:
        raise SystemExit(f"lagmem: {exc}")
    result, now = W.run(rec, settings), rec.now
    rows = W.comparison_rows(W.compare(rec, settings, args.compare)) if args.compare else None
    if args.json:
        data = {
            "conversation": args.conversation,
            "now": {"active": list(now.active), "used_tokens": now.used_tokens},
            "whatif": result.as_dict(),
        }
        if rows is not None:
            data["compare"] = rows
            data["judged_with_hindsight"] = True
        sys.stdout.write(json.dumps(data, sort_keys=True) + "\n")
        return 0
    _describe(result, now)
    if rows is not None:
        print()
        print_table(rows)
    return 0


def compare_file(t, counter, settings, policies: list[str], as_json: bool) -> None:
    """``lagmem replay FILE --compare``: the table for a saved file (in memory, nothing stored)."""
    from assistant import whatif as W

    rec = W.from_transcript(t, counter, settings)
    rows = W.comparison_rows(W.compare(rec, settings, policies))
    if as_json:
        sys.stdout.write(
            json.dumps({"compare": rows, "judged_with_hindsight": True, "tokens": counter.name}, sort_keys=True) + "\n"
        )
    else:
        print(f"budget {settings.budget} tokens, lag {settings.lag}, tokens: {counter.name}")
        print_table(rows)


def register(sub) -> argparse.ArgumentParser:
    w = sub.add_parser(
        "whatif",
        help="what a stored conversation would remember under other settings (read-only)",
        description="Replay a stored conversation (its turns, citations, feedback, pins and restores, "
        "in order) through the memory layer in memory under other settings, and compare with what "
        f"is in memory now. Nothing is written. Misses are {HINDSIGHT}.",
    )
    w.add_argument("conversation", type=int, metavar="CONV", help="conversation id (see `lagmem list`)")
    w.add_argument("--policy", help=f"{', '.join(POLICIES)} (default: the conversation's)")
    w.add_argument("--budget", type=int, help="token budget (default: the conversation's)")
    w.add_argument("--lag", type=int, help="steps a new turn stays protected (default: the conversation's)")
    w.add_argument("--low-watermark", type=float, help="evict down to this share of the budget (0-1]")
    w.add_argument(
        "--compare",
        type=policies_arg,
        nargs="?",
        const=list(POLICIES),
        metavar="P1,P2",
        help="also the side-by-side table for these policies (default: all)",
    )
    w.add_argument("--json", action="store_true", help="print one JSON object")
    w.add_argument(
        "--db", metavar="URL", help="database URL (default: LAGMEM_DATABASE_URL or the data dir's SQLite file)"
    )
    w.add_argument(
        "--user", type=user_arg, help="act as this user (conversations are private when sign-in is configured)"
    )
    w.set_defaults(func=cmd_whatif)
    return w
