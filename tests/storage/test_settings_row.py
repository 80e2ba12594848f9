"""A conversation's settings go through the database and a saved file and come back the same:
the row's columns, the header and the settings are written by ``MemorySettings.to_dict`` and read
by ``MemorySettings.from_dict`` (SQLite always, PostgreSQL when configured)."""

from __future__ import annotations

from assistant.replay import export_transcript, replay, settings_from
from memory import transcript as T
from memory.types import MemorySettings

WINDOW = MemorySettings(
    budget=333, lag=2, policy="window", low_watermark=0.75, pin_share=0.25, policy_params={"window": 7}
)


def test_settings_survive_the_row_an_update_and_a_saved_file(store, counter):
    conv = store.create("settings", WINDOW)
    assert store.layer(conv).settings == WINDOW
    changed = WINDOW.override(budget=200, policy="measured", policy_params={"decay": 0.9, "need_size_power": 0.5})
    store.update_settings(conv, changed)
    assert store.layer(conv).settings == changed
    store.update_settings(conv, changed.override(policy="fifo"))
    assert store.layer(conv).settings.policy_params == {}

    store.update_settings(conv, changed)
    text = export_transcript(store, conv)
    header = T.parse(text).header
    assert {
        k: header[k] for k in ("budget", "lag", "policy", "low_watermark", "pin_share", "policy_params")
    } == changed.to_dict()
    copy = replay(store, T.parse(text), counter, settings_from(T.parse(text).header), atomic=True).conversation_id
    assert store.layer(copy).settings == changed


def test_an_export_names_parameters_only_when_some_are_set(store):
    conv = store.create("plain", MemorySettings(budget=90))
    header = T.parse(export_transcript(store, conv)).header
    assert header == {
        "lagmem": 1,
        "title": "plain",
        "budget": 90,
        "lag": MemorySettings().lag,
        "policy": "measured",
        "low_watermark": 1.0,
        "pin_share": 0.5,
    }
