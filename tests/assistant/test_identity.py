"""Who a sign-in is: a verified email (lower-cased) or the provider's issuer + subject, else refused;
the same owner from the CLI's ``--user``; owners stored before the rule lower-cased by migration 0006,
so nobody loses a conversation to a capital letter."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session
from streamlit.testing.v1 import AppTest

from assistant import runtime
from assistant.identity import SignInRefused, normal_owner, owner_from_claims
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from storage.db import current_revision, make_engine, upgrade
from storage.models import Conversation
from web import signin

APP = str(Path(__file__).parents[2] / "app.py")
GOOGLE = "https://accounts.google.com"


def test_a_verified_email_is_the_owner_stripped_and_lower_cased():
    assert (
        owner_from_claims({"email": "ana@example.org", "email_verified": True, "iss": GOOGLE, "sub": "1"})
        == "ana@example.org"
    )
    assert owner_from_claims({"email": " Ana@Example.ORG ", "email_verified": True}) == "ana@example.org"
    assert owner_from_claims({"email": "ANA@EXAMPLE.ORG", "email_verified": "true"}) == "ana@example.org"


def test_an_unverified_or_missing_email_falls_back_to_issuer_and_subject():
    for claims in (
        {"email": "ana@example.org", "email_verified": False, "iss": GOOGLE, "sub": "1098Ab"},
        {"email": "ana@example.org", "iss": GOOGLE, "sub": "1098Ab"},  # not said: not verified
        {"email": "ana@example.org", "email_verified": "false", "iss": GOOGLE, "sub": "1098Ab"},
        {"email": "not an email", "email_verified": True, "iss": GOOGLE, "sub": "1098Ab"},
        {"iss": GOOGLE, "sub": "1098Ab"},
    ):
        assert owner_from_claims(claims) == f"{GOOGLE}#1098Ab", claims  # the subject keeps its case
    # Google also issues tokens with a bare host as ``iss``: the same issuer, the same owner
    assert owner_from_claims({"iss": "accounts.google.com", "sub": "1098Ab"}) == f"{GOOGLE}#1098Ab"


@pytest.mark.parametrize(
    "claims",
    [
        {},
        {"email": "ana@example.org"},
        {"email": "ana@example.org", "email_verified": False, "sub": "1"},
        {"sub": "1"},
        {"iss": GOOGLE},
        {"iss": GOOGLE, "sub": "   "},
        {"email": "", "email_verified": True, "iss": "", "sub": ""},
        {"iss": GOOGLE, "sub": "x" * 400},
    ],
)
def test_claims_that_name_nobody_usable_refuse_the_sign_in(claims):
    with pytest.raises(SignInRefused) as err:
        owner_from_claims(claims)
    assert str(err.value)


def test_the_cli_user_is_the_same_owner_as_the_signed_in_email():
    assert normal_owner(" Ana@Example.org ") == owner_from_claims({"email": "ana@example.org", "email_verified": True})
    assert normal_owner(" Bob ") == "Bob"  # a name or a bare subject keeps its case
    assert normal_owner("AbC123") == "AbC123"
    assert normal_owner(f"{GOOGLE}#1098Ab") == f"{GOOGLE}#1098Ab"
    with pytest.raises(ValueError):
        normal_owner("  ")


def test_cli_user_flag_finds_the_lower_cased_owner(db_url, capsys):
    from assistant.store import open_store
    from cli.main import main

    store = open_store(db_url)
    conv = store.create("ana's notes", owner="ana@example.org")
    store.close()
    main(["list", "--db", db_url, "--user", "ANA@example.org"])
    assert f"{conv:>5}  ana's notes" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["list", "--db", db_url, "--user", " "])


def test_cli_chat_with_user_opens_the_owners_conversation(db_url, capsys, monkeypatch):
    from assistant.store import open_store
    from cli.main import main

    store = open_store(db_url)
    conv = store.create("ana's notes", owner="ana@example.org")
    store.close()
    runtime.get_service(db_url, llm=FakeLLM(), embedder=HashEmbedder())
    lines = iter(["/quit"])
    monkeypatch.setattr("builtins.input", lambda _prompt="": next(lines))
    assert main(["chat", "--db", db_url, "--user", "Ana@Example.org"]) == 0
    assert f"conversation {conv}: ana's notes" in capsys.readouterr().out


class FakeUser(dict):
    """``st.user`` as Streamlit builds it from the provider's ID token: a mapping of its claims."""

    is_logged_in = True


@pytest.fixture
def claims(monkeypatch, db_url):
    import streamlit as st

    monkeypatch.setenv("LAGMEM_DATABASE_URL", db_url)
    runtime.get_service(llm=FakeLLM(), embedder=HashEmbedder())
    monkeypatch.setattr(signin, "auth_configured", lambda: True)
    monkeypatch.setattr(signin, "configured_cookie_secret", lambda: "a" * 43)
    user = FakeUser()
    monkeypatch.setattr(st, "user", user)
    return user


def test_the_page_refuses_a_sign_in_without_a_usable_identity_and_reads_nothing(claims):
    runtime.get_store().create("ana's secret plans", owner="ana@example.org")
    claims.update(email="ana@example.org", email_verified=False)  # anyone could have typed it
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    assert any("not verified" in e.value for e in at.error)
    assert [b.label for b in at.button] == ["Sign out"]
    assert not at.chat_input and "secret plans" not in str(at.sidebar)


def test_a_mixed_case_verified_email_opens_the_owners_conversations(claims):
    conv = runtime.get_store().create("ana's secret plans", owner="ana@example.org")
    claims.update(email="Ana@Example.org", email_verified=True, iss=GOOGLE, sub="1098Ab")
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception, at.exception
    assert at.session_state["conv_id"] == conv
    assert "secret plans" in str(at.sidebar)


def test_migration_0006_lower_cases_email_owners_and_keeps_subjects(db_url):
    engine = make_engine(db_url, migrate=False)
    upgrade(engine, "0005")
    owners = ["Ana@Example.org", "ana@example.org", " Cy@Example.ORG ", "AbC123", "Bob", f"{GOOGLE}#1098Ab", None, " "]
    with engine.begin() as con:
        for i, owner in enumerate(owners, 1):
            con.execute(
                text(
                    "INSERT INTO conversations (id, title, created_at, updated_at, budget, lag, policy, low_watermark, pin_share,"
                    " policy_params, step, version, dropped_cites, auto_restore, owner, pending) VALUES (:id, 'c', :when, :when,"
                    " 50, 1, 'measured', 1.0, 0.5, '{}', 0, 1, 0, :no, :owner, :no)"
                ),
                {"id": i, "when": "2026-01-01 00:00:00", "no": False, "owner": owner},
            )
    engine.dispose()
    engine = make_engine(db_url)
    assert current_revision(engine) == "0008"
    with Session(engine) as s:
        got = [c.owner for c in s.scalars(select(Conversation).order_by(Conversation.id))]
    assert got == [
        "ana@example.org",
        "ana@example.org",
        "cy@example.org",
        "AbC123",
        "Bob",
        f"{GOOGLE}#1098Ab",
        None,
        " ",
    ]
    engine.dispose()


def test_claim_from_moves_a_conversation_from_the_owner_it_names_only(db_url, capsys):
    """Conversations stored under a bare subject (or an email the provider does not verify) are not
    given to the ``ISSUER#SUBJECT`` owner by themselves; the operator moves them, naming the owner."""
    from assistant.store import open_store
    from cli.main import main

    store = open_store(db_url)
    conv = store.create("old", owner="1098Ab")
    subject = f"{GOOGLE}#1098Ab"
    with pytest.raises(SystemExit, match="already has an owner"):
        main(["claim", str(conv), "--user", subject, "--db", db_url])
    with pytest.raises(SystemExit, match="other than eve"):
        main(["claim", str(conv), "--user", subject, "--from", "eve", "--db", db_url])
    assert store.conversation(conv, owner="1098Ab").owner == "1098Ab"
    assert main(["claim", str(conv), "--user", subject, "--from", "1098Ab", "--db", db_url]) == 0
    assert store.conversation(conv, owner=subject).title == "old"
    store.close()
    capsys.readouterr()
