"""The inspector's sentence on the conversation's own calibration (``web.calibration``)."""

from memory.layer import MemoryLayer
from memory.policies import Measured
from memory.types import MemorySettings
from web.calibration import calibration_text


def _layer(policy, roles=("user", "assistant")):
    """Every fourth step an answer cites a user turn from 14 steps back: after its arrival episode
    (the lag window and ``burst`` 10 steps), so the conversation came back to it."""
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=2), policy)
    for n in range(1, 101):
        layer.add_turn(roles[n % len(roles)], 20, prior=0.2)
        if n % 4 == 0 and n > 14:
            layer.cite([n - 14 if roles[(n - 14) % len(roles)] == "user" else n - 15], answer_turn=n)
    return layer


def test_the_caption_names_each_roles_factor():
    text = calibration_text(_layer(Measured()))
    assert text.startswith("Calibration from this conversation (the turns in memory, step 100)")
    assert "user ×" in text and "assistant ×0." in text


def test_one_role_uses_the_priors_as_they_are_and_other_policies_say_nothing():
    assert "used as they are" in calibration_text(_layer(Measured(), roles=("user",)))
    assert calibration_text(_layer(Measured(recalibrate=0.0))) is None
    fifo = MemoryLayer(MemorySettings(budget=100, policy="fifo"))
    assert calibration_text(fifo) is None


def test_the_caption_says_how_much_a_turn_already_cited_counts():
    text = calibration_text(_layer(Measured(spent_assistant=2.0)))
    assert "A turn already cited counts ×" in text and "later cites of the" in text
    assert "already cited" not in calibration_text(_layer(Measured(spent_assistant=0.0, reuse_strength=0.0)))


def test_the_caption_says_how_much_confirmed_evidence_counts():
    """Every fourth user turn confirmed inside its lag window (2 steps after it), half of them cited
    again 30 steps later: the confirmed come back, the others never."""
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=4), Measured())
    for n in range(1, 121):
        layer.add_turn("user" if n % 2 else "assistant", 20, prior=0.2)
        cites = [m for m in (n - 2, n - 32) if m > 0 and m % 8 == 1 and (m == n - 2 or m % 16 == 1)]
        if cites:
            layer.cite(cites, answer_turn=n)
    text = calibration_text(layer)
    assert "Evidence counts ×" in text and "turns their lag window confirmed were cited again later" in text
    assert "Evidence counts" not in (calibration_text(_layer(Measured(confirmations=0.0))) or "")


def test_the_caption_says_how_much_a_turn_beside_a_cited_one_counts():
    text = calibration_text(_layer(Measured(nearby_spent_assistant=1.0)))
    assert "A turn beside a cited one counts ×" in text and "turns beside one were cited after it" in text
    assert "beside a cited one" not in calibration_text(_layer(Measured(nearby_spent_assistant=0.0)))
