"""The word lists and stock sentences of the controlled conversations (``bench/controlled.py``):
names, relations, places, jobs, dates, things and topics that fill the templates' slots, the context
sentences people wrap a message in, and the assistant's openers, acknowledgements and advice
sentences. Only data: ``bench/controlled_text.py`` renders the texts from them with the caller's
seeded ``random.Random``, so the order of every tuple is part of the generated conversations.
"""

from __future__ import annotations

NAMES = (
    "Clara",
    "Tomas",
    "Priya",
    "Jonah",
    "Mei",
    "Rafael",
    "Amara",
    "Lukas",
    "Sofia",
    "Devon",
    "Ingrid",
    "Mateo",
    "Yuki",
    "Hannah",
    "Omar",
    "Beatriz",
    "Nikolai",
    "Zara",
    "Felix",
    "Leila",
    "Arjun",
    "Greta",
)
RELATIONS = (
    "sister",
    "brother",
    "cousin",
    "best friend",
    "neighbor",
    "manager",
    "roommate",
    "aunt",
    "uncle",
    "coworker",
    "mother-in-law",
    "son",
    "daughter",
)
CITIES = (
    "Porto",
    "Denver",
    "Kyoto",
    "Edinburgh",
    "Nairobi",
    "Montreal",
    "Valencia",
    "Austin",
    "Krakow",
    "Melbourne",
    "Lisbon",
    "Seattle",
    "Oslo",
    "Cape Town",
    "Bologna",
)
JOBS = (
    "pediatric nurse",
    "data analyst",
    "high school chemistry teacher",
    "sous chef",
    "civil engineer",
    "paralegal",
    "UX designer",
    "veterinary technician",
    "bookkeeper",
    "physical therapist",
)
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
APPOINTMENTS = (
    "dentist",
    "eye exam",
    "physio",
    "dermatologist",
    "car service",
    "passport renewal",
    "haircut",
    "tax advisor",
    "vet",
)
PETS = ("beagle", "tabby cat", "parrot", "corgi", "rescue greyhound", "bearded dragon", "pair of rabbits")
PET_NAMES = ("Biscuit", "Mochi", "Pepper", "Juniper", "Waffles", "Ziggy", "Olive", "Noodle", "Pixel")
FOODS = ("peanuts", "shellfish", "sesame", "gluten", "dairy", "kiwi", "mustard")
CARS = ("Subaru Outback", "Honda Civic", "Tesla Model 3", "Mazda CX-5", "Toyota Prius", "VW Golf")
AIRLINES = ("TAP", "Lufthansa", "Delta", "KLM", "Qantas", "Air Canada")
THINGS = ("kitchen renovation", "wedding gifts", "new laptop", "summer trip", "moving costs", "dental work")
WORDS = ("maple", "orbit", "falcon", "cobalt", "willow", "ember", "harbor", "quartz")
TOPICS = (
    "sourdough",
    "houseplants",
    "running shoes",
    "podcasts",
    "board games",
    "sleep",
    "budgeting apps",
    "learning Spanish",
    "meal prep",
    "photography",
    "jazz",
    "hiking trails",
    "stretching",
    "coffee",
    "journaling",
    "time management",
    "birdwatching",
    "chess openings",
    "composting",
    "sci-fi novels",
)
FILMS = ("The Matrix", "Spirited Away", "Arrival", "Paddington 2", "Dune", "Amelie", "Heat", "Coco")
CONTEXT = (
    "I've been meaning to ask you this for a while.",
    "Sorry if this is a basic question.",
    "My evenings are pretty packed lately, so I only have short bits of time.",
    "I tried looking it up but every site says something different.",
    "I'm on my lunch break so I'll keep it short.",
    "Things at work have calmed down a little this week, finally.",
    "I want something that doesn't need a lot of equipment or money.",
    "Be honest with me, I can take it.",
    "I'm not in a rush, just curious.",
    "Last time I tried something like this I gave up after a week.",
    "I'd like a practical answer rather than a long theory.",
    "It's raining again here, so I'm stuck inside with my laptop.",
)
OPENERS = (
    "Sure!",
    "Good question.",
    "Happy to help.",
    "Here's a quick take.",
    "Absolutely.",
    "Of course.",
    "Great idea.",
    "Let's see.",
)
SENTENCES = (
    "Start small and build the habit before you worry about doing it perfectly.",
    "A good rule of thumb is to pick one thing, try it for two weeks, and then adjust.",
    "Most people find it easier when they set a specific time of day for it.",
    "If you only have a little time, focus on the basics and skip the advanced material for now.",
    "It helps to write down what worked and what didn't, so you can see progress over time.",
    "Cheaper options are often fine for a start; upgrade once you know what you actually use.",
    "Try to keep it fun, because that is what keeps you coming back to it.",
    "Consistency matters more than intensity, especially in the first month.",
    "Libraries and free online courses are underrated places to begin.",
    "Ask someone who already does it; a ten-minute chat can save hours of searching.",
    "Be realistic about your energy after work and plan the harder parts for the weekend.",
    "A simple checklist can take a lot of the stress out of it.",
    "Rest is part of the process, so don't feel guilty about taking a day off.",
    "You can combine it with something you already do, like listening while you commute.",
    "Keep the first goal modest so it is easy to hit, then raise it.",
    "Small, regular steps beat occasional big pushes almost every time.",
    "Give yourself a clear stopping point so it doesn't eat your whole evening.",
    "Set a reminder on your phone so it doesn't slip through the cracks.",
    "There are a few common approaches, and each has trade-offs worth knowing before you commit.",
    "The first option is the simplest: do a little every day and keep track of it in a notebook or an app.",
    "The second option takes more planning up front but tends to pay off if you stick with it for a season.",
    "A third route is to join a group or a class, which adds structure and a bit of friendly pressure.",
    "Whatever you choose, check in with yourself after a couple of weeks and be willing to change course.",
    "Reviews online can be helpful, but look for patterns rather than trusting any single opinion.",
    "If cost is a concern, second-hand options and free trials are a good way to test the waters.",
    "Sleep, food and a bit of movement make almost everything else easier, so don't neglect them.",
    "It's normal for the first attempt to feel awkward; most of the benefit shows up later.",
    "Pairing a new habit with an existing routine, such as morning coffee, makes it much easier to remember.",
    "When you get stuck, breaking the task into smaller pieces usually gets things moving again.",
    "Try to measure one simple thing, like minutes spent or pages read, so progress stays visible.",
)
ACKS = (
    "Thanks for letting me know.",
    "Oh, nice!",
    "Good to know.",
    "That's exciting.",
    "Got it.",
    "Thanks for sharing that.",
)
