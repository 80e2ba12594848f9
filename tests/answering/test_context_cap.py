"""Every model's answer prompt is capped: with a long lag, protected turns can hold more tokens
than a model's window, and the request would fail until they aged out. A connected model gets its
profile's ``context_tokens`` (``CONTEXT_TOKENS`` by default); the cited turns go first, then the
newest that fit."""

from __future__ import annotations

import json

from assistant.models.profile import CONTEXT_TOKENS as REMOTE_CONTEXT_TOKENS
from assistant.replay import replay, settings_from
from memory import transcript as T
from tests.assistant.test_service import llm, make_service  # noqa: F401  (llm: fixture)


def test_a_non_local_models_prompt_is_capped_when_protected_turns_outgrow_it(store, llm, counter):
    long_words = " ".join(f"word{i}" for i in range(300))
    lines = [json.dumps({"lagmem": 1, "title": "long lag", "budget": 100_000, "lag": 1_000})]
    for i in range(1, 61):
        role = "user" if i % 2 else "assistant"
        lines.append(json.dumps({"role": role, "content": f"turn {i}: {long_words}"}))
    t = T.parse("\n".join(lines) + "\n")
    conv = replay(store, t, counter, settings_from(t.header), title="long lag", atomic=True).conversation_id
    held = sum(x.tokens for x in store.layer(conv).turns() if x.active)
    assert held > REMOTE_CONTEXT_TOKENS  # every turn is protected (lag 1,000) and in memory
    svc = make_service(store, llm, counter)
    assert svc.profile.answer_mode == "context" and svc.context_tokens == REMOTE_CONTEXT_TOKENS
    svc.ask(conv, "What was said last?")
    answer = llm.history[-1].messages
    sent = sum(counter.count(m["content"]) for m in answer)
    assert sent <= REMOTE_CONTEXT_TOKENS
    numbers = [int(m["content"].removeprefix("[cited] ").split()[1].rstrip(":")) for m in answer[1:-1]]
    assert numbers and numbers[-1] == 60  # the newest turns are kept
    assert len(numbers) < 60
