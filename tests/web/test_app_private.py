"""Private conversations in the app: with sign-in configured, each person sees and steers only
their own conversations. ``st.login`` needs a real OIDC provider, so these tests replace the two
functions that read the configuration and the signed-in identity; everything after them (the
scoped store, the pages) is the real code."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from streamlit.testing.v1 import AppTest

from assistant import runtime
from assistant.store import OwnerScope
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from storage.models import Conversation, Turn
from web import signin
from web.text import md_text

APP = str(Path(__file__).parents[2] / "app.py")
INSPECTOR = "pages/inspector_page.py"


@pytest.fixture
def signed_in(monkeypatch, db_url):
    monkeypatch.setenv("LAGMEM_DATABASE_URL", db_url)  # SQLite, or PostgreSQL in the second run
    runtime.get_service(llm=FakeLLM(), embedder=HashEmbedder())
    who = {"user": None}
    monkeypatch.setattr(signin, "auth_configured", lambda: True)
    monkeypatch.setattr(signin, "configured_cookie_secret", lambda: "a" * 43)
    monkeypatch.setattr(signin, "signed_in_user", lambda: who["user"])
    return who


def run(page: str | None = None, conv_id: int | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    if conv_id is not None:
        at.session_state["conv_id"] = conv_id  # a forged selection: must not open someone else's
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def conversations(owner):
    with Session(runtime.get_store().engine) as s:
        return list(s.scalars(select(Conversation).where(Conversation.owner == owner)))


def test_a_visitor_who_is_not_signed_in_sees_only_the_sign_in_button(signed_in):
    at = run()
    assert [b.label for b in at.button] == ["Sign in"]
    assert not at.chat_input
    with Session(runtime.get_store().engine) as s:
        assert s.scalars(select(Conversation)).all() == []  # nothing was created or read


def test_two_users_cannot_see_or_steer_each_others_conversations(signed_in):
    signed_in["user"] = "ana@example.org"
    at = run()
    at.chat_input[0].set_value("Ana's locker code is 4471").run()
    (ana_conv,) = conversations("ana@example.org")

    signed_in["user"] = "bo@example.org"
    at = run(conv_id=ana_conv.id)
    text = " ".join(m.markdown[0].value for m in at.chat_message)
    assert "4471" not in text
    (bo_conv,) = conversations("bo@example.org")  # bo got a conversation of his own
    assert at.session_state["conv_id"] == bo_conv.id
    assert all("4471" not in str(o.value) for o in at.selectbox)
    assert any(f"Signed in as {md_text('bo@example.org')}" in c.value for c in at.caption)

    insp = run(INSPECTOR, conv_id=ana_conv.id)
    assert all("4471" not in str(getattr(e, "value", "")) for e in insp.text)

    # the scoped store bo's pages use refuses ana's conversation outright
    from storage.repo import NotFound

    scoped = OwnerScope(runtime.get_store(), "bo@example.org")
    for act in (
        lambda: scoped.conversation(ana_conv.id),
        lambda: scoped.layer(ana_conv.id),
        lambda: scoped.transaction(ana_conv.id).__enter__(),
        lambda: scoped.delete(ana_conv.id),
    ):
        with pytest.raises(NotFound):
            act()
    with Session(runtime.get_store().engine) as s:
        first = select(Turn.content).where(Turn.conversation_id == ana_conv.id).order_by(Turn.seq)
        assert s.scalars(first).first() == "Ana's locker code is 4471"


def test_who_is_signed_in_is_a_getter_that_fails_closed(monkeypatch):
    """``current_owner`` draws nothing: the sign-in page is ``require_sign_in``'s job. Asked while
    nobody is signed in, it raises instead of answering "nobody" (which would mean everyone's)."""
    monkeypatch.setattr(signin, "auth_configured", lambda: False)
    assert signin.current_owner() is None
    monkeypatch.setattr(signin, "auth_configured", lambda: True)
    monkeypatch.setattr(signin, "configured_cookie_secret", lambda: "a" * 43)
    monkeypatch.setattr(signin, "signed_in_user", lambda: None)
    with pytest.raises(signin.NotSignedIn):
        signin.current_owner()
    monkeypatch.setattr(signin, "signed_in_user", lambda: "ana@example.org")
    assert signin.current_owner() == "ana@example.org"
    signin.require_sign_in()  # signed in: the guard lets the page through


def test_without_sign_in_the_app_refuses_to_run_once_a_conversation_is_private(monkeypatch, db_url):
    monkeypatch.setenv("LAGMEM_DATABASE_URL", db_url)
    svc = runtime.get_service(llm=FakeLLM(), embedder=HashEmbedder())
    svc.store.create("ana's secret plans", owner="ana@example.org")
    for page in (None, INSPECTOR):  # sign-in not configured (say, the secrets file went missing)
        at = run(page)
        assert any("sign-in is not configured" in e.value for e in at.error)
        assert not at.chat_input and "ana's secret plans" not in str(at.sidebar)
