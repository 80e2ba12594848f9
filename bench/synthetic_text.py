"""The synthetic traces as text conversations, so ``lagmem bench synthetic`` measures what ships.

A trace (``bench/synthetic.py``) has token costs and citations but no words, so the need estimator
has nothing to read and every turn arrives without a prior. ``render`` writes the same events as a
person-assistant chat in the saved format, which ``bench/replay_score.py`` replays as
``lagmem replay`` does (priors computed from the text by the shipped estimator):

* trace turn ``n`` becomes a user turn: a fact (``controlled_text.fact``) if ``n`` is a fact, else
  small talk;
* the retrieval steps after turn ``n`` become assistant answers, one per feedback value (several
  retrievals that agree share an answer; one citing a turn already cited there gets its own), each
  citing the turns its retrievals cite, with its feedback as an event (-1 disliked, +1 liked, none);
  the first answer replies to turn ``n``, and a step without retrievals still gets a reply, as a chat
  does;
* each reuse of a fact after turn ``n`` becomes the person's question about it and an answer citing
  it: the need. No feedback follows it: in the trace it depends on whether the fact was kept, which a
  saved file cannot know.

Step counts grow (a trace step is a user turn and its answers, about three turns), so the budget is
recomputed on the text by the trace's own rule (``synthetic.default_budget``: ``headroom`` x the mean
tokens of facts with evidence within the longest reuse gap), plus the most tokens the protected
lag window ever holds, which no policy may evict.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from bench import controlled_text as text
from bench.controlled import Need
from bench.synthetic import Trace
from memory import transcript as T

TEXT_LAG = 6  # the lag of the text replay: the controlled conversations' (in turns, not trace steps)


def render(
    trace: Trace, count: Callable[[str], int], lag: int = TEXT_LAG, headroom: float = 1.5
) -> tuple[T.Transcript, list[Need]]:
    """The trace as a saved conversation (header: budget, lag) and its needs (fact turn, answer turn)."""
    rng = random.Random(f"synthetic-text:{trace.seed}")
    facts = {n: text.fact(rng) for n in sorted(trace.facts)}
    items: list = []
    number = {}  # trace turn -> text turn
    needs: list[Need] = []
    evidence: dict[int, list[int]] = {}  # fact text turn -> steps it was stated, cited with credit, needed

    def turn(role: str, content: str, cites: tuple[int, ...] = ()) -> int:
        n = len([i for i in items if isinstance(i, T.TurnLine)]) + 1
        items.append(T.TurnLine(n, role, content, tuple((c, 1.0) for c in cites)))
        return n

    for n in range(1, trace.turns + 1):
        f = facts.get(n)
        number[n] = turn("user", text.with_context(rng, f.statement, 0.3) if f else text.chatter(rng))
        if f:
            evidence[number[n]] = [number[n]]
        answers: list[tuple[float | None, list[int]]] = []
        for r in trace.steps.get(n, ()):
            cited = [number[t] for t in r.turns]
            slot = next((a for a in answers if a[0] == r.feedback and not set(cited) & set(a[1])), None)
            if slot is None:
                answers.append((r.feedback, list(cited)))
            else:
                slot[1].extend(cited)
        for feedback, cited in answers or [(None, [])]:
            gist = next((facts[t].gist for t in sorted(trace.facts) if number.get(t) in cited), None)
            a = turn("assistant", text.answer(rng, gist, ack=gist is None and f is not None), tuple(cited))
            if feedback is not None:
                items.append(T.EventLine("feedback", a, float(feedback)))
            if feedback is not None and feedback > 0:
                for c in cited:
                    evidence.get(c, []).append(a)
        for t in trace.reuses.get(n, ()):
            turn("user", text.with_context(rng, facts[t].question, 0.3))
            a = turn("assistant", text.answer(rng, facts[t].gist, recalled=True), (number[t],))
            needs.append(Need(number[t], a))
            evidence[number[t]].append(a)
    transcript = T.Transcript({}, items)
    tokens = [count(t.content) for t in transcript.turns]
    window = round(200 * len(tokens) / max(trace.turns, 1))  # the longest reuse gap, in text steps
    transcript.header = {
        "lagmem": T.FORMAT_VERSION,
        "title": f"synthetic seed {trace.seed} as text",
        "budget": text_budget(tokens, evidence, window, lag, headroom),
        "lag": lag,
        "policy": "measured",
    }
    return transcript, needs


def text_budget(tokens: list[int], evidence: dict[int, list[int]], window: int, lag: int, headroom: float) -> int:
    """``synthetic.default_budget``'s rule on text steps, plus the protected window's peak tokens."""
    steps = len(tokens)
    total = 0
    for step in range(1, steps + 1):
        lo = step - window
        total += sum(tokens[f - 1] for f, ats in evidence.items() if f <= step and any(lo < a <= step for a in ats))
    protected = max((sum(tokens[max(0, t - lag) : t]) for t in range(1, steps + 1)), default=0)
    return max(1, round(headroom * total / max(steps, 1) + protected))
