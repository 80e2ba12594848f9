"""Do the person turns of one sitting share its need? A diagnostic of the held-out need priors.

An experiment, not shipped (figures and the held-out verdict: docs/bench/session_share_experiment.txt).
In LongMemEval a person brings one thing to each session and asks around it, so of a session's
person turns about one is evidence; the need estimator prices each turn on its own. This divides each
person turn's held-out prior by the sum of its session's person priors raised to ``a`` (the whole
session, as a decision taken after it would see it; ``a`` 0 is the prior as it is) and reports:

* the AUC of the evidence among person turns, per dataset;
* ``measured`` (the shipped constants, lag 0) fed those priors, each conversation placed alone as
  ``lagmem bench holdout`` places a held-out one (random placement, seeds 0-2): evidence recall and
  the gap closed against fifo and the oracle.

The priors are held out (each conversation's from a need model fitted on the others); ``a`` and the
constants are not fitted here, so a gain is in-sample: ``lagmem bench holdout`` with ``a`` in its grid
is the held-out test.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/session_share_experiment.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import holdout, locomo, protocol  # noqa: E402
from bench.need_train import heldout_priors  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FILES = {
    "LongMemEval": (DATA / "longmemeval" / "longmemeval_dev.json", (1000, 2000, 4000)),
    "LoCoMo": (DATA / "locomo" / "locomo_dev.json", (1000, 2000)),
}
SHARES = (0.0, 0.5, 0.75)
SEEDS = (0, 1, 2)


def shared(conv, priors: list[float], a: float) -> list[float]:
    """The priors with each person turn's divided by its session's person priors summed, ** ``a``."""
    p = np.array(priors, float)
    q = p.copy()
    sessions: dict[int, list[int]] = {}
    for i, t in enumerate(conv.turns):
        if t.role != "assistant":
            sessions.setdefault(t.session, []).append(i)
    for idx in sessions.values():
        total = p[idx].sum()
        if total > 0:
            q[idx] = p[idx] / total**a
    return q.tolist()


def main() -> None:
    everything = [c for path, _ in FILES.values() for c in locomo.load(path)]
    for name, (path, budgets) in FILES.items():
        convs = locomo.load(path)
        held = heldout_priors(convs, everything)
        person = [[i for i, t in enumerate(c.turns) if t.role != "assistant"] for c in convs]
        y = np.concatenate(
            [
                [float(c.turns[i].number in {e for q in c.questions for e in q.evidence}) for i in ix]
                for c, ix in zip(convs, person)
            ]
        )
        for a in SHARES:
            p = np.concatenate([np.array(shared(c, h, a))[ix] for c, h, ix in zip(convs, held, person)])
            print(f"{name}: a = {a}: AUC of the evidence among person turns {roc_auc_score(y, p):.4f}")
        for budget in budgets:
            recall = {}
            runs = [("fifo", protocol.spec("fifo"), None), ("oracle", protocol.spec("oracle"), None)]
            runs += [(f"a = {a}", protocol.spec("measured", lag=0), a) for a in SHARES]
            for label, spec, a in runs:
                results = []
                for i, conv in enumerate(convs):
                    priors = [shared(conv, held[i], a)] if a is not None else None
                    results += holdout.run_job((str(path), (i,), spec, budget, 0, SEEDS, priors))
                recall[label] = holdout.recall(results)
            span = recall["oracle"] - recall["fifo"]
            cells = [
                f"{k} {v:.4f} (gap {(v - recall['fifo']) / span:.3f})" for k, v in recall.items() if k.startswith("a")
            ]
            print(f"{name}: B = {budget}: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main()
