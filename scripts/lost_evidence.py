"""Which evidence turns ``measured`` loses that the oracle keeps, held out (a diagnostic: nothing ships it).

For each held-out conversation of one ``lagmem bench holdout`` table (default: within LongMemEval) it
refits that fold's need model (the fold's chosen candidate, on the fold's training conversations, as
the protocol did), runs ``measured`` with the fold's fitted constants and the oracle on the held-out
conversation (random placement, the given seeds, noise 0), and at every question records which
evidence turns each kept and what filled their memories. It prints:

* the share of each memory's words, at the questions' times, held by evidence still to be asked
  about, evidence already asked about, and other turns of the person and of the assistant;
* the evidence turns ``measured`` lost and the oracle kept, against the person's non-evidence turns
  ``measured`` held at those times: their priors, ages (steps since arrival), lengths and text marks;
* the lost turns and the held non-evidence turns most often involved, with their text.

    .venv/bin/python scripts/lost_evidence.py --holdout docs/bench/holdout.json --budget 1000
"""

from __future__ import annotations

import argparse
import json
import re
import statistics as st
from collections import Counter

from bench import holdout, locomo, need_data, need_train
from bench.oracle import OraclePolicy, needs_from_schedule, solve
from memory.layer import MemoryLayer
from memory.types import MemorySettings

MARKS = {
    "asks": re.compile(r"\?"),
    "aside": re.compile(r"\b(?:by the way|btw|speaking of)\b", re.I),
    "number": re.compile(r"\d"),
}


def run(conv, schedule, policy, budget, costs, priors):
    """(question, at, evidence, kept, memory) per question, citing the kept evidence as the protocol does."""
    layer = MemoryLayer(MemorySettings(budget=budget, lag=0), policy)
    out = []
    for t in conv.turns:
        layer.add_turn(t.role, costs[t.number - 1], prior=priors[t.number - 1] if priors else None)
        layer.enforce_budget()
        for q in schedule.get(t.number, ()):
            active = set(layer.active_numbers())
            kept = {e for e in q.evidence if e in active}
            out.append((q, t.number, kept, active))
            layer.cite(sorted(kept), answer_turn=-(q.index + 1))
            whole = len(kept) == len(q.evidence)
            layer.feedback(-(q.index + 1), 1.0 if whole else len(kept) / len(q.evidence) - 1.0)
    return out


def describe(conv, n, at, prior):
    t = conv.turns[n - 1]
    text = need_data.content(t)
    first = n == 1 or conv.turns[n - 2].session != t.session
    marks = {k: bool(r.search(text)) for k, r in MARKS.items()}
    return {"prior": prior, "age": at - n, "words": len(text.split()), "opens_session": first, **marks}


def summary(name, rows):
    q = lambda k: [round(x, 3) for x in st.quantiles([r[k] for r in rows], n=4)]  # noqa: E731
    marks = "  ".join(f"{k} {st.mean(r[k] for r in rows):.2f}" for k in ("opens_session", *MARKS))
    print(f"{name}: {len(rows)}")
    print(
        f"    prior quartiles {q('prior')}; age quartiles {q('age')}; median words {st.median(r['words'] for r in rows)}"
    )
    print(f"    shares: {marks}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--holdout", default="docs/bench/holdout.json", help="a `bench holdout --json` file")
    ap.add_argument("--table", default="within longmemeval")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--show", type=int, default=8, help="examples of each kind to print")
    args = ap.parse_args()
    doc = json.load(open(args.holdout))
    data = doc["settings"]["data"]
    convs = {d: locomo.load(d) for d in data}
    tables = {(d, i): need_data.table(c, need_data.embeddings(c)) for d in data for i, c in enumerate(convs[d])}
    ids = {c.sample_id: (d, i) for d in data for i, c in enumerate(convs[d])}
    scale = locomo.token_scale("words")
    budget = scale.budget(args.budget)
    words, lost, held, lost_n, held_n = Counter(), [], [], Counter(), Counter()
    for fit in (f for f in doc["fits"] if f["table"] == args.table):
        ref = ids[fit["held_out"]]
        conv = convs[ref[0]][ref[1]]
        train = [tables[ids[s]] for s in fit["need_model"]["trained_on"]]
        spec = {
            k: fit["need_model"][k]
            for k in ("kind", "features", "C", "depth", "trees", "rate")
            if k in fit["need_model"]
        }
        priors = need_train.predict(need_train.fit(train, spec), tables[ref]).tolist()
        costs = [scale.count(t.text) for t in conv.turns]
        spec_m = holdout.measured_spec(fit["params"])
        evidence = {e for q in conv.questions for e in q.evidence}
        for seed in (int(s) for s in args.seeds.split(",")):
            schedule = locomo.place([conv], "random", seed)[0]
            asked = {q.index: at for at, qs in schedule.items() for q in qs}
            _, plan = solve({i + 1: c for i, c in enumerate(costs)}, needs_from_schedule(schedule), budget)
            mine = run(conv, schedule, spec_m.build(), budget, costs, priors)
            best = run(conv, schedule, OraclePolicy(plan), budget, costs, None)
            for (_, at, kept, active), (_, _, okept, oactive) in zip(mine, best):
                pending = {e for p in conv.questions if asked[p.index] >= at for e in p.evidence}
                for who, memory in (("measured", active), ("oracle", oactive)):
                    for n in memory:
                        t = conv.turns[n - 1]
                        kind = "to ask" if n in pending else "asked" if n in evidence else f"other {t.role}"
                        words[(who, kind)] += len(t.text.split())
                for e in okept - kept:
                    lost.append(describe(conv, e, at, priors[e - 1]))
                    lost_n[(conv.sample_id, e)] += 1
                for n in active - evidence:
                    if conv.turns[n - 1].role == "user":
                        held.append(describe(conv, n, at, priors[n - 1]))
                        held_n[(conv.sample_id, n)] += 1
    print(f"{args.table}, B = {args.budget}, seeds {args.seeds}, noise 0; memory's words at the questions' times:")
    for who in ("measured", "oracle"):
        total = sum(v for (w, _), v in words.items() if w == who)
        parts = "  ".join(
            f"{k} {words[(who, k)] / total:.3f}" for k in ("to ask", "asked", "other user", "other assistant")
        )
        print(f"  {who:9s} {parts}")
    summary("evidence lost by measured, kept by the oracle (per question)", lost)
    summary("the person's non-evidence turns measured held (per question)", held)
    by_id = {c.sample_id: c for d in data for c in convs[d]}
    for title, counts in (("lost", lost_n), ("held instead", held_n)):
        print(f"most often {title}:")
        for (sid, n), k in counts.most_common(args.show):
            print(f"  {sid} #{n} x{k}: {need_data.content(by_id[sid].turns[n - 1])[:160]!r}")


if __name__ == "__main__":
    main()
