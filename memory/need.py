"""The need estimator's pure part: causal features of a turn at arrival, and the model that turns
them into a prior expected need (the probability that a later question will need this turn).

Why a prior: on LoCoMo most of what a policy can win is knowing *which* turns will be needed, not
*when*; a quarter of turns are evidence, and the rate depends on what the turn says and where it
stands (long turns, a session's opening turns, answers to questions, turns with names, numbers and
dates are needed more). The prior is computed once, when the turn arrives, from what is known then
(nothing about later turns), and handed to the layer as a number: the layer never sees text.

``ArrivalContext`` keeps the little a conversation must remember to compute the features of the
next turn (position in the session, the previous turn, the recent questions' embeddings, the
content words of the last ``NOVELTY_TURNS`` turns, who spoke them). A turn that brings words the conversation has
not used lately is likelier to state a fact a question will ask about than one that reuses them.

Who speaks is a feature: in a chat with an assistant nearly all the evidence a question asks about
is the person's (their plans, their family, what they bought), while the assistant's long answers
are rarely asked about again. The role features are the turn's role, the previous turn's, whether
the turn is the person's first in the session and how many of theirs came before in it, its length
against the same role's recent turns (assistant turns are long, so raw length alone would favour
them), the length of the person's last turn (what an answer answers), and whether the conversation
has an assistant at all (this turn or one of the last ``NOVELTY_TURNS``): what is needed differs
between two people talking and a person asking an assistant, and this lets one model tell them apart.

What marks a person's turn as stating a lasting fact about themselves rather than asking a
one-off question (``STATEMENT_FEATURES``): an aside ("by the way, I just got ..."), words that date
an event of theirs ("recently", "ago", "so far"), things they did or have ("I bought", "we've been"),
first-person sentences that ask nothing, and how many numbers (amounts, counts, dates) it gives;
and (``FACT_FEATURES``, ``memory/need_text.py``) names none of the last ``NOVELTY_TURNS`` turns used
and "my/our <word>" phrases.

The model comes from a small versioned JSON document (``model_from_dict``): a logistic regression
or small boosted trees, both evaluated with numpy (``memory/need_models.py``, re-exported here);
loading the file is the application's job (``assistant/need.py``).
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from memory import need_models
from memory.need_models import NeedModel, TreeNeedModel, model_from_dict
from memory.need_text import FACT_FEATURES, fact_features, names

__all__ = [
    "ArrivalContext",
    "FEATURES",
    "NeedModel",
    "TreeNeedModel",
    "content_words",
    "model_from_dict",
    "text_features",
    "vector",
]

MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
TIME_WORDS = (
    "yesterday today tomorrow tonight week weekend month year ago last next monday tuesday "
    "wednesday thursday friday saturday sunday morning evening night birthday"
)
_DATE = re.compile(r"\b(?:{})\b".format("|".join((MONTHS + " " + TIME_WORDS).split())), re.IGNORECASE)
_NUMBER = re.compile(r"\d")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_PHOTO = "[shares photo:"
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|me|we|our)\b")
# what marks a turn as stating a lasting fact about the speaker rather than asking a one-off question:
# an aside ("by the way, I just got ..."), words that date an event of theirs, things they did or have
_ASIDE = re.compile(
    r"\b(?:by the way|btw|speaking of|incidentally|oh,? and|on a (?:side|related) note)\b", re.IGNORECASE
)
_RECENT = re.compile(
    r"\b(?:recently|just|lately|currently|finally|already|since|ago|used to|anymore|so far"
    r"|for (?:about|over|the past))\b",
    re.IGNORECASE,
)
_DID = re.compile(
    r"\b(?:I|I've|I'd|(?i:we|we've))\s+(?:\w+ly\s+|also\s+|just\s+|already\s+|been\s+|have\s+|had\s+)*"
    r"(?:[a-z]+ed|got|bought|went|made|did|had|took|saw|met|spent|found|gave|won|ran|began|wrote|read|sold|paid|"
    r"left|came|brought|built|kept|lost|felt|heard|told|tried|been|done|gone|seen|taken|given|started|finished)\b"
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?\n]*")
_NUMBERS = re.compile(r"\$?\d[\d,.:/]*")

RECENT_QUESTIONS = 4  # questions remembered for the similarity feature
NOVELTY_TURNS = 80  # a word is new when none of this many previous turns used it
# words too common in chat to say anything new (lower case; words of 1-2 letters never count)
STOPWORDS = frozenset(
    """
a an the and or but if of to in on at for with from by about as is are was were be been being am do does
did have has had i me my mine we us our you your yours he him his she her they them their it its this that
these those there here what when where who how why which so just really too very not no yes yeah oh wow hey
hi thanks thank lol haha can could would should will shall may might must up out over more most much many
some any all one get got go going gonna like love good great nice awesome amazing sounds sound that's it's
i'm i've you're that’s it’s i’m don't didn't can't know think feel feeling felt make made
time things thing lot also well""".split()
)

# Who says the turn and where it stands in the exchange (the last features of the vector).
ROLE_FEATURES = (
    "assistant",
    "prev_assistant",
    "user_opens_session",
    "log_session_user_index",
    "log_words_vs_role",
    "log_prev_user_words",
    "with_assistant",
)
# What marks a turn as the speaker's statement of a fact about themselves (``text_features``).
STATEMENT_FEATURES = ("aside", "recent", "did", "statements", "numbers")
# Feature names, in the order of the vector ``features`` returns (the model file names them too).
FEATURES = (
    (
        "log_words",
        "question",
        "number",
        "year",
        "date_words",
        "names",
        "photo",
        "first_person",
        "exclaim",
    )
    + STATEMENT_FEATURES
    + FACT_FEATURES
    + (
        "session_index_0",
        "session_index_1",
        "log_session_index",
        "after_question",
        "sim_prev",
        "sim_recent_question",
        "log_prev_words",
        "log_new_words",
        "frac_new",
    )
    + ROLE_FEATURES
)
ROLE_TURNS = 20  # a turn's length is compared with the same role's turns among this many previous ones


def _names(text: str) -> int:
    """Capitalised words that do not start a sentence: a cheap count of names and places."""
    words = text.split()
    count = 0
    for prev, word in zip([""] + words, words):
        if (
            word[:1].isupper()
            and word not in ("I", "I'm", "I've", "I'll", "I'd")
            and prev[-1:] not in (".", "!", "?", "")
        ):
            count += 1
    return count


def text_features(text: str) -> dict[str, float]:
    """What the turn's own text says (no context)."""
    words = len(_WORD.findall(text))
    return {
        "log_words": math.log1p(words),
        "question": 1.0 if "?" in text else 0.0,
        "number": 1.0 if _NUMBER.search(text) else 0.0,
        "year": 1.0 if _YEAR.search(text) else 0.0,
        "date_words": math.log1p(len(_DATE.findall(text))),
        "names": math.log1p(_names(text)),
        "photo": 1.0 if _PHOTO in text else 0.0,
        "first_person": math.log1p(len(_FIRST_PERSON.findall(text))),
        "exclaim": 1.0 if "!" in text else 0.0,
        "aside": 1.0 if _ASIDE.search(text) else 0.0,
        "recent": math.log1p(len(_RECENT.findall(text))),
        "did": math.log1p(len(_DID.findall(text))),
        "statements": math.log1p(_statements(text)),
        "numbers": math.log1p(len(_NUMBERS.findall(text))),
    }


def _statements(text: str) -> int:
    """Sentences in the first person that ask nothing: what the speaker says of themselves."""
    return sum(1 for s in _SENTENCE.findall(text) if "?" not in s and _FIRST_PERSON.search(s))


def content_words(text: str) -> frozenset[str]:
    """The turn's words that can carry news: lower-cased, three letters or more, not stopwords."""
    return frozenset(w for w in (m.lower() for m in _WORD.findall(text)) if len(w) > 2 and w not in STOPWORDS)


def log_words(text: str) -> float:
    return math.log1p(len(_WORD.findall(text)))


def _cos(a: np.ndarray | None, b: np.ndarray | None) -> float:
    if a is None or b is None:
        return 0.0
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(np.dot(a, b)) / (na * nb) if na and nb else 0.0


@dataclass
class ArrivalContext:
    """What a conversation remembers to compute the next turn's features: causal by construction
    (it is only ever told about turns that have arrived).

    ``role`` is who speaks, as the app stores it: ``user`` (a person) or ``assistant`` (the model).
    A conversation between two people (LoCoMo) is all ``user``: both speakers are people, as the
    app stores a person's messages, and which of them speaks is not a role."""

    session_index: int = 0  # turns before this one in the current session
    session_users: int = 0  # user turns before this one in the current session
    prev_text: str | None = None
    prev_vector: np.ndarray | None = None
    prev_role: str | None = None
    prev_user_words: float = 0.0  # log words of the last user turn (0 before any)
    questions: deque = field(default_factory=lambda: deque(maxlen=RECENT_QUESTIONS))
    recent_words: deque = field(default_factory=lambda: deque(maxlen=NOVELTY_TURNS))
    recent_lengths: deque = field(default_factory=lambda: deque(maxlen=ROLE_TURNS))  # (role, log words)
    recent_roles: deque = field(default_factory=lambda: deque(maxlen=NOVELTY_TURNS))
    recent_names: deque = field(default_factory=lambda: deque(maxlen=NOVELTY_TURNS))  # lower-cased, per turn

    def features(
        self, text: str, vector: np.ndarray | None = None, new_session: bool = False, role: str = "user"
    ) -> dict[str, float]:
        """The features of a turn arriving now; then remember it (call once per turn, in order)."""
        if new_session:
            self.session_index = 0
            self.session_users = 0
        f = text_features(text)
        user = role != "assistant"
        # a person's facts: an assistant's turn scores 0 (its names are still seen, so not new later)
        seen = frozenset().union(*self.recent_names)
        f.update({k: v if user else 0.0 for k, v in fact_features(text, seen).items()})
        self.recent_names.append(frozenset(names(text)))
        f["assistant"] = 0.0 if user else 1.0
        f["prev_assistant"] = 1.0 if self.prev_role == "assistant" else 0.0
        f["user_opens_session"] = 1.0 if user and self.session_users == 0 else 0.0
        f["log_session_user_index"] = math.log1p(self.session_users)
        same = [w for r, w in self.recent_lengths if (r != "assistant") == user]
        f["log_words_vs_role"] = f["log_words"] - sum(same) / len(same) if same else 0.0
        f["log_prev_user_words"] = self.prev_user_words
        f["with_assistant"] = 1.0 if not user or "assistant" in self.recent_roles else 0.0
        i = self.session_index
        f["session_index_0"] = 1.0 if i == 0 else 0.0
        f["session_index_1"] = 1.0 if i == 1 else 0.0
        f["log_session_index"] = math.log1p(i)
        prev = self.prev_text
        f["after_question"] = 1.0 if prev is not None and "?" in prev else 0.0
        f["log_prev_words"] = log_words(prev) if prev is not None else 0.0
        f["sim_prev"] = _cos(vector, self.prev_vector)
        f["sim_recent_question"] = max((_cos(vector, q) for q in self.questions), default=0.0)
        words = content_words(text)
        new = len(words.difference(*self.recent_words)) if self.recent_words else len(words)
        f["log_new_words"] = math.log1p(new)
        f["frac_new"] = new / len(words) if words else 0.0
        self.recent_words.append(words)
        self.session_index = i + 1
        self.session_users += 1 if user else 0
        self.recent_lengths.append((role, f["log_words"]))
        self.recent_roles.append(role)
        if user:
            self.prev_user_words = f["log_words"]
        self.prev_text, self.prev_vector, self.prev_role = text, vector, role
        if "?" in text and vector is not None:
            self.questions.append(vector)
        return f


def vector(features: Mapping[str, float], names: Sequence[str] = FEATURES) -> np.ndarray:
    return need_models.vector(features, names)
