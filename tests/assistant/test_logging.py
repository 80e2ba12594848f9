"""A failure the exchange or the page survives is logged, not swallowed (stdlib ``logging``, a
logger per module): its cause at warning, the exchange or the page going on. The terminal logs to standard error (warnings by
default, ``-v`` more); the app logs through Streamlit's own logging setup."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from assistant import runtime
from assistant.replay import replay, settings_from
from assistant.service import ChatService
from assistant.store import MemoryStore
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from memory import transcript as T
from memory.types import MemorySettings
from storage.db import make_engine
from tests.conftest import read_only_url

ROOT = Path(__file__).parents[2]


def test_vectors_that_cannot_be_stored_are_logged_and_the_exchange_reads_on(
    db_url, counter, caplog, monkeypatch, tmp_path
):
    """Imported turns have no vectors; the first exchange embeds them and stores them. On a
    read-only database the store fails: the turns are still read (vectors kept in memory) and the
    failure is logged with its cause."""
    store = MemoryStore(make_engine(db_url))
    text = "\n".join(
        json.dumps({"role": r, "content": f"turn {i} about lisbon"}) for i, r in enumerate(["user", "assistant"] * 3)
    )
    t = T.parse(text + "\n")
    conv = replay(store, t, counter, settings_from(t.header), atomic=True).conversation_id
    store.engine.dispose()

    monkeypatch.chdir(tmp_path)
    ro = ChatService(MemoryStore(make_engine(read_only_url(db_url), migrate=False)), FakeLLM(), HashEmbedder(), counter)
    with caplog.at_level(logging.WARNING, logger="assistant.candidates"):
        active, evicted, _ = ro._memory_turns(conv, exclude=0)
    assert len(active) + len(evicted) == 6 and all(c.vector is not None for c in active)
    [record] = [r for r in caplog.records if r.name == "assistant.candidates"]
    assert record.levelno == logging.WARNING
    assert f"conversation {conv}: 6 turn vectors not stored" in record.getMessage()
    assert "read-only" in record.getMessage()  # the cause
    ro.store.engine.dispose()


def test_a_bad_model_setting_when_the_store_opens_is_logged(db_url, caplog, monkeypatch):
    monkeypatch.setenv("LAGMEM_LLM_TIMEOUT", "abc")
    with caplog.at_level(logging.WARNING, logger="assistant.runtime"):
        store = runtime.get_store(db_url)
    assert store.default_settings.budget == MemorySettings().budget  # the memory's own default
    messages = [r.getMessage() for r in caplog.records if r.name == "assistant.runtime"]
    assert any("LAGMEM_LLM_TIMEOUT must be a number of seconds > 0" in m for m in messages), messages


def test_the_embedded_server_failing_to_warm_up_is_logged(db_url, caplog, monkeypatch, tmp_path):
    """The app starts the embedded model's server while the page loads; when it cannot start,
    the first answer will say so with a Retry, and the cause is logged now."""
    from web.loading import _Loading

    junk = tmp_path / "broken.gguf"
    junk.write_bytes(b"not a gguf file")
    monkeypatch.setenv("LAGMEM_LOCAL_MODEL", str(junk))
    runtime.get_service(db_url, embedder=HashEmbedder())  # the embedded model's profile; no torch
    with caplog.at_level(logging.WARNING, logger="web.loading"):
        loading = _Loading(db_url)
        assert loading.ready.wait(120)
    assert loading.service is not None and loading.error is None
    [record] = [r for r in caplog.records if r.name == "web.loading"]
    assert record.levelno == logging.WARNING
    assert "did not start ahead of the first answer" in record.getMessage()
    assert "exited with code" in record.getMessage()  # the server's own failure


def test_the_app_logs_through_streamlits_setup_and_still_propagates(caplog):
    from streamlit import logger as st_logger

    from web.loading import log_through_streamlit

    log_through_streamlit()
    ours = logging.getLogger("assistant")
    assert getattr(ours, "streamlit_console_handler", None) in ours.handlers
    assert ours.propagate  # pytest's capture (or any root handler) still hears our modules
    assert st_logger.get_logger("assistant") is ours
    with caplog.at_level(logging.WARNING, logger="assistant.service"):
        logging.getLogger("assistant.service").warning("heard")
    assert [r.getMessage() for r in caplog.records] == ["heard"]


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True, cwd=ROOT, env=env)


def test_the_terminal_logs_warnings_by_default_and_more_with_v(tmp_path):
    saved = tmp_path / "c.jsonl"
    saved.write_text(json.dumps({"role": "user", "content": "my cat is Miso"}) + "\n", encoding="utf-8")
    quiet = _cli("import", str(saved), "--db", f"sqlite:///{tmp_path / 'a.db'}")
    assert quiet.returncode == 0, quiet.stderr
    assert "INFO" not in quiet.stderr
    told = _cli("-v", "import", str(saved), "--db", f"sqlite:///{tmp_path / 'b.db'}")
    assert told.returncode == 0, told.stderr
    assert (
        "lagmem: INFO assistant.models.embedded: counting tokens with SmolLM2-135M-Instruct's own tokenizer"
        in told.stderr
    )
    assert "imported 1 turns" in told.stdout  # stdout stays the command's output
