"""MemorySettings as plain data: ``to_dict`` / ``from_dict`` / ``override`` / ``of``, the one
(de)serialiser every path uses (a file's header, a conversation row, the sidebar, replays)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from memory.types import SETTING_KEYS, MemorySettings

SOME = [
    MemorySettings(),
    MemorySettings(budget=300, lag=0, policy="window", low_watermark=0.8, pin_share=0.0, policy_params={"window": 9}),
    MemorySettings(budget=1, lag=1_000_000, policy="measured", policy_params={"decay": 0.9, "need": 1.0}),
]


@pytest.mark.parametrize("settings", SOME)
def test_to_dict_then_from_dict_gives_the_same_settings(settings):
    data = settings.to_dict()
    assert (
        list(data) == ["budget", "lag", "policy", "low_watermark", "pin_share", "policy_params"] == list(SETTING_KEYS)
    )
    assert MemorySettings.from_dict(data) == settings
    assert MemorySettings.of(SimpleNamespace(**data, title="a row has more columns")) == settings


def test_to_dict_and_from_dict_copy_the_parameters():
    params = {"decay": 0.9}
    settings = MemorySettings.from_dict({"policy_params": params})
    params["decay"] = 0.1
    settings.to_dict()["policy_params"]["decay"] = 0.2
    assert settings.policy_params == {"decay": 0.9}


def test_from_dict_takes_what_is_missing_from_the_defaults_and_ignores_other_keys():
    defaults = MemorySettings(budget=700, lag=2, policy="window", policy_params={"window": 5})
    header = {"lagmem": 1, "title": "trip", "lag": 6, "low_watermark": 1, "pin_share": 0}
    got = MemorySettings.from_dict(header, defaults=defaults)
    assert got == MemorySettings(
        budget=700, lag=6, policy="window", low_watermark=1.0, pin_share=0.0, policy_params={"window": 5}
    )
    assert type(got.low_watermark) is float and type(got.pin_share) is float  # as a header's 1 and 0 were stored before
    # another policy in the data: the defaults' parameters belong to theirs, not to it
    assert MemorySettings.from_dict({"policy": "measured"}, defaults=defaults).policy_params == {}
    assert MemorySettings.from_dict({}).to_dict() == MemorySettings().to_dict()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"budget": "600"}, "budget must be an integer"),
        ({"budget": True}, "budget must be an integer"),
        ({"low_watermark": 10**400}, "low_watermark must be in"),  # refused by range, before any float()
        ({"pin_share": "half"}, "pin_share must be a number"),
        ({"policy_params": [1]}, "policy_params must be an object"),
        ({"lag": -1}, "lag must be between 0"),
    ],
)
def test_from_dict_refuses_bad_values_with_the_setting_named(data, message):
    with pytest.raises(ValueError, match=message):
        MemorySettings.from_dict(data)


def test_override_keeps_what_is_none_and_drops_parameters_of_a_policy_left_behind():
    base = MemorySettings(budget=500, policy="window", policy_params={"window": 5})
    assert base.override(budget=None, lag=None, policy=None) == base
    assert base.override(budget=90) == MemorySettings(budget=90, policy="window", policy_params={"window": 5})
    assert base.override(policy="window", lag=1).policy_params == {"window": 5}
    assert base.override(policy="measured").policy_params == {}
    assert base.override(policy="accumulate", policy_params={"lag": 2}).policy_params == {"lag": 2}
    with pytest.raises(ValueError, match="unknown setting 'title'"):
        base.override(title="x")
    with pytest.raises(ValueError, match="budget must be a positive number"):
        base.override(budget=0)
