"""Whose a price is: a clause that prices a thing of its own is no answer to the price of another.

"How much is the filling going to cost me?" is not answered by "The receptionist told me the
check-up itself costs £28.50.", nor "How much does the textbook cost?" by "The course runs for ten
weeks and cost me £145.": each clause says what it prices, and it is not what was asked. A clause
whose only things are people or pronouns ("she charges £12 a walk") prices what its turn is about.

Money has names of its own: a deposit, a joining fee, the tax owed, an hourly rate. A clause that
names money by another of them ("I paid a £120 deposit") does not answer a question naming one
("What's the total cost of my hotel stay?"): ``other_money``.
"""

from __future__ import annotations

import re

from assistant.answering.heads import Asked, Similar, is_head_word
from assistant.answering.parts import parts
from assistant.answering.recase import PERSON_STEMS
from assistant.retrieval.lexical import WORD, stem

# words after a determiner that name no thing of their own ("a lot", "the whole", "the same")
NO_THINGS = frozenset(
    """one other same lot bit few couple little new old next last first whole total rest week month day year time
way i he she it we they you me him her them us""".split()
)
# what a price question asks with, not the thing priced ("How much does the textbook cost?")
PRICE_WORDS = frozenset(stem(w) for w in "cost costs price charge charges fee pay paid much spend spent".split())
# a thing said with a determiner ("the check-up", "a £15 deposit"), not a unit after an amount ("£12 a walk")
THING_SAID = re.compile(
    r"(?i)(?<![\d£$€])(?<![\d£$€]\s)\b(?:the|my|our|this|that|a|an)\s+(?:[£$€]?\d[\d.,]*\s+)?([a-z][\w-]*)"
)


def priced_other(clause: str, asked: Asked, similar: Similar) -> bool:
    """Does the clause price a thing of its own and never say the thing asked ("the course runs for
    ten weeks and cost me £145" for "how much does the textbook cost?")? A clause whose only things
    are people or pronouns ("she charges £12 a walk") prices what the turn is about."""
    things = [m.group(1).lower() for m in THING_SAID.finditer(clause)]
    things = [t for t in things if t not in NO_THINGS and stem(t) not in PERSON_STEMS]
    asked_things = asked.thing - PRICE_WORDS
    if not things or not asked_things:
        return False
    return not any(is_head_word(t.lower(), asked_things, asked, similar) for t in WORD.findall(clause))


# the names of a sum of money that say which sum it is; one line, one sum ("price", "cost", "charge"
# and "pay" say only that it is money)
_MONEY = (
    "deposit deposits",
    "total totals bill",
    "tax taxes",
    "tip tips",
    "fare fares",
    "rent",
    "salary wage wages income earnings",
    "rate rates hourly",
    "fee fees",
    "membership subscription",
    "premium premiums",
    "excess",
    "interest",
    "balance",
    "refund",
    "fine fines",
    "quote quoted estimate",
    "budget",
    "call-out callout",
    "loan",
)
# a sum of money: a number after a currency sign or before a currency's name or a per cent
SUM = re.compile(r"(?i)[£$€]\s?\d|\d[\d,.]*\s*(?:k\b|quid|pounds?|euros?|dollars?|bucks|grand|%|p\b)")
MONEY_NAMES = {w: i for i, line in enumerate(_MONEY) for w in line.split()}


def _money(text: str) -> set[int]:
    return {MONEY_NAMES[w] for w in re.findall(r"[a-z][\w-]*", text.lower()) if w in MONEY_NAMES}


def other_money(clause: str, question: str) -> bool:
    """Does the clause name each sum of money it says by other names than the question does ("I paid
    a £120 deposit" for "What's the total cost of my hotel stay?", "membership is £34.99 a month" for
    "how much was the joining fee")? A sum said with no name ("its £34.99 a month and theres a joining
    fee of £20": the first) may be the one asked; without a name in the question, no one can tell."""
    asked = _money(question)
    summed = [p for p in parts(clause, at_and=True) if SUM.search(p)]
    if not asked or not summed:
        return False
    return all((said := _money(p)) and not asked & said for p in summed)
