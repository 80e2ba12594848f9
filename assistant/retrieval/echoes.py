"""The user's words before the assistant's echo of them: which user turn an assistant turn repeats,
and citations moved to it.

A small model's replies repeat what the user just said (You're right, I should rephrase to: 'I keep
my bicycle in the garage ...'), and so do extractive answers ("You told me (turn 1): ..."). Such
a turn matches a later question as well as the user's own statement does, often better (it is
longer, and nearer). Citing it would make the model's own earlier answer the evidence for
something the user said, and would keep the echo in memory instead of the fact. So:

* ``echoed``: the user turn an assistant turn repeats -- an earlier user turn of at least two
  content words, most of which (``ECHO_SHARE``) the assistant turn says too; the latest such.
* ``with_sources``: the shortlist also offers the user turn each offered assistant turn echoes
  (a citation may only name an offered turn).
* ``prefer_user_words``: a citation of an echo becomes a citation of the user's turn (with the
  higher of the two weights); the echo itself is not cited.

Pure: turns in, turns out.
"""

from __future__ import annotations

from collections.abc import Sequence

from assistant.retrieval.lexical import words

ECHO_SHARE = 0.6


def echoed(turn, candidates: Sequence):
    """The user turn that the assistant ``turn`` repeats, or None (``candidates``: number/role/content)."""
    if turn.role == "user":
        return None
    said = set(words(turn.content))
    best = None
    for c in candidates:
        if c.role != "user" or c.number >= turn.number:
            continue
        theirs = set(words(c.content))
        if len(theirs) >= 2 and len(theirs & said) / len(theirs) >= ECHO_SHARE:
            if best is None or c.number > best.number:
                best = c
    return best


def with_sources(offered: Sequence, candidates: Sequence, make) -> list:
    """``offered`` plus, for each offered assistant turn, the user turn it echoes when that is not
    offered yet (``make(candidate)`` builds its offered entry); in memory order."""
    have = {o.number for o in offered}
    extra = []
    for o in offered:
        src = echoed(o.candidate, candidates)
        if src is not None and src.number not in have:
            have.add(src.number)
            extra.append(make(src))
    return sorted([*offered, *extra], key=lambda o: o.number)


def prefer_user_words(cites: Sequence, offered: Sequence, cite_type) -> list:
    """``cites`` with each cite of an echo replaced by a cite of the offered user turn it echoes
    (``cite_type(turn, weight, similarity)``); order of first mention kept, one cite per turn."""
    by_number = {o.number: o for o in offered}
    candidates = [o.candidate for o in offered]
    out: dict[int, object] = {}
    for c in cites:
        o = by_number.get(c.turn)
        src = echoed(o.candidate, candidates) if o is not None else None
        if src is not None:
            c = cite_type(src.number, c.weight, by_number[src.number].similarity)
        prev = out.get(c.turn)
        if prev is None or c.weight > prev.weight:
            out[c.turn] = c if prev is None else cite_type(c.turn, c.weight, prev.similarity)
    return list(out.values())
