"""Does a model answer give what was asked, from its notes?

The grounding checks (``answer.agrees``) keep the model from inventing: no name or number of its
own, most of its words from the notes, no value beside the asked slot. They do not make it answer:
"The dog is a classic example of the dog-eat-dog mentality" for "What's the dog called?" invents
nothing, shares "dog" with the notes, and names no one -- while the note says "Her name is Pippa".
So when a note holds what is asked, the model's text must carry it too, or the user gets the checked
quote of the note, which holds it:

* **An asked slot** (``slots.asked_slot``: a name, a number, a place, ...): the answer gives one of
  the slot's values in the notes ("Pippa"), not only the question's own names.
* **A colour, a time, a number** ("What colour is it?"): the answer says one the notes hold ("green").
* **A job** ("What do I do for a living?"): the answer says a word the notes say the job with
  ("sound engineer" of "I work as a sound engineer in Bergen."), not "you're Dagny".

Notes that hold no such value ask nothing of the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.answering.asked import asked_slot
from assistant.answering.kinds import CLOCK, COLOURS, expected_kind, job_words
from assistant.answering.referents import names
from assistant.answering.slots import slot_values, values_said
from assistant.retrieval.lexical import words

# the values of an answer's kind a note holds and the answer must say one of
_DIGITS = re.compile(r"\b\d[\d.,:]*\b")
KIND_VALUES = {"colour": COLOURS, "clock": CLOCK, "number": _DIGITS, "amount": _DIGITS}


def carries_answer(answer: str, notes: Sequence, question: str) -> bool:
    """Does ``answer`` carry the answering content of ``notes`` (anything with ``role`` and
    ``content``; the user's own, when any) for ``question``? True when the notes hold none."""
    told = [n for n in notes if n.role == "user"] or list(notes)
    slot = asked_slot(question)
    if slot is not None:
        held = slot_values(told, slot) - names(question)
        return not held or bool(values_said(answer, slot) & held)
    kind = expected_kind(question)
    if kind in KIND_VALUES:
        # "What colour is it?" after "a used green Fiat Panda": the answer says "green"
        find = KIND_VALUES[kind]
        held = {m.group(0).lower() for n in told for m in find.finditer(n.content)} - set(names(question))
        return not held or bool(held & {m.group(0).lower() for m in find.finditer(answer)})
    if kind == "job":
        held = set().union(*(job_words(n.content) for n in told)) - set(words(question)) if told else set()
        return not held or bool(held & set(words(answer)))
    return True
