"""A person's two quick messages, against the real app and the embedded model (SmolLM2 through
llama.cpp's server, MiniLM embeddings), in Chromium; prints what happened and what is stored.

Why beside the test suite: ``tests/web/test_browser.py`` checks the same thing against a fake model
(fast, deterministic); this is the claim with the real models, run by hand:

    .venv/bin/python scripts/check_chat_race.py [--keep DIR]

It starts ``streamlit run app.py`` on a free port with a fresh data directory and no model
endpoint (so the embedded model answers), waits for the sidebar to say the models are loaded
(without a click), sends one message, tries to type the second one a second later, and reports
whether the input was locked, when the second message could be typed, and the stored turns.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run by hand from scripts/: the shared server helper is under tests/
from tests.web.streamlit_server import CHROMIUM, free_port, start, stop, wait_healthy  # noqa: E402

MESSAGES = ["My name is Marta and I have a cat called Pickles.", "What is the capital of Portugal?"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", help="data directory to use and keep (default: a temporary one)")
    args = ap.parse_args()
    data = Path(args.keep or tempfile.mkdtemp(prefix="lagmem-race-"))
    data.mkdir(parents=True, exist_ok=True)  # --keep may name a directory that does not exist yet
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LAGMEM_LLM", "LAGMEM_DATABASE_URL")
    }
    env.update(LAGMEM_DATA_DIR=str(data), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    with open(data / "streamlit.log", "w") as log:
        proc = start("app.py", port, env, log)
    try:
        url = f"http://127.0.0.1:{port}"
        if not wait_healthy(url, proc, poll_s=0.2):
            raise SystemExit(f"streamlit did not start: see {data / 'streamlit.log'}")
        return drive(url, data)
    finally:
        stop(proc, wait_s=20)


def drive(url: str, data: Path) -> int:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        page.set_default_timeout(300_000)
        expect.set_options(timeout=300_000)
        page.goto(url)
        t0 = time.monotonic()
        expect(page.get_by_test_id("stSidebar").get_by_text("Answers come from")).to_be_visible()
        print(f"models loaded, note shown without a click after {time.monotonic() - t0:.1f} s")
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill(MESSAGES[0])
        box.press("Enter")
        t1 = time.monotonic()
        page.wait_for_timeout(1000)
        print(f"input disabled 1 s after sending: {box.is_disabled()}")
        box.fill(MESSAGES[1])  # waits until the box can be typed in
        print(f"second message could be typed {time.monotonic() - t1:.1f} s after the first was sent")
        box.press("Enter")
        expect(page.get_by_test_id("stChatMessage")).to_have_count(4)
        expect(box).to_be_enabled()
        print(
            f"both answered {time.monotonic() - t1:.1f} s after the first was sent; "
            f"Retry buttons: {page.get_by_role('button', name='Retry').count()}"
        )
        page.screenshot(path=str(data / "chat.png"))
        browser.close()
    con = sqlite3.connect(data / "lagmem.db")
    rows = list(con.execute("SELECT seq, role, substr(content, 1, 60), incomplete FROM turns ORDER BY seq"))
    con.close()
    for row in rows:
        print(row)
    ok = [(r[0], r[1]) for r in rows] == [(1, "user"), (2, "assistant"), (3, "user"), (4, "assistant")]
    print("stored in order, nothing lost" if ok else "MISSING OR OUT OF ORDER")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
