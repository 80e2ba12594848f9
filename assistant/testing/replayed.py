"""Lock down what an assistant remembers: replay a saved conversation and assert on its memory.

    from assistant.testing import replay

    memory = replay("tests/conversations/trip.jsonl", budget=600)
    assert memory.kept(1)                      # turn 1 is in memory at the last step
    assert memory.evicted(3, at_step=12)       # turn 3 left memory at step 12
    assert memory.active_tokens <= memory.budget
    memory.evictions, memory.misses, memory.timeline

The replay runs the file through the real, pure ``MemoryLayer`` in memory (no database), with the
file's header settings unless overridden, each turn costing what the token counter says (tiktoken,
as ``lagmem replay`` counts). It gives the same timeline and evictions as ``lagmem replay``.

A *snapshot* is the expected timeline written next to the file (``trip.timeline.json``); it
records, per step, the tokens in memory, the turns in memory and the turns evicted then.
``check_snapshot`` fails with a readable diff (turn, step, what changed); the pytest plugin
(``assistant.testing.plugin``) writes the snapshots under ``pytest --lagmem-update``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from assistant import whatif as W
from assistant.replay import settings_from
from memory import transcript as T
from memory.tokens import TokenCounter
from memory.types import EvictionRecord, MemorySettings

SNAPSHOT_VERSION = 1
MAX_DIFF_LINES = 25


class SnapshotMismatch(AssertionError):
    """The memory behaved differently from the snapshot; the message is the readable diff."""


class ReplayedMemory:
    """A saved conversation replayed in memory: what its memory did, step by step."""

    def __init__(self, path: Path | None, result: W.WhatIf, tokens_name: str = ""):
        self.path = path
        self.result = result
        self.tokens_name = tokens_name
        self._evicted_at: dict[int, list[int]] = defaultdict(list)
        for r in result.evictions:
            self._evicted_at[r.turn].append(r.step)

    # ----- what to assert on --------------------------------------------------------------
    @property
    def settings(self) -> MemorySettings:
        return self.result.settings

    @property
    def budget(self) -> int:
        return self.result.settings.budget

    @property
    def lag(self) -> int:
        """The lag in force (the policy's own where it has one: accumulate's is 0)."""
        return self.result.effective_lag

    @property
    def step(self) -> int:
        return self.result.final.step

    @property
    def active(self) -> tuple[int, ...]:
        """The turns in memory at the last step."""
        return self.result.final.active

    @property
    def active_tokens(self) -> int:
        """Tokens in memory at the last step."""
        return self.result.final.used_tokens

    @property
    def evictions(self) -> list[EvictionRecord]:
        """Every eviction record, in order (turn, step, importance, runners-up, reason ...)."""
        return self.result.evictions

    @property
    def misses(self) -> list[W.Miss]:
        """Citations of a turn that was out of memory when an answer cited it."""
        return self.result.misses

    @property
    def timeline(self) -> list[dict]:
        """One entry per step, at the end of the step: step, tokens, budget, active, protected,
        pinned, evicted (the turns that left memory during that step)."""
        by_step: dict[int, list[int]] = defaultdict(list)
        for r in self.result.evictions:
            by_step[r.step].append(r.turn)
        return [{**e, "evicted": by_step.get(e["step"], [])} for e in self.result.timeline or []]

    def kept(self, turn: int, at_step: int | None = None) -> bool:
        """Turn ``turn`` is in memory at the end of ``at_step`` (default: the last step)."""
        self._known(turn)
        if at_step is None:
            return turn in self.result.final.active
        return turn in self._entry(at_step)["active"]

    def evicted(self, turn: int, at_step: int | None = None) -> bool:
        """Without ``at_step``: ``turn`` is out of memory at the last step. With it: an eviction
        of ``turn`` happened during step ``at_step``."""
        self._known(turn)
        if at_step is None:
            return turn in self.result.final.evicted
        self._entry(at_step)
        return at_step in self._evicted_at.get(turn, ())

    def evicted_at(self, turn: int) -> list[int]:
        """The steps at which ``turn`` left memory (empty: never)."""
        self._known(turn)
        return list(self._evicted_at.get(turn, ()))

    def _known(self, turn: int) -> None:
        if not 1 <= turn <= self.step:
            raise ValueError(f"turn {turn} does not exist: the conversation has {self.step} turns")

    def _entry(self, step: int) -> dict:
        if not 1 <= step <= self.step:
            raise ValueError(f"step {step} does not exist: the conversation ran steps 1 to {self.step}")
        return self.result.timeline[step - 1]

    def __repr__(self) -> str:
        s = self.settings
        return (
            f"<ReplayedMemory {self.path.name if self.path else ''} {s.policy} budget {s.budget} lag {self.lag}: "
            f"step {self.step}, {len(self.active)} turns / {self.active_tokens} tokens in memory, "
            f"{len(self.evictions)} evictions, {len(self.misses)} misses>"
        )

    # ----- snapshots ----------------------------------------------------------------------
    def snapshot(self) -> dict:
        """The expected timeline as plain data (what ``write_snapshot`` stores)."""
        s = self.settings
        return {
            "lagmem_timeline": SNAPSHOT_VERSION,
            "settings": {**{k: v for k, v in s.to_dict().items() if k != "policy_params"}, "lag": self.lag},
            "tokens": self.tokens_name,
            "steps": [
                {"step": e["step"], "tokens": e["used_tokens"], "active": e["active"], "evicted": e["evicted"]}
                for e in self.timeline
            ],
            "misses": [{"step": m.step, "turn": m.turn} for m in self.misses],
        }


def replay(
    path: str | Path,
    *,
    policy: str | None = None,
    budget: int | None = None,
    lag: int | None = None,
    low_watermark: float | None = None,
    counter: TokenCounter | None = None,
) -> ReplayedMemory:
    """Replay a saved conversation file in memory; settings default to the file's header.

    A malformed file raises ``memory.transcript.TranscriptError`` naming the line; bad settings
    raise ``ValueError`` saying which."""
    path = Path(path)
    t = T.parse(path.read_text(encoding="utf-8"))
    if counter is None:
        from assistant.models.tokens import make_token_counter

        counter = make_token_counter(t.header.get("model"))
    base = settings_from(t.header)
    settings = W.settings_for(base, policy=policy, budget=budget, lag=lag, low_watermark=low_watermark)
    rec = W.from_transcript(t, counter, settings)
    return ReplayedMemory(path, W.run(rec, settings, timeline=True), counter.name)


# ----- snapshot files -----------------------------------------------------------------------


def snapshot_path(path: str | Path, name: str | None = None) -> Path:
    """``trip.jsonl`` -> ``trip.timeline.json`` (``trip.NAME.timeline.json`` with a name)."""
    path = Path(path)
    stem = path.name.removesuffix(".jsonl")
    return path.with_name(f"{stem}.{name}.timeline.json" if name else f"{stem}.timeline.json")


def dumps_snapshot(data: dict) -> str:
    """One step per line, so a changed step is a one-line change in version control."""
    head = {k: v for k, v in data.items() if k not in ("steps", "misses")}
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False, sort_keys=True)}," for k, v in head.items()]
    for key in ("steps", "misses"):
        rows, end = data[key], "," if key == "steps" else ""
        if not rows:
            lines.append(f'  "{key}": []{end}')
            continue
        lines.append(f'  "{key}": [')
        lines += [
            f"    {json.dumps(r, ensure_ascii=False)}{',' if i < len(rows) - 1 else ''}" for i, r in enumerate(rows)
        ]
        lines.append(f"  ]{end}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_snapshot(memory: ReplayedMemory, name: str | None = None) -> Path:
    out = snapshot_path(memory.path, name)
    out.write_text(dumps_snapshot(memory.snapshot()), encoding="utf-8")
    return out


def check_snapshot(memory: ReplayedMemory, name: str | None = None) -> None:
    """Raise ``SnapshotMismatch`` with a readable diff when the memory differs from the snapshot,
    ``FileNotFoundError`` when there is none yet."""
    path = snapshot_path(memory.path, name)
    if not path.exists():
        raise FileNotFoundError(
            f"no expected timeline at {path}: write it with `pytest --lagmem-update` "
            "(or assistant.testing.write_snapshot) and review it"
        )
    lines = diff(json.loads(path.read_text(encoding="utf-8")), memory.snapshot())
    if lines:
        shown = lines[:MAX_DIFF_LINES] + (
            [f"... and {len(lines) - MAX_DIFF_LINES} more"] if len(lines) > MAX_DIFF_LINES else []
        )
        raise SnapshotMismatch(
            f"the memory of {memory.path.name} differs from {path.name}:\n  "
            + "\n  ".join(shown)
            + "\n(if the change is intended, run `pytest --lagmem-update` and review the diff)"
        )


def _steps_text(steps: list[int]) -> str:
    return "never" if not steps else "at step" + ("s " if len(steps) > 1 else " ") + ", ".join(map(str, steps))


def diff(expected: dict, got: dict) -> list[str]:
    """What changed, in words: settings, each turn evicted at other steps, the first step whose
    memory differs, token differences, misses."""
    out = []
    for k in sorted(set(expected.get("settings", {})) | set(got["settings"])):
        a, b = expected.get("settings", {}).get(k), got["settings"].get(k)
        if a != b:
            out.append(f"setting {k}: {b} (expected {a})")
    if expected.get("tokens") != got["tokens"]:
        out.append(f"token counter: {got['tokens']} (expected {expected.get('tokens')})")
    exp_steps, got_steps = expected.get("steps", []), got["steps"]
    if len(exp_steps) != len(got_steps):
        out.append(f"the replay ran {len(got_steps)} steps (expected {len(exp_steps)})")
    when_exp, when_got = _evictions_by_turn(exp_steps), _evictions_by_turn(got_steps)
    for turn in sorted(set(when_exp) | set(when_got)):
        a, b = when_exp.get(turn, []), when_got.get(turn, [])
        if a != b:
            out.append(f"turn {turn}: evicted {_steps_text(b)} (expected {_steps_text(a)})")
    for e, g in zip(exp_steps, got_steps):
        if e["active"] != g["active"]:
            gone = sorted(set(e["active"]) - set(g["active"]))
            extra = sorted(set(g["active"]) - set(e["active"]))
            parts = ([f"turns {gone} out of memory (expected in)"] if gone else []) + (
                [f"turns {extra} in memory (expected out)"] if extra else []
            )
            out.append(f"step {g['step']}: first step whose memory differs: " + "; ".join(parts))
            break
    token_diffs = [
        (e["step"], g["tokens"], e["tokens"]) for e, g in zip(exp_steps, got_steps) if e["tokens"] != g["tokens"]
    ]
    for step, b, a in token_diffs[:5]:
        out.append(f"step {step}: {b} tokens in memory (expected {a})")
    if len(token_diffs) > 5:
        out.append(f"tokens differ at {len(token_diffs)} steps in all")
    exp_m = {(m["step"], m["turn"]) for m in expected.get("misses", [])}
    got_m = {(m["step"], m["turn"]) for m in got["misses"]}
    out += [f"step {s}: new miss of turn {t} (cited while out of memory)" for s, t in sorted(got_m - exp_m)]
    out += [f"step {s}: expected miss of turn {t} did not happen" for s, t in sorted(exp_m - got_m)]
    return out


def _evictions_by_turn(steps: list[dict]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = defaultdict(list)
    for s in steps:
        for turn in s.get("evicted", []):
            out[turn].append(s["step"])
    return out


__all__ = ["ReplayedMemory", "SnapshotMismatch", "replay", "check_snapshot", "write_snapshot", "snapshot_path", "diff"]
