"""`lagmem bench exchange`: the cost of one exchange as the history grows, and right after an import.

For each size (turns): a generated conversation (``bench.pages.saved_file``: short user/assistant
turns, budget 2,000 tokens, lag 4) is imported into a fresh SQLite file the way ``lagmem import``
does it (its turns are stored without vectors, as every import's are); then, in the same warm
process, one ``ChatService`` (the scripted ``bench.fakes.llm.FakeLLM``, the hashing embedder
``bench.fakes.embedder.HashEmbedder``: no model time, only lagmem's own) answers the first question
after the import (timed apart) and then ``--exchanges`` more, each timed; the median is reported.
The turns' vectors are filled by the service's background worker meanwhile, as in the app.

Also: the import's own time per size, and (``--whatif``) one what-if comparison of every policy;
and (``--scaled``) the import / what-if bound: files of 2,000 / 4,000 / 8,000 turns whose header
budget (5 tokens per turn of the file) keeps about a third of them in memory, where each
arrival's decision measures every turn in memory, so the cost is turns x memory; the web shell
stops such a replay at its time limit (``web.sidebar.IMPORT_SECONDS``, ``web.whatif_panel.WHATIF_SECONDS``).
Goals: growth of the median exchange <= 1.3x from 1,000 to 100,000 turns; the first exchange
after an import <= 2x a normal one.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

QUESTION_WORDS = "apple river piano lisbon garden train coffee museum letter window bridge market".split()


def add_arguments(p) -> None:
    p.add_argument("--turns", default="1000,10000,100000", help="conversation lengths in turns")
    p.add_argument("--exchanges", type=int, default=15, help="timed exchanges per size after the first")
    p.add_argument("--whatif", action="store_true", help="also time one what-if comparison of every policy")
    p.add_argument(
        "--scaled",
        default="",
        metavar="TURNS",
        help="also time imports and what-if comparisons with a budget of 5 tokens per turn",
    )
    p.add_argument("--json", metavar="OUT", help="write results as JSON")
    p.set_defaults(func=cmd_exchange)


def scaled_import(url: str, turns: int) -> dict:
    """One import whose budget keeps about a third of the file in memory, then one comparison."""
    from assistant import whatif as W
    from assistant.models.tokens import make_token_counter
    from assistant.replay import replay, settings_from
    from assistant.store import open_store
    from bench.pages import saved_file
    from memory import transcript as T

    store = open_store(url)
    try:
        text = saved_file(turns).replace('"budget": 2000', f'"budget": {5 * turns}', 1)
        t0 = time.perf_counter()
        t = T.parse(text)
        log = replay(store, t, make_token_counter(None), settings_from(t.header), title="scaled", atomic=True)
        import_s = time.perf_counter() - t0
        rec = W.load(store, log.conversation_id)
        t0 = time.perf_counter()
        W.compare(rec)
        return {
            "turns": turns,
            "budget": 5 * turns,
            "in_memory": len(store.layer(log.conversation_id).active_numbers()),
            "import_s": round(import_s, 2),
            "whatif_all_policies_s": round(time.perf_counter() - t0, 2),
        }
    finally:
        store.close()


def _question(i: int) -> str:
    words = " ".join(QUESTION_WORDS[(i * k + 3) % len(QUESTION_WORDS)] for k in range(1, 7))
    return f"what did I say about {words} ({i})?"


def run_size(svc, turns: int, exchanges: int, whatif: bool = False) -> dict:
    """Import a ``turns``-turn conversation into ``svc``'s database, as the web shell does it, and
    time its exchanges."""
    from assistant.replay import replay, settings_from
    from bench.pages import saved_file
    from memory import transcript as T

    store = svc.store
    text = saved_file(turns)
    t0 = time.perf_counter()
    t = T.parse(text)
    log = replay(store, t, svc.counter, settings_from(t.header), title="long conversation", atomic=True)
    import_s = time.perf_counter() - t0
    conv = log.conversation_id
    # what the sidebar's import does next: the turns in memory embedded now, the rest in the background
    t0 = time.perf_counter()
    svc.imported(conv)
    imported_ms = (time.perf_counter() - t0) * 1000.0
    t0, c0 = time.perf_counter(), time.thread_time()
    first = svc.ask(conv, _question(0))
    first_ms, first_cpu = (time.perf_counter() - t0) * 1000.0, (time.thread_time() - c0) * 1000.0
    times, cpu = [], []
    for i in range(1, exchanges + 1):
        t0, c0 = time.perf_counter(), time.thread_time()
        svc.ask(conv, _question(i))
        times.append((time.perf_counter() - t0) * 1000.0)
        cpu.append((time.thread_time() - c0) * 1000.0)
    filled = svc.vectors_pending(conv)
    t0 = time.perf_counter()
    svc.candidates.vectors.idle(timeout=3600)
    fill_s = time.perf_counter() - t0
    # the steady state: every vector filled, no worker running
    steady, steady_cpu = [], []
    for i in range(exchanges + 1, 2 * exchanges + 1):
        t0, c0 = time.perf_counter(), time.thread_time()
        svc.ask(conv, _question(i))
        steady.append((time.perf_counter() - t0) * 1000.0)
        steady_cpu.append((time.thread_time() - c0) * 1000.0)
    out = {
        "turns": turns,
        "import_s": round(import_s, 3),
        "imported_step_ms": round(imported_ms, 1),
        "first_ms": round(first_ms, 1),
        "first_total_ms": first.timings.get("total_ms"),
        "median_ms": round(statistics.median(times), 1),
        "p90_ms": round(sorted(times)[int(0.9 * (len(times) - 1))], 1),
        "exchanges": len(times),
        "in_memory": len(store.layer(conv).active_numbers()),
        "vectors_pending_after": filled,
        "fill_rest_s": round(fill_s, 2),
        "steady_median_ms": round(statistics.median(steady), 1),
        # the exchange's own CPU (its thread's): what the load of other processes does not inflate
        "first_cpu_ms": round(first_cpu, 1),
        "median_cpu_ms": round(statistics.median(cpu), 1),
        "steady_median_cpu_ms": round(statistics.median(steady_cpu), 1),
    }
    if whatif:
        from assistant import whatif as W

        t0 = time.perf_counter()
        W.compare(W.load(store, conv))
        out["whatif_s"] = round(time.perf_counter() - t0, 3)
    return out


def _service(url: str):
    from assistant.models.tokens import make_token_counter
    from assistant.service import ChatService
    from assistant.store import open_store
    from bench.fakes.embedder import HashEmbedder
    from bench.fakes.llm import FakeLLM

    return ChatService(open_store(url), FakeLLM(default="Noted."), HashEmbedder(), make_token_counter(None))


def cmd_exchange(args) -> int:
    sizes = [int(x) for x in args.turns.split(",") if x.strip()]
    results = []
    load_before = os.getloadavg()
    print(
        f"{'turns':>8} {'import s':>9} {'+memory ms':>11} {'first ms':>9} {'median ms':>10} {'p90 ms':>8} "
        f"{'in memory':>10} {'no vector':>10} {'filled s':>9} {'steady ms':>10}   cpu ms: first median steady"
    )
    with tempfile.TemporaryDirectory(prefix="lagmem-exchange-") as tmp:
        # one database and one service for every size, as in the app's process; warmed first
        # (modules loaded, statements compiled, the token counter and the ranker built)
        svc = _service(f"sqlite:///{Path(tmp) / 'exchange.db'}")
        try:
            run_size(svc, 1000, 3)
            for n in sizes:
                r = run_size(svc, n, args.exchanges, args.whatif)
                results.append(r)
                print(
                    f"{n:>8} {r['import_s']:>9.2f} {r['imported_step_ms']:>11.1f} {r['first_ms']:>9.1f} "
                    f"{r['median_ms']:>10.1f} {r['p90_ms']:>8.1f} {r['in_memory']:>10} {r['vectors_pending_after']:>10} {r['fill_rest_s']:>9.1f} {r['steady_median_ms']:>10.1f}"
                    f"   {r['first_cpu_ms']:>12.1f} {r['median_cpu_ms']:>6.1f} {r['steady_median_cpu_ms']:>6.1f}"
                    + (f"  what-if {r['whatif_s']:.2f} s" if "whatif_s" in r else ""),
                    flush=True,
                )
        finally:
            svc.close()
            svc.store.close()
    summary = {}
    if len(results) > 1:
        small, large = results[0], results[-1]
        summary["growth"] = round(large["median_ms"] / small["median_ms"], 2)
        summary["growth_steady"] = round(large["steady_median_ms"] / small["steady_median_ms"], 2)
        summary["first_over_median"] = round(max(r["first_ms"] / r["median_ms"] for r in results), 2)
        summary["first_over_steady"] = round(max(r["first_ms"] / r["steady_median_ms"] for r in results), 2)
        summary["growth_cpu"] = round(large["median_cpu_ms"] / small["median_cpu_ms"], 2)
        summary["growth_steady_cpu"] = round(large["steady_median_cpu_ms"] / small["steady_median_cpu_ms"], 2)
        summary["first_over_steady_cpu"] = round(max(r["first_cpu_ms"] / r["steady_median_cpu_ms"] for r in results), 2)
        print(
            f"growth {small['turns']} -> {large['turns']} turns, median exchange: {summary['growth']}x while the "
            f"vectors fill, {summary['growth_steady']}x once filled (goal <= 1.3x); first after import / median, "
            f"worst size: {summary['first_over_median']}x, / steady median {summary['first_over_steady']}x (goal <= 2x)"
        )
        print(
            f"in CPU time of the exchange's thread: growth {summary['growth_cpu']}x while filling, "
            f"{summary['growth_steady_cpu']}x once filled; first / steady median {summary['first_over_steady_cpu']}x"
        )
    scaled = []
    for n in [int(x) for x in args.scaled.split(",") if x.strip()]:
        with tempfile.TemporaryDirectory(prefix="lagmem-exchange-") as tmp:
            r = scaled_import(f"sqlite:///{Path(tmp) / 'scaled.db'}", n)
        scaled.append(r)
        print(
            f"scaled import {n:>6} turns (budget {r['budget']:,}, {r['in_memory']:,} in memory): import "
            f"{r['import_s']:.2f} s, what-if of every policy {r['whatif_all_policies_s']:.2f} s",
            flush=True,
        )
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "results": results,
                    "summary": summary,
                    "scaled": scaled,
                    "load_before": [round(x, 2) for x in load_before],
                    "load_after": [round(x, 2) for x in load_after],
                    "python": sys.version.split()[0],
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0
