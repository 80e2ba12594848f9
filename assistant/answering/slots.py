"""Whether a turn fills the slot a question asks for (``assistant.answering.asked``), and what an
answer may stand on.

"What's my blood type?" asks for the value of one slot: the noun phrase after "what is" (or the
head and owner of "What breed is my dog?"), with its **head** ("type"), the words that narrow it
(**modifiers**: "blood") and whose it is (the **owner**: "the baby's name", "the code for my
locker", "my parrot called"). A turn that speaks of the slot's owner or modifiers but does not fill
its head is about a neighbouring slot, and quoting it answers a question that was not asked:

* "I donated blood yesterday." says "blood", not the blood *type*;
* "My favourite band is Khruangbin." fills "favourite band", not "favourite movie";
* "I have two cats." speaks of the cats but names none of them;
* "My sister Greta just had a baby.": Greta is the sister's name, not the baby's.

A turn **fills** the slot when it holds a value of the head's kind (a name for a name, a number for
a number, an age or a code, a colour for a colour, a name or number for any other head) that is not
another noun's: not in apposition to a different person, pet or label ("my sister Greta" asked
about the baby, "number 27" asked for a code) and not the value of a different "my X is" slot ("my
favourite band is Khruangbin" asked about the movie). A head that is not itself a kind of value
("movie", "type", "hobby") is filled too by the turn saying it, in any form (``words`` stems it) or
a word for it ("film" for "movie"): "My favourite movie is the one with the whales.", or by saying
what the owner is ("My dog is a beagle." for "What breed is my dog?"). A name, number or colour
needs the value: "I forgot my dog's name." does not fill it.

A model answer is held to the same slot: every value it gives for it must be that slot's value in
one of its notes (``grounded_for_slot``).

A turn that says none of the slot's words is not judged: people state facts indirectly ("Spent the
whole Saturday at the pottery wheel" for "What's my hobby?"), and nothing here can tell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.answering.asked import VALUED, Slot, asked_slot, plain_token
from assistant.answering.referents import SLOT, names
from assistant.answering.values import LABEL_HEADS, anothers, token_stems, values_in
from assistant.retrieval.lexical import stem, words

# "is a beagle", "is an accountant", "is the Brompton": a noun phrase after "my X is"
WHAT_IT_IS = re.compile(r"(?:a|an|the)\s+\w|[A-Z]")


def speaks_of(text: str, slot: Slot) -> bool:
    """Does the turn say a word of the slot (its head, a modifier, the owner)?"""
    return bool(set(words(text)) & slot.words) or bool(token_stems(text) & slot.words)


def _states_owner(text: str, slot: Slot) -> bool:
    """Does the turn say what the owner is ("My dog is a beagle." for "What breed is my dog?"), not
    what it does ("My brother is coming over.")?"""
    for m in SLOT.finditer(text):
        said = m.group(1).lower().split()
        if stem(plain_token(said[-1])[0]) in slot.owner and WHAT_IT_IS.match(text[m.end() :]):
            return True
    return False


def fills(text: str, slot: Slot, question: str = "") -> bool:
    """Does the turn fill the slot: say its head (in a form or a word for it), or hold a value of
    its kind that is not another noun's (beyond the names the question says itself)?"""
    tokens = set(words(text)) | token_stems(text)
    said = tokens & slot.forms
    if slot.head in LABEL_HEADS:
        return bool(said)  # "gate B7": a label is filled where it is said
    modifiers = slot.around - slot.owner
    if modifiers & LABEL_HEADS and not modifiers & LABEL_HEADS & tokens:
        return False  # "my seat number": "platform 12" is a number, not the seat's
    if slot.head not in VALUED and (said or (not modifiers and _states_owner(text, slot))):
        return True  # "My car is a silver Toyota" says what the car is, not its "licence plate"
    asked = names(question) if question else frozenset()
    opening = speaks_of(text, slot)
    return any(v not in asked and not anothers(text, v, at, slot) for v, at in values_in(text, slot, opening))


def judged(notes: Sequence, question: str) -> tuple[list, bool]:
    """The notes an answer to ``question`` may stand on, and whether the honest reply is "I don't
    know" (``notes``: anything with ``role`` and ``content``, best first, returned in their order).

    A note that speaks of the asked slot without filling it is left out: neither a quote of it nor
    a model answer naming its values answers the question ("Greta" is the sister's, not the baby's).
    "I don't know" when a note speaks of the slot and none fills it -- the user's statements, or,
    without any, the assistant's turns (the user's own words are the facts). A question of no slot's
    shape, or notes that say none of its words, keep every note and decide nothing."""
    slot = asked_slot(question)
    if slot is None:
        return list(notes), False
    speaking = [n for n in notes if speaks_of(n.content, slot)]
    if not speaking:
        return list(notes), False
    filling = [n for n in notes if fills(n.content, slot, question)]
    told = [n for n in filling if n.role == "user"]
    if not (told if any(n.role == "user" for n in notes) else filling):
        return [], True
    beside = {id(n) for n in speaking} - {id(n) for n in filling}
    return [n for n in notes if id(n) not in beside], False


def slot_values(notes: Sequence, slot: Slot) -> set[str]:
    """The slot's values in the notes: of the head's kind and not another noun's."""
    return {v for n in notes for v, at in values_in(n.content, slot) if not anothers(n.content, v, at, slot)}


def values_said(answer: str, slot: Slot) -> set[str]:
    """The values of the slot's kind an answer gives."""
    return {v for v, _ in values_in(answer, slot)}


def grounded_for_slot(answer: str, notes: Sequence, question: str) -> bool:
    """Does every value the answer gives for the asked slot come from a note, as that slot's value
    and not another noun's? ("The baby's name is Greta." from "My sister Greta just had a baby." does
    not: Greta is the sister's.) True when the question asks for no slot."""
    slot = asked_slot(question)
    if slot is None:
        return True
    return values_said(answer, slot) - names(question) <= slot_values(notes, slot)
