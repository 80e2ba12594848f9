"""The embedded default's reply to one message, from its notes: what the service calls in
``grounded`` mode (``assistant.models.profile``).

* A question (``assistant.answering.message``) is answered from its notes
  (``assistant.answering.notes``): the cited turns, adjusted, and the fact its own message states
  ("I parked on level 3, spot C12. Where did I park?"). The model's text if it agrees with them,
  else a quote (``assistant.answering.answer``). The answer cites what it stands on -- every note
  for the model's text, the quoted turn for a quote -- so the turn a quote names is the turn it
  cites; a guess cites with the ranker's confidence rather than a citation's weight.
* A question about the user that nothing in memory answers gets "I don't know", not a quote of a
  turn beside it; nor does one whose notes speak of the same person or thing without saying what is
  asked (the answerability gate, ``assistant.answering.answerable``: the question's head and a value
  of its kind in one clause), which reads the user's statements in memory too.
* A question offering the answers ("Does the party start at 2pm or 3pm?") gets the option a statement
  of the user's says, then its quote (``assistant.answering.choice``).
* Anything else (a statement, a question to the assistant) gets the model's short reply, checked,
  or a plain acknowledgement; it cites what the retrieval step cited.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assistant.answering.answer import choice_answer, grounded_answer
from assistant.answering.choice import chosen
from assistant.answering.message import is_question, split
from assistant.answering.note import Note, note_of
from assistant.answering.notes import is_statement, select_notes
from assistant.answering.recase import recase, recased_turns, restore
from assistant.answering.replies import statement_reply
from assistant.answering.wording import wording

GUESS_WEIGHT = 0.05  # a guessed note the ranker gave no confidence for: the least a cite can weigh


@dataclass
class Reply:
    """What to say and how it was made (``how``: model, extractive, unknown, acknowledged, unsure);
    ``cites`` and ``offered``: what the answer cites and the turns it was shown (None: the
    retrieval step's)."""

    text: str
    vector: np.ndarray
    how: str
    cites: list[tuple[int, float]] | None = None
    offered: tuple[int, ...] | None = None


def grounded_reply(llm, embed, message: str, turn: int, active, retrieval, cap: int, count) -> Reply:
    """The reply to ``message`` (stored as turn ``turn``) from the in-memory turns ``active`` and
    the retrieval step's result; ``embed(text)`` gives a unit vector, ``count(text)`` tokens."""
    asking = is_question(message)
    if asking:
        # the rules know a name by its capital: names typed in lower case are capitalised for them
        active, typed = recased_turns(active, message)
        parts = split(recase(message, typed, owners=True))
        current = Note(turn, "user", parts.stated, 1.0, embed(parts.stated)) if parts.stated else None
        picked = select_notes(parts.asked, active, retrieval, current=current, embed=embed)
        told = [c for c in sorted(active, key=lambda c: c.number) if is_statement(c)]
        told += [current] if current is not None else []
        offered = chosen(parts.asked, picked.notes, told)
        if offered is not None:
            # "Does the party start at 2pm or 3pm?" and "it starts at two o'clock": the option said
            option, said = offered
            weight = next((n.weight for n in picked.notes if n.number == said.number), GUESS_WEIGHT)
            used = [note_of(said, weight)]
            text = choice_answer(option.text, used[0], parts.asked, cap, count, embed)
            vec, how = embed(text), "extractive"
        elif picked.notes:
            text, vec, how, used = grounded_answer(
                llm,
                embed,
                picked.notes,
                parts.asked,
                cap,
                count,
                picked.sure,
                picked.required,
                told,
                picked.stale,
                own=turn if current is not None else None,
            )
        if offered is not None or picked.notes:
            if how == "extractive" and typed:
                text = restore(text, typed)  # a quote in the user's own letters
            weight = {n.number: n.weight for n in used} if picked.sure else retrieval.confidence
            cites = [(n.number, weight.get(n.number, GUESS_WEIGHT)) for n in used]
            shown = tuple(sorted({*retrieval.offered, *(n.number for n in [*picked.notes, *used])}))
            return Reply(text, vec, how, cites, shown)
        if picked.unknown:
            text = wording(message).unknown
            return Reply(text, embed(text), "unknown", [])
    # a statement: the model's reply sees only that message (with history it repeats and mixes up
    # earlier turns) and is checked before it is shown
    text, how = statement_reply(llm, message, cap, count, statement=not asking)
    return Reply(text, embed(text), how)
