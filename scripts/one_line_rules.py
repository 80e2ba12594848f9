"""One-line eviction rules against fifo, userfirst and largest, scored without fitting anything.

The rules have no learned part and no constant. Each dev conversation is placed and scored as
``bench/holdout.py`` scores a held-out one (``alone``: placed by itself, random placement, seeds
0,1,2, noise 0, words tokens, gold citations), or as ``lagmem bench locomo`` places a file
(``together``: one placement rng per seed shared by the file's conversations). Recall is pooled over
question/evidence pairs; gap closed = (recall - fifo) / (oracle - fifo).

Three kinds of rule run here: the registered policies named on the command line; rules that were
tried and dropped (they beat userfirst and largest nowhere), kept here only as classes; and rules
that read the turn's text (a user turn ending with "?" is a question), which the layer's policies
cannot express: a policy sees a ``TurnState`` (role, tokens, steps, prior), never the text. Nothing
ships the last two kinds. Figures: ``docs/bench/one_line_rules.txt``.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/one_line_rules.py --mode alone
"""

from __future__ import annotations

import argparse
import random

from bench import locomo, protocol
from bench.holdout import recall, run_job
from memory.baselines import Lru, Policy

DATA = {
    "locomo": ("../shared/data/locomo/locomo_dev.json", (1000, 2000, 4000)),
    "longmemeval": ("../shared/data/longmemeval/longmemeval_dev.json", (1000, 2000, 4000, 8000)),
}
SEEDS = (0, 1, 2)
REGISTERED = "userfirst,largest,lru,accumulate,window,userfirst_largest,userlru"


def _offset(candidates) -> float:
    return float(2 * max((t.tokens for t in candidates), default=0) + 2)


class Rule(Policy):
    """A rule built per conversation: ``questions`` are the turn numbers whose text ends with "?"."""

    def __init__(self, questions: frozenset[int]):
        self.questions = questions


class Userlargest(Rule):
    """assistant's turns first, largest first; then the user's, largest first"""

    def scores(self, candidates, evidence, now):
        user = _offset(candidates)
        return [(user if t.role == "user" else 0.0) - float(t.tokens) for t in candidates]


class UserfirstThenLargest(Rule):
    """assistant's turns first, oldest first; then the user's, largest first"""

    def scores(self, candidates, evidence, now):
        user = _offset(candidates)
        return [user - t.tokens if t.role == "user" else float(t.protected_since - now - 1) for t in candidates]


class Usersmallest(Rule):
    """assistant's turns first, largest first; then the user's, smallest first"""

    def scores(self, candidates, evidence, now):
        user = _offset(candidates)
        return [user + t.tokens if t.role == "user" else -float(t.tokens) for t in candidates]


class UserfirstQuestions(Rule):
    """assistant's turns first, oldest first; then the user's questions, oldest first; then the rest"""

    largest = False

    def scores(self, candidates, evidence, now):
        step = float(now + 1)
        out = []
        for t in candidates:
            if t.role != "user":
                out.append(-float(t.tokens) - 1.0 if self.largest else float(t.protected_since) - 2 * step)
            else:
                out.append(float(t.protected_since) + (0.0 if t.number in self.questions else step))
        return out


class UserfirstLargestQuestions(UserfirstQuestions):
    """assistant's turns first, largest first; then the user's questions, oldest first; then the rest"""

    largest = True


class UserlruQuestions(Rule):
    """assistant's turns first; then the user's questions; then the rest; lru within each"""

    def scores(self, candidates, evidence, now):
        last, step = Lru().scores(candidates, evidence, now), float(now + 1)
        return [
            v + (0.0 if t.role != "user" else step if t.number in self.questions else 2 * step)
            for t, v in zip(candidates, last)
        ]


class QuestionsFirst(Rule):
    """every question first (any role), oldest first; then the rest, oldest first"""

    def scores(self, candidates, evidence, now):
        step = float(now + 1)
        return [float(t.protected_since) + (0.0 if t.number in self.questions else step) for t in candidates]


LOCAL = {
    "userlargest": Userlargest,
    "userfirst_then_largest": UserfirstThenLargest,
    "usersmallest": Usersmallest,
    "userfirst_questions": UserfirstQuestions,
    "userfirst_largest_questions": UserfirstLargestQuestions,
    "userlru_questions": UserlruQuestions,
    "questions_first": QuestionsFirst,
}


def run_local(conv, name: str, budget: int, seed: int, cost, schedule) -> list:
    text = (locomo.app_text(conv, t) for t in conv.turns)
    questions = frozenset(t.number for t, s in zip(conv.turns, text) if s.rstrip().endswith("?"))
    rng = random.Random(f"noise:{seed}:{conv.sample_id}")
    return protocol.run_conversation(conv, schedule, LOCAL[name](questions), budget, 0, cost, 0, rng)


def score(path: str, budget: int, name: str, mode: str) -> float:
    convs = locomo.load(path)
    scale = locomo.token_scale("words")
    costs = [[scale.count(t.text) for t in c.turns] for c in convs]
    res: list = []
    for seed in SEEDS:
        together = locomo.place(convs, "random", seed)
        for i, conv in enumerate(convs):
            schedule = together[i] if mode == "together" else locomo.place([conv], "random", seed)[0]
            if name in LOCAL:
                res += run_local(conv, name, scale.budget(budget), seed, costs[i], schedule)
            elif mode == "alone":
                res += run_job((path, (i,), protocol.spec(name), budget, 0, (seed,), None))
        if name not in LOCAL and mode == "together":
            res += protocol.run(convs, protocol.spec(name), budget, seed, scale, "random", 0, costs=costs)
    return recall(res)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("alone", "together"), default="alone")
    ap.add_argument("--policies", default=REGISTERED, help="registered policies, beside the local rules")
    args = ap.parse_args()
    names = ["fifo", *args.policies.split(","), *LOCAL, "oracle"]
    for ds, (path, budgets) in DATA.items():
        print(f"{ds} ({args.mode}): recall / gap closed")
        for b in budgets:
            cell = {n: score(path, b, n, args.mode) for n in names}
            lo, hi = cell["fifo"], cell["oracle"]
            for n in names:
                print(f"  {b:>5}  {n:28} {cell[n]:.4f}  {(cell[n] - lo) / (hi - lo):6.3f}", flush=True)


if __name__ == "__main__":
    main()
