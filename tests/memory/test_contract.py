"""Property tests of the memory contract (memory/__init__.py), run for every policy in the registry
(each policy gets its own examples, so a new policy cannot slip through unsampled)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.layer import MemoryLayer
from memory.policies import POLICIES
from memory.types import MemorySettings, PinRefused
from tests.memory.rebuild import rebuilt

# one operation: ("turn", tokens, cites, role) | ("pin", k) | ("unpin", k) | ("restore", k) | ("feedback", k, v);
# roles vary so the rules that read them (userfirst) are exercised, not only their user-only path
op = st.one_of(
    st.tuples(
        st.just("turn"),
        st.integers(0, 60),
        st.lists(st.integers(1, 80), max_size=4),
        st.sampled_from(["user", "assistant", "system"]),
    ),
    st.tuples(st.just("pin"), st.integers(1, 80)),
    st.tuples(st.just("unpin"), st.integers(1, 80)),
    st.tuples(st.just("restore"), st.integers(1, 80)),
    st.tuples(st.just("feedback"), st.integers(1, 80), st.sampled_from([-1.0, 1.0])),
)
config = st.fixed_dictionaries(
    {
        "budget": st.integers(20, 300),
        "lag": st.integers(0, 6),
        "low_watermark": st.sampled_from([1.0, 0.8, 0.5]),
        "pin_share": st.sampled_from([0.0, 0.3, 0.5, 1.0]),
    }
)


def run(cfg, ops, check=True):
    """Apply ``ops``; check the contract after every change; return everything observable."""
    lay = MemoryLayer(MemorySettings(**cfg))
    trace = []
    for o in ops:
        kind = o[0]
        records = []
        if kind == "turn":
            t = lay.add_turn(o[3], o[1])
            out = lay.cite([c for c in o[2]], answer_turn=t.number)
            assert {c.turn for c in out.recorded} <= set(lay.snapshot().active)  # contract 6
            records = lay.enforce_budget()
        elif o[1] <= lay.step:
            if kind == "pin":
                try:
                    records = lay.pin(o[1])
                except PinRefused:
                    trace.append(("refused", o[1]))
            elif kind == "unpin":
                records = lay.unpin(o[1])
            elif kind == "restore":
                records = lay.restore(o[1])
            else:
                lay.feedback(o[1], o[2])
        snap = lay.snapshot()
        if check:
            # events do not move the clock, so protection at decision time is protection now
            protected_or_pinned = {t.number for t in lay.turns() if t.pinned or lay.step - t.protected_since < lay.lag}
            evicted_now = {r.turn for r in records}
            assert not (evicted_now & protected_or_pinned), "a protected or pinned turn was evicted"  # contract 2
            assert len(evicted_now) == len(records)  # contract 4: one record per eviction
            assert all(not lay.turn(r.turn).active for r in records)
            if snap.used_tokens > cfg["budget"]:  # contract 1: only when pinned + protected alone exceed
                assert lay.candidates() == [] or (records == [] and kind not in ("turn", "restore", "unpin", "pin"))
            assert len(lay.turns()) == lay.step  # contract 5: nothing is ever deleted
            assert snap.pinned_tokens <= int(cfg["budget"] * cfg["pin_share"])
        trace.append((kind, snap, tuple(records)))
    return trace


every_policy = pytest.mark.parametrize("policy", sorted(POLICIES))


@every_policy
@settings(max_examples=60, deadline=None)
@given(cfg=config, ops=st.lists(op, max_size=60))
def test_memory_contract_holds_for_every_policy(policy, cfg, ops):
    run({**cfg, "policy": policy}, ops)


@every_policy
@settings(max_examples=20, deadline=None)
@given(cfg=config, ops=st.lists(op, max_size=40))
def test_eviction_is_deterministic(policy, cfg, ops):
    cfg = {**cfg, "policy": policy}
    assert run(cfg, ops, check=False) == run(cfg, ops, check=False)  # contract 3 and 7


@every_policy
@settings(max_examples=20, deadline=None)
@given(cfg=config, ops=st.lists(op, max_size=40), more=st.lists(op, max_size=10))
def test_a_layer_rebuilt_from_its_state_continues_identically(policy, cfg, ops, more):
    # rebuild after the prefix, then apply the rest: identical to the uninterrupted run
    lay = MemoryLayer(MemorySettings(**cfg, policy=policy))
    for o in ops:
        _apply(lay, o)
    copy = rebuilt(lay)
    for o in more:
        assert _apply(copy, o) == _apply(lay, o)
    assert copy.snapshot() == lay.snapshot()


def _apply(lay, o):
    kind = o[0]
    if kind == "turn":
        t = lay.add_turn(o[3], o[1])
        lay.cite(o[2], answer_turn=t.number)
        return lay.enforce_budget()
    if o[1] > lay.step:
        return None
    try:
        if kind == "pin":
            return lay.pin(o[1])
        if kind == "unpin":
            return lay.unpin(o[1])
        if kind == "restore":
            return lay.restore(o[1])
    except PinRefused as exc:
        return str(exc)
    lay.feedback(o[1], o[2])
    return None
