"""The answer: what the model is shown, how long it may be, and what reaches the user.

Why this shape: a 135M model left to itself answers with invented sentences, in another language,
longer than the whole memory budget. So:

* **Grounded prompt.** When the retrieval step cited turns, the model sees only those turns, as
  plain notes ("Earlier, the user said: ..."), and the question; it is asked for one short
  sentence in the question's language, or to say it does not know. No ids, no markers.
* **Capped.** An answer is at most ``answer_cap(budget)`` tokens: a quarter of the conversation's
  budget, never more than 150 (a long answer would push the user's own facts out of memory).
  The model is asked for that many tokens, and the text is cut at a sentence end if it still
  runs over (``cap_text``).
* **Checked** (``grounded`` mode, the embedded default): the model's text is shown only when it
  agrees with the cited turns -- it repeats at least one of their words that the question did not
  contain, most of its own new words come from them, and its embedding is close to one of them.
  Otherwise the user gets an honest extractive answer quoting the turn: "You told me (turn 3): ...",
  worded in the user's language (``assistant.answering.wording``); so is a model answer in another language.
* **Current.** When a correction is among the notes, neither the model's text nor the quote carries
  the old value it names ("Emil was the neighbour's cat": ``assistant.answering.parts``).
* **Clean.** Prompt syntax never reaches the user: ``[cited]``, ``[T12]`` and similar markers are
  removed from whatever the model writes (``clean_answer``).

* **Answerable.** Before the model is asked, the notes pass the answerability gate
  (``answerable``): a clause must say what the question asks about and a value of the kind it asks
  for ("What's my girlfriend called?" is not answered by "transferred to the station in Ostrava");
  else "I don't know", or the closest note quoted as a guess. The model's text passes it too, and
  never speaks of "the user" in the third person.

Where each part lives: ``prompts`` (what the model is shown), ``cleaning`` (markers removed, the
cap), ``agreement`` (the grounding checks), ``answerable`` (the gate), ``quoting`` (the extractive
answer), ``replies`` (the reply to a statement).

A configured (larger) model gets the whole in-memory context with the cited turns named in the
system prompt, streamed as it writes (``context`` mode), with the same cap and cleaning.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from functools import partial

import numpy as np

from assistant.answering.agreement import agrees
from assistant.answering.answerable import judge, model_answers, valued_part
from assistant.answering.cleaning import cap_text, clean_answer, cut_at_title
from assistant.answering.kinds import expected_kind
from assistant.answering.note import Note
from assistant.answering.parts import carries_stale
from assistant.answering.prompts import GROUNDED_MAX_TOKENS, GROUNDED_TEMPERATURE, ONE_SENTENCE, grounded_messages
from assistant.answering.quoting import NUMBERED, extractive, quoted_note
from assistant.answering.selffix import self_fixed
from assistant.answering.wording import WORDINGS, language


def grounded_answer(
    llm,
    embed,
    notes: Sequence[Note],
    message: str,
    cap: int,
    count,
    sure: bool = True,
    required: Collection[str] = (),
    told: Sequence = (),
    stale: Collection[str] = (),
    own: int | None = None,
) -> tuple[str, np.ndarray, str, list[Note]]:
    """Ask the model from ``notes`` only (best first), keep its text if it agrees with them, else
    quote the first statement (``quoted_note``). ``message``: the question (the asking part of a
    message that also states its fact).

    Returns (answer, its vector, how: ``model`` or ``extractive``, the notes it stands on: all of
    them for the model's text, the quoted one for a quote -- the answer's citations, so the turn a
    quote names is the turn it cites). ``sure=False``: the notes are the ranker's best guesses,
    not citations, and an extractive answer says so. ``required``: see ``agrees``.

    The notes pass the answerability gate first (``assistant.answering.answerable``): when none
    says what is asked the answer is "I don't know" (how: ``unknown``, standing on no note); when
    one only comes near, it is quoted as a guess (``told``: the user's statements in memory, oldest
    first, which the gate reads too). Guessed notes of which one answers are quoted as the fact.
    ``stale``: the old values a correction among the notes names again (``parts.stale_words``):
    neither the model's text nor a quote may carry them. ``own``: the number of the note the
    question's own message states, if any (``answerable.judge``)."""
    lang = language(message)
    # the values a turn took back in its own breath ("$38 a month - no wait, it's $42 now")
    fixes = [self_fixed(n.content, alone=True) for n in notes if n.role == "user"]
    taken_back = frozenset(stale).union(*(f.stale for f in fixes if f is not None))
    verdict = judge(notes, message, embed, required, told, own)
    # asked a number, a turn's own fix is quoted alone ("Sorry, I misread the ticket, it's 09:30.")
    alone = expected_kind(message) in NUMBERED
    if verdict.how == "unknown":
        text = WORDINGS[lang].unknown
        return text, embed(text), "unknown", []
    notes = verdict.notes
    if verdict.how == "answer" and verdict.clauses:
        # the ranker only guessed, but a clause of the first note says the head and its value: the
        # quote is the fact, not a guess ("so im a radiographer ..." for "what's my profession?")
        sure = True
    # quotes without the values a correction or the turn itself took back, shortest form last
    quote = partial(extractive, lang=lang, corrected=bool(required), stale=stale, alone=alone)
    if verdict.how == "unsure":
        text = _first_fitting(
            cap,
            count,
            lambda: quote(notes, False),
            # too long with the hedge: the sentences of the quoted turn that hold a value of the kind
            lambda: quote([valued_part(quoted_note(notes), message)], False),
            lambda: quote([_valued_clauses(notes, message, alone)], False),
        )
        return text, embed(text), "extractive", [quoted_note(notes)]
    raw = llm.complete(
        grounded_messages(notes, message),
        max_tokens=min(cap, GROUNDED_MAX_TOKENS),
        temperature=GROUNDED_TEMPERATURE,
        extra_body=ONE_SENTENCE,
    )
    text = clean_answer(raw or "")
    vec = embed(text) if text else None
    if (
        text
        and not cut_at_title(text)
        and language(text) == lang
        and agrees(text, vec, notes, message, required)
        and model_answers(text, message, verdict, told)
        and not carries_stale(text, taken_back)
    ):
        text = cap_text(text, cap, count)
        told = [n for n in notes if n.role == "user"]
        return text, vec, "model", told or list(notes)
    text = _first_fitting(
        cap,
        count,
        lambda: quote(notes, sure),
        # too long to quote whole: the sentences of the turn that speak of the question
        lambda: quote(notes, sure, question=message, embed=embed),
        lambda: quote([_valued_clauses(notes, message, alone)], sure),
    )
    return text, embed(text), "extractive", [quoted_note(notes)]


def choice_answer(option: str, note: Note, message: str, cap: int, count, embed=None) -> str:
    """A question offering the answers ("Does the party start at 2pm or 3pm?", ``choice``): the option
    the user's statement says, then the quote ("2pm. You told me (turn 3): ... it starts at two
    o'clock.")."""
    quote = partial(extractive, [note], True, language(message), alone=True)
    text = _first_fitting(
        cap - count(option) - 1,
        count,
        quote,
        lambda: quote(question=message, embed=embed),
    )
    return f"{option[:1].upper()}{option[1:]}. {text}"


def _first_fitting(cap: int, count, *quotes: Callable[[], str]) -> str:
    """The first of the quotes (made only when the one before runs over) within ``cap`` tokens, else
    the last one capped."""
    for make in quotes:
        text = make()
        if count(text) <= cap:
            return text
    return cap_text(text, cap, count)


def _valued_clauses(notes: Sequence[Note], message: str, alone: bool) -> Note:
    """The quoted turn cut to its clauses holding a value of the asked kind (``valued_part``), for a
    quote the cap would cut before its value; a turn that takes a value back is cut after the take-back
    is left out (``alone``: the fix alone, asked a number)."""
    note = quoted_note(notes)
    fixed = self_fixed(note.content, alone=alone) if note.role == "user" else None
    note = replace(note, content=fixed.text) if fixed is not None else note
    return valued_part(note, message, clauses=True)
