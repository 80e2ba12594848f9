"""Shared fixtures. One setting moves all state: every test gets its own data dir and database,
so no test ever touches a user's files. ``LAGMEM_TEST_DATABASE_URL`` (a PostgreSQL server URL)
runs the database tests against PostgreSQL too, each test in a fresh database."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.fakes.openai_http import FakeOpenAI

CONVERSATIONS = Path(__file__).parent / "conversations"
# The saved conversations' checked-in timelines (and the ``counter`` fixture) price turns with
# tiktoken's cl100k_base, and the terminal prices turns with the model in use: a `lagmem` run
# compared with them names a model tiktoken counts in cl100k (no request is sent to it).
CL100K_MODEL_ENV = {"OPENAI_API_KEY": "sk-test", "LAGMEM_MODEL": "gpt-4"}
pytest_plugins = ["assistant.testing.plugin"]


@pytest.fixture(scope="session")
def tiktoken_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tiktoken")


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path, monkeypatch, tiktoken_cache):
    monkeypatch.setenv("LAGMEM_DATA_DIR", str(tmp_path / "lagmem-data"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tiktoken_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("LAGMEM_DATABASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "LAGMEM_MODEL", "LAGMEM_LLM"):
        monkeypatch.delenv(name, raising=False)


def _postgres_url(base: str) -> str:
    """Create a fresh database on the server at ``base`` and return its URL."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"lagmem_t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(base).set(database=name).render_as_string(hide_password=False)


def backends() -> list[str]:
    """SQLite by default; only PostgreSQL when LAGMEM_TEST_DATABASE_URL is set (scripts/test.sh
    runs the suite a second time that way, keeping just the tests that touch a database)."""
    return ["postgresql"] if os.environ.get("LAGMEM_TEST_DATABASE_URL") else ["sqlite"]


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("LAGMEM_TEST_DATABASE_URL"):
        return
    keep = [i for i in items if "db_url" in getattr(i, "fixturenames", ())]
    config.hook.pytest_deselected(items=[i for i in items if i not in keep])
    items[:] = keep


def fresh_db_url(tmp_path: Path, name: str = "test") -> str:
    """Another fresh, empty database on the backend under test (for tests that need several)."""
    if backends() == ["sqlite"]:
        return f"sqlite:///{tmp_path / f'{name}.db'}"
    return _postgres_url(os.environ["LAGMEM_TEST_DATABASE_URL"])


def count_rows(store, model, **where) -> int:
    """How many rows of ``model`` the store's database holds with these column values."""
    from sqlalchemy import func, select

    with store.engine.connect() as c:
        q = select(func.count()).select_from(model)
        for k, v in where.items():
            q = q.where(getattr(model, k) == v)
        return c.execute(q).scalar_one()


def read_only_url(db_url: str) -> str:
    """The same database, opened read-only (SQLite's ``mode=ro``; PostgreSQL's read-only transactions)."""
    from sqlalchemy.engine import make_url

    url = make_url(db_url)
    if url.get_backend_name() == "sqlite":
        return f"sqlite:///file:{url.database}?mode=ro&uri=true"
    return url.update_query_dict({"options": "-c default_transaction_read_only=on"}).render_as_string(
        hide_password=False
    )


@pytest.fixture(params=backends())
def db_url(request, tmp_path) -> str:
    """A fresh, empty database URL: SQLite always; PostgreSQL when LAGMEM_TEST_DATABASE_URL is set."""
    return fresh_db_url(tmp_path)


@pytest.fixture
def engine(db_url):
    from storage.db import make_engine

    eng = make_engine(db_url)
    yield eng
    eng.dispose()


@pytest.fixture
def store(engine):
    from assistant.store import MemoryStore

    return MemoryStore(engine)


@pytest.fixture(scope="session")
def counter():
    from assistant.models.tokens import make_token_counter

    return make_token_counter(None)


# the local HTTP fake of the OpenAI API (bench/fakes/openai_http.py)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fresh fake OpenAI server for one test."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def openai_env(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    """The environment a user would set to point lagmem at this server (a compatible backend),
    with a short timeout and fast retries so error tests stay quick."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    monkeypatch.setenv("LAGMEM_MODEL", "fake-model")
    monkeypatch.setenv("LAGMEM_LLM_TIMEOUT", "1.0")
    monkeypatch.delenv("LAGMEM_LLM", raising=False)
    monkeypatch.delenv("LAGMEM_STRUCTURED", raising=False)
    return fake_openai
