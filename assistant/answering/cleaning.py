"""The model's text made fit to show: prompt syntax removed, capped in tokens.

* **Capped.** An answer is at most ``answer_cap(budget)`` tokens: a quarter of the conversation's
  budget, never more than 150 (a long answer would push the user's own facts out of memory). The
  text is cut at a sentence end if it still runs over (``cap_text``).
* **Clean.** Prompt syntax never reaches the user: ``[cited]``, ``[T12]`` and similar markers are
  removed from whatever the model writes (``clean_answer``, ``StreamCleaner`` for streamed text).
* **Whole.** The server stops the model at the first ". ", so "Mr. Haddad seems nice" comes back
  as "Mr": text that ends on a title is cut short (``cut_at_title``) and is not shown.
"""

from __future__ import annotations

import re

from assistant.answering.message import NOT_AN_END, TITLES

MAX_ANSWER_TOKENS = 150
MIN_ANSWER_TOKENS = 16
PROMPT_SYNTAX = re.compile(r"\[\s*(?:cited|T\s*\d+|turn\s*\d+)\s*\]\s*", re.IGNORECASE)
SENTENCE_END = re.compile(NOT_AN_END + r"(?<=[.!?。！？])\s")
# the titles that stand before a name, never at the end of a sentence ("No", "approx" and the
# name suffixes may end one)
BEFORE_A_NAME = tuple(t for t in TITLES if t not in {"No", "approx", "Jr", "Sr"})
ENDS_ON_TITLE = re.compile(rf"\b(?:{'|'.join(BEFORE_A_NAME)})\.?\s*$")


def answer_cap(budget: int | None) -> int:
    """Most tokens an answer may have: a quarter of the budget, at most 150 (at least 16)."""
    if not budget:
        return MAX_ANSWER_TOKENS
    return max(MIN_ANSWER_TOKENS, min(MAX_ANSWER_TOKENS, budget // 4))


def clean_answer(text: str) -> str:
    """The model's text without prompt syntax (``[cited]``, ``[T3]``), whitespace tidied."""
    return re.sub(r"[ \t]{2,}", " ", PROMPT_SYNTAX.sub("", text)).strip()


def cut_at_title(text: str) -> bool:
    """Does the model's text end on a title ("The plumber is called Mr"): cut short by the stop at
    the title's full stop, the name it introduced lost?"""
    return bool(ENDS_ON_TITLE.search(text))


def cap_text(text: str, cap: int, count) -> str:
    """``text`` within ``cap`` tokens (``count``: the token counter): whole sentences when they
    fit, else whole words, with an ellipsis."""
    if count(text) <= cap:
        return text
    kept = ""
    for sentence in SENTENCE_END.split(text):
        trial = (kept + " " + sentence).strip()
        if count(trial) > cap:
            break
        kept = trial
    if kept:
        return kept
    out: list[str] = []
    for word in text.split():
        if count(" ".join(out + [word]) + " …") > cap:
            break
        out.append(word)
    return (" ".join(out) + " …") if out else "…"


class StreamCleaner:
    """Removes prompt syntax from streamed deltas: text from an unclosed ``[`` is held back until
    it closes (or grows past a marker's length), so ``[cit`` + ``ed] `` never shows."""

    HOLD = 12

    def __init__(self) -> None:
        self.pending = ""

    def feed(self, delta: str) -> str:
        text = self.pending + delta
        cut = text.rfind("[")
        if cut != -1 and "]" not in text[cut:] and len(text) - cut <= self.HOLD:
            self.pending, text = text[cut:], text[:cut]
        else:
            self.pending = ""
        return PROMPT_SYNTAX.sub("", text)

    def flush(self) -> str:
        text, self.pending = PROMPT_SYNTAX.sub("", self.pending), ""
        return text
