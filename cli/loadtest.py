"""``lagmem loadtest``: the options, the table and the JSON; the run and its checks live in
``bench/loadtest.py``."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def print_table(r: dict, out=None) -> None:
    from bench.loadtest import ok

    out = out or sys.stdout
    rows = [
        (
            "database",
            f"{r['backend']} ({r['mode']}, {r['writers']} writers x {r['exchanges_per_writer']} exchanges, "
            f"{r['conversations']} conversations)",
        ),
        ("exchanges", f"{r['exchanges']} in {r['wall_s']} s = {r['exchanges_per_s']} exchanges/s"),
        ("latency", f"p50 {r['p50_ms']} ms   p99 {r['p99_ms']} ms   max {r['max_ms']} ms"),
        ("stored", f"{r['turns']} turns, {r['evictions']} eviction records"),
        ("lost turns", r["lost"]),
        ("duplicated turns", r["duplicated"]),
        ("step gaps", r["gaps"]),
        ("contract violations", r["contract_violations"]),
        ("errors shown to users", f"{r['errors_shown_to_users']} ({r['locked_errors']} 'database is locked')"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"  {k:<{width}}  {v}", file=out)
    for p in r["problems"] + r["errors"]:
        print(f"  ! {p}", file=out)
    print("  PASS: nothing lost, duplicated or bent" if ok(r) else "  FAIL", file=out)


def cmd_loadtest(args) -> int:
    from assistant.config import default_url
    from bench.loadtest import ok, run

    try:
        report = run(
            args.db or default_url(), args.writers, args.exchanges, processes=args.processes, progress=not args.quiet
        )
    except ValueError as exc:
        raise SystemExit(f"lagmem loadtest: {exc}")
    print_table(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0 if ok(report) else 1


def register(sub) -> None:
    p = sub.add_parser(
        "loadtest",
        help="N concurrent writers against one database, then check nothing was lost",
        description="Run N concurrent writers (threads, or processes with --processes) doing full exchanges "
        "through the real ChatService against one database, writing to shared and separate conversations; "
        "then check that no turn was lost or duplicated, step numbers have no gaps, every conversation "
        "satisfies the memory contract, and no error (e.g. 'database is locked') reached a user. "
        "The model is a local HTTP fake of the OpenAI API (started in-process, through the real client) and "
        "embeddings are HashEmbedder (hash-bow: bag-of-words hashing, no model download), so the figures "
        "measure lagmem and its database. Use a scratch database: the run adds conversations to it. "
        "Exit status 1 if any check fails.",
    )
    p.add_argument("--writers", type=int, default=4, metavar="N", help="concurrent writers (1..64; default 4)")
    p.add_argument("--exchanges", type=int, default=20, metavar="M", help="exchanges per writer (default 20)")
    p.add_argument(
        "--processes", action="store_true", help="one process per writer (default: threads sharing one service)"
    )
    p.add_argument(
        "--db", metavar="URL", help="database URL (default: LAGMEM_DATABASE_URL or the data dir's SQLite file)"
    )
    p.add_argument("--json", metavar="OUT", help="also write the report as JSON to this file")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_loadtest)
