"""More one-line rules beside userfirst and largest (role, then size or age or last citation), on
hand-worked memories: the order each evicts in, and the turn it takes first when over budget."""

import pytest

from memory.layer import MemoryLayer
from memory.types import MemorySettings

# turn 1..6: the user's 30, an answer of 20, an answer of 50, the user's 10, the user's 40, an answer of 20
MEMORY = [("user", 30), ("assistant", 20), ("assistant", 50), ("user", 10), ("user", 40), ("assistant", 20)]
RULES = ["userfirst_largest", "userlru"]


def layer_with(policy: str, turns=MEMORY, budget: int = 1000, cites=()) -> MemoryLayer:
    layer = MemoryLayer(MemorySettings(budget=budget, lag=0, policy=policy))
    for role, tokens in turns:
        layer.add_turn(role, tokens)
    for turn in cites:
        layer.add_turn("system", 0)  # a step passes before each citation (a 0-token note)
        layer.cite([turn])
    return layer


def order(layer: MemoryLayer) -> list[int]:
    return [t.number for t, _ in layer.ranking() if t.tokens]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("userfirst", [2, 3, 6, 1, 4, 5]),  # the reference: answers oldest first, then the user's oldest first
        ("largest", [3, 5, 1, 2, 6, 4]),  # the reference: largest first, the older of equals
        ("userfirst_largest", [3, 2, 6, 1, 4, 5]),  # answers largest first (20s: older first), user's oldest first
        ("userlru", [2, 3, 6, 1, 4, 5]),  # nothing cited: userfirst
    ],
)
def test_each_rule_evicts_in_its_order(policy, expected):
    assert order(layer_with(policy)) == expected


@pytest.mark.parametrize(
    ("policy", "first"),
    [("userfirst", 2), ("userfirst_largest", 3), ("userlru", 2)],
)
def test_over_budget_the_rule_takes_its_first_turn(policy, first):
    layer = layer_with(policy, budget=160)  # 170 stored: one eviction of at least 10 tokens
    assert [r.turn for r in layer.enforce_budget()] == [first]


@pytest.mark.parametrize("policy", RULES)
def test_every_answer_goes_before_any_user_turn(policy):
    # an answer of 1 token goes before the user's turns of 10 and 200, whatever the rule's key
    assert order(layer_with(policy, [("user", 10), ("assistant", 1), ("user", 200)]))[0] == 2


def test_userlru_keeps_the_recently_cited_within_each_role():
    # answer 2 is cited at step 7, the user's turn 1 at step 8: each goes last within its role
    layer = layer_with("userlru", cites=[2, 1])
    assert order(layer) == [3, 6, 2, 4, 5, 1]


def test_userfirst_largest_reads_no_citations():
    assert order(layer_with("userfirst_largest", cites=[3, 5])) == order(layer_with("userfirst_largest"))
