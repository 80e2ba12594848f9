"""The default eviction policy, ``measured``: a turn's need as a posterior, measured at decision time.

Registered in ``memory/policies.py`` (``POLICIES``, ``make_policy``) beside the baselines; its
parameters are declared once, with their ranges (``memory/params.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from memory.baselines import Policy
from memory.evidence import Evidence
from memory.logodds import TRUST_FLOOR, sigmoids
from memory.params import param
from memory.powers import powers
from memory.recalibration import Confirmation, confirmation, recalibrated
from memory.types import TurnState

__all__ = ["Confirmation", "Measured"]


@dataclass
class Measured(Policy):
    """The default: a turn's need as a posterior, measured at decision time from the raw log.

    The need estimator's prior ``p`` (``TurnState.prior``: the probability, from the turn's text,
    role and place at arrival, that a later question needs it; ``memory/need.py``) is the starting
    belief. The conversation's evidence updates it in log-odds, so consistent evidence outweighs any
    prior and a turn with no evidence keeps its prior (faded by the hazard)::

        z          = logit(p)                                    (need 1; else sharpened about the mean)
                   + recalibrate * log(factor of the turn's role)   (this conversation's own calibration)
                   + recalibrate * log(reuse)                       (once the turn has been shown needed)
                   + recalibrate * log(nearby)                      (until then, once a turn beside it has)
                   + need_size_power * log(size)
                   + citations * gain ** confirmations * excess   (settled cites and the arrival episode's verdict)
                   + log(max(trust, TRUST_FLOOR))                 (a wrong answer leaned on it early)
                   + restored                                     (when it was brought back after an eviction)
                   - hazard * quiet                               (steps since it was last shown needed)
                   - hazard_memory * quiet / candidates           (the same, in memories)
        importance = sigmoid(z) / size ** density                 (expected remaining need per token)

    * ``excess`` is the evidence, as the lag-window smoother measures it::

        episode  = the turn's arrival episode: the cites inside its lag window, and each later cite
                   within ``burst`` steps of the episode's last (its arrival counting as the first)
        belief   = product over the episode's cites of correctness ** weight
        strength = max over the episode's cites of weight / (turns its answer cited) ** focus
        verdict  = confirm * belief * decay ** (now - end of lag window) * strength   (0: no episode cite;
                   with focus 0 the strength is left out: the verdict of the lag window alone)
        settled  = sum over cites after the episode of weight * correctness * decay ** (now - step)
        quiet    = now - (step of the last cite after the lag window with correctness > 0, else
                   the end of the lag window)
        rate     = sum of settled / sum of ages, over the candidates, now
        excess   = max(0, settled - background * rate * age)
                 + max(0, verdict - verdict_cut * background * rate * quiet)
        trust    = 1 - verdict_prior + verdict_prior * belief   (1 when the episode got no cites)
                 * (1 - settled_verdict + settled_verdict * later)   (lag > 0)
        later    = product over the cites after the episode of correctness ** weight

      ``correctness`` is 1, or ``wrong_weight`` when feedback said the citing answer was wrong, in
      between for a partly right one (``evidence.credit``): the paper's demonstrated utility. Only
      the excess over ``background`` x the candidates' measured rate counts, so a turn cited because
      it was always there (noisy or habitual cites) does not entrench itself, and a verdict goes
      stale at ``verdict_cut`` x that rate per quiet step.
    * The arrival episode is **one piece of evidence** (``memory/verdicts.py``): while the
      conversation is still on a turn, the retrieval step follows the topic and cites it again and
      again, so a burst of three cites says what one does: that the turn was needed then. The burst
      is judged once (``belief``), its cites never add up. What tells a turn needed for a reason
      from the topic's context is *how much of an answer* it was (``strength``): each answer is one
      piece of evidence shared among the turns it cited (as a query's attention sums to one in H2O),
      so a statement the answer was about (it cited that turn alone) counts whole, and chatter cited
      beside two others a third. With ``burst`` 0 the episode is the lag window; with ``focus`` 0
      the verdict does not ask whose answer it was; at lag 0 there is no verdict and every cite is
      settled (neither acts).
    * ``hazard`` is the rate per step at which a need not shown again passes: the prior's odds fall
      by ``exp(-hazard)`` per quiet step (for a small ``p``, ``p * exp(-hazard * age)``: a need whose
      time has not come is less likely the longer it waits). It is fitted per kind of conversation:
      ``hazard`` where people talk with each other (LoCoMo), ``hazard_assistant`` once an assistant
      turn has arrived (a person and an assistant), by ``lagmem bench holdout``. A rate measured in
      memories rather than steps adds to it, ``hazard_memory`` where people talk with each other and
      ``hazard_memory_assistant`` with an assistant: the odds fall by ``exp(-rate)`` each time as many
      steps pass as there are candidates, so a small memory (which holds few turns) favours the
      recent more than a large one does.
    * The conversation's own calibration (``Evidence.calibration``) compares, per role, how many
      turns past their lag window got a cite after their arrival episode with how many their priors
      expected, and multiplies each role's prior odds by that ratio (shrunk by ``calibration_strength``
      pseudo-turns; 1 with no evidence or one role), so a conversation unlike the estimator's
      training sets still learns which kinds of turns it comes back to. The same log says whether
      the conversation comes back to a turn once it has been shown needed (``Calibration.reuse``:
      the later cites of such turns against what the rate of first cites predicts, shrunk toward the
      kind's ``exp(-spent_assistant)`` by ``reuse_strength`` pseudo-events; between people the fixed
      ``exp(-spent)``): where each fact is asked about once, a fact already used gives way to one not
      asked about yet; where facts are asked about again, it stays. ``Calibration.nearby`` asks the
      same of the turns beside one shown needed (within ``memory.nearby.NEARBY`` turns, arrived before
      its first settled cite), shrunk toward ``exp(-nearby_spent_assistant)`` (between people
      ``exp(-nearby_spent)``; 0: off) by the same ``reuse_strength``: where each question is about one
      place in the talk, the talk around a fact already used gives way too.
    * ``size`` is the turn's tokens over the candidates' mean (scale-free); ``density`` makes
      importance need per token (knapsack order): a budget is spent in tokens.
    * ``gain`` (``Measured.confirmation``, lag > 0) asks the log whether this conversation comes back
      to the turns its lag windows confirmed: among the candidates, the confirmed (their episode's
      verdict > 0) that got a cite after their episode, against how many would have at the rate of
      the unconfirmed (one pseudo-turn at the pooled rate), shrunk toward 1 by
      ``confirmation_strength`` pseudo-turns; never below 1 (a confirmed turn may not have had time
      to come back). Where confirmations foretell needs, they weigh more than the estimator's prior.
      ``confirmations`` and ``confirmation_strength`` were set on the synthetic seeds 0-4 as text and
      ``bench/controlled`` (in-sample); at lag 0 (LoCoMo's and a new conversation's) it does not act.
    * Ablations: ``need`` 0 is the evidence alone (every turn starts from the candidates' mean
      log-odds), ``citations`` 0 with ``verdict_prior`` 0 and ``restored`` 0 the prior alone,
      ``recalibrate`` 0 without the conversation's own calibration (by role and of reuse).

    A turn without a learned prior (rows stored before the estimator, the synthetic traces) keeps
    the additive size prior: ``importance = (citations * excess + trust * prior * size ** size_power *
    prior_decay ** age) / size ** density``. At lag 0, with decay = prior_decay = 1, background =
    size_power = density = 0 (uniform weights) that ranks exactly like ``accumulate``.

    The lag and the constants ``lagmem bench holdout`` fits (its ``GRID``) are chosen on training
    conversations only; the rest (the lag-window terms, ``wrong_weight``, the size prior) were set on
    the LoCoMo dev conversations and the synthetic traces' seeds 0-4: in-sample; ``burst`` and
    ``focus`` on the controlled conversations in ``bench/controlled`` and the synthetic seeds 0-4 as
    text (in-sample; holdout selects lag 0, where neither acts).
    """

    # exponents lie in [0, 8]: with a million candidates of up to 1e9 tokens, size is in [1e-9, 1e6]
    # and p / mean p in [0, 1e6], so x ** 8 and 1 / size ** 8 stay finite; a negative exponent
    # would raise on a prior of 0 (0.0 ** -1) or overflow on a tiny one
    decay: float = param(0.999, 0.0, 1.0)
    wrong_weight: float = param(0.0, 0.0, 1.0)
    prior: float = param(0.4, 0.0, 1000.0)
    prior_decay: float = param(0.99, 0.0, 1.0)
    size_power: float = param(1.5, 0.0, 8.0)
    density: float = param(1.0, 0.0, 8.0)
    background: float = param(0.5, 0.0, 1000.0)
    confirm: float = param(4.0, 0.0, 1000.0)
    verdict_cut: float = param(4.0, 0.0, 1000.0)
    verdict_prior: float = param(1.0, 0.0, 1.0)
    need: float = param(1.0, 0.0, 8.0)
    need_assistant: float = param(1.5, 0.0, 8.0)
    need_size_power: float = param(0.0, 0.0, 8.0)
    citations: float = param(1.0, 0.0, 1000.0)
    citations_assistant: float = param(0.5, 0.0, 1000.0)
    hazard: float = param(0.0, 0.0, 1.0)
    hazard_assistant: float = param(0.0, 0.0, 1.0)
    hazard_memory: float = param(0.6, 0.0, 1000.0)
    hazard_memory_assistant: float = param(0.3, 0.0, 1000.0)
    restored: float = param(2.0, 0.0, 1000.0)
    settled_verdict: float = param(1.0, 0.0, 1.0)
    recalibrate: float = param(1.0, 0.0, 1.0)
    calibration_strength: float = param(10.0, 0.01, 1e6)
    burst: float = param(10.0, 0.0, 1e6)  # steps, read as a whole number (``int``)
    focus: float = param(1.0, 0.0, 8.0)
    spent: float = param(0.0, 0.0, 50.0)
    spent_assistant: float = param(1.5, 0.0, 50.0)
    reuse_strength: float = param(1.0, 0.0, 1e6)
    nearby_spent: float = param(0.0, 0.0, 50.0)
    nearby_spent_assistant: float = param(1.0, 0.0, 50.0)
    confirmations: float = param(1.0, 0.0, 8.0)
    confirmation_strength: float = param(1.0, 0.0, 1e6)
    name = "measured"
    description = (
        "evicts the turn with the least demonstrated utility per token (lagged, decayed, correctness-weighted)"
    )

    def scores(self, candidates, evidence, now):
        n = len(candidates)
        numbers = np.fromiter([t.number for t in candidates], np.int64, n)
        arrived = np.fromiter([t.arrived for t in candidates], np.int64, n)
        tokens = np.fromiter([t.tokens for t in candidates], np.int64, n)
        return self.importances(numbers, arrived, tokens, evidence, now, candidates.__getitem__).tolist()

    def importances(
        self,
        numbers: np.ndarray,
        arrived: np.ndarray,
        tokens: np.ndarray,
        evidence: Evidence,
        now: int,
        turn_at: Callable[[int], TurnState],
    ) -> np.ndarray:
        """``scores`` as a float64 array, computed for all candidates at once.

        The candidates come as columns (their numbers, arrival steps and tokens, in candidate
        order); ``turn_at(k)`` gives candidate k's ``TurnState`` for the few turns measured one by
        one (see ``Evidence.measure_many``).

        Every element goes through the same float operations, in the same order, as the formula
        in the class docstring evaluated turn by turn (``x ** k`` from ``powers`` tables or Python's
        ``**``; ``exp`` and ``log`` by Python's ``math``, one element at a time: ``Arrivals.logit``,
        ``logodds.sigmoids``; numpy only multiplies, adds, subtracts, divides and compares, which are
        exact IEEE operations; the one sum over floats is ``math.fsum``, exactly rounded, so
        independent of the candidates' order). So the importances are bit for bit those of a
        turn-by-turn loop, in a live layer and in one rebuilt from the database alike. A term adding
        0.0 to every log-odds is left out: it could change only the sign of a zero, which the sigmoid
        does not read.
        """
        n = len(numbers)
        if not n:
            return np.zeros(0)
        decay, lag = self.decay, evidence.lag
        burst = int(self.burst)  # whole steps
        settled, belief, strength, seen = evidence.measure_many(
            numbers, now, decay, self.wrong_weight, turn_at, burst, self.focus
        )
        judged = strength > 0.0
        ages = now - arrived
        table = powers(decay, now)
        confirm = self.confirm if lag else 0.0
        if confirm:
            verdict = np.where(judged, confirm * belief * table[np.maximum(ages - lag, 0)], 0.0)
            if self.focus:
                verdict = verdict * strength
        else:
            verdict = np.zeros(n)
        # steps since last shown needed (last settled cite that counted, or the lag window's end)
        quiet = np.maximum(now - np.maximum(seen, arrived + lag), 0)
        s = self._excess(settled, verdict, ages, quiet)
        citations = self._of_kind("citations", evidence)
        if citations != 1.0:
            s = citations * s
        if self.confirmations and lag:
            gain = self.confirmation(judged & (belief > 0.0), settled > 0.0).gain
            if gain != 1.0:
                s = (gain**self.confirmations) * s
        trust = None
        if self.verdict_prior and lag:
            # the lag window's belief updates the prior; a turn never cited yet keeps it whole
            vp = self.verdict_prior
            trust = np.where(judged, (1.0 - vp) + vp * belief, 1.0)
        if self.settled_verdict and lag:
            # answers that leaned on it after the window are judged too: a wrong one counts against it
            sv, doubted = self.settled_verdict, evidence.doubted  # not doubted: every settled belief is 1.0
            later = (1.0 - sv) + sv * (evidence.settled_belief(numbers, self.wrong_weight, burst) if doubted else 1.0)
            trust = (later if doubted else np.full(n, later)) if trust is None else trust * later
        p = evidence.priors(numbers)
        if np.isnan(p).all():
            return self._per_token(s, tokens, ages, now, None, trust)
        return self._posterior(s, tokens, ages, quiet, now, p, trust, numbers, evidence)

    def _excess(self, settled: np.ndarray, verdict: np.ndarray, ages: np.ndarray, quiet: np.ndarray) -> np.ndarray:
        """Settled evidence and verdict above the background rate measured over the candidates:
        settled evidence against the turn's age, the verdict against its ``quiet`` steps."""
        background = self.background
        if not background:
            return settled + verdict
        total_age = int(ages.sum())  # integers: exact in any order
        # fsum: exactly rounded, so the same whatever the candidates' order (a rebuilt layer lists them
        # by number, a live one by activation) and whatever the Python version
        rate = math.fsum(settled.tolist()) / total_age if total_age else 0.0
        cut = background * rate
        u = settled - cut * ages
        u = np.where(u > 0.0, u, 0.0)
        vcut = cut * self.verdict_cut
        if vcut:
            v = verdict - vcut * quiet
            verdict = np.where(verdict != 0.0, np.where(v > 0.0, v, 0.0), verdict)
        return u + verdict

    def _per_token(
        self,
        s: np.ndarray,
        tokens: np.ndarray,
        ages: np.ndarray,
        now: int,
        p: None = None,
        trust: np.ndarray | None = None,
    ) -> np.ndarray:
        """Turns without a learned prior: add the size prior (faded) and divide by size ** density
        (size = tokens over the candidates' mean)."""
        prior, size_power, density = self.prior, self.size_power, self.density
        if not (size_power or density):
            if prior:
                fade = powers(self.prior_decay, now)[ages] if self.prior_decay != 1.0 else 1.0
                s = s + prior * (1.0 if trust is None else trust) * fade
            return s
        mean = int(tokens.sum()) / len(tokens) or 1.0
        sizes = (np.maximum(tokens, 1) / mean).tolist()
        if prior:
            fade = powers(self.prior_decay, now)[ages] if self.prior_decay != 1.0 else 1.0
            term = prior * (np.array([x**size_power for x in sizes]) if size_power else 1.0)
            if trust is not None:
                term = term * trust
            s = s + term * fade
        if density:
            s = s / np.array([x**density for x in sizes])
        return s

    def _posterior(
        self,
        s: np.ndarray,
        tokens: np.ndarray,
        ages: np.ndarray,
        quiet: np.ndarray,
        now: int,
        p: np.ndarray,
        trust: np.ndarray | None,
        numbers: np.ndarray,
        evidence: Evidence,
    ) -> np.ndarray:
        """Turns with a learned prior: the posterior need in log-odds, per token (class docstring).
        Turns without one among them keep the size prior (``_per_token``)."""
        known = ~np.isnan(p)
        n = len(p)
        mean = int(tokens.sum()) / n or 1.0
        sizes = np.maximum(tokens, 1) / mean
        z = evidence.column("logit", numbers)  # logit(p), taken at arrival (0.0 = logit(0.5): no prior)
        need = self._of_kind("need", evidence)
        if need != 1.0:
            picked = z[known].tolist()
            centre = math.fsum(picked) / len(picked)  # exactly rounded: order-free
            z = centre + need * (z - centre)
        if self.recalibrate:  # this conversation's own calibration (``memory.recalibration``)
            z = recalibrated(
                z,
                now,
                numbers,
                evidence,
                self.recalibrate,
                self.calibration_strength,
                self.reuse_prior(evidence),
                self.nearby_prior(evidence),
            )
        if self.need_size_power:
            z = z + self.need_size_power * np.fromiter(map(math.log, sizes.tolist()), np.float64, n)
        z = z + s  # the evidence, already weighted by ``citations``
        if trust is not None:
            # log(1.0) is exactly 0.0: only the turns whose trust moved are read
            moved = np.flatnonzero(trust != 1.0)
            if len(moved):
                logs = np.zeros(n)
                logs[moved] = [math.log(x if x > TRUST_FLOOR else TRUST_FLOOR) for x in trust[moved].tolist()]
                z = z + logs
        if self.restored and evidence.any_restored:  # else it adds 0.0 to each z (the sigmoid reads -0.0 as 0.0)
            z = z + np.where(evidence.column("restored", numbers), self.restored, 0.0)
        hazard = self._of_kind("hazard", evidence)
        if hazard:
            z = z - hazard * quiet
        per_memory = self._of_kind("hazard_memory", evidence)
        if per_memory:
            z = z - (per_memory / n) * quiet  # per step, over the turns the memory holds
        out = sigmoids(z)
        if self.density == 1.0:
            out = out / sizes  # x ** 1.0 is x exactly
        elif self.density:
            out = out / np.array([x**self.density for x in sizes.tolist()])
        if not known.all():
            out = np.where(known, out, self._per_token(s, tokens, ages, now, None, trust))
        return out

    def confirmation(self, confirmed: np.ndarray, back: np.ndarray) -> Confirmation:
        """``recalibration.confirmation`` at this policy's ``confirmation_strength``."""
        return confirmation(confirmed, back, self.confirmation_strength)

    def confirmation_now(self, candidates: list[TurnState], evidence: Evidence, now: int) -> Confirmation | None:
        """``confirmation`` over ``candidates`` at ``now``, as a decision would measure it (the
        inspector's line); None where it does not act (lag 0, ``confirmations`` 0, no candidates)."""
        if not (self.confirmations and evidence.lag and candidates):
            return None
        numbers = np.fromiter([t.number for t in candidates], np.int64, len(candidates))
        settled, belief, strength, _ = evidence.measure_many(
            numbers, now, self.decay, self.wrong_weight, candidates.__getitem__, int(self.burst), self.focus
        )
        return self.confirmation((strength > 0.0) & (belief > 0.0), settled > 0.0)

    def _of_kind(self, name: str, evidence: Evidence) -> float:
        """Constant ``name`` for this kind of conversation: ``<name>_assistant`` once an assistant spoke."""
        return getattr(self, f"{name}_assistant" if evidence.with_assistant else name)

    def reuse_prior(self, evidence: Evidence) -> tuple[float, float]:
        """(reuse prior, its strength) for ``Evidence.calibration``: the kind of conversation's odds
        factor on a turn already shown needed (``exp(-spent_assistant)`` once an assistant has spoken,
        else ``exp(-spent)``), and the pseudo-events it weighs against this conversation's own count
        (``reuse_strength``; between people none: there the measured reuse did not gain, in-sample
        on LoCoMo, and the settled evidence already says how much a cite brings a turn back)."""
        return math.exp(-self._of_kind("spent", evidence)), self.reuse_strength if evidence.with_assistant else 0.0

    def nearby_prior(self, evidence: Evidence) -> tuple[float, float]:
        """(nearby prior, its strength) for ``Evidence.nearby``: ``exp(-nearby_spent_assistant)`` once an
        assistant has spoken, else ``exp(-nearby_spent)`` (1: the rule is off), and ``reuse_strength``."""
        return math.exp(-self._of_kind("nearby_spent", evidence)), self.reuse_strength

    def parts(self, candidates, evidence, now):
        """(prior part, evidence part) per candidate: the evidence part is the importance with the
        prior switched off, the prior part the rest (``importance = prior part + evidence part``)."""
        total = self.scores(candidates, evidence, now)
        off = dict(citations=0.0, citations_assistant=0.0, verdict_prior=0.0, settled_verdict=0.0, restored=0.0)
        alone = replace(self, **off).scores(candidates, evidence, now)
        return [(a, t - a) for t, a in zip(total, alone)]
