"""The vectorised ``Measured`` decides bit for bit like the formula evaluated turn by turn.

``Measured.importances`` computes every candidate at once from arrays the layer and the evidence
keep up to date (active-turn columns, a mirror of the fold cache, the open block's cites). The
reference below is the same formula evaluated turn by turn; two layers fed the same random conversation
(cites with weights and answers, feedback, pins, unpins, restores, rebuilds) must produce the same
records and the same importances, compared with ``==`` on floats.
"""

import math
import random

import numpy as np
import pytest

from memory.arrivals import OTHER_ROLE, ROLE_CODES
from memory.evidence import credit
from memory.layer import MemoryLayer
from memory.logodds import TRUST_FLOOR, logit, sigmoid
from memory.nearby import NEARBY
from memory.policies import Measured, Policy
from memory.types import MemorySettings, PinRefused
from tests.memory.rebuild import rebuilt


class TurnByTurn(Measured):
    """``Measured`` as a plain loop over the candidates (the pre-vectorisation code)."""

    importances = Policy.importances  # the layer's columns go through ``scores`` below

    def scores(self, candidates, evidence, now):
        if not candidates:
            return []
        decay, wrong, lag = self.decay, self.wrong_weight, evidence.lag
        n = len(candidates)
        settled, verdict, ages, quiet, trust = [0.0] * n, [0.0] * n, [0] * n, [0] * n, [1.0] * n
        confirmed, back = [False] * n, [False] * n
        confirm = self.confirm if lag else 0.0
        vp = self.verdict_prior if lag else 0.0
        sv = self.settled_verdict if lag else 0.0
        burst = int(self.burst) if lag else 0
        for k, t in enumerate(candidates):
            u, total, belief, seen = evidence.measure(t, now, decay, wrong, int(self.burst), self.focus)
            settled[k] = u
            confirmed[k], back[k] = total > 0 and belief > 0, u > 0.0  # back: settled evidence after the episode
            age = ages[k] = now - t.arrived
            quiet[k] = max(0, now - max(seen, t.arrived + lag))
            if confirm and total > 0:
                verdict[k] = confirm * belief * decay ** max(0, age - lag)
                if self.focus:
                    verdict[k] = verdict[k] * total  # the episode's strength
            if vp and total > 0:
                trust[k] = (1.0 - vp) + vp * belief
            if sv:  # the answers that cited it after its arrival episode, judged from the raw log
                later, prev, ended = 1.0, t.arrived, False
                for c in evidence.of(t.number):
                    if not ended and (c.step < t.arrived + lag or (burst and c.step - prev <= burst)):
                        prev = c.step  # in the arrival episode: judged by the verdict
                        continue
                    ended = True
                    if c.answer_turn is not None:
                        value = credit(evidence.feedback(c.answer_turn), wrong)
                        later *= value if c.weight == 1.0 else value**c.weight
                trust[k] = trust[k] * ((1.0 - sv) + sv * later)
        background = self.background
        cut = vcut = 0.0
        if background:
            total_age = sum(ages)
            rate = math.fsum(settled) / total_age if total_age else 0.0
            cut = background * rate
            vcut = cut * self.verdict_cut
        known = [t.prior is not None for t in candidates]
        sized = self.size_power or self.density or any(known)
        mean = (sum(t.tokens for t in candidates) / n) if sized else 1.0
        mean = mean or 1.0
        if any(known):
            logits = [logit(t.prior) for t, k in zip(candidates, known) if k]
            centre = math.fsum(logits) / len(logits)
            cal = evidence.calibration(
                now,
                self.calibration_strength,
                np.array([t.number for t in candidates], dtype=np.int64),
                *self.reuse_prior(evidence),
                self.nearby_prior(evidence)[0],
            )
            factor = cal.factor
            hazard = self.hazard_assistant if evidence.with_assistant else self.hazard
        gain = 1.0
        if self.confirmations and lag:  # do confirmed turns come back more than the others?
            n_a = sum(confirmed)
            e_a = sum(1 for a, b in zip(confirmed, back) if a and b)
            e_b = sum(back) - e_a
            pooled = sum(back) / n
            expected = n_a * ((e_b + pooled) / (n - n_a + 1))
            k_ = self.confirmation_strength
            if n_a and pooled > 0.0 and expected + k_ > 0.0:
                gain = max(1.0, (e_a + k_) / (expected + k_))
        out = [0.0] * n
        for k, t in enumerate(candidates):
            u, v, age = settled[k], verdict[k], ages[k]
            if background:
                u = u - cut * age
                u = u if u > 0.0 else 0.0
                if vcut and v:
                    v = v - vcut * quiet[k]
                    v = v if v > 0.0 else 0.0
            s = u + v
            citations = self.citations_assistant if evidence.with_assistant else self.citations
            if citations != 1.0:
                s = citations * s
            if gain != 1.0:
                s = (gain**self.confirmations) * s
            size = max(t.tokens, 1) / mean if sized else 1.0
            if known[k]:
                z = logit(t.prior)
                need = self.need_assistant if evidence.with_assistant else self.need
                if need != 1.0:
                    z = centre + need * (z - centre)
                if self.recalibrate:
                    z = z + self.recalibrate * math.log(factor[ROLE_CODES.get(t.role, OTHER_ROLE)])
                    # shown needed: a cite after the arrival episode (the lag window and its burst)
                    shown, prev = False, t.arrived
                    for c in evidence.of(t.number):
                        if c.step < t.arrived + lag or (burst and c.step - prev <= burst):
                            prev = c.step
                            continue
                        shown = True
                        break
                    if shown and cal.reuse != 1.0:
                        z = z + self.recalibrate * math.log(cal.reuse)
                    if not shown and cal.nearby != 1.0 and self._beside(t, evidence, lag, burst):
                        z = z + self.recalibrate * math.log(cal.nearby)
                if self.need_size_power:
                    z = z + self.need_size_power * math.log(size)
                z = z + s
                if (vp or sv) and lag:
                    z = z + math.log(max(trust[k], TRUST_FLOOR))
                if self.restored:
                    z = z + (self.restored if t.protected_since > t.arrived else 0.0)
                if hazard:
                    z = z - hazard * quiet[k]
                per_memory = self.hazard_memory_assistant if evidence.with_assistant else self.hazard_memory
                if per_memory:
                    z = z - (per_memory / n) * quiet[k]
                out[k] = sigmoid(z) / (size**self.density if self.density else 1.0)
                continue
            if self.prior:
                fade = self.prior_decay**age if self.prior_decay != 1.0 else 1.0
                s += self.prior * (size**self.size_power if self.size_power else 1.0) * trust[k] * fade
            if self.density:
                s /= size**self.density
            out[k] = s
        return out

    @staticmethod
    def _beside(t, evidence, lag: int, burst: int) -> bool:
        """Some turn within ``NEARBY`` of ``t`` got its first cite after its arrival episode at a step
        after ``t`` arrived (read from the raw log)."""
        for c in range(max(1, t.number - NEARBY), t.number + NEARBY + 1):
            if c == t.number:
                continue
            prev = c
            for cite in evidence.of(c):
                if cite.step < c + lag or (burst and cite.step - prev <= burst):
                    prev = cite.step
                    continue
                if cite.step > t.number:
                    return True
                break
        return False


KNOBS = [  # seeds not divisible by 4 give most turns a prior (the posterior), a tenth none (the size prior)
    {},
    dict(decay=0.95, background=2.0, wrong_weight=0.3),
    dict(verdict_prior=0.5, wrong_weight=0.2, confirm=3.0),
    dict(size_power=0.0, density=0.5, prior_decay=1.0),
    dict(prior=0.0, verdict_cut=0.0, density=0.0),
    dict(decay=1.0, prior_decay=1.0, size_power=0.0, density=0.0, background=0.0),
    dict(need=2.0, need_size_power=0.5, citations=2.5, hazard=0.05, hazard_assistant=0.02, restored=1.5),
    dict(need=0.0, recalibrate=0.5, calibration_strength=0.5, verdict_prior=0.3, density=0.0),
    dict(hazard=0.02, hazard_memory=3.0, hazard_assistant=0.0),
    dict(hazard=0.0, hazard_memory=0.7, need=1.5),  # seed 9: priors, two people
    dict(verdict_prior=0.0, settled_verdict=0.5, wrong_weight=0.4),
    dict(burst=0.0, focus=0.0),  # seed 11: the episode is the lag window, every cite counts its weight
    dict(burst=3.0, focus=0.5, wrong_weight=0.3),
    dict(burst=40.0, focus=2.0, verdict_prior=0.5),
    dict(
        hazard_assistant=0.0, hazard_memory_assistant=0.4, spent_assistant=3.0, reuse_strength=0.5, need_assistant=1.5
    ),
    dict(citations_assistant=0.5, need_assistant=0.7, need=1.2, citations=2.0, confirmations=2.0),
    dict(confirmations=0.5, confirmation_strength=0.0, wrong_weight=0.2),  # seed 16
    dict(nearby_spent_assistant=1.0, spent_assistant=2.0, need_assistant=1.2),  # seed 17: beside a cited turn
    dict(nearby_spent_assistant=2.0, reuse_strength=0.0, nearby_spent=0.7, burst=3.0),  # fixed factors, people too
]


@pytest.mark.parametrize("seed", [*range(19), 35, 37, 71])  # 71, 35, 37: knobs 14, 16 and 18 again, with an assistant
def test_vectorised_measured_equals_the_turn_by_turn_loop(seed):
    rng = random.Random(seed)
    knobs = KNOBS[seed % len(KNOBS)]
    settings = MemorySettings(budget=rng.choice([80, 400, 1500]), lag=rng.choice([0, 1, 3, 8]))
    fast = MemoryLayer(settings, Measured(**knobs))
    slow = MemoryLayer(settings, TurnByTurn(**knobs))
    for step in range(500):
        tokens = rng.randint(0, 60)
        active = sorted(fast.snapshot().active)
        cites = [(n, rng.choice([1.0, 0.5, 2.0])) for n in rng.sample(active, min(len(active), rng.randint(0, 4)))]
        answer = step if rng.random() < 0.7 else None
        # now and then an answer of the last 30 steps cites more turns in a later call (its shares change)
        more = [n for n in active if rng.random() < 0.05] if rng.random() < 0.2 else []
        again = max(0, step - rng.randint(0, 30))
        roll, target = rng.random(), rng.randint(1, step + 1)
        role = rng.choice(["user", "user", "assistant", "system"]) if seed % 3 else "user"
        prior = None if seed % 4 == 0 or rng.random() < 0.1 else rng.choice([0.0, 1.0, rng.random()])
        got = []
        for lay in (fast, slow):
            out = [lay.add_turn(role, tokens, prior=prior).number, lay.cite(cites, answer_turn=answer)]
            if more:
                out.append(lay.importance())  # measured between the two calls
                out.append(lay.cite(more, answer_turn=again))
            try:
                if roll < 0.1:
                    lay.feedback(
                        random.Random(step).randint(0, step), -1.0 if roll < 0.04 else -0.5 if roll < 0.06 else 1.0
                    )
                elif roll < 0.13:
                    out.append(lay.pin(target))
                elif roll < 0.16:
                    out.append(lay.unpin(target))
                elif roll < 0.22:
                    out.append(lay.restore(target))
            except PinRefused:
                out.append("refused")
            out.append(lay.enforce_budget())
            if step % 5 == 0:
                out.append(lay.ranking())
                out.append(lay.importance())
                out.append(lay.importance([target, target, 1]))  # any turns, repeated ones too
            got.append(out)
        assert got[0] == got[1], step
        if step % 100 == 99:  # rebuilt layers (no caches, turns in number order) agree too
            live = fast.importance()
            fast, slow = (
                rebuilt(
                    lay,
                    settings,
                    policy=type(lay.policy)(**knobs),
                )
                for lay in (fast, slow)
            )
            assert fast.importance() == live, step  # the live layer's caches held what the log says
