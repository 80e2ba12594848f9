"""The fixed sentences the embedded default says itself, in the user's language.

When the 135M model's text cannot be trusted the user gets a sentence of ours -- a quote of their
own turn ("You told me (turn 3): ..."), "I am not sure; ...", "Noted.", "I don't know; ...", "I'm not
sure." -- and a user who writes Spanish should not get it in English. The language is guessed from
the user's message by counting its function words (a handful of common European languages; anything
else, or a tie, is English): a message is short, so a few frequent words decide, and no model is needed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARKERS = {
    "en": "the my is are what when where who which how do does did i you me a an of to in and it",
    "es": "el la los las mi mis es qué cómo dónde cuándo quién cuál se llama tengo soy y de en un una "
    "por para con mí estoy",
    "fr": "le la les mon ma mes est que quelle quel où quand qui comment je j' suis ai et de en un une "
    "est-ce moi m'appelle habite",
    "pt": "o a os as meu minha é que como onde quando quem qual se chama tenho sou e de em um uma você não eu moro",
    "de": "der die das mein meine ist was wie wo wann wer welche ich bin habe und von in ein eine heiße wohne",
    "it": "il lo la i gli le mio mia è che come dove quando chi quale si chiama ho sono e di in un una abito",
}
_WORDS = {lang: frozenset(ws.split()) for lang, ws in _MARKERS.items()}
_TOKEN = re.compile(r"[^\W\d_]+(?:'|-[^\W\d_]+)?")


@dataclass(frozen=True, slots=True)
class Wording:
    told: str  # a quote of the user's turn: told.format(n=3) + the text
    said: str  # a quote of the assistant's own turn
    unsure: str  # before a guess: unsure + the quote (its first letter lower-cased)
    noted: str  # the acknowledgement of a statement
    unknown: str  # a question about the user that nothing in memory answers
    not_sure: str  # a question to the assistant whose free reply was refused (never "Noted.")


WORDINGS = {
    "en": Wording(
        "You told me (turn {n}): ",
        "I said (turn {n}): ",
        "I am not sure; the closest thing in memory: ",
        "Noted.",
        "I don't know; you haven't told me that.",
        "I'm not sure.",
    ),
    "es": Wording(
        "Me dijiste (turno {n}): ",
        "Yo dije (turno {n}): ",
        "No estoy seguro; lo más parecido en mi memoria: ",
        "Anotado.",
        "No lo sé; no me lo has dicho.",
        "No estoy seguro.",
    ),
    "fr": Wording(
        "Tu m'as dit (tour {n}) : ",
        "J'ai dit (tour {n}) : ",
        "Je ne suis pas sûr ; le plus proche dans ma mémoire : ",
        "C'est noté.",
        "Je ne sais pas ; tu ne me l'as pas dit.",
        "Je ne suis pas sûr.",
    ),
    "pt": Wording(
        "Você me disse (turno {n}): ",
        "Eu disse (turno {n}): ",
        "Não tenho certeza; o mais próximo na minha memória: ",
        "Anotado.",
        "Não sei; você não me disse.",
        "Não tenho certeza.",
    ),
    "de": Wording(
        "Du hast mir gesagt (Beitrag {n}): ",
        "Ich sagte (Beitrag {n}): ",
        "Ich bin nicht sicher; das Nächste in meinem Gedächtnis: ",
        "Notiert.",
        "Das weiß ich nicht; das hast du mir nicht gesagt.",
        "Ich bin nicht sicher.",
    ),
    "it": Wording(
        "Mi hai detto (turno {n}): ",
        "Ho detto (turno {n}): ",
        "Non sono sicuro; la cosa più vicina nella mia memoria: ",
        "Preso nota.",
        "Non lo so; non me l'hai detto.",
        "Non sono sicuro.",
    ),
}


def language(text: str) -> str:
    """The message's language among ``WORDINGS`` by function words; English unless another
    language has at least two of its words and more than English."""
    tokens = {t.lower() for t in _TOKEN.findall(text)}
    if "¿" in text:
        tokens.add("qué")  # an opening question mark is Spanish
    scores = {lang: len(tokens & ws) for lang, ws in _WORDS.items()}
    best = max(scores, key=lambda lang: (scores[lang], lang == "en"))
    return best if best == "en" or (scores[best] >= 2 and scores[best] > scores["en"]) else "en"


def wording(text: str) -> Wording:
    return WORDINGS[language(text)]
