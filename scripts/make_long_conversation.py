"""Writes tests/conversations/long_520.jsonl: 520 turns of planning chat with facts stated early and
cited again much later, some pins, restores and feedback. Deterministic (seeded); kept so the file
can be regenerated and read, the checked-in file is what the tests replay."""

import json
import random
import sys

rng = random.Random(520)
topics = ["garden", "budget", "trip", "recipe", "book club", "car repair", "school run", "gym plan"]
facts = {}
lines = [{"lagmem": 1, "title": "a long week of planning (520 turns)", "budget": 900, "lag": 6, "policy": "measured"}]
n = 0


def turn(role, content, cites=()):
    global n
    n += 1
    obj = {"role": role, "content": content}
    if cites:
        obj["cites"] = sorted(set(cites))
    lines.append(obj)
    return n


while n < 520:
    topic = rng.choice(topics)
    if topic not in facts or rng.random() < 0.2:
        u = turn("user", f"About the {topic}: the key detail is number {rng.randint(100, 999)} and it matters later.")
        a = turn("assistant", f"Understood, I will keep the {topic} detail in mind.", [u])
        facts[topic] = u
    else:
        u = turn(
            "user",
            f"Quick question on the {topic} again; what did I say the key detail was? "
            + "Some chatter. " * rng.randint(0, 6),
        )
        recent = [k for k in range(max(1, u - 6), u)]
        cites = [facts[topic]] + rng.sample(recent, k=min(2, len(recent)))
        a = turn(
            "assistant", f"For the {topic} you said the key detail earlier; here it is again, with context.", cites
        )
    r = rng.random()
    if r < 0.03:
        lines.append({"event": "pin", "turn": facts[topic]})
    elif r < 0.05:
        lines.append({"event": "unpin", "turn": facts[topic]})
    elif r < 0.08:
        lines.append({"event": "restore", "turn": rng.randint(1, n)})
    elif r < 0.11:
        lines.append({"event": "feedback", "turn": a, "value": rng.choice([-1, 1])})

sys.stdout.write("\n".join(json.dumps(x) for x in lines) + "\n")
