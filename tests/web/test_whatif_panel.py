"""The inspector's What if panel, headless (AppTest), on a stored conversation imported from a saved
file, with the scripted fake model and hash embeddings injected (nothing here asks a model)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from assistant import runtime
from assistant.replay import replay, settings_from
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from memory import transcript as T
from memory.policies import POLICIES
from tests.conftest import CONVERSATIONS
from tests.web.test_app import APP, INSPECTOR, TIMEOUT


@pytest.fixture
def conv(monkeypatch, db_url, counter):
    monkeypatch.setenv("LAGMEM_DATABASE_URL", db_url)
    svc = runtime.get_service(llm=FakeLLM(), embedder=HashEmbedder())
    t = T.parse((CONVERSATIONS / "long_520.jsonl").read_text(encoding="utf-8"))
    conv_id = replay(svc.store, t, counter, settings_from(t.header), atomic=True).conversation_id
    return svc, conv_id


def open_panel(conv_id: int) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page(INSPECTOR).run()
    assert not at.exception, at.exception
    assert at.session_state["conv_id"] == conv_id
    at.toggle(key=f"whatif-on-{conv_id}").set_value(True).run()
    assert not at.exception, at.exception
    return at


def frame(at: AppTest, *columns: str):
    """The first table on the page with these columns."""
    return next(d.value for d in at.dataframe if set(columns) <= set(d.value.columns))


def test_the_panel_is_off_until_asked(conv):
    svc, conv_id = conv
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page(INSPECTOR).run()
    assert "What if" not in [s.value for s in at.subheader]
    assert at.toggle(key=f"whatif-on-{conv_id}").value is False


def test_whatif_shows_both_memories_misses_and_the_policy_table(conv):
    svc, conv_id = conv
    at = open_panel(conv_id)
    assert "What if" in [s.value for s in at.subheader]
    at.selectbox(key=f"whatif-policy-{conv_id}").set_value("fifo").run()
    at.number_input(key=f"whatif-budget-{conv_id}").set_value(700).run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    now = svc.store.layer(conv_id).snapshot()
    assert metrics["In memory now"] == f"{len(now.active)} turns"
    assert int(metrics["What-if misses"].replace(",", "")) > 0  # fifo at 700 tokens forgets cited facts
    compare = frame(at, "policy", "misses", "best")
    assert list(compare["policy"]) == list(POLICIES)  # every policy the sidebar offers, in its order
    best = compare[compare["best"] == "★"]
    assert len(best) >= 1 and best["misses"].max() == compare["misses"].min()
    assert any("judged with hindsight" in c.value.lower() for c in at.caption)
    assert svc.store.conversation(conv_id).budget == 900  # looking writes nothing


def test_apply_these_settings_stores_them_with_eviction_records(conv):
    svc, conv_id = conv
    at = open_panel(conv_id)
    before = len(svc.store.layer(conv_id).snapshot().evicted)
    at.selectbox(key=f"whatif-policy-{conv_id}").set_value("lru").run()
    at.number_input(key=f"whatif-budget-{conv_id}").set_value(500).run()
    at.button(key=f"whatif-apply-{conv_id}").click().run()
    assert not at.exception, at.exception
    c = svc.store.conversation(conv_id)
    assert (c.policy, c.budget, c.lag) == ("lru", 500, 6)
    snap = svc.store.layer(conv_id).snapshot()
    assert snap.used_tokens <= 500 and len(snap.evicted) > before
    assert any("Applied: policy lru, budget 500" in s.value for s in at.success)


def test_the_inspector_says_how_tokens_are_counted(conv):
    svc, conv_id = conv
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page(INSPECTOR).run()
    for _ in range(5):  # the page's service loads in a background thread: a rerun or two
        notes = [c.value for c in at.caption if c.value.startswith("Token counts:")]
        if notes:
            break
        at.run()
    assert notes == [f"Token counts: {svc.counter.describe()}."]
    assert "estimated" in notes[0]  # the scripted fake has no tokenizer of its own


def test_a_long_replay_shows_a_progress_bar(conv, monkeypatch):
    from web import whatif_panel

    shown = []
    real = whatif_panel.st.progress

    def spy(value, text=None):
        shown.append(text)
        return real(value, text=text)

    monkeypatch.setattr(whatif_panel, "SLOW_STEPS", 100)  # the saved conversation has 520 steps
    monkeypatch.setattr(whatif_panel.st, "progress", spy)
    svc, conv_id = conv
    open_panel(conv_id)
    assert "Replaying 520 steps under measured…" in shown and "Replaying 520 steps under every policy…" in shown
