"""What the user's message is: a question or a statement, about the user or not, and -- when it
states a fact and asks about it at once -- which part states and which part asks.

The embedded default answers a question from notes and acknowledges a statement, so this decides
the path of every exchange. Rules of English chat, no model:

* **A question** ends with a question mark or opens with a question word, unless the question is a
  tag on a statement about the user ("I'm 34, can you believe it?"): then the user is telling.
* **About the user**: the asking part speaks of the user ("When is my trip?"), not of the
  assistant or the world ("Can you tell me a fact about the sea?": "me" in a request does not
  count). Only then may memory be quoted when nothing was cited, and only then is "I don't know"
  the honest reply when memory holds nothing.
* **A fact and its question in one message** ("My sister Ana moves to Porto in June. Where is she
  moving?"): the sentences (or the clause before ", so when ...") that state are the fact, the
  rest is the question; the fact part counts when it shares a word with the question or the
  question points back at it ("she", "it", "there").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.answering.kinds import asks_which, expected_kind, kind_beyond, names_a_thing
from assistant.retrieval.lexical import words

# question words, also as typed without the apostrophe ("whats my boyfriends name")
# and as typed in a hurry ("wat time is my flite", "wen does she arrive")
WH_WORDS = r"what|whats|wat|wats|wot|when|whens|wen|where|wheres|wher|who|whos|whom|whose|which|why|how|hows"
QUESTION_START = re.compile(rf"(?i)\s*({WH_WORDS}|do|does|did|is|are|can|could|tell me|remind me)\b")
WH = re.compile(rf"(?i)\b({WH_WORDS})\b")
# also as typed without the apostrophe ("whats the place im staying at called?")
SELF_WORDS = re.compile(r"(?i)\b(i|i'm|im|i'll|i've|ive|i'd|me|my|mine|myself|we|we're|we've|us|our|ours)\b")
SELF_START = re.compile(r"(?i)^\s*(i|i'm|im|i'll|i've|ive|i'd|my|we|we're|we'll|we've|our)\b")
REQUEST = re.compile(r"(?i)\b(tell|give|show|help|let|teach|send|explain to)\s+(me|us)\b")
# "Can you ...", "Could you ...": the user asks the assistant to do something, not to recall
ASKS_A_FAVOUR = re.compile(r"(?i)^\s*(please\b|(can|could|would|will|should|shall)\s+(you|u|we)\b|let's\b)")
POINTS_BACK = re.compile(r"(?i)\b(he|she|it|they|him|her|them|his|its|their|there|that|this)\b")
# the full stop of a title or a common abbreviation ("Dr. Okonkwo", "St. Mark's") ends no sentence
TITLES = ("Dr", "Mr", "Mrs", "Ms", "Mx", "Prof", "St", "Mt", "Sr", "Jr", "Capt", "Lt", "Gen", "Rev", "No", "approx")
NOT_AN_END = "".join(rf"(?<!\b{t}\.)" for t in TITLES)
SENTENCE = re.compile(NOT_AN_END + r"(?<=[.!?。！？])\s+")
# where a question starts inside one sentence: after a comma, semicolon or dash ("I'm allergic to
# cashews — which nut am I allergic to?"), or after chat filler with no stop at all ("spare key is
# under the blue pot lol where's the spare key")
CLAUSE_QUESTION = re.compile(
    r"(?i)(?:[,;:]|\s[—–-])\s*(?:so|and|but|then|ok|okay)?\s*"
    rf"(?=({WH_WORDS}|do|does|did|is|are|can|remind me)\b)"
    rf"|\s(?:lol|lmao|haha|hahaha|anyway|btw|ok so|so)\s+(?=({WH_WORDS})\b)"
)
# a question typed with no question mark after its statement, as the message's last clause
# ("parked on level 3 spot G14, whats my spot number"; "... lol where's the spare key")
TRAILING_QUESTION = re.compile(
    rf"(?i)(?:[,;]|\s[—–-]|\s(?:lol|lmao|haha|hahaha|anyway|btw))\s*(?:so|and|but|ok|okay)?\s*(?:{WH_WORDS})"
    r"(?:'s|’s)?\s+(?:is|are|was|were|do|does|did|my|our|the|time|day|year|colou?r|kind|much|many|long|old|he|she|"
    r"they|i|we)\b[^,;.!?]*$"
)
# a question typed straight after its statement with no stop, by a question word run into "my"
# ("flight home is ua 872 whats my flight number"), or asked as a favour after a comma ("dentist appt is
# monday at 8:45, can u tell me when my dentist appt is")
RUN_ON_QUESTION = re.compile(
    r"(?i)\s(?=(?:whats|what's|what’s|wheres|where's|whos|who's|whens|when's)\s+my\b[^,;.!?]*$)"
    rf"|[,;]\s*(?:so\s+)?(?:can|could)\s+(?:you|u)\s+(?:tell|remind)\s+me\s+(?=(?:{WH_WORDS})\b[^,;.!?]*$)"
)
# a sentence that asks with a question word and a question mark, not an exclamation ("how cool is
# that?", "who knew?", "what are the odds?")
WH_QUESTION = re.compile(
    rf"(?i)\s*(?:so\s+|and\s+|oh\s+)?(?!how\s+\w+\s+is\s+that|who\s+knew|why\s+not|what\s+are\s+the\s+odds)"
    rf"({WH_WORDS})\b[^.!?]*\?\s*$"
)
# "remind me" before a fact is the user telling it, not a request ("remind me, my dentist
# appointment is friday ...")
REMIND = re.compile(r"(?i)^\s*(?:so\s+|ok\s+|oh\s+)?remind me\b\s*[,:]?\s*")


def _clauses(text: str) -> list[str]:
    return [c for c in re.split(r"[,;.!?:]+", text) if c.strip()]


def is_question(message: str) -> bool:
    """Does the user ask? A question mark or an opening question word -- unless the question is a
    tag on a statement about the user ("I'm 34, can you believe it?", "We met on Friday, right?"):
    then the user is telling, and gets a statement's reply."""
    text = message.rstrip()
    if not (
        text.endswith(("?", "？", "¿"))
        or QUESTION_START.match(text)
        or TRAILING_QUESTION.search(text)
        or RUN_ON_QUESTION.search(text)
    ):
        # a question with a remark after it ("what was his surname again? want to save him in my phone")
        return any(WH_QUESTION.match(s) for s in SENTENCE.split(text)[:-1])
    clauses = _clauses(text)
    if len(clauses) < 2:
        return True
    last = clauses[-1]
    tag = not WH.search(last) and not SELF_WORDS.search(last)
    return not (tag and any(SELF_START.match(c) for c in clauses[:-1]))


def states(text: str) -> bool:
    """Does the user's turn state something? Not a question, or a question beside a statement
    about themselves ("My name is Sam, what's yours?")."""
    return not is_question(text) or any(SELF_START.match(c) and not WH.search(c) for c in _clauses(text))


def about_the_user(message: str) -> bool:
    """Does the question ask about the user ("When is my trip?"), not the assistant ("How are
    you?", "My name is Sam, what's yours?": the asking part counts) or the world ("Can you tell me
    a fact about the sea?": "me" in a request does not count)? Only then is a guess from memory
    worth quoting when nothing was cited."""
    sentences = [s for s in SENTENCE.split(message.strip()) if s.strip()]
    # the sentences that ask: "do u know any good podcasts? i like true crime" asks of the world
    asking_sentences = [s for s in sentences if is_question(s)] if len(sentences) > 1 else sentences
    clauses = _clauses(REQUEST.sub(" ", " ".join(asking_sentences or sentences)))
    asking = [i for i, c in enumerate(clauses) if QUESTION_START.match(c) or WH.search(c)]
    part = clauses[asking[-1] :] if asking else clauses
    return any(SELF_WORDS.search(c) for c in part)


def recalls(question: str) -> bool:
    """A question about the user that only memory can answer ("What's my dog called?", "Do I eat
    meat?"), not a favour asked of the assistant ("Can you help me plan my week?"): when memory
    holds nothing for it, the honest reply is "I don't know"."""
    return is_question(question) and about_the_user(question) and not ASKS_A_FAVOUR.match(question)


@dataclass(frozen=True, slots=True)
class Parts:
    """A message split into what it states (``stated``, "" when nothing) and what it asks."""

    stated: str
    asked: str


# "what" typed as said ("wat time do i drop the car off?")
SPOKEN_WHAT = re.compile(r"(?i)\b(?:wat|wot|wut)\b")


def split(message: str) -> Parts:
    """The fact and the question of a message that holds both ("I parked on level 3, spot C12.
    Where did I park?"; "My mum's birthday is on the 23rd, so when is her birthday?"; "remind me, my
    dentist is Dr Okafor. who is my dentist?"). The fact part is kept only when it is about the
    question: it shares a word with it, the question points back at it ("Where is *she* moving?"),
    both speak of the user ("my favourite colour is teal. what's my favorite color?"), or it gives a
    value of the kind asked ("the goal is 6000 by december. how much am i saving?"), or names a thing
    for a question asking which ("the letting agent is Brightmoor Lettings, which agency is handling
    the flat?"); "Hey, where did I park?" states nothing. "wat" and "wot" are read as "what"."""
    text = SPOKEN_WHAT.sub("what", message.strip())
    sentences = [s for s in SENTENCE.split(text) if s.strip()]
    if len(sentences) > 1:
        asked, told = [], []
        for s in sentences:
            if not _asks(s):
                told.append(REMIND.sub("", s))
                continue
            # "oh and i start at 8:30, what time do i need to be there?": the fact before the question
            fact, question = _clause_split(s)
            told += [fact] if fact else []
            asked.append(question)
    else:
        if not is_question(text):
            return Parts("", text)
        fact, question = _clause_split(text)
        if not fact:
            return Parts("", text)
        told, asked = [fact], [question]
    told = [s for s in told if words(s)]  # "Hey." states nothing
    if not asked or not told:
        return Parts("", text)
    stated, question = " ".join(told).strip(), " ".join(asked).strip()
    shared = set(words(stated)) & set(words(question))
    # "remind me, what's ...?" asks about what the user told
    about_me = SELF_WORDS.search(stated) and (REMIND.match(question) or SELF_WORDS.search(REQUEST.sub(" ", question)))
    # "the price was £1,249 btw, how much is the sofa?": a value of the kind asked, given in the
    # same breath, is the answer the user supplies, whatever words it is said with
    kind = expected_kind(question)
    if kind is not None:
        supplies = kind_beyond(stated, kind, question)
    else:
        supplies = asks_which(question) and names_a_thing(stated)
    if not shared and not POINTS_BACK.search(question) and not about_me and not supplies:
        return Parts("", text)
    return Parts(stated, question)


def _clause_split(sentence: str) -> tuple[str, str]:
    """A sentence that asks, as (the statement before its question, the question): the last clause
    opening with a question word, or a question run on after its fact. ("", the sentence) when the
    question opens it, or only "remind me" comes before it."""
    clauses = list(CLAUSE_QUESTION.finditer(sentence))  # the last one that opens with a question word
    m = RUN_ON_QUESTION.search(sentence) or (clauses[-1] if clauses else None)
    fact = REMIND.sub("", sentence[: m.start()]).strip() if m is not None else ""
    if not words(fact) or QUESTION_START.match(fact):
        # "remind me, what's the network called?", "where do we practise, what road is it on?" ask whole
        return "", sentence
    return fact + ".", sentence[m.end() :].strip()


def _asks(sentence: str) -> bool:
    """A sentence of a message that asks: "remind me, <a statement>" tells."""
    rest = REMIND.sub("", sentence, count=1)
    return is_question(rest) if rest != sentence else is_question(sentence)
