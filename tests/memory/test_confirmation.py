"""Whether this conversation comes back to the turns its lag windows confirmed
(``Measured.confirmation``): where it does, their evidence weighs more; where it never does, or no
turn is past its window, nothing changes; at lag 0 there is no confirmation and nothing acts."""

from memory.layer import MemoryLayer
from memory.policies import Measured
from memory.types import MemorySettings


def _chat(lag: int, back: bool, policy: Measured | None = None) -> MemoryLayer:
    """User turns (prior 0.2) and assistant turns (prior 0.4), 20 tokens each. Every fourth user turn is
    confirmed 2 steps after it arrived (inside a lag window of 4); with ``back`` half of those are cited
    again 30 steps later, and no other turn ever is."""
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=lag), policy or Measured())
    for n in range(1, 161):
        layer.add_turn("user" if n % 2 else "assistant", 20, prior=0.2 if n % 2 else 0.4)
        cites = [m for m in (n - 2, n - 32) if m > 0 and m % 8 == 1 and (m == n - 2 or (back and m % 16 == 1))]
        if cites:
            layer.cite(cites, answer_turn=n)
    return layer


def _conf(layer: MemoryLayer):
    return layer.policy.confirmation_now(layer.candidates(), layer.evidence, layer.step)


def test_confirmed_turns_that_come_back_weigh_their_evidence_more():
    conf = _conf(_chat(4, back=True))
    assert conf.confirmed == 20 and conf.back == 8 and conf.gain > 2.0
    # a confirmed turn not cited again yet (153: confirmed at 155) against the same with the gain off
    on = _chat(4, True).importance()
    off = _chat(4, True, Measured(confirmations=0.0)).importance()
    assert on[153] > off[153] and on[154] == off[154]  # 154: an assistant turn, no evidence


def test_confirmed_turns_that_never_come_back_change_nothing():
    conf = _conf(_chat(4, back=False))
    assert conf.back == 0 and conf.gain == 1.0
    assert _chat(4, False).ranking() == _chat(4, False, Measured(confirmations=0.0)).ranking()


def test_lag_0_has_no_confirmation():
    assert _conf(_chat(0, back=True)) is None
    assert _chat(0, True).ranking() == _chat(0, True, Measured(confirmations=0.0)).ranking()
