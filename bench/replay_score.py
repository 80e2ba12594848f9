"""Scoring a saved conversation by replaying it through the product, as ``lagmem replay FILE`` does.

``kept`` stores the conversation in a fresh SQLite file through ``assistant.replay.replay`` (the
same units of work and need priors as the app: each turn's prior is computed from its text by the
shipped estimator when it is stored; the token counter is the caller's), then reads back which citations the store
recorded. A need (an answer citing a fact) was met when its citation was recorded: the layer drops
the citation of a turn that is not in memory (``MemoryLayer.cite``), so "recorded" is exactly "the
fact was in memory when the answer needed it". The replay skips only the per-turn timeline
snapshots, which nothing here reads.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memory import transcript as T
from memory.tokens import TokenCounter
from memory.types import MemorySettings


@dataclass(frozen=True)
class Variant:
    """A policy to replay with: its name, parameters, and the label it has in tables."""

    name: str
    params: tuple[tuple[str, float], ...] = ()
    label: str = ""

    @property
    def title(self) -> str:
        return self.label or (
            self.name + (f"[{','.join(f'{k}={v:g}' for k, v in self.params)}]" if self.params else "")
        )


def parse_variant(text: str) -> Variant:
    """``measured`` or ``measured[need=0,citations=0]``: a policy with parameters."""
    name, _, rest = text.strip().partition("[")
    params = []
    if rest:
        if not rest.endswith("]"):
            raise ValueError(f"{text!r}: expected POLICY or POLICY[NAME=NUMBER,...]")
        for item in filter(None, (x.strip() for x in rest[:-1].split(","))):
            key, eq, value = item.partition("=")
            try:
                params.append((key.strip(), float(value)))
            except ValueError:
                raise ValueError(f"{text!r}: {item!r} is not NAME=NUMBER") from None
            if not eq:
                raise ValueError(f"{text!r}: {item!r} is not NAME=NUMBER")
    return Variant(name.strip(), tuple(params))


def settings_for(header: dict, variant: Variant, lag: int | None = None, budget: int | None = None) -> MemorySettings:
    """The file's settings with the variant's policy (its parameters replace the header's)."""
    from dataclasses import replace

    from assistant.replay import settings_from

    base = settings_from(header, budget=budget, lag=lag, policy=variant.name)
    return replace(base, policy_params=dict(variant.params)) if variant.params else base


def kept(
    transcript: T.Transcript,
    needs: Sequence,
    settings: MemorySettings,
    counter: TokenCounter,
    workdir: str | Path | None = None,
) -> list[bool]:
    """For each need (``.fact``, ``.answer``): was its citation recorded when replayed under ``settings``?"""
    from assistant.replay import replay
    from assistant.store import open_store

    with tempfile.TemporaryDirectory(prefix="lagmem-score-", dir=workdir) as tmp:
        store = open_store(f"sqlite:///{Path(tmp) / 'replay.db'}")
        try:
            log = replay(
                store,
                transcript,
                counter,
                settings,
                title=str(transcript.header.get("title", "scored")),
                timeline=False,
            )
            recorded = {(c.turn, c.answer_turn) for c in store.view(log.conversation_id).layer.citations()}
        finally:
            store.close()
    return [(n.fact, n.answer) in recorded for n in needs]
