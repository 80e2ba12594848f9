"""Start ``streamlit run`` on a free local port, wait for its health check, stop it; and the Chromium
the browser tests and the hand-run scripts (scripts/check_chat_race.py, scripts/measure_app.py) drive.

Test-and-script code only: the product never imports it. A script run by hand puts the repository
root on ``sys.path`` first, so ``tests.web.streamlit_server`` imports from there too.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(
    target: str, port: int, env: dict, out: IO | int, extra: Sequence[str] = (), cwd: Path = ROOT
) -> subprocess.Popen:
    """``streamlit run target`` headless on 127.0.0.1:port (no usage statistics), its output to
    ``out`` (an open file or ``subprocess.DEVNULL``); ``extra`` goes to the script after ``--``."""
    cmd = [sys.executable, "-m", "streamlit", "run", target, "--server.headless", "true"]
    cmd += ["--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    if extra:
        cmd += ["--", *extra]
    return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)


def wait_healthy(url: str, proc: subprocess.Popen, within_s: float = 120.0, poll_s: float = 0.1) -> bool:
    """True once the server at ``url`` answers its health check; False if its process ended first
    or ``within_s`` seconds passed."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1).read()
            return True
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(poll_s)


def stop(*procs: subprocess.Popen, wait_s: float = 10.0) -> None:
    """Terminate the servers, then wait for each; kill one not ended within ``wait_s`` seconds."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()


def healthy_or_fail(url: str, proc: subprocess.Popen, log: Path, poll_s: float = 0.1) -> None:
    """Wait for the server's health check; fail the test with the end of its log if it never answers."""
    import pytest

    if not wait_healthy(url, proc, poll_s=poll_s):
        pytest.fail(f"streamlit did not start ({log}): " + log.read_text()[-2000:])


@contextmanager
def serving(target: str, env: dict, log: Path, extra: Sequence[str] = ()) -> Iterator[str]:
    """A server for the test inside the block, its output in ``log``; yields its URL. A server that
    does not come up fails the test with the end of its log."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with log.open("w") as out:
        proc = start(target, port, env, out, extra)
        try:
            healthy_or_fail(url, proc, log)
            yield url
        finally:
            stop(proc)


def need_chromium() -> None:
    """Fail (not skip) the test when Debian's Chromium is not installed."""
    import pytest

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (scripts/sysdeps.sh)")
