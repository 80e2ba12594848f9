"""``lagmem bench probes``: does the chat answer fact-recall questions with the fact?

Each probe is a short scripted conversation (``bench/probes.jsonl``: facts stated among chit-chat,
one JSON object per line: ``id``, ``turns``, ``question``, ``fact`` -- accepted spellings of the
fact -- and optionally ``stale``, values a later turn corrected). Every turn is sent through
``ChatService`` exactly as a chat message is (the model answers each one, the memory evicts under
its budget), then the question. A fact probe passes when the answer contains one of the fact's
spellings (case-insensitive) and none of its stale values. A probe with an empty ``fact`` asks
for something never stated: it passes when the answer says it does not know (one of
``ABSTAIN``'s phrases), since any fact it offers would be invented or beside the point.

Both tests are lenient to a hedge: "I am not sure; the closest thing in memory: you told me (turn 5):
..." passes a fact probe when the quoted turn holds the fact and passes a never-stated probe because
it says it is not sure. So the summary also gives the strict shares (``sure``): fact probes answered
with the fact and no hedge, and never-stated probes answered with a plain admission that quotes no
turn. The model and embeddings are the ones the app would use (the embedded model when nothing is
configured); the database is a throwaway SQLite file.

The sets: ``probes.jsonl`` (24 probes, one fact each; the answer rules were adjusted on it),
``probes_heldout.jsonl`` (37 probes written before it was ever run: facts stated indirectly, two
in one message, corrected later, after long chit-chat, asked in other words or languages, and four
asking for something never stated), ``probes_blind.jsonl`` (30, written without reading the answer
code), and the first-minute sets (``probes_first_minute*.jsonl``: facts and questions in one
message, corrections, chatter in between, never-stated questions; ``_ack``: plain statements as
the last message; ``_heldout``: 21 more in the same shapes, run once after the rules were written).
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from memory.types import MemorySettings

PROBES = Path(__file__).with_name("probes.jsonl")
QUOTED = re.compile(r"\(turn \d+\)")  # the turn an extractive answer names: "You told me (turn 3): ..."


@dataclass(frozen=True)
class Probe:
    id: str
    turns: tuple[str, ...]
    question: str
    fact: tuple[str, ...]
    stale: tuple[str, ...] = ()

    @property
    def unknown(self) -> bool:
        """Nothing in the conversation answers the question: the honest reply is "I don't know"."""
        return not self.fact


# Phrases of an answer that admits it does not know (English; lower-case, apostrophes straight).
ABSTAIN = (
    "don't know",
    "do not know",
    "not sure",
    "no idea",
    "didn't tell",
    "did not tell",
    "haven't told",
    "have not told",
    "never told",
    "didn't mention",
    "did not mention",
    "haven't mentioned",
    "have not mentioned",
    "never mentioned",
    "not mentioned",
    "don't have",
    "do not have",
    "no record",
    "can't find",
    "cannot find",
    "couldn't find",
    "could not find",
    "don't remember",
    "do not remember",
    "don't recall",
    "do not recall",
)


def load(path: str | Path = PROBES) -> list[Probe]:
    """Probes from a JSONL file; a malformed line is refused with its number."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            out.append(
                Probe(
                    str(d["id"]),
                    tuple(map(str, d["turns"])),
                    str(d["question"]),
                    tuple(map(str, d["fact"])),
                    tuple(map(str, d.get("stale", ()))),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{n}: not a probe ({exc})") from None
    return out


def contains_fact(answer: str, fact: Iterable[str]) -> bool:
    low = answer.lower()
    return any(f.lower() in low for f in fact)


def abstains(answer: str) -> bool:
    """The answer says it does not know (curly apostrophes count as straight ones)."""
    return contains_fact(answer.replace("\u2019", "'"), ABSTAIN)


def sure(p: Probe, answer: str) -> bool:
    """The strict pass: a fact probe's answer holds the fact and does not hedge; an unknown probe's
    admits not knowing and offers no turn as a guess."""
    if p.unknown:
        return abstains(answer) and not QUOTED.search(answer)
    return passes(p, answer) and not abstains(answer)


def passes(p: Probe, answer: str) -> bool:
    """A fact probe: the fact and no stale value; an unknown probe: an admission of not knowing."""
    if p.unknown:
        return abstains(answer)
    return contains_fact(answer, p.fact) and not contains_fact(answer, p.stale)


def run(
    svc, probes: list[Probe], settings: MemorySettings, progress: Callable[[Iterable], Iterable] = lambda x: x
) -> dict:
    """Each probe in its own conversation; returns the share answered with the fact and details."""
    rows = []
    for p in progress(probes):
        conv = svc.store.create(f"probe {p.id}", settings)
        for text in p.turns:
            svc.ask(conv, text)
        r = svc.ask(conv, p.question)
        rows.append(
            {
                "id": p.id,
                "unknown": p.unknown,
                "ok": passes(p, r.answer),
                "sure": sure(p, r.answer),
                "answer": r.answer,
                "answered_by": r.answered_by,
                "cited": r.cited,
                "answer_tokens": svc.counter.count(r.answer),
                "ttft_ms": r.timings.get("ttft_ms"),
            }
        )
    ttft = [r["ttft_ms"] for r in rows if r["ttft_ms"] is not None]
    facts = [r for r in rows if not r["unknown"]]
    unknown = [r for r in rows if r["unknown"]]
    return {
        "probes": len(rows),
        "fact_probes": len(facts),
        "with_fact": _share(facts),
        "unknown_probes": len(unknown),
        "abstained": _share(unknown),
        "with_fact_sure": _share(facts, "sure"),
        "abstained_plain": _share(unknown, "sure"),
        "passed": _share(rows),
        "answered_by": {k: sum(r["answered_by"] == k for r in rows) for k in ("model", "extractive")},
        "max_answer_tokens": max((r["answer_tokens"] for r in rows), default=0),
        "question_ttft_ms_median": round(statistics.median(ttft), 1) if ttft else None,
        "rows": rows,
    }


def _share(rows: list[dict], key: str = "ok") -> float:
    return round(sum(r[key] for r in rows) / len(rows), 4) if rows else 0.0
