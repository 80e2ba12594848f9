"""``lagmem bench retrieval`` (or ``python -m bench.retrieval``): what the retrieval step costs
besides the LLM.

Prints (1) the step's overhead excluding the LLM call -- shortlist + prompt building + parsing and
validation + bookkeeping -- at 2,000 active tokens and at 200 active turns, and (2) the real
embedding model's time per turn (one turn per ``encode()`` call, as the service embeds a turn when
it is stored). Turn texts come from the LoCoMo file ``locomo_dev.json`` in the current directory when
present (real chat; the file is not shipped, as for ``lagmem bench locomo``), otherwise from a fixed
synthetic vocabulary. The LLM is a stub answering at
once, so only our own work is timed. A measurement command, not a test.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

import numpy as np

from assistant.models.embeddings import get_embedder
from assistant.models.tokens import make_token_counter
from assistant.retrieval.step import Candidate, RetrievalConfig, find_misses, retrieve

LOCOMO = Path("locomo_dev.json")  # as `lagmem bench locomo` defaults to


def _texts(n: int) -> tuple[list[str], str]:
    texts: list[str] = []
    for path in [LOCOMO] if LOCOMO.is_file() else []:
        for sample in json.loads(path.read_text()):
            conv = sample["conversation"]
            for key in sorted(
                (k for k in conv if k.startswith("session_") and not k.endswith("date_time")),
                key=lambda k: int(k.split("_")[1]),
            ):
                texts += [t["text"] for t in conv[key] if t.get("text")]
            if len(texts) >= n:
                return texts[:n], f"LoCoMo ({path.name})"
    rng = random.Random(0)
    words = (
        "trip lisbon flight hotel budget dinner meeting project deadline code review test "
        "garden paint kids school concert book movie weekend friend family doctor"
    ).split()
    return [" ".join(rng.choice(words) for _ in range(rng.randint(6, 30))) for _ in range(n)], "synthetic"


class _StubLLM:
    """Answers instantly: cites two offered ids and one id never offered."""

    structured = "json_object_schema"

    def complete(self, messages, **kwargs):
        ids = kwargs["response_format"]["schema"]["properties"]["turns"]["items"]["enum"]
        return json.dumps({"turns": [ids[0], ids[-1], ids[0], 99999]})


def _case(
    name: str, active: list[Candidate], evicted: list[Candidate], msg: str, vec: np.ndarray, tokens: int, reps: int
) -> None:
    llm, cfg = _StubLLM(), RetrievalConfig()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        res = retrieve(llm, msg, vec, active, pinned=(active[0].number,), config=cfg)
        find_misses(vec, evicted, res.best_offered_similarity, 0.3)
        total = (time.perf_counter() - t0) * 1000
        samples.append(total - res.timings["llm_ms"])
    samples.sort()
    print(
        f"{name}: {len(active)} active turns, {tokens} active tokens, k={cfg.k}: overhead "
        f"median {statistics.median(samples):.3f} ms, p95 {samples[int(0.95 * len(samples))]:.3f}"
        f" ms (shortlist+prompt+validation+miss search over {len(evicted)} evicted; LLM excluded; "
        f"{reps} runs)"
    )


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reps", type=int, default=300, help="timed runs per case")
    p.set_defaults(func=cmd_retrieval)


def cmd_retrieval(args) -> int:
    return run(args.reps)


def run(reps: int = 300) -> int:
    """Print the embedding model's time per turn and the retrieval step's overhead."""
    counter = make_token_counter(None)
    texts, source = _texts(280)
    t0 = time.perf_counter()
    emb = get_embedder()
    print(
        f"embedding model: {emb.model_name} (dim {emb.dim}, {emb.threads} torch "
        f"thread(s)), load {time.perf_counter() - t0:.2f} s"
    )
    emb.encode(texts[:2])  # warm-up
    per_turn = []
    for text in texts[:60]:
        t0 = time.perf_counter()
        emb.encode(text)
        per_turn.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    vecs = emb.encode(texts)
    batched = (time.perf_counter() - t0) * 1000 / len(texts)
    print(
        f"embedding time per turn ({source}, one encode() per turn, 60 turns): median "
        f"{statistics.median(per_turn):.1f} ms, p95 {sorted(per_turn)[56]:.1f} ms; "
        f"batched ({len(texts)} turns): {batched:.1f} ms/turn"
    )
    cands = [Candidate(i + 1, "user" if i % 2 == 0 else "assistant", t, v) for i, (t, v) in enumerate(zip(texts, vecs))]
    msg = texts[-1]
    vec = emb.encode(msg)[0]
    pool = cands[:-1]
    # The newest turns are active (as after evictions); the older ones form the evicted pool.
    used, n = 0, 0
    while n < len(pool) and used + counter.count(pool[-1 - n].content) <= 2000:
        used += counter.count(pool[-1 - n].content)
        n += 1
    _case("2,000 active tokens", pool[-n:], pool[:-n][-max(1, n // 3) :], msg, vec, used, reps)
    active = pool[-200:]
    tokens = sum(counter.count(c.content) for c in active)
    _case("200 active turns", active, pool[:-200], msg, vec, tokens, reps)
    print(f"token counts: {counter.describe()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.retrieval",
        description=__doc__.replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--bench", action="store_true", help=argparse.SUPPRESS)  # older command lines
    add_arguments(ap)
    return cmd_retrieval(ap.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
