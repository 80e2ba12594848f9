"""The configuration: every setting is read in one place, checked with an error that names it, and
the app and the terminal count tokens for the same model."""

from __future__ import annotations

import json

import pytest

from assistant import config
from assistant.config import VARIABLES, Config, ConfigError, LLMConfig

# A bad value for every variable that is checked, and what the message must say it accepts.
BAD = [
    ("LAGMEM_LLM_TIMEOUT", "abc", "a number of seconds > 0"),
    ("LAGMEM_LLM_TIMEOUT", "0", "a number of seconds > 0"),
    ("LAGMEM_LLM_TIMEOUT", "-3", "a number of seconds > 0"),
    ("LAGMEM_LLM_TIMEOUT", "nan", "a number of seconds > 0"),
    ("LAGMEM_LLM_RETRIES", "two", "a whole number of retries >= 0"),
    ("LAGMEM_LLM_RETRIES", "-1", "a whole number of retries >= 0"),
    ("LAGMEM_LLM_DEADLINE", "0", "a number of seconds > 0"),
    ("LAGMEM_STRUCTURED", "xml", "one of json_schema, json_object_schema, none (or unset)"),
    ("LAGMEM_LLM", "fake", "one of local, openai, compatible (or unset)"),
    ("OPENAI_BASE_URL", "localhost:11434/v1", "an http(s) URL"),
    ("OPENAI_BASE_URL", "ftp://example.org/v1", "an http(s) URL"),
    ("LAGMEM_DATABASE_URL", "lagmem.db", "an SQLAlchemy database URL"),
    ("LAGMEM_LOCAL_MODEL", "/no/such/model.gguf", "a GGUF model file"),
    ("LAGMEM_LOCAL_N_CTX", "4k", "a whole number of tokens >= 1"),
    ("LAGMEM_LOCAL_N_CTX", "0", "a whole number of tokens >= 1"),
    ("LAGMEM_LOCAL_THREADS", "0", "a whole number of threads >= 1"),
    ("LAGMEM_EMBED_THREADS", "-1", "a whole number of threads (0: torch's default) >= 0"),
    ("LAGMEM_DATA_DIR", "{file}", "a directory"),
    ("TIKTOKEN_CACHE_DIR", "{file}", "a directory"),
]
FREE_TEXT = {"OPENAI_API_KEY", "LAGMEM_MODEL"}  # any non-empty value is a valid key or model name


@pytest.mark.parametrize("name,value,accepts", BAD)
def test_a_bad_value_is_refused_with_the_variables_name(tmp_path, name, value, accepts):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    value = value.format(file=a_file)
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"} if name.startswith("LAGMEM_LLM") else {}
    env[name] = value
    with pytest.raises(ConfigError) as info:
        Config.from_env(env)
    message = str(info.value)
    assert message.startswith(f"{name} must be {accepts}") and f", got {value!r}" in message
    assert info.value.variable == name


def test_the_timeout_message_reads_as_the_issue_asks():
    with pytest.raises(ConfigError) as info:
        Config.from_env({"LAGMEM_LLM_TIMEOUT": "abc"})
    assert str(info.value) == "LAGMEM_LLM_TIMEOUT must be a number of seconds > 0, got 'abc'"


def test_every_checked_variable_has_a_bad_value_above():
    assert set(VARIABLES) - FREE_TEXT == {name for name, _, _ in BAD}


def test_empty_and_blank_values_count_as_unset():
    assert Config.from_env({name: "" for name in VARIABLES}) == Config.from_env({})
    assert Config.from_env({name: "  " for name in VARIABLES}) == Config.from_env({})


def test_good_values_are_read(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"gguf")
    cfg = Config.from_env(
        {
            "LAGMEM_DATA_DIR": str(tmp_path / "data"),
            "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1",
            "LAGMEM_MODEL": "llama3.1",
            "LAGMEM_LLM_TIMEOUT": "2.5",
            "LAGMEM_LLM_RETRIES": "0",
            "LAGMEM_STRUCTURED": "json_object_schema",
            "LAGMEM_LOCAL_MODEL": str(model),
            "LAGMEM_LOCAL_N_CTX": "2048",
            "LAGMEM_LOCAL_THREADS": "3",
            "LAGMEM_EMBED_THREADS": "0",
        }
    )
    assert cfg.llm == LLMConfig(
        backend="compatible",
        base_url="http://127.0.0.1:8080/v1",
        model="llama3.1",
        timeout=2.5,
        max_retries=0,
        structured="json_object_schema",
    )
    assert (cfg.local.model_path, cfg.local.n_ctx, cfg.local.threads) == (model, 2048, 3)
    assert cfg.embed_threads == 0


def test_one_setting_moves_all_state(tmp_path):
    cfg = Config.from_env({"LAGMEM_DATA_DIR": str(tmp_path / "here")})
    assert cfg.data_dir == tmp_path / "here"
    assert cfg.database_url == f"sqlite:///{tmp_path / 'here' / 'lagmem.db'}"
    assert cfg.tiktoken_cache_dir == tmp_path / "here" / "tiktoken"
    cfg = Config.from_env(
        {
            "LAGMEM_DATA_DIR": str(tmp_path / "here"),
            "LAGMEM_DATABASE_URL": "sqlite:///elsewhere.db",
            "TIKTOKEN_CACHE_DIR": str(tmp_path / "tk"),
        }
    )
    assert (cfg.database_url, cfg.tiktoken_cache_dir) == ("sqlite:///elsewhere.db", tmp_path / "tk")


def test_the_model_name_is_resolved_once_by_backend():
    assert Config.from_env({}).llm.model == config.LOCAL_MODEL_ALIAS
    assert Config.from_env({"OPENAI_API_KEY": "sk-x"}).llm.model == config.DEFAULT_OPENAI_MODEL
    # a compatible server with no LAGMEM_MODEL: none yet, the client asks the server
    assert Config.from_env({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}).llm.model is None
    forced = Config.from_env({"OPENAI_API_KEY": "sk-x", "LAGMEM_LLM": "LOCAL"}).llm
    assert (forced.backend, forced.api_key, forced.model) == ("local", None, config.LOCAL_MODEL_ALIAS)


def test_current_follows_the_environment_and_is_built_once(monkeypatch, tmp_path):
    monkeypatch.setenv("LAGMEM_DATA_DIR", str(tmp_path / "a"))
    first = config.current()
    assert config.current() is first and first.data_dir == tmp_path / "a"
    monkeypatch.setenv("LAGMEM_DATA_DIR", str(tmp_path / "b"))
    assert config.current().data_dir == tmp_path / "b"
    assert config.default_url() == f"sqlite:///{tmp_path / 'b' / 'lagmem.db'}"
    monkeypatch.setenv("LAGMEM_LLM_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="LAGMEM_LLM_TIMEOUT"):
        LLMConfig.from_env()


def test_base_url_alone_counts_tokens_for_the_model_that_answers(fake_openai, monkeypatch, tmp_path):
    """With only OPENAI_BASE_URL set, the app's runtime, the terminal commands and the client
    agree on the model: the one the server lists first, not a default name."""
    from assistant import runtime
    from assistant.models.tokens import make_token_counter
    from bench.fakes.embedder import HashEmbedder
    from cli import main as cli

    fake_openai.models = ["vendor/chat-model", "gpt-4o-mini"]
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    svc = runtime.get_service(f"sqlite:///{tmp_path / 'app.db'}", embedder=HashEmbedder())
    assert svc.llm.model == "vendor/chat-model"
    assert svc.counter.model == "vendor/chat-model" and not svc.counter.exact
    assert cli._counter().model == "vendor/chat-model"

    # what `lagmem import` stores is priced like the app prices it
    text = "Numbers like 1234567 and émojis 🍣 split differently under o200k and cl100k."
    saved = tmp_path / "c.jsonl"
    saved.write_text(json.dumps({"role": "user", "content": text}) + "\n")
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert cli.main(["import", str(saved), "--db", url]) == 0
    stored = runtime.get_store(url).layer(1).turns()[0].tokens
    assert stored == svc.counter.count(text) != make_token_counter("gpt-4o-mini").count(text)


def test_the_readme_lists_every_variable():
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    table = [line for line in readme.splitlines() if line.startswith("| `")]
    assert {name for name in VARIABLES if not any(f"`{name}`" in row for row in table)} == set()


def test_the_terminal_says_which_setting_is_wrong(monkeypatch):
    from pathlib import Path

    from cli import main as cli

    monkeypatch.setenv("LAGMEM_LLM_TIMEOUT", "abc")
    saved = Path(__file__).parents[1] / "conversations" / "pins.jsonl"
    with pytest.raises(SystemExit) as info:
        cli.main(["replay", str(saved)])
    assert str(info.value.code) == "lagmem: LAGMEM_LLM_TIMEOUT must be a number of seconds > 0, got 'abc'"
