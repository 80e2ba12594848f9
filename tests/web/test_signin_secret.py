"""Sign-in refuses to run on a cookie secret anyone could know: the identity cookie it signs would
be forgeable. The app is driven with real secrets (``at.secrets``), nothing of sign-in replaced."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from streamlit.testing.v1 import AppTest

from assistant import runtime
from assistant.identity import MIN_COOKIE_SECRET_BYTES, cookie_secret_problem
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from storage.models import Conversation

ROOT = Path(__file__).parents[2]
APP = str(ROOT / "app.py")
AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "client_id": "lagmem",
    "client_secret": "s",
    "server_metadata_url": "https://accounts.example.com/.well-known/openid-configuration",
}


@pytest.mark.parametrize(
    "secret, why",
    [
        (None, "without a cookie_secret"),
        ("", "without a cookie_secret"),
        ("a long random string", "public example"),
        (" a long random string ", "public example"),
        ("x" * (MIN_COOKIE_SECRET_BYTES - 1), f"at least {MIN_COOKIE_SECRET_BYTES}"),
        ("é" * 15, "30 bytes"),  # bytes, not characters
    ],
)
def test_a_missing_short_or_public_cookie_secret_is_refused(secret, why):
    problem = cookie_secret_problem(secret)
    assert problem and why in problem and "token_urlsafe(32)" in problem


def test_a_random_cookie_secret_is_accepted():
    assert cookie_secret_problem(secrets.token_urlsafe(32)) is None
    assert cookie_secret_problem("é" * 16) is None


def run_with(cookie_secret: str, monkeypatch, db_url) -> AppTest:
    monkeypatch.setenv("LAGMEM_DATABASE_URL", db_url)
    runtime.get_service(llm=FakeLLM(), embedder=HashEmbedder())
    at = AppTest.from_file(APP, default_timeout=30)
    at.secrets["auth"] = {**AUTH, "cookie_secret": cookie_secret}
    at.user = {"is_logged_in": False}  # a visitor (AppTest reads st.user from here)
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_app_turns_sign_in_off_with_the_docs_example_secret(monkeypatch, db_url):
    at = run_with("a long random string", monkeypatch, db_url)
    assert any("Sign-in is turned off" in e.value and "public example" in e.value for e in at.error)
    assert not at.button and not at.chat_input  # no sign-in button, nothing of anyone's
    with Session(runtime.get_store().engine) as s:
        assert s.scalars(select(Conversation)).all() == []


def test_the_app_offers_sign_in_with_a_good_secret(monkeypatch, db_url):
    at = run_with(secrets.token_urlsafe(32), monkeypatch, db_url)
    assert not at.error
    assert [b.label for b in at.button] == ["Sign in"]


def test_the_secrets_file_is_never_committed_and_the_server_listens_locally():
    assert ".streamlit/secrets.toml" in (ROOT / ".gitignore").read_text().split()
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
