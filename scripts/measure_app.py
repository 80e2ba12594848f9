"""Measure the app as a user meets it, with the embedded local model (no key, no network):

  1. time from `streamlit run app.py` to the first page served (health check answers) and to the
     chat page drawn in a real browser (the chat input is on screen);
  2. time from pressing Enter on the first message to the first streamed answer token on screen.

Run: .venv/bin/python scripts/measure_app.py   (needs /usr/bin/chromium; uses a fresh temporary
data dir, so your conversations are untouched; the first answer includes the wait for the
embedding model and the local model server if they are still loading, as a first user would see).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run by hand from scripts/: the shared server helper is under tests/
from tests.web.streamlit_server import ARGS, CHROMIUM, free_port, start, stop, wait_healthy  # noqa: E402

FIRST_TOKEN_JS = """() => {
  const msgs = [...document.querySelectorAll('[data-testid="stChatMessage"]')];
  if (msgs.length < 2) return false;
  const last = msgs[msgs.length - 1];
  return [...last.querySelectorAll('[data-testid="stMarkdownContainer"]')]
    .some(el => !el.closest('[data-testid="stSpinner"]') && el.innerText.trim().length > 0);
}"""


def main() -> int:
    from playwright.sync_api import sync_playwright

    data = tempfile.mkdtemp(prefix="lagmem-measure-")
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "LAGMEM_MODEL",
            "LAGMEM_LLM",
            "LAGMEM_EMBEDDINGS",
            "LAGMEM_DATABASE_URL",
        )
    }
    env["LAGMEM_DATA_DIR"] = data
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    t0 = time.monotonic()
    proc = start("app.py", port, env, subprocess.DEVNULL)
    try:
        if not wait_healthy(url, proc, poll_s=0.05):
            raise SystemExit("streamlit did not start")
        served = time.monotonic() - t0
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page()
            page.set_default_timeout(180_000)
            page.goto(url)
            box = page.get_by_test_id("stChatInputTextArea")
            box.wait_for()
            drawn = time.monotonic() - t0
            box.fill("Hello! Can you tell me one fact about the sea?")
            t1 = time.monotonic()
            box.press("Enter")
            page.wait_for_function(FIRST_TOKEN_JS, polling=20)
            first_token = time.monotonic() - t1
            page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
            # a second message: everything is loaded now
            page.wait_for_timeout(500)
            box.fill("And one more about rivers?")
            t2 = time.monotonic()
            box.press("Enter")
            page.wait_for_function(FIRST_TOKEN_JS.replace("msgs.length < 2", "msgs.length < 4"), polling=20)
            second_token = time.monotonic() - t2
            browser.close()
    finally:
        stop(proc, wait_s=15)
    print(f"cores: {os.cpu_count()}  load average: {os.getloadavg()[0]:.1f}")
    print(f"streamlit run -> first page served (health check):  {served:6.2f} s")
    print(f"streamlit run -> chat page drawn in Chromium:         {drawn:6.2f} s")
    print(
        f"Enter -> first streamed token, first message:         {first_token:6.2f} s  (includes model loading still under way)"
    )
    print(f"Enter -> first streamed token, second message:        {second_token:6.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
