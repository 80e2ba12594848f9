"""Do features of the turns after a turn (the reply to it) rank the evidence better, held out?

An experiment, not shipped: the need prior is computed at arrival, but the lag window
would let the layer revise it once the next turns have arrived. Before building that, this asks
whether the replies say anything the arrival features do not: for each turn, of each of the next two
turns in its session, whether there is one, whether it asks something, its length, the share of this
turn's content words it repeats, whether it reacts ("wow", "congrats", "how did ...") and whether the
same speaker says it. Leave one conversation out over the dev conversations of both kinds, boosted
trees as shipped (depth 2, 500 trees, rate 0.02, each kind weighed the same); held-out AUC per kind
with and without those features. Figures: docs/bench/need_next_turn_experiment.txt.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/need_next_turn_experiment.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import locomo  # noqa: E402
from bench.need_data import content, embeddings, table  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FILES = (DATA / "locomo" / "locomo_dev.json", DATA / "longmemeval" / "longmemeval_dev.json")
WORD = re.compile(r"[a-z][a-z']+")
STOP = frozenset(
    "the and you that this for with was are have but not your what how its it's i'm that's just like so to of "
    "in a is it i my me we be do did on at as".split()
)
REACT = re.compile(
    r"(?i)\b(wow|congrat\w*|amazing|awesome|cool|sounds|that's great|so happy|sorry to hear|tell me more|"
    r"how did|what did|what was|where did|when did|who)\b"
)
AHEAD = 2  # the next turns read


def reply_features(conv) -> np.ndarray:
    """Per turn, six features of each of the next ``AHEAD`` turns in its session (zeros where none)."""
    rows = []
    turns = conv.turns
    for i, t in enumerate(turns):
        mine = set(WORD.findall(content(t).lower())) - STOP
        row = []
        for k in range(1, AHEAD + 1):
            if i + k < len(turns) and turns[i + k].session == t.session:
                reply = content(turns[i + k])
                theirs = set(WORD.findall(reply.lower())) - STOP
                row += [
                    1.0,
                    float("?" in reply),
                    float(np.log1p(len(reply.split()))),
                    len(mine & theirs) / (1 + len(mine)),
                    float(bool(REACT.search(reply))),
                    float(turns[i + k].role == t.role),
                ]
            else:
                row += [0.0] * 6
        rows.append(row)
    return np.array(rows)


def held_out(tables, extra, with_replies: bool) -> list[np.ndarray]:
    """Each conversation's priors from trees fitted on the others."""
    out = []
    for i in range(len(tables)):
        train = [j for j in range(len(tables)) if j != i]
        X = lambda j: np.hstack([tables[j].X, extra[j]]) if with_replies else tables[j].X  # noqa: E731
        per_kind = {}
        for j in train:
            per_kind[tables[j].kind] = per_kind.get(tables[j].kind, 0) + len(tables[j].y)
        w = np.concatenate([np.full(len(tables[j].y), 1.0 / per_kind[tables[j].kind]) for j in train])
        y = np.concatenate([tables[j].y for j in train])
        model = GradientBoostingClassifier(max_depth=2, n_estimators=500, learning_rate=0.02, random_state=0)
        model.fit(np.vstack([X(j) for j in train]), y, sample_weight=w * len(y))
        out.append(model.predict_proba(X(i))[:, 1])
    return out


def main() -> None:
    convs = [c for f in FILES for c in locomo.load(f)]
    tables = [table(c, embeddings(c)) for c in convs]
    extra = [reply_features(c) for c in convs]
    print("features          kind              pooled AUC  per held-out conversation")
    for with_replies in (False, True):
        held = held_out(tables, extra, with_replies)
        for kind in dict.fromkeys(t.kind for t in tables):
            pick = [i for i, t in enumerate(tables) if t.kind == kind]
            y = np.concatenate([tables[i].y for i in pick])
            p = np.concatenate([held[i] for i in pick])
            per = " ".join(f"{roc_auc_score(tables[i].y, held[i]):.3f}" for i in pick)
            name = "arrival+replies" if with_replies else "arrival"
            print(f"{name:17} {kind:17} {roc_auc_score(y, p):.4f}      {per}", flush=True)


if __name__ == "__main__":
    main()
