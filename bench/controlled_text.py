"""The texts of the controlled conversations (``bench/controlled.py``), rendered from templates: facts
a person states once and asks about much later, the small talk around them, and the assistant's answers.

Every text is drawn from several templates with slots filled from the word lists of
``bench/controlled_words.py`` by the caller's seeded ``random.Random``, so no two conversations read
alike and no single phrase marks a fact: small talk also names people, places, days and numbers (a
film seen on Friday, a recipe for four), and facts come in many shapes (a person, an appointment, a
number, a preference). What a fact says is kept in ``Fact.gist`` so the answers that lean on it can
say it back in other words.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bench.controlled_words import (
    ACKS,
    AIRLINES,
    APPOINTMENTS,
    CARS,
    CITIES,
    CONTEXT,
    FILMS,
    FOODS,
    JOBS,
    MONTHS,
    NAMES,
    OPENERS,
    PET_NAMES,
    PETS,
    RELATIONS,
    SENTENCES,
    THINGS,
    TOPICS,
    WEEKDAYS,
    WORDS,
)


def _date(rng: random.Random) -> str:
    return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}"


def _time(rng: random.Random) -> str:
    return f"{rng.randint(7, 11) if rng.random() < 0.5 else rng.randint(1, 6)}:{rng.choice(('00', '15', '30', '45'))}"


@dataclass(frozen=True)
class Fact:
    statement: str  # what the person says, once
    question: str  # what they ask much later
    gist: str  # the fact in the assistant's words ("your sister Clara moved to Porto")


def fact(rng: random.Random) -> Fact:
    """One fact a person states about their life, with the question that later needs it."""
    kind = rng.randrange(10)
    name, rel, city = rng.choice(NAMES), rng.choice(RELATIONS), rng.choice(CITIES)
    if kind == 0:
        return Fact(
            rng.choice(
                (
                    f"My {rel} {name} is moving to {city} at the end of {rng.choice(MONTHS)}.",
                    f"Big news in the family: {name}, my {rel}, is relocating to {city}.",
                    f"Just found out my {rel} {name} got a place in {city}, so they're moving soon.",
                )
            ),
            rng.choice((f"Where did I say my {rel} {name} is moving to?", f"Which city is {name} moving to again?")),
            f"your {rel} {name} is moving to {city}",
        )
    if kind == 1:
        day, date, at = rng.choice(WEEKDAYS), _date(rng), _time(rng)
        appt = rng.choice(APPOINTMENTS)
        return Fact(
            rng.choice(
                (
                    f"I booked my {appt} appointment for {day}, {date} at {at}.",
                    f"Reminder for myself: {appt} on {date}, {at}. It took weeks to get that slot.",
                    f"The {appt} appointment is finally set, {day} {date} at {at}.",
                )
            ),
            rng.choice((f"When is my {appt} appointment?", f"What time did I say the {appt} appointment was?")),
            f"your {appt} appointment is on {day}, {date} at {at}",
        )
    if kind == 2:
        pet, pname = rng.choice(PETS), rng.choice(PET_NAMES)
        return Fact(
            rng.choice(
                (
                    f"We adopted a {pet} last weekend and named it {pname}.",
                    f"Meet the newest member of our household: {pname}, a {pet} from the shelter.",
                )
            ),
            rng.choice(("What's the name of the pet we adopted?", f"What did we name our new {pet}?")),
            f"you adopted a {pet} named {pname}",
        )
    if kind == 3:
        food = rng.choice(FOODS)
        return Fact(
            rng.choice(
                (
                    f"Heads up, I'm seriously allergic to {food}, so no recipes with it please.",
                    f"I should mention I can't eat {food}; I found out about the allergy last year.",
                )
            ),
            rng.choice(("What food allergy did I tell you about?", "Which ingredient did I say I'm allergic to?")),
            f"you are allergic to {food}",
        )
    if kind == 4:
        year, car = rng.randint(2017, 2023), rng.choice(CARS)
        return Fact(
            rng.choice(
                (
                    f"I finally bought a car, a {year} {car} with about {rng.randint(12, 90)},000 miles on it.",
                    f"Traded in the old hatchback for a {year} {car} yesterday.",
                )
            ),
            rng.choice(("What car did I buy?", "Which model year was the car I got?")),
            f"you bought a {year} {car}",
        )
    if kind == 5:
        code = f"{rng.choice(AIRLINES)} {rng.randint(100, 999)}"
        date, at = _date(rng), _time(rng)
        return Fact(
            rng.choice(
                (
                    f"My flight to {city} is {code}, leaving {date} at {at}.",
                    f"Booked it: {code} to {city} on {date}, departure {at}.",
                )
            ),
            rng.choice(("What was my flight number?", f"When does my flight to {city} leave?")),
            f"your flight to {city} is {code} on {date} at {at}",
        )
    if kind == 6:
        job = rng.choice(JOBS)
        return Fact(
            rng.choice(
                (
                    f"{name}, my {rel}, just started a new job as a {job}.",
                    f"My {rel} {name} got hired as a {job} after months of searching.",
                )
            ),
            rng.choice((f"What job did my {rel} {name} get?", f"What does {name} do now?")),
            f"your {rel} {name} now works as a {job}",
        )
    if kind == 7:
        amount, thing = rng.choice((1200, 2500, 3800, 450, 900, 6000, 15000)), rng.choice(THINGS)
        return Fact(
            rng.choice(
                (
                    f"I've set aside ${amount:,} for the {thing}, and not a cent more.",
                    f"The budget for the {thing} is ${amount:,}; I decided that with my partner.",
                )
            ),
            rng.choice((f"How much did I budget for the {thing}?", f"What was my limit for the {thing}?")),
            f"your budget for the {thing} is ${amount:,}",
        )
    if kind == 8:
        if rng.random() < 0.5:
            code = f"{rng.choice(WORDS)}-{rng.randint(100, 999)}"
            return Fact(
                f"Note for later: the new storage unit code is {code}.",
                rng.choice(("What was the storage unit code?", "Can you remind me of the code for the storage unit?")),
                f"the storage unit code is {code}",
            )
        code = f"{rng.randint(10, 39)}-{rng.randint(10, 39)}-{rng.randint(10, 39)}"
        return Fact(
            f"The gym locker combination they gave me is {code}, writing it here so I don't lose it.",
            rng.choice(
                ("What's my gym locker combination?", "Can you remind me of the locker combination I told you?")
            ),
            f"your gym locker combination is {code}",
        )
    day = rng.choice(WEEKDAYS)
    return Fact(
        rng.choice(
            (
                f"Our team standup moved to {day}s at {_time(rng)}, run by {name} now.",
                f"Starting next month my book club meets every other {day} at {name}'s place.",
            )
        ),
        rng.choice((f"What day did I say the meeting with {name} is?", f"Who runs the {day} meeting now?")),
        f"the {day} meeting with {name}",
    )


def with_context(rng: random.Random, message: str, share: float = 0.6) -> str:
    """A message with a sentence or two of context around it, as people write to an assistant."""
    if rng.random() >= share:
        return message
    extra = rng.sample(CONTEXT, rng.choice((1, 1, 2, 3)))
    return " ".join(extra + [message]) if rng.random() < 0.6 else " ".join([message] + extra)


def chatter(rng: random.Random) -> str:
    """Small talk or a general request: what most of a person's messages are."""
    return with_context(rng, _chatter(rng))


def _chatter(rng: random.Random) -> str:
    topic, film, name = rng.choice(TOPICS), rng.choice(FILMS), rng.choice(NAMES)
    return rng.choice(
        (
            f"Can you recommend a few good resources on {topic}?",
            f"I've been getting into {topic} lately. Any beginner tips?",
            "Ugh, long day. Work was nonstop.",
            f"Watched {film} again on {rng.choice(WEEKDAYS)}, still holds up.",
            "What's a quick dinner I can make with what's usually in the fridge?",
            f"Tell me a fun fact about {rng.choice(('octopuses', 'volcanoes', 'honeybees', 'the moon', 'glaciers'))}.",
            f"Is it worth spending money on {topic}, honestly?",
            "haha okay that makes sense",
            f"{name} from work keeps talking about {topic}, should I try it?",
            "How do I stay motivated when I'm tired all the time?",
            f"Give me a recipe for {rng.randint(2, 6)} people that isn't pasta.",
            "Thanks, that helps a lot!",
            f"What's the difference between {topic} for beginners and for experts?",
            "Random question: why is the sky blue?",
            f"I might try {topic} this weekend if the weather holds.",
            f"Can you explain how compound interest works, like I'm {rng.randint(8, 14)}?",
            "Okay, next question.",
            f"Do you think {rng.randint(20, 45)} minutes a day is enough to learn something new?",
        )
    )


def planning_request(rng: random.Random) -> str:
    """A request whose answer leans on something said a few messages ago."""
    return rng.choice(
        (
            "Can you help me plan the next couple of weeks?",
            "What should I keep in mind for the days ahead?",
            "Could you put together a short to-do list for me?",
            "Any advice on getting organized this month?",
            "What would you prioritize if you were me right now?",
        )
    )


def answer(rng: random.Random, gist: str | None = None, recalled: bool = False, ack: bool = False) -> str:
    """An assistant answer of varied length; ``gist``: the fact it leans on, said back in its words
    (``recalled``: to a question that asks for it); ``ack``: a reply to news the person shared."""
    parts = [rng.choice(ACKS if ack else OPENERS)]
    if gist is not None and recalled:
        parts.append(
            rng.choice(
                (
                    f"You told me earlier that {gist}.",
                    f"Going by what you said, {gist}.",
                    f"From our earlier conversation: {gist}.",
                )
            )
        )
    elif gist is not None:
        parts.append(
            rng.choice(
                (
                    f"Since {gist}, I'd plan around that first.",
                    f"Keeping in mind that {gist}, I'd leave some room in the schedule.",
                    f"Noted that {gist}; I'll factor it in.",
                )
            )
        )
    n = rng.choice((2, 3, 4, 5, 6, 7, 8, 10, 12))
    parts += rng.sample(SENTENCES, n)
    if rng.random() < 0.4:
        parts.append(
            rng.choice(
                ("Let me know if you want more detail.", "Want me to go deeper on any of these?", "Hope that helps!")
            )
        )
    return " ".join(parts)
