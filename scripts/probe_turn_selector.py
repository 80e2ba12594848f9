"""Could a learned scorer pick the answering turn of a first-minute probe, or say none does? (A
diagnostic: nothing ships it.)

Every probe of the sets under ``bench/`` becomes candidates: each turn the user typed before the
question, and the question's own message. A candidate's label is 1 when it holds one of the probe's
fact strings. Its features come from the answer rules' own parts and the embedding model the app uses:
the cosine of the question and the candidate (MiniLM), its margin over the other candidates and
whether it is the best, shared content words, whether the candidate holds a value of the asked kind
(strict and loose, ``kinds.kind_beyond``), says the question's head (``heads.says_head``), gives an
answering clause (``binding.answering_clauses``), is the question's own message, how far back it is,
and whether it states something. A logistic regression, fitted on every set but the one scored (leave
one set out), picks the best candidate; below the threshold it says "I don't know".

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/probe_turn_selector.py --thresholds 0.3,0.5

A set named with ``--skip`` (default: sets not yet run, ``blind16``) is left out entirely.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from assistant.answering.binding import answering_clauses
from assistant.answering.heads import Similar, asked_for, says_head
from assistant.answering.kinds import kind_beyond
from assistant.answering.message import states
from assistant.retrieval.lexical import words
from bench import probes

BENCH = Path(probes.__file__).parent
KEYS = ("cos", "margin", "best", "overlap", "kind", "kind_loose", "head", "clause", "own", "back", "states")


def candidates(p: probes.Probe, embed) -> tuple[np.ndarray, np.ndarray]:
    """One row of features per candidate (the turns, then the question's message) and the labels."""
    texts = [*p.turns, p.question]
    asked = asked_for(p.question)
    similar = Similar(embed)
    q = embed(p.question)
    cos = np.array([float(np.dot(q, embed(t))) for t in texts])
    asked_words = set(words(p.question))
    rows = []
    for i, t in enumerate(texts):
        others = np.delete(cos, i)

        def judged(f) -> float:
            return 0.5 if asked is None else float(bool(f()))

        rows.append(
            [
                cos[i],
                cos[i] - (others.max() if len(others) else 0.0),
                float(cos[i] == cos.max()),
                len(asked_words & set(words(t))),
                judged(lambda: kind_beyond(t, asked.kind, p.question)),
                judged(lambda: kind_beyond(t, asked.kind, p.question, loose=True)),
                judged(lambda: says_head(t, asked, similar)),
                judged(lambda: answering_clauses(t, p.question, asked, similar)),
                float(i == len(p.turns)),
                len(p.turns) - i,
                float(states(t)),
            ]
        )
    y = np.array([float(probes.contains_fact(t, p.fact)) for t in texts])
    return np.array(rows), y


def main(argv: list[str] | None = None) -> int:
    from sklearn.linear_model import LogisticRegression
    from tqdm import tqdm

    from assistant.models.embeddings import get_embedder

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--thresholds", default="0.3,0.4,0.5,0.6", help="least probability to answer")
    ap.add_argument("--skip", default="blind16", help="comma-separated set names left out")
    args = ap.parse_args(argv)
    skip = [s for s in args.skip.split(",") if s]
    model = get_embedder()
    cache: dict[str, np.ndarray] = {}

    def embed(text: str) -> np.ndarray:
        if text not in cache:
            cache[text] = np.asarray(model.encode([text])[0], dtype=np.float64)
        return cache[text]

    sets = {}
    for f in sorted(BENCH.glob("probes*.jsonl")):
        if any(f.stem.endswith(s) for s in skip):
            continue
        sets[f.stem] = [(p, *candidates(p, embed)) for p in tqdm(probes.load(f), desc=f.stem, leave=False)]
    print(f"features: {', '.join(KEYS)}; leave one set out over {len(sets)} sets")
    for t in map(float, args.thresholds.split(",")):
        facts = never = n_facts = n_never = 0
        per = []
        for name, rows in sets.items():
            train = [r for other, rs in sets.items() if other != name for r in rs]
            fit = LogisticRegression(C=1.0, max_iter=2000).fit(
                np.vstack([X for _, X, _ in train]), np.concatenate([y for _, _, y in train])
            )
            f_ok = n_ok = nf = nn = 0
            for p, X, y in rows:
                pr = fit.predict_proba(X)[:, 1]
                j = int(np.argmax(pr))
                if p.unknown:
                    nn += 1
                    n_ok += pr[j] < t
                else:
                    nf += 1
                    f_ok += pr[j] >= t and y[j] == 1
            facts, never, n_facts, n_never = facts + f_ok, never + n_ok, n_facts + nf, n_never + nn
            if "blind1" in name:
                per.append(f"{name.removeprefix('probes_first_minute_')} {f_ok}/{nf} facts {n_ok}/{nn} never")
        print(f"threshold {t}: facts {facts}/{n_facts}, never-stated {never}/{n_never}; " + "; ".join(per))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
