"""Which LLM client the environment configures: nothing set means the embedded model, a key alone
means OpenAI, a base URL decides between OpenAI and a compatible server; empty strings count as unset."""

from __future__ import annotations

import pytest

from assistant.errors import NoAPIKey
from assistant.models.llm import LLMClient, LLMConfig, make_llm
from bench.fakes.llm import FakeLLM
from tests.models.test_llm import MESSAGES


@pytest.fixture
def clean_env(monkeypatch):
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "LAGMEM_MODEL",
        "LAGMEM_LLM",
        "LAGMEM_STRUCTURED",
        "LAGMEM_LLM_TIMEOUT",
        "LAGMEM_LLM_RETRIES",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_nothing_configured_means_embedded_local_model(clean_env):
    cfg = LLMConfig.from_env()
    assert cfg.backend == "local" and cfg.api_key is None and cfg.base_url is None
    client = make_llm(cfg)  # cheap: the server starts on first request, not here
    assert client.backend == "local"
    assert client.structured == "json_object_schema"
    assert client.model


def test_empty_strings_count_as_unset(clean_env):
    clean_env.setenv("OPENAI_API_KEY", "")
    clean_env.setenv("OPENAI_BASE_URL", "  ")
    assert LLMConfig.from_env().backend == "local"


def test_key_alone_means_openai_with_default_model(clean_env):
    clean_env.setenv("OPENAI_API_KEY", "sk-x")
    cfg = LLMConfig.from_env()
    assert (cfg.backend, cfg.base_url) == ("openai", None)
    client = make_llm(cfg)
    assert client.structured == "json_schema" and client.model


@pytest.mark.parametrize(
    "url,backend",
    [
        ("http://127.0.0.1:11434/v1", "compatible"),
        ("https://api.openai.com/v1", "openai"),
    ],
)
def test_base_url_decides_backend(clean_env, url, backend):
    clean_env.setenv("OPENAI_BASE_URL", url)
    clean_env.setenv("LAGMEM_MODEL", "m")
    cfg = LLMConfig.from_env()
    assert cfg.backend == backend and cfg.model == "m"
    expected = "none" if backend == "compatible" else "json_schema"
    assert make_llm(cfg).structured == expected


def test_structured_mode_can_be_declared_for_a_compatible_server(clean_env):
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    clean_env.setenv("LAGMEM_STRUCTURED", "json_object_schema")
    assert make_llm().structured == "json_object_schema"


def test_lagmem_llm_forces_local(clean_env):
    clean_env.setenv("OPENAI_API_KEY", "sk-x")
    clean_env.setenv("LAGMEM_LLM", "local")
    assert make_llm().backend == "local"
    for bogus in ("bogus", "fake"):  # the scripted fake is injected by tests, never configured
        clean_env.setenv("LAGMEM_LLM", bogus)
        with pytest.raises(ValueError):
            LLMConfig.from_env()


def test_make_llm_passes_an_injected_client_through():
    fake = FakeLLM()
    assert make_llm(fake) is fake


def test_openai_backend_without_key_is_no_api_key():
    client = LLMClient(LLMConfig(backend="openai", model="gpt-4o-mini"))
    with pytest.raises(NoAPIKey, match="OPENAI_API_KEY"):
        client.complete(MESSAGES)
