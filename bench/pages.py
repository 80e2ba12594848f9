"""`lagmem bench pages`: long conversations end to end: import time, write-lock time, page draws.

For each size (turns): a generated conversation (short user/assistant turns, every answer citing
the turn before it, budget 2,000 tokens, lag 4) is written as a saved file, parsed and imported
into a fresh SQLite file the way ``lagmem import`` does it (tiktoken counts, the default policy);
then the chat page and the memory inspector are drawn headless (Streamlit's AppTest) on that
conversation, once (the session's first draw, timed apart: it loads modules and the inspector
reads the token chart's whole history) and then ``--draws`` times, each draw timed; then ``--draws``
times more, each after one new exchange (a question and its answer citing it, stored the way the
service stores them, not timed): the draw a live page makes when an answer arrives.

Reported per size: import seconds and seconds per 1,000 turns (parse + layer + write), the
longest single write transaction of the import (timed around the commit, so a WAL checkpoint the
commit runs counts too), the longest wait of another writer on the same file that takes the write
lock every 20 ms during the import (what another user would feel), and the median chat and
inspector draw, unchanged and after a change. No model is called (a draw does not ask one); the embedder is
``bench.fakes.embedder.HashEmbedder``. Targets: import <= 2 s per 1,000 turns and linear, no write
transaction > 1 s, inspector draw <= 1 s at 10,000 turns and <= 3 s at 100,000.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app.py"
INSPECTOR = "pages/inspector_page.py"
WORDS = "apple river piano lisbon garden train coffee museum letter window bridge market".split()


def add_arguments(p) -> None:
    p.add_argument("--turns", default="1000,10000,100000", help="conversation lengths in turns")
    p.add_argument("--draws", type=int, default=3, help="timed draws of each page per size")
    p.add_argument("--no-draw", action="store_true", help="time the import only")
    p.add_argument("--draw-timeout", type=float, default=600.0, help="seconds one draw may take (AppTest's timeout)")
    p.add_argument("--json", metavar="OUT", help="write results as JSON")
    p.set_defaults(func=cmd_pages)


def saved_file(turns: int) -> str:
    """A saved conversation of ``turns`` short turns; each answer cites the question before it."""
    lines = ['{"lagmem": 1, "title": "long conversation", "budget": 2000, "lag": 4}']
    for i in range(1, turns + 1):
        words = " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 9))
        if i % 2:
            lines.append(json.dumps({"role": "user", "content": f"message {i}: {words}?"}))
        else:
            lines.append(json.dumps({"role": "assistant", "content": f"answer {i}: {words}.", "cites": [i - 1]}))
    return "\n".join(lines) + "\n"


class NoModel:
    """The model slot of a service that only draws pages: any call is a bug in the benchmark."""

    model = "none (drawing only)"
    structured = "none"
    backend = "bench"

    def complete(self, *args, **kwargs):
        raise RuntimeError("bench pages does not call the model")

    def stream(self, *args, **kwargs):
        raise RuntimeError("bench pages does not call the model")


def _probe(path: str, stop: threading.Event, waits: list[float]) -> None:
    """Another writer on the same file: takes and drops the write lock every 20 ms, timing the wait."""
    con = sqlite3.connect(path, timeout=120, isolation_level=None)
    try:
        while not stop.is_set():
            t0 = time.perf_counter()
            con.execute("BEGIN IMMEDIATE")
            waits.append(time.perf_counter() - t0)
            con.execute("ROLLBACK")
            time.sleep(0.02)
    finally:
        con.close()


def import_size(url: str, turns: int) -> dict:
    from assistant.models.tokens import make_token_counter
    from assistant.replay import replay, settings_from
    from assistant.store import open_store
    from memory import transcript as T

    text = saved_file(turns)
    counter = make_token_counter(None)
    store = open_store(url)
    stop, waits = threading.Event(), []
    probe = threading.Thread(target=_probe, args=(url.removeprefix("sqlite:///"), stop, waits), daemon=True)
    probe.start()
    try:
        t0 = time.perf_counter()
        t = T.parse(text)
        log = replay(store, t, counter, settings_from(t.header), title="long conversation", atomic=True)
        seconds = time.perf_counter() - t0
    finally:
        stop.set()
        probe.join()
        store.close()
    return {
        "turns": turns,
        "bytes": len(text.encode()),
        "conversation": log.conversation_id,
        "import_s": round(seconds, 3),
        "import_s_per_1000": round(seconds / turns * 1000, 3),
        "write_transactions": log.write.chunks,
        "longest_write_s": round(log.write.longest_s, 3),
        "longest_write_by_table": log.write.longest_by_table,
        "other_writer_max_wait_s": round(max(waits, default=0.0), 3),
        "other_writer_locks": len(waits),
    }


def exchange(store, conv: int, i: int) -> None:
    """One new question and its answer citing it, each enforcing the budget on arrival (what
    ``ChatService`` stores for an exchange, without a model)."""
    words = " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 9))
    with store.transaction(conv) as tx:
        q = tx.add_turn("user", f"new message {i}: {words}?", 12)
        tx.enforce("arrival", q.number)
    with store.transaction(conv) as tx:
        a = tx.add_turn("assistant", f"new answer {i}: {words}.", 12, reply_to=q.number)
        tx.cite([q.number], answer_turn=a.number)
        tx.enforce("arrival", a.number)


def draw_times(url: str, conv: int, draws: int, timeout: float) -> dict:
    from streamlit.testing.v1 import AppTest

    from assistant import runtime
    from bench.fakes.embedder import HashEmbedder

    os.environ["LAGMEM_DATABASE_URL"] = url
    svc = runtime.get_service(url, llm=NoModel(), embedder=HashEmbedder())
    out = {}
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    at.session_state["conv_id"] = conv
    for page in ("chat", "inspector"):
        if page == "inspector":
            at.switch_page(INSPECTOR)
        t0 = time.perf_counter()
        at.run()  # the session's first draw of the page: opens the database, loads modules, fills caches
        out[f"{page}_first_s"] = round(time.perf_counter() - t0, 3)
        if at.exception:
            raise RuntimeError(f"the {page} page failed: {at.exception[0].message}")
        times = []
        for _ in range(draws):
            t0 = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - t0)
        out[f"{page}_draw_s"] = round(statistics.median(times), 3)
        times = []
        for i in range(draws):
            exchange(svc.store, conv, i)
            t0 = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - t0)
            if at.exception:
                raise RuntimeError(f"the {page} page failed after a change: {at.exception[0].message}")
        out[f"{page}_changed_s"] = round(statistics.median(times), 3)
    return out


def cmd_pages(args) -> int:
    sizes = [int(x) for x in args.turns.split(",") if x.strip()]
    results, nan = [], float("nan")
    print(
        f"{'turns':>8} {'import s':>9} {'s/1000':>7} {'write tx':>9} {'longest tx s':>13} {'other wait s':>13} "
        f"{'chat s':>7} {'changed':>8} {'first':>6} {'inspector s':>12} {'changed':>8} {'first':>6}"
    )
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="lagmem-pages-") as tmp:
            url = f"sqlite:///{Path(tmp) / 'pages.db'}"
            r = import_size(url, n)
            if not args.no_draw:
                r.update(draw_times(url, r["conversation"], args.draws, args.draw_timeout))
        results.append(r)
        print(
            f"{n:>8} {r['import_s']:>9.2f} {r['import_s_per_1000']:>7.3f} {r['write_transactions']:>9} "
            f"{r['longest_write_s']:>13.3f} {r['other_writer_max_wait_s']:>13.3f} {r.get('chat_draw_s', nan):>7.3f} "
            f"{r.get('chat_changed_s', nan):>8.3f} {r.get('chat_first_s', nan):>6.2f} {r.get('inspector_draw_s', nan):>12.3f} "
            f"{r.get('inspector_changed_s', nan):>8.3f} {r.get('inspector_first_s', nan):>6.2f}",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"results": results, "python": sys.version.split()[0]}, indent=2), encoding="utf-8"
        )
    return 0
