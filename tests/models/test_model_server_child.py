"""How the embedded model server's process is started, without the model: the real start-up code
(``local_model.start_server``, the ``--child`` entry point, its socket and environment) runs a
stand-in server module (``bench.fakes.model_server``) in place of llama-cpp-python's.

The real server goes through the same code in tests/models/test_local_model.py (marked llm)."""

from __future__ import annotations

import json
import socket
import urllib.request

import pytest

from assistant.errors import ServerUnreachable
from assistant.models import local_model

FAKE = "bench.fakes.model_server"


@pytest.fixture
def gguf(tmp_path, monkeypatch):
    def make(name: str = "model.gguf"):
        path = tmp_path / name
        path.write_bytes(b"GGUF")  # only its name is read by the stand-in
        monkeypatch.setenv("LAGMEM_LOCAL_MODEL", str(path))
        return path

    return make


def _get(url: str) -> dict:
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=5) as resp:
        return json.loads(resp.read())


def test_the_child_binds_its_own_port_and_reports_it(gguf):
    gguf()
    server = local_model.start_server(deadline=30, server_module=FAKE)
    try:
        args = server.process.args
        assert args[args.index("--port") + 1] == "0"  # the parent never picks (and releases) a port
        assert server.port > 0 and server.serves_our_model()
        # the port is held by the child: binding it again fails
        with socket.socket() as s, pytest.raises(OSError):
            s.bind(("127.0.0.1", server.port))
    finally:
        server.stop()
    assert not server.log_path.exists() and not server.port_file.exists()


def test_a_server_listing_another_model_is_not_taken_for_ours(gguf):
    gguf("impostor.gguf")
    with pytest.raises(ServerUnreachable, match="answered without listing 'local-smollm2'|without listing"):
        local_model.start_server(deadline=3, server_module=FAKE)


def test_the_child_gets_a_minimal_environment(gguf, monkeypatch):
    gguf()
    for name in ("OPENAI_API_KEY", "API_KEY", "PORT", "LAGMEM_MODEL", "HTTPS_PROXY", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "secret-value")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    server = local_model.start_server(deadline=30, server_module=FAKE)
    try:
        names = set(_get(f"{server.root_url}/env")["names"])
    finally:
        server.stop()
    assert not names & {"OPENAI_API_KEY", "API_KEY", "PORT", "LAGMEM_MODEL", "HTTPS_PROXY"}
    assert "AWS_SECRET_ACCESS_KEY" not in names
    assert {"PATH", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "PYTHONPATH"} <= names


def test_child_environment_keeps_only_the_allow_list():
    env = local_model.child_environment(
        {"PATH": "/bin", "OPENAI_API_KEY": "sk", "OMP_WAIT_POLICY": "ACTIVE", "LC_ALL": "C", "PYTHONPATH": "/x"}
    )
    assert env["OMP_WAIT_POLICY"] == "ACTIVE"  # the user's own setting wins
    assert env["PYTHONPATH"].split(":") == [str(local_model.PACKAGE_ROOT), "/x"]
    assert set(env) == {"PATH", "OMP_WAIT_POLICY", "LC_ALL", "PYTHONPATH"}


def test_an_asked_for_port_that_is_taken_fails_with_the_log(gguf):
    gguf()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(ServerUnreachable, match="exited with code"):
            local_model.start_server(port=taken.getsockname()[1], deadline=30, server_module=FAKE)
