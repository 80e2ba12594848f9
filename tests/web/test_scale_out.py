"""Scale-out: two app servers (two `streamlit run app.py` processes) on one PostgreSQL database, a
browser tab on each (Debian's Chromium, driven by Playwright), both on the same conversation.

Each tab sees the other's turns, every question gets exactly one answer, and nothing is lost: the
turns are numbered 1..n with no gap, each message sent is stored once, followed by its own answer,
and both tabs end up showing the same conversation. The two servers share nothing but the
database (each has its own process, caches and answer workers), as two machines behind a load
balancer would; the model is one local HTTP fake of the OpenAI API (its answer names the
question's tag, so each answer can be matched to its question), the embeddings the real MiniLM.

PostgreSQL only: it runs in scripts/test.sh's second pass (``LAGMEM_TEST_DATABASE_URL``), where it
is kept because it takes a ``db_url``; the first pass reports it skipped, with the reason.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from bench.fakes.openai_http import FakeOpenAI, Hang
from tests.web.streamlit_server import ARGS, CHROMIUM, free_port, healthy_or_fail, need_chromium, start, stop

pytestmark = pytest.mark.browser

TAG = re.compile(r"\b([AB]\d)\b")


SLOW = ("A3", "B2")  # answered after SLOW_S seconds: the two exchanges sent at once overlap
SLOW_S = 4.0


def responder(req) -> str | Hang:
    """The retrieval step (not streamed) cites nothing; an answer (streamed) names the tag of the
    question it answers (the last user message it was shown)."""
    body = req.body or {}
    if not body.get("stream"):
        return json.dumps({"turns": []})
    users = [str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user"]
    tags = TAG.findall(users[-1]) if users else []
    answer = f"Answer to {tags[-1] if tags else 'nothing'}."
    return Hang(SLOW_S, then=answer) if tags and tags[-1] in SLOW else answer


@pytest.fixture
def two_servers(tmp_path, db_url, fake_openai: FakeOpenAI):
    if not db_url.startswith("postgresql"):
        pytest.skip("two app servers on one database: PostgreSQL only (scripts/test.sh's second pass)")
    need_chromium()
    import os

    from assistant.store import open_store

    fake_openai.responder = responder
    store = open_store(db_url)  # migrated once here, so the two servers do not race to migrate
    conv = store.create("shared")
    store.close()
    env = {k: v for k, v in os.environ.items() if k not in ("LAGMEM_LLM", "LAGMEM_EMBEDDINGS")}
    env.update(
        OPENAI_BASE_URL=fake_openai.base_url,
        OPENAI_API_KEY="sk-fake",
        LAGMEM_MODEL="fake-model",
        LAGMEM_DATABASE_URL=db_url,
        HF_HUB_OFFLINE="1",
        NO_PROXY="127.0.0.1,localhost",
    )
    servers = []  # both start at once, then both are waited for
    try:
        for name in ("one", "two"):
            port, log = free_port(), tmp_path / f"streamlit-{name}.log"
            with log.open("w") as out:  # the child keeps its own copy of the file
                proc = start("app.py", port, {**env, "LAGMEM_DATA_DIR": str(tmp_path / f"data-{name}")}, out)
            servers.append((f"http://127.0.0.1:{port}", proc, log))
        for url, proc, log in servers:
            healthy_or_fail(url, proc, log, poll_s=0.2)
        yield [url for url, _, _ in servers], db_url, conv, [log for _, _, log in servers]
    finally:
        stop(*(proc for _, proc, _ in servers))


def stored_turns(db_url: str, conv: int) -> list[tuple]:
    from sqlalchemy import create_engine, text

    eng = create_engine(db_url)
    try:
        with eng.connect() as c:
            q = "SELECT seq, role, content, reply_to FROM turns WHERE conversation_id = :c ORDER BY seq"
            return [tuple(r) for r in c.execute(text(q), {"c": conv})]
    finally:
        eng.dispose()


def test_two_servers_one_conversation(two_servers, fake_openai: FakeOpenAI):
    from playwright.sync_api import expect, sync_playwright

    (url_a, url_b), db_url, conv, logs = two_servers
    expect.set_options(timeout=120_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        a = browser.new_page(viewport={"width": 1200, "height": 1400})
        b = browser.new_page(viewport={"width": 1200, "height": 1400})
        try:
            converse(a, b, url_a, url_b)
        except Exception as exc:
            raise AssertionError(f"{exc}\n{page_texts(a, b)}\n" + "\n".join(tail(log) for log in logs)) from exc
        finally:
            browser.close()
    check_stored(db_url, conv, sent=["A1", "B1", "A2", "A3", "B2"])
    assert len([r for r in fake_openai.requests if (r.body or {}).get("stream")]) == 5  # one answer each


def messages(page):
    return page.get_by_test_id("stChatMessage")


def send(page, text: str) -> None:
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)  # waits until the box can be typed in (it is locked while an answer is written)
    box.press("Enter")


def answered(page, count: int) -> None:
    """The tab shows ``count`` messages and its input is usable again (no answer in progress)."""
    from playwright.sync_api import expect

    expect(messages(page)).to_have_count(count)
    expect(page.get_by_test_id("stChatInputTextArea")).to_be_enabled()


def converse(a, b, url_a: str, url_b: str) -> None:
    from playwright.sync_api import expect

    for page, url in ((a, url_a), (b, url_b)):
        page.goto(url)
        sidebar = page.get_by_test_id("stSidebar")
        expect(sidebar.get_by_text("Answers come from")).to_be_visible(timeout=300_000)  # the models loaded
        expect(page.get_by_role("heading", name="shared")).to_be_visible()

    send(a, "A1: my sister Ines lives in Porto.")
    answered(a, 2)
    shows(a, ["A1", "Answer to A1."])

    # tab B, on the other server, sends its message: its page then shows A's turns before its own
    send(b, "B1: my brother Rui is a baker.")
    answered(b, 4)
    shows(b, ["A1", "Answer to A1.", "B1", "Answer to B1."])

    send(a, "A2: where does Ines live?")
    answered(a, 6)
    shows(a, ["A1", "Answer to A1.", "B1", "Answer to B1.", "A2", "Answer to A2."])

    # both at once: two exchanges in flight on two servers, in one conversation (the model takes
    # SLOW_S seconds over each answer, so B's message arrives while A's answer is being written)
    send(a, "A3: and Rui?")
    send(b, "B2: thanks!")
    for page in (a, b):
        # .first: while the tab redraws, the streamed and the stored answer can both be on the page
        expect(page.get_by_text("Answer to " + ("A3." if page is a else "B2.")).first).to_be_visible()
        expect(page.get_by_test_id("stChatInputTextArea")).to_be_enabled()
    # reloaded, each tab shows the whole conversation, the same on both
    for page in (a, b):
        page.reload()
        answered(page, 10)
    assert texts(a) == texts(b)
    assert sorted(texts(a)[6:]) == sorted(["A3", "Answer to A3.", "B2", "Answer to B2."])
    assert "No answer yet" not in a.inner_text("body")


def shows(page, expected: list[str], within_s: float = 60.0) -> None:
    """The tab settles on ``expected``. While Streamlit reruns a page it keeps the previous run's
    elements until the new run replaces them, so the streamed answer's bubble and the stored answer
    can both be on the page for a moment; a duplicate that stays is what this fails on (the stored
    turns are checked separately, from the database)."""
    deadline, got = time.monotonic() + within_s, texts(page)
    while got != expected and time.monotonic() < deadline:
        time.sleep(0.5)
        got = texts(page)
    assert got == expected


def texts(page) -> list[str]:
    """Each message on the page: a question as its tag, an answer as its text."""
    out = []
    # one read of every bubble at once: a locator per bubble (``.all()``) is by index, and while the
    # tab redraws, the transient duplicate bubble it counted may be gone before its text is read
    for body in messages(page).all_inner_texts():
        answer, tag = re.search(r"Answer to [AB]\d\.", body), TAG.search(body)
        # a bubble still being drawn has neither yet: its text stands in (and differs from both)
        out.append(answer.group(0) if answer else tag.group(1) if tag else body.strip())
    return out


def check_stored(db_url: str, conv: int, sent: list[str]) -> None:
    turns = stored_turns(db_url, conv)
    assert [t[0] for t in turns] == list(range(1, 2 * len(sent) + 1)), "turns numbered 1..n with no gap"
    questions = {t[0]: TAG.search(t[2]).group(1) for t in turns if t[1] == "user"}
    assert sorted(questions.values()) == sorted(sent), "each message stored once"
    answers = [t for t in turns if t[1] == "assistant"]
    assert sorted(t[3] for t in answers) == sorted(questions), "every question has exactly one answer"
    assert all(t[2] == f"Answer to {questions[t[3]]}." for t in answers), "each answer is its question's"


def page_texts(*pages) -> str:
    out = []
    for p in pages:
        try:
            out.append(p.inner_text("body")[-1500:])
        except Exception as err:  # the page itself may be gone
            out.append(f"(page unreadable: {err})")
    return "\n--- page ---\n".join(out)


def tail(log: Path) -> str:
    return f"--- {log.name} (end) ---\n" + log.read_text()[-2000:]
