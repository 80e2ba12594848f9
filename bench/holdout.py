"""The held-out protocol (``lagmem bench holdout``) over both kinds of conversation: LoCoMo (two
people) and LongMemEval (a person and an assistant, records chained into conversations).

Every figure it reports is scored on conversations nothing was fitted on. A *fit* on a training set:

1. the need estimator (its kind, features, regularisation) is chosen and fitted on the training
   conversations (``need_train.train``); to tune the policy, each training conversation gets priors
   from a model fitted on the *other* training conversations (cross-fitting), so the tuning sees
   priors as good as they will be on a conversation the model never saw;
2. ``measured``'s lag and the constants of ``GRID`` are tuned by coordinate search (``PASSES``
   passes from ``START``): the objective is the mean, over the kinds of conversation in the training
   set, of the mean evidence recall over that kind's budgets (``BUDGETS``) and both noise settings
   (random placement, ``TUNE_SEEDS``). ``hazard`` and ``hazard_memory`` are tuned on two-people
   conversations only and ``hazard_assistant`` on person-assistant ones only (``KIND_ONLY``); a
   move is taken only when it gains more than ``MIN_GAIN``.

The tables (``TABLES``): *within* a dataset, each conversation is held out in turn and the fit uses
every other conversation (of both datasets); *across*, the fit uses one dataset only and every
conversation of the other is scored. A held-out conversation is placed alone (``SEEDS``) and
scored under the fit's ``measured``, its ``VARIANTS`` (the ablation: prior alone, evidence alone, the
posterior, each with and without the conversation's own recalibration), the baselines and the
oracle. Pooled per table: recall and gap closed ((recall - fifo) / (oracle - fifo)) per budget and
noise, with 95% bootstrap intervals over questions (paired across policies), and wins / ties /
losses per cell against each baseline (a tie is equal at 4 decimals).

The fit on all conversations gives the shipped defaults: the need model, ``measured``'s constants,
and for a new (person-assistant) conversation the lag that fit scores best on person-assistant
conversations and the smallest budget at which the held-out ``measured`` keeps ``TARGET_RECALL`` of
the evidence there (``defaults``). Not held out: the grids, the start point and the constants
outside ``GRID`` (the lag-window terms, ``wrong_weight``, the size prior) were drawn up after looking
at the dev conversations and the synthetic traces.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bench import locomo, need_train, protocol
from bench.holdout_pool import BASELINES, format_pooled, pool
from bench.locomo import PERSON_ASSISTANT, TWO_PEOPLE

__all__ = ["format_pooled", "pool"]

DATA = ("../shared/data/locomo/locomo_dev.json", "../shared/data/longmemeval/longmemeval_dev.json")
BUDGETS = {TWO_PEOPLE: (1000, 2000, 4000), PERSON_ASSISTANT: (1000, 2000, 4000, 8000)}
NOISES = (0, 2)
SEEDS = (0, 1, 2, 3, 4)
TUNE_SEEDS = (0,)
PASSES = 1
START = {
    "lag": 0,
    "need": 1.0,
    "citations": 1.0,
    "need_assistant": 1.0,
    "citations_assistant": 1.0,
    "hazard": 0.0,
    "hazard_memory": 0.6,
    "hazard_memory_assistant": 0.3,
    "hazard_assistant": 0.0,
    "spent_assistant": 1.5,
    "nearby_spent_assistant": 0.0,
}
GRID = {  # the lag first: every other constant is then tuned at the lag it will run with
    "lag": (0, 4),
    "need": (0.5, 1.0, 1.5),
    "citations": (0.5, 1.0, 2.0),
    "need_assistant": (0.5, 1.0, 1.5),
    "citations_assistant": (0.5, 1.0, 2.0),
    "hazard_memory": (0.3, 0.6, 1.0),
    "hazard": (0.0, 0.003, 0.01),
    "hazard_memory_assistant": (0.05, 0.15, 0.3, 0.6),
    "hazard_assistant": (0.0, 0.002, 0.005),
    "spent_assistant": (0.0, 1.5, 3.0),
    "nearby_spent_assistant": (0.0, 1.0, 2.0),
}
KIND_ONLY = {
    "need": TWO_PEOPLE,
    "citations": TWO_PEOPLE,
    "need_assistant": PERSON_ASSISTANT,
    "citations_assistant": PERSON_ASSISTANT,
    "hazard": TWO_PEOPLE,
    "hazard_memory": TWO_PEOPLE,
    "hazard_memory_assistant": PERSON_ASSISTANT,
    "hazard_assistant": PERSON_ASSISTANT,
    "spent_assistant": PERSON_ASSISTANT,
    "nearby_spent_assistant": PERSON_ASSISTANT,
}
MIN_GAIN = 0.001  # mean recall a move must gain on the training set to be taken (not noise)
PRIOR_ALONE = {"citations": 0.0, "citations_assistant": 0.0, "verdict_prior": 0.0, "restored": 0.0}
EVIDENCE_ALONE = {"need": 0.0, "need_assistant": 0.0}
VARIANTS = {
    "measured": {},
    "measured: no recalibration": {"recalibrate": 0.0},
    "measured: prior alone": PRIOR_ALONE,
    "measured: prior alone, no recalibration": {**PRIOR_ALONE, "recalibrate": 0.0},
    "measured: evidence alone": EVIDENCE_ALONE,
    "measured: evidence alone, no recalibration": {**EVIDENCE_ALONE, "recalibrate": 0.0},
}
ACROSS = ("measured", "measured: no recalibration")  # the variants scored across datasets
TARGET_RECALL = 0.9  # a new conversation's default budget: the smallest that keeps this much held out

Ref = tuple[str, int]  # a conversation: (data file, index in it)


# ----- work done in worker processes -----------------------------------------------------------
@functools.cache
def _load(data: str) -> tuple:
    convs = locomo.load(data)
    scale = locomo.token_scale("words")
    return tuple(convs), tuple(tuple(scale.count(t.text) for t in c.turns) for c in convs)


def run_job(job: tuple) -> list[protocol.QuestionResult]:
    """One policy on some conversations of one file (placed together), one budget and noise, seeds."""
    data, indices, spec, budget, noise, seeds, priors = job
    convs, costs = _load(data)
    pick = [convs[i] for i in indices]
    cost = [costs[i] for i in indices]
    scale = locomo.token_scale("words")
    out: list[protocol.QuestionResult] = []
    for seed in seeds:
        res = protocol.run(pick, spec, budget, seed, scale, "random", noise, costs=cost, priors=priors)
        out += [protocol.QuestionResult(f"{r.sample_id}#{seed}", r.index, r.category, r.evidence, r.kept) for r in res]
    return out


def measured_spec(params: dict, label: str = "measured") -> protocol.PolicySpec:
    p = dict(params)
    lag = int(p.pop("lag"))
    return protocol.spec("measured", label=label, lag=lag, **p)


def recall(results: Sequence[protocol.QuestionResult]) -> float:
    pairs = sum(r.evidence for r in results)
    return sum(r.kept for r in results) / pairs if pairs else 0.0


# ----- the fit on a training set ---------------------------------------------------------------
@dataclass
class Fit:
    train: tuple[Ref, ...]
    model: object  # NeedModel or TreeNeedModel
    params: dict
    need_rows: list = field(default_factory=list)
    trail: list = field(default_factory=list)  # (params, objective) in the order tried
    lags: dict = field(default_factory=dict)  # kind -> {lag: objective at the fitted constants}


def _relevant(params: dict, kind: str) -> tuple:
    """The parameters that change a run on a conversation of ``kind`` (the other kind's hazard does not)."""
    return tuple(sorted((k, v) for k, v in params.items() if KIND_ONLY.get(k, kind) == kind))


def fit(
    train: Sequence[Ref],
    tables: dict,
    kinds: dict,
    mapper: Callable,
    noises=NOISES,
    seeds=TUNE_SEEDS,
    progress=None,
    grid: dict | None = None,
) -> Fit:
    """Everything fitted on ``train`` only: the need model, then the policy's constants and lag."""
    grid = GRID if grid is None else grid
    train = tuple(train)
    model, rows = need_train.train([tables[r] for r in train])
    pick = need_train.choose(rows)
    crossed = need_train.cross_fit([tables[r] for r in train], pick["spec"])
    priors = {r: p.tolist() for r, p in zip(train, crossed)}
    groups: dict[str, list[Ref]] = {}
    for r in train:
        groups.setdefault(r[0], []).append(r)
    present = sorted({kinds[r] for r in train})
    cache: dict[tuple, float] = {}
    trail: list = []

    def evaluate(points: list[dict]) -> list[float]:
        todo: dict[tuple, dict] = {}
        for p in points:
            for kind in present:
                key = (kind, _relevant(p, kind))
                if key not in cache:
                    todo.setdefault(key, p)
        jobs, owners = [], []
        for key, p in todo.items():
            for data, refs in groups.items():
                if kinds[refs[0]] != key[0]:
                    continue
                idx = tuple(i for _, i in refs)
                for b in BUDGETS[key[0]]:
                    for k in noises:
                        jobs.append((data, idx, measured_spec(p), b, k, tuple(seeds), [priors[r] for r in refs]))
                        owners.append(key)
        cells: dict[tuple, list[float]] = {}
        for key, res in zip(owners, mapper(run_job, jobs)):
            cells.setdefault(key, []).append(recall(res))
        if progress is not None:
            progress(len(jobs))
        cache.update({key: float(np.mean(v)) for key, v in cells.items()})
        scores = [float(np.mean([cache[(kind, _relevant(p, kind))] for kind in present])) for p in points]
        trail.extend((dict(p), s) for p, s in zip(points, scores) if not any(dict(p) == t for t, _ in trail))
        return scores

    best = dict(START)
    best_score = evaluate([best])[0]
    for _ in range(PASSES):
        for name, values in grid.items():
            if name in KIND_ONLY and KIND_ONLY[name] not in present:
                continue
            points = [{**best, name: v} for v in values]
            scores = evaluate(points)
            i = max(range(len(points)), key=lambda j: (scores[j], -abs(values[j] - START[name])))
            if scores[i] > best_score + MIN_GAIN:
                best, best_score = points[i], scores[i]
    lag_points = [{**best, "lag": v} for v in grid.get("lag", (best["lag"],))]
    evaluate(lag_points)
    lags = {kind: {p["lag"]: cache[(kind, _relevant(p, kind))] for p in lag_points} for kind in present}
    return Fit(train, model, best, rows, trail, lags)


def tune_jobs(train: Sequence[Ref], kinds: dict, noises=NOISES, grid: dict | None = None) -> int:
    """Upper bound on the tuning jobs of one fit (for the progress bar)."""
    grid = GRID if grid is None else grid
    files = {(r[0], kinds[r]) for r in train}
    per_point = sum(len(BUDGETS[kind]) * len(noises) for _, kind in files)
    return (2 + PASSES * sum(len(v) for v in grid.values()) + len(grid.get("lag", ()))) * per_point


# ----- scoring held-out conversations ----------------------------------------------------------
def variant_jobs(label: str, ref: Ref, fitted: Fit, table, kind: str, variants, noises=NOISES, seeds=SEEDS):
    """((table, conversation, policy, budget, noise), job) for the fit's measured variants on ``ref``."""
    priors = [need_train.predict(fitted.model, table).tolist()]
    out = []
    for name in variants:
        spec = measured_spec({**fitted.params, **VARIANTS[name]}, name)
        for b in BUDGETS[kind]:
            for k in noises:
                out.append(((label, ref, name, b, k), (ref[0], (ref[1],), spec, b, k, tuple(seeds), priors)))
    return out


def baseline_jobs(ref: Ref, kind: str, noises=NOISES, seeds=SEEDS):
    """((conversation, policy, budget, noise), job) for the baselines and the oracle on ``ref``: they
    fit nothing, so every table shares them."""
    out = []
    for name in (*BASELINES, "oracle"):
        for b in BUDGETS[kind]:
            for k in noises:
                if name == "oracle" and k != noises[0]:
                    continue  # the oracle ignores citations: one run serves every noise level
                out.append(((ref, name, b, k), (ref[0], (ref[1],), protocol.spec(name), b, k, tuple(seeds), None)))
    return out


def defaults(final: Fit, within_assistant: dict | None) -> dict:
    """A new conversation's lag and budget (a person and an assistant): the lag the final fit scores
    best on person-assistant conversations (ties: the smaller), and the smallest budget at which the
    held-out ``measured`` keeps ``TARGET_RECALL`` of the evidence (noise 0), else the largest."""
    lags = final.lags.get(PERSON_ASSISTANT) or {final.params["lag"]: 0.0}
    lag = max(sorted(lags), key=lambda v: lags[v])
    budgets = BUDGETS[PERSON_ASSISTANT]
    budget = budgets[-1]
    if within_assistant is not None:
        rows = {
            r["budget"]: r["recall"]
            for r in within_assistant["table"]
            if r["policy"] == "measured" and r["noise"] == 0 and r["budget"] in budgets
        }
        budget = next((b for b in budgets if rows.get(b, 0.0) >= TARGET_RECALL), budgets[-1])
    return {"lag": int(lag), "budget": int(budget), "target_recall": TARGET_RECALL, "lag_scores": lags}
