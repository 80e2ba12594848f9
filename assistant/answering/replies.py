"""The embedded model's short reply to a message not answered from memory (a statement, a
question to the assistant), kept only when it passes the checks an answer passes."""

from __future__ import annotations

import re

from assistant.answering.agreement import I_PHRASE
from assistant.answering.answerable import narrates_user
from assistant.answering.cleaning import SENTENCE_END, cap_text, clean_answer, cut_at_title
from assistant.answering.note import salient
from assistant.answering.prompts import GROUNDED_TEMPERATURE, ONE_SENTENCE, context_messages
from assistant.answering.values import ROLE_WORDS
from assistant.answering.wording import WORDINGS, language
from assistant.retrieval.lexical import words

ACKNOWLEDGEMENT = WORDINGS["en"].noted
REPLY_MAX_TOKENS = 40
# what an acknowledgement may say beside the user's own words ("Sounds great, good luck!"); any
# other word is a claim of the model's own ("I'm here to help with any medical tasks")
ACK_WORDS = frozenset(
    words(
        "great good nice glad lovely wonderful awesome cool fun exciting interesting amazing fantastic "
        "sound sounds hear noted okay ok sure welcome luck congratulations congrats hope enjoy remember "
        "keep mind sharing letting telling news wish best happy sorry fine alright right note noted wow "
        "that's exciting"
    )
) - {"right"}
AS_OURS = re.compile(r"(?i)\b(my|mine|our|ours|we|we're|we've|we'll|us)\b")
ECHO_SHARE = 0.5
WHO = re.compile(r"(?i)^\s*(?:who|whom|whose|who's|whos)\b")


# a reply that opens by calling someone by name: it speaks to them, not to the user
TO_SOMEONE = re.compile(r"^\s*([A-Z][\w'-]+)\s*,")


def _a_persons(name: str, message: str) -> bool:
    """Is ``name`` said in the message beside a role, as a person ("my neighbour Gwen"), not a place?"""
    before = re.findall(rf"(?i)\b([\w'-]+)\s+{re.escape(name)}\b", message)
    return any(w.lower() in ROLE_WORDS for w in before)


def acknowledges(reply: str, message: str) -> bool:
    """Does the model's reply to a statement pass the checks an answer passes? No name or number of
    its own, no word beyond the user's and an acknowledgement's (no invented role, service or
    claim), not the user's sentence spoken back ("We just moved to Tampere.", "You're right, I
    should rephrase to: ...", or most of the user's words again), not garbled (a quote left open)
    nor spoken to someone the user named ("Gwen, ..."), and an acknowledgement's word in it, not an echo
    of a value alone ("BF7731Q:")."""
    if salient(reply) - salient(message) or AS_OURS.search(reply):
        return False
    called = TO_SOMEONE.match(reply)
    if reply.count('"') % 2 or (called and _a_persons(called.group(1), message)):
        return False  # garbled ('Gwen, "I'm sorry to hear that'), or spoken to someone the user named
    theirs = {(a.lower(), b.lower()) for a, b in I_PHRASE.findall(message)}
    if any((a.lower(), b.lower()) in theirs for a, b in I_PHRASE.findall(reply)):
        return False
    said, told = set(words(reply)), set(words(message))
    if said - told - ACK_WORDS or not said & ACK_WORDS:
        return False  # a word of its own, or no acknowledgement at all ("BF7731Q:")
    return not told or len(said & told) / len(told) <= ECHO_SHARE


def names_no_one(reply: str, message: str) -> bool:
    """Is the reply to a "who" question one that names no one ("The reading group is led by a team
    of experts")? A name of the model's own is refused, so a reply that passes names no one, and it
    does not answer."""
    return bool(WHO.match(message)) and not salient(reply)


def statement_reply(llm, message: str, cap: int, count, statement: bool = True) -> tuple[str, str]:
    """The embedded model's short reply to a message that is not answered from memory (its first
    sentence), from that message alone. For a statement (``statement``) the reply is kept only when
    it ``acknowledges`` it; for a question to the assistant ("Can you tell me a joke?") when it
    brings no names or numbers of its own (the 135M model invents cities) and does not speak of the
    user in the third person ("The user's last message is a non-response"). A reply in another
    language than the message's, or one cut short at a title ("The plumber is called Mr"), is
    refused too. A refused reply becomes, in the user's language, a
    plain acknowledgement of a statement, or "I'm not sure." for a question: a question is never
    answered "Noted.". Returns (reply, how: ``model``, ``acknowledged`` or ``unsure``)."""
    messages = context_messages([], [], message, count, None)
    text = clean_answer(
        llm.complete(
            messages, max_tokens=min(cap, REPLY_MAX_TOKENS), temperature=GROUNDED_TEMPERATURE, extra_body=ONE_SENTENCE
        )
        or ""
    )
    # one sentence: the model's chatter after it is stored in memory too, and pushes the user's
    # own statements out of a small budget
    text = SENTENCE_END.split(text, maxsplit=1)[0] if text else ""
    lang = language(message)
    ok = (
        acknowledges(text, message)
        if statement
        else not (salient(text) - salient(message) or narrates_user(text, message) or names_no_one(text, message))
    )
    if not text or cut_at_title(text) or not ok or language(text) != lang:
        if not statement:
            return WORDINGS[lang].not_sure, "unsure"
        return WORDINGS[lang].noted, "acknowledged"
    return cap_text(text, cap, count), "model"
