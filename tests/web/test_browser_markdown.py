"""The answer renderer's output in Streamlit's own Markdown renderer, in a real browser (Debian's
Chromium, driven by Playwright): what the unit tests judge with markdown-it-py is checked here where
it matters. A small Streamlit script draws ``answer_markdown`` of each adversarial answer; the page
must hold no image, no raw HTML element, no LaTeX and no link but to a web or mail address, and the
browser must never ask the attacker's host for anything."""

from __future__ import annotations

import os

import pytest

from tests.web.streamlit_server import ARGS, CHROMIUM, ROOT, need_chromium, serving
from tests.web.test_browser import settle
from tests.web.test_markdown import ADVERSARIAL

pytestmark = pytest.mark.browser

EXTRA = {
    "a safe link": "[docs](https://docs.example/a_(b))",
    "an unsafe link": "[click](javascript:alert(1))",
    "latex and a directive": "$x^2$ :red[alarm] :material/home:",
    "an autolink after a bang": "!<https://attacker.example/p.png>",
}
SCRIPT = """
import json, sys
import streamlit as st
from web.markdown import answer_markdown

for name, text in json.loads(sys.argv[1]).items():
    with st.container(key="case-" + str(abs(hash(name)))):
        st.markdown(answer_markdown(text))
st.caption("all drawn")
"""


def test_streamlit_draws_no_image_html_or_unsafe_link(tmp_path):
    from playwright.sync_api import sync_playwright

    need_chromium()
    import json

    cases = {**ADVERSARIAL, **EXTRA}
    script = tmp_path / "render.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_PROXY": "127.0.0.1,localhost"}
    asked: list[str] = []
    with serving(str(script), env, tmp_path / "streamlit.log", extra=[json.dumps(cases)]) as url:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page()
            page.on("request", lambda r: asked.append(r.url))
            page.goto(url)
            page.get_by_text("all drawn").wait_for(timeout=90_000)
            settle(page)
            md = page.locator('[data-testid="stMarkdownContainer"]')
            assert md.count() >= len(cases)
            inside = '[data-testid="stMarkdownContainer"]'
            assert page.locator(f"{inside} img").count() == 0
            assert page.locator(f"{inside} b, {inside} div img, {inside} script").count() == 0
            assert page.locator(f"{inside} .katex").count() == 0  # no LaTeX
            hrefs = page.locator(f"{inside} a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
            # links go only to web and mail addresses (Streamlit also links a bare web address in
            # text, as GitHub does: still a link a person chooses to follow, never a load)
            assert "https://docs.example/a_%28b%29" in hrefs
            assert all(h.startswith(("https://", "http://", "mailto:")) for h in hrefs), hrefs
            text = page.inner_text("body")
            # no LaTeX, no directive (Streamlit still draws a :material/...: icon, from its own font)
            assert text.count("[image: x]") >= 8 and "$x^2$ :red[alarm] " in text
            browser.close()
    assert not [u for u in asked if "attacker.example" in u]
