"""Policy parameters: each declared once (``memory.policies.param``) with the range the policy
survives. Every parameter of every policy, at either end of its range, keeps a long conversation
under the memory contract; a value outside it is refused where it enters (a file's header), with
the parameter and its range named, instead of breaking the conversation's next message."""

from __future__ import annotations

import json
import math
import random
from dataclasses import fields, is_dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import transcript as T
from memory.layer import MemoryLayer
from memory.policies import POLICIES, Measured, make_policy
from memory.types import MemorySettings, PinRefused

ENDS = [
    (policy, name, end)
    for policy, cls in POLICIES.items()
    for name, spec in cls.param_specs().items()
    for end in ("low", "high")
]
EVICTIONS = 200
MAX_STEPS = 1500

# a turn's cost: ordinary sizes, empty turns, and a pasted document now and then
HUGE_TOKENS = [0, 1, 5_000, 10**6]
# the need estimator's probability, the edges included (0 and the smallest positive float)
EDGE_PRIORS = [None, 0.0, 5e-324, 1e-300, 1.0]
WEIGHTS = [1.0, 1.0, 0.5, 1e-6, 1e6]  # a file's cites weigh up to 1e6
profile = st.fixed_dictionaries(
    {
        "budget": st.integers(50, 400),
        "lag": st.integers(0, 6),
        "pin_share": st.sampled_from([0.0, 0.3]),
        "feedback": st.sampled_from([-1.0, 0.5, 1.0]),
    }
)


def test_every_parameter_of_every_policy_is_declared_with_a_range():
    for name, cls in POLICIES.items():
        specs = cls.param_specs()
        declared = [f.name for f in fields(cls)] if is_dataclass(cls) else []
        assert list(specs) == declared, f"{name}: a field without param(...)"
        assert list(cls().params()) == declared
        for key, spec in specs.items():
            assert spec.low <= getattr(cls(), key) <= spec.high and spec.kind in (int, float)
    assert set(Measured.param_specs()) >= {
        "need",
        "need_size_power",
        "citations",
        "hazard",
        "hazard_assistant",
        "recalibrate",
    }


@pytest.mark.parametrize(("policy", "name", "end"), ENDS, ids=[f"{p}-{n}-{e}" for p, n, e in ENDS])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=profile, seed=st.integers(0, 2**32))
def test_each_parameter_at_either_end_of_its_range_survives_200_evictions(policy, name, end, cfg, seed):
    """Hypothesis picks the conversation's shape and a seed for its stream of turns (a stream of
    hundreds of draws is too large for it to shrink usefully)."""
    rnd = random.Random(seed)
    spec = POLICIES[policy].param_specs()[name]
    value = spec.kind(getattr(spec, end))
    settings_ = MemorySettings(
        budget=cfg["budget"], lag=cfg["lag"], policy=policy, pin_share=cfg["pin_share"], policy_params={name: value}
    )
    layer = MemoryLayer(settings_)
    evictions = 0
    while evictions < EVICTIONS and layer.step < MAX_STEPS:
        size = rnd.choice(HUGE_TOKENS) if rnd.random() < 0.05 else rnd.randint(0, 80)
        p = rnd.choice(EDGE_PRIORS) if rnd.random() < 0.2 else rnd.random()
        t = layer.add_turn(rnd.choice(["user", "assistant"]), size, prior=p)
        active = layer.active_numbers()
        cited = rnd.sample(active, min(len(active), rnd.randint(0, 3)))
        layer.cite([(n, rnd.choice(WEIGHTS)) for n in cited], answer_turn=t.number)
        evictions += _check_contract(layer, layer.enforce_budget("arrival", t.number))
        if rnd.random() < 0.2:
            layer.feedback(rnd.randint(1, layer.step), cfg["feedback"])
        if rnd.random() < 0.05:
            try:
                evictions += _check_contract(layer, layer.pin(rnd.randint(1, layer.step)))
            except PinRefused:
                pass
        if rnd.random() < 0.05:
            evictions += _check_contract(layer, layer.restore(rnd.randint(1, layer.step)))
    if layer.lag < MAX_STEPS // 2:
        assert evictions >= EVICTIONS
    else:  # accumulate with its lag at the top: everything stays protected, shown as over budget
        assert evictions == 0 and layer.snapshot().forced_over_budget


def _check_contract(layer: MemoryLayer, records) -> int:
    """The contract after an enforcement (see memory/__init__.py), and every importance a number;
    the number of evictions."""
    snap = layer.snapshot()
    assert len({r.turn for r in records}) == len(records)
    for r in records:
        t = layer.turn(r.turn)
        assert not t.active and not t.pinned and r.step - t.protected_since >= layer.lag
        assert math.isfinite(r.importance) and all(math.isfinite(s) for _, s in r.runners_up)
    if snap.used_tokens > layer.budget:
        assert layer.candidates() == []
    assert all(math.isfinite(v) for _, v in layer.ranking())
    return len(records)


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"need_size_power": 1e6}, "'need_size_power' must be a number in [0, 8]"),
        ({"need": -1000}, "'need' must be a number in [0, 8]"),
        ({"hazard": 2.0}, "'hazard' must be a number in [0, 1]"),
        ({"citations": 1e9}, "'citations' must be a number in [0, 1000]"),
    ],
)
def test_a_header_with_a_parameter_out_of_range_is_refused_on_line_1(params, named):
    text = (
        json.dumps({"lagmem": 1, "policy": "measured", "policy_params": params})
        + '\n{"role": "user", "content": "hi"}\n'
    )
    with pytest.raises(T.TranscriptError) as caught:
        T.parse(text)
    assert caught.value.line == 1 and named in caught.value.reason


def test_an_undeclared_parameter_is_refused_with_the_declared_ones_listed():
    with pytest.raises(ValueError, match=r"measured has no parameter 'surprise' \(its parameters: decay, "):
        make_policy("measured", surprise=1.0)
    with pytest.raises(ValueError, match=r"fifo has no parameter 'window' \(its parameters: none\)"):
        make_policy("fifo", window=3)
    with pytest.raises(ValueError, match="'window' must be an integer, got 2.0"):
        make_policy("window", window=2.0)


@pytest.mark.parametrize("params", [{"need_size_power": 1e6}, {"need": -1000}, {"citations": -1}, {"window": 3}])
def test_an_import_with_a_parameter_out_of_range_names_the_line_and_stores_nothing(params, db_url, tmp_path, capsys):
    from assistant.store import open_store
    from cli.main import main

    f = tmp_path / "bad.jsonl"
    f.write_text(
        json.dumps({"lagmem": 1, "policy": "measured", "policy_params": params})
        + '\n{"role": "user", "content": "hi"}\n',
        encoding="utf-8",
    )
    with pytest.raises(SystemExit) as caught:
        main(["import", str(f), "--db", db_url])
    name = next(iter(params))
    assert "bad.jsonl: line 1: measured" in str(caught.value) and repr(name) in str(caught.value)
    assert "nothing was stored" in str(caught.value)
    store = open_store(db_url)
    assert store.conversations() == []
    store.close()
