"""``lagmem loadtest``: N concurrent writers, then a check that nothing was lost or bent.

Why a command and not a timed unit test: throughput depends on the machine and the database;
what must *never* vary is the outcome. So the run reports exchanges/s and latency, and then
checks, from the database alone:

* lost / duplicated: every exchange a writer saw committed has its user turn and its answer,
  exactly once (messages carry a ``w<i>-x<j>`` tag; the fake model echoes it in the answer);
* gaps: each conversation's turns are numbered 1..step with no hole, and ``step`` matches;
* contract: each conversation's stored history, replayed serially through a fresh
  ``MemoryLayer``, evicts no protected or pinned turn, yields exactly the eviction records stored
  (one per eviction) and the stored final state, which is within budget unless only pinned and
  protected turns are left;
* errors shown to users: any exception a writer got ("database is locked" counted apart).

Writers share conversations on purpose: writer i alternates between one conversation shared by
all writers and one shared with its neighbour (i//2), and every 5th exchange it also pins, unpins,
restores or gives feedback on a turn, as a person in another browser tab would. Threads share one
``ChatService`` (as Streamlit's sessions do); ``--processes`` gives each writer its own process,
engine and cache (as several app servers on one database do).

The model is a local HTTP fake of the OpenAI API (``bench.fakes.loadtest_server``) reached
through the real client, and embeddings are ``HashEmbedder`` (bag-of-words hashing), so the run
measures lagmem and its database, not a model.
"""

from __future__ import annotations

import multiprocessing as mp
import queue as queue_mod
import random
import re
import sys
import threading
import time
from dataclasses import dataclass, field

from memory.types import MemorySettings

SETTINGS = MemorySettings(budget=160, lag=2, policy="measured")
WORDS = (
    "apple river budget lisbon piano garden orbit cable violet harbor quartz meadow signal copper lantern falcon"
).split()
_TAG = re.compile(r"\bw(\d+)-x(\d+)\b")
LOCKED = ("database is locked", "could not serialize", "deadlock detected")


@dataclass
class Plan:
    url: str
    base_url: str
    writers: int
    exchanges: int
    shared: int  # the conversation every writer uses
    pairs: list[int] = field(default_factory=list)  # pairs[i // 2]: writer i's second conversation

    def conversation(self, writer: int, j: int) -> int:
        return self.shared if j % 2 == 0 else self.pairs[writer // 2]


def message(writer: int, j: int) -> str:
    rng = random.Random(writer * 100_003 + j)
    return f"w{writer}-x{j} " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14)))


def make_service(url: str, base_url: str, *, migrate: bool = False):
    """The real ChatService on ``url``: the OpenAI client at the fake server, hash embeddings."""
    from assistant.models.llm import LLMClient, LLMConfig
    from assistant.models.tokens import make_token_counter
    from assistant.retrieval.step import CiteCheck, RetrievalConfig
    from assistant.service import ChatService
    from assistant.store import open_store
    from bench.fakes.embedder import HashEmbedder
    from bench.fakes.loadtest_server import MODEL

    llm = LLMClient(
        LLMConfig(
            backend="compatible",
            base_url=base_url,
            api_key="sk-loadtest",
            model=MODEL,
            timeout=60.0,
            max_retries=0,
            structured="json_object_schema",
        )
    )
    return ChatService(
        open_store(url, migrate=migrate),
        llm,
        HashEmbedder(),
        make_token_counter(MODEL),
        retrieval=RetrievalConfig(check=CiteCheck(min_similarity=None)),
    )


def _side_action(svc, conv: int, rng: random.Random) -> None:
    """What a person in another tab does: pin, unpin, restore or feedback on some turn."""
    with svc.store.transaction(conv) as tx:
        if tx.layer.step == 0:
            return
        n = rng.randint(1, tx.layer.step)
        turn = tx.layer.turn(n)
        kind = rng.choice(("pin", "unpin", "restore", "feedback"))
        if kind == "pin":
            tx.pin(n)
        elif kind == "unpin":
            tx.unpin(n)
        elif kind == "restore":
            tx.restore(n)
        elif turn.role == "assistant":
            tx.feedback(n, rng.choice((-1.0, 1.0)))


def run_writer(plan: Plan, writer: int, out, go, svc=None) -> None:
    """One writer's exchanges; every outcome goes to ``out`` (a queue) as a tuple."""
    try:
        svc = svc or make_service(plan.url, plan.base_url)
    except Exception as exc:  # noqa: BLE001 -- reported as this writer's failure, never swallowed
        out.put(("err", writer, -1, -1, f"setup: {exc!r}"[:500], 0.0))
        out.put(("end", writer))
        return
    try:  # warm up outside the clock: token tables, the HTTP client, the connection pool
        svc.counter.count("warm up")
        svc.llm.complete([{"role": "user", "content": "warm up"}], max_tokens=4)
        svc.store.conversation(plan.shared)
    except Exception as exc:  # noqa: BLE001 -- reported as this writer's failure
        out.put(("err", writer, -1, -1, f"warm-up: {exc!r}"[:500], 0.0))
    out.put(("ready", writer))
    go.wait()
    rng = random.Random(writer)
    for j in range(plan.exchanges):
        conv = plan.conversation(writer, j)
        t0 = time.perf_counter()
        try:
            r = svc.ask(conv, message(writer, j))
            ms = (time.perf_counter() - t0) * 1000.0
            out.put(("ok", writer, j, conv, r.user_turn, r.answer_turn, ms))
            if j % 5 == 4:
                _side_action(svc, conv, rng)
        except Exception as exc:  # noqa: BLE001 -- this is what a user would see: count it
            out.put(("err", writer, j, conv, f"{type(exc).__name__}: {exc}"[:500], (time.perf_counter() - t0) * 1000.0))
    out.put(("end", writer))


# ----- checks ---------------------------------------------------------------------------------


def check_contract(store, conv_id: int) -> list[str]:
    """Replay the stored history serially through a fresh layer; list every disagreement."""
    from assistant.replay import export_transcript
    from memory import transcript as T
    from memory.layer import MemoryLayer

    view = store.view(conv_id)
    tokens = {row.seq: row.tokens for row in view.turns}
    stored = [r.as_dict() for r in view.evictions]
    priors = {row.seq: row.prior for row in view.turns}  # the need prior is stored, never recomputed
    problems: list[str] = []
    lay = MemoryLayer(view.layer.settings)
    replayed = []
    for item in T.parse(export_transcript(store, conv_id)).items:
        if isinstance(item, T.TurnLine):
            t = lay.add_turn(item.role, tokens[item.number], prior=priors[item.number])
            if item.cites:
                lay.cite(list(item.cites), answer_turn=t.number)
            records = lay.enforce_budget("arrival", t.number)
        elif item.event == "feedback":
            lay.feedback(item.turn, item.value)
            records = []
        elif item.event == "miss":  # the second chance's restore, if it made one
            records = lay.restore(item.turn, cause="auto_restore") if item.restored else []
        else:
            records = getattr(lay, item.event)(item.turn)
        kept = {t.number for t in lay.turns() if t.pinned or lay.step - t.protected_since < lay.lag}
        if bad := {r.turn for r in records} & kept:
            problems.append(
                f"conversation {conv_id}: protected or pinned turn(s) {sorted(bad)} evicted at step {lay.step}"
            )
        replayed += [r.as_dict() for r in records]
    if [(d["turn"], d["step"]) for d in replayed] != [(d["turn"], d["step"]) for d in stored]:
        problems.append(
            f"conversation {conv_id}: {len(stored)} eviction records stored, a serial replay makes {len(replayed)}"
            " (or they differ)"
        )
    elif replayed != stored:
        problems.append(f"conversation {conv_id}: eviction records differ from a serial replay in their details")
    live = store.layer(conv_id)
    if live.snapshot() != lay.snapshot():
        problems.append(f"conversation {conv_id}: the stored memory state differs from a serial replay")
    snap = live.snapshot()
    if snap.used_tokens > snap.budget and live.candidates():
        problems.append(f"conversation {conv_id}: {snap.used_tokens}/{snap.budget} tokens with evictable turns left")
    return problems


def check(store, plan: Plan, committed: dict[tuple[int, int], tuple[int, int, int]]) -> dict:
    """Count lost, duplicated, gaps and contract violations from the database alone."""
    lost = duplicated = gaps = 0
    problems: list[str] = []
    seen: dict[tuple[str, tuple[int, int]], list[tuple[int, int]]] = {}
    turns = evictions = 0
    conversations = [plan.shared, *plan.pairs]
    for conv_id in conversations:
        view = store.view(conv_id)
        conv, rows = view.conv, view.turns
        seqs = [r.seq for r in rows]
        turns += len(rows)
        evictions += len(view.evictions)
        missing = set(range(1, conv.step + 1)) - set(seqs)
        extra = len(seqs) - len(set(seqs)) + sum(1 for q in seqs if not 1 <= q <= conv.step)
        if missing or extra:
            gaps += len(missing) + extra
            problems.append(
                f"conversation {conv_id}: steps 1..{conv.step}, missing {sorted(missing)[:10]}, {extra} extra"
            )
        for r in rows:
            if m := _TAG.search(r.content):
                seen.setdefault((r.role, (int(m.group(1)), int(m.group(2)))), []).append((conv_id, r.seq))
    for key, places in seen.items():
        if len(places) > 1:
            duplicated += len(places) - 1
            problems.append(f"{key[0]} turn of w{key[1][0]}-x{key[1][1]} stored {len(places)} times: {places}")
    for key, (conv, user_turn, answer_turn) in committed.items():
        for role, turn in (("user", user_turn), ("assistant", answer_turn)):
            if (conv, turn) not in seen.get((role, key), []):
                lost += 1
                problems.append(f"{role} turn of w{key[0]}-x{key[1]} (conversation {conv}, turn {turn}) is missing")
    violations = []
    for conv_id in conversations:
        violations += check_contract(store, conv_id)
    return {
        "lost": lost,
        "duplicated": duplicated,
        "gaps": gaps,
        "contract_violations": len(violations),
        "turns": turns,
        "evictions": evictions,
        "problems": (problems + violations)[:50],
    }


# ----- the run --------------------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    xs = sorted(values)
    return round(xs[min(len(xs) - 1, max(0, int(round(q / 100.0 * len(xs) + 0.5)) - 1))], 2)


def run(url: str, writers: int, exchanges: int, *, processes: bool = False, progress: bool = True) -> dict:
    """Set up conversations, run the writers, check the database; returns the report (a dict)."""
    from bench.fakes.loadtest_server import FakeOpenAIServer

    if not 1 <= writers <= 64 or exchanges < 1:
        raise ValueError("--writers must be 1..64 and --exchanges >= 1")
    with FakeOpenAIServer() as server:
        svc = make_service(url, server.base_url, migrate=True)
        store = svc.store
        plan = Plan(url, server.base_url, writers, exchanges, store.create("loadtest shared", SETTINGS))
        plan.pairs = [store.create(f"loadtest pair {k}", SETTINGS) for k in range((writers + 1) // 2)]
        if processes:
            ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
            if ctx.get_start_method() == "forkserver":
                ctx.set_forkserver_preload(["bench.loadtest", "assistant.service", "assistant.models.llm"])
            out, go = ctx.Queue(), ctx.Event()
            workers = [ctx.Process(target=run_writer, args=(plan, i, out, go), daemon=True) for i in range(writers)]
        else:
            out, go = queue_mod.Queue(), threading.Event()
            workers = [
                threading.Thread(target=run_writer, args=(plan, i, out, go, svc), daemon=True) for i in range(writers)
            ]
        for w in workers:
            w.start()
        report = _collect(plan, out, go, workers, progress)
        for w in workers:
            w.join(timeout=30)
        report.update(check(store, plan, report.pop("committed")))
        store.close()
    report.update(
        {
            "backend": store.engine.dialect.name,
            "mode": "processes" if processes else "threads",
            "writers": writers,
            "exchanges_per_writer": exchanges,
            "conversations": 1 + len(plan.pairs),
            "embeddings": "HashEmbedder (hash-bow)",
            "model": "local HTTP fake of the OpenAI API",
        }
    )
    return report


def _collect(plan: Plan, out, go, workers, progress: bool) -> dict:
    from tqdm import tqdm

    pending, waiting = set(range(plan.writers)), plan.writers
    latencies: list[float] = []
    committed: dict[tuple[int, int], tuple[int, int, int]] = {}
    errors: list[str] = []
    bar = None
    t0 = time.perf_counter()
    while pending:
        try:
            msg = out.get(timeout=1.0)
        except queue_mod.Empty:
            if not any(w.is_alive() for w in workers):
                errors.append(f"{len(pending)} writer(s) died without reporting")
                break
            continue
        kind = msg[0]
        if kind == "end":
            pending.discard(msg[1])
        if not go.is_set() and kind in ("ready", "end"):
            waiting -= 1  # a writer is ready, or gave up before it could be
            if waiting == 0:  # the clock starts when every writer is ready (process start-up excluded)
                bar = tqdm(
                    total=plan.writers * plan.exchanges,
                    desc="exchanges",
                    unit="ex",
                    disable=not progress,
                    file=sys.stderr,
                    leave=False,
                )
                t0 = time.perf_counter()
                go.set()
        if kind == "ok":
            _, w, j, conv, user_turn, answer_turn, ms = msg
            committed[(w, j)] = (conv, user_turn, answer_turn)
            latencies.append(ms)
        elif kind == "err":
            errors.append(f"writer {msg[1]} exchange {msg[2]}: {msg[4]}")
        if bar is not None and kind in ("ok", "err"):
            bar.update(1)
    wall = time.perf_counter() - t0
    if bar is not None:
        bar.close()
    return {
        "exchanges": len(latencies),
        "wall_s": round(wall, 3),
        "exchanges_per_s": round(len(latencies) / wall, 2) if wall > 0 else 0.0,
        "p50_ms": _percentile(latencies, 50),
        "p99_ms": _percentile(latencies, 99),
        "max_ms": round(max(latencies, default=0.0), 2),
        "errors_shown_to_users": len(errors),
        "locked_errors": sum(1 for e in errors if any(w in e.lower() for w in LOCKED)),
        "errors": errors[:20],
        "committed": committed,
    }


def ok(report: dict) -> bool:
    return not any(report[k] for k in ("lost", "duplicated", "gaps", "contract_violations", "errors_shown_to_users"))
