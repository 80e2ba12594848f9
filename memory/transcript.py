"""The saved-conversation format (JSONL): parse with line numbers, validate, write.

    {"lagmem": 1, "title": "trip planning", "budget": 600, "lag": 4, "policy": "measured"}
    {"role": "user", "content": "I'm flying to Lisbon on May 3rd."}
    {"role": "assistant", "content": "Noted: Lisbon, May 3rd.", "cites": [1]}
    {"event": "pin", "turn": 1}
    {"event": "feedback", "turn": 2, "value": -1}

The header is optional and must be the first line. Turns are numbered 1, 2, 3 ... in file order;
``cites`` names earlier turns (an int, or {"turn": n, "weight": w}); events name existing turns.
What an export adds so that importing it gives the same memory (all optional): the header's
``auto_restore``; a turn's ``prior`` (the need prior it got when it arrived, which an import could
not recompute: it depends on when the turns were said) and an answer's ``cut_at`` (the token limit
that cut it); ``{"event": "miss", "turn": n, "similarity": s, "restored": true}`` (a retrieval step
wanted evicted turn n; ``restored``: the second chance brought it back).
An answer answers the user turn just before it, or the earlier user turn its ``reply_to`` names (a
question answered later, on retry); a question has at most one answer.
Anything else is refused with the line number and what is wrong: a parser that guesses would
store half a conversation.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from memory.policies import make_policy
from memory.types import ROLES, MemorySettings, number_text

FORMAT_VERSION = 1
EVENTS = ("pin", "unpin", "restore", "feedback", "miss")
HEADER_KEYS = {
    "lagmem": int,
    "title": str,
    "budget": int,
    "lag": int,
    "policy": str,
    "low_watermark": (int, float),
    "pin_share": (int, float),
    "policy_params": dict,
    "model": str,
    "auto_restore": bool,
}
TURN_KEYS = {"role", "content", "cites", "reply_to", "prior", "cut_at"}
MAX_LINE_CHARS = 8_000_000
MAX_FILE_CHARS = 64_000_000  # a whole file: bounded work and memory per import
MAX_TURNS = 200_000
MAX_CITE_WEIGHT = 1e6
TITLE_MAX_CHARS = 200  # the title column's width (storage/models.py): PostgreSQL enforces it, SQLite not


def title_problem(title: object) -> str | None:
    """What makes ``title`` unstorable as a conversation's title on every database, or None."""
    if not isinstance(title, str):
        return "must be text"
    if len(title) > TITLE_MAX_CHARS:
        return f"is {len(title):,} characters long; at most {TITLE_MAX_CHARS} fit"
    try:
        title.encode("utf-8")
    except UnicodeEncodeError:
        return "holds an invalid (lone surrogate) character"
    if "\x00" in title:
        return "holds a NUL character (\\u0000), which databases cannot store"
    return None


def check_title(title: object) -> None:
    """Raises ``ValueError`` saying why ``title`` cannot be stored (see ``title_problem``)."""
    if problem := title_problem(title):
        raise ValueError(f"the title {problem}")


def fit_title(name: str) -> str:
    """A title made from a name we did not choose (a file's name): invalid characters replaced,
    cut to ``TITLE_MAX_CHARS``, so it stores the same on every database."""
    name = name.encode("utf-8", "replace").decode("utf-8").replace("\x00", "")
    return name[:TITLE_MAX_CHARS]


class TranscriptError(ValueError):
    """A malformed saved conversation: ``line`` is 1-based, ``reason`` says what is wrong."""

    def __init__(self, line: int, reason: str):
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class TurnLine:
    number: int
    role: str
    content: str
    cites: tuple[tuple[int, float], ...] = ()
    line: int = 0
    reply_to: int | None = None  # set only when it is not the turn just before (see ``answers``)
    prior: float | None = None  # the need prior it arrived with (None: computed on import)
    cut_at: int | None = None  # an answer cut at this token limit (stored incomplete)


@dataclass(frozen=True)
class EventLine:
    event: str
    turn: int
    value: float | None = None  # feedback: its value; miss: the similarity
    line: int = 0
    restored: bool = False  # a miss the second chance restored


@dataclass
class Transcript:
    header: dict = field(default_factory=dict)
    items: list[TurnLine | EventLine] = field(default_factory=list)

    @property
    def turns(self) -> list[TurnLine]:
        return [i for i in self.items if isinstance(i, TurnLine)]


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _real_in(v, low: float, high: float) -> bool:
    """A number (not a bool), finite, in [low, high]; compared exactly, so a huge int is just out of range."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return (isinstance(v, int) or math.isfinite(v)) and low <= v <= high


def _check_header(obj: dict, line: int) -> dict:
    for key, value in obj.items():
        if key not in HEADER_KEYS:
            raise TranscriptError(line, f"unknown header key {key!r} (known: {', '.join(HEADER_KEYS)})")
        expected = HEADER_KEYS[key]
        ok = (
            isinstance(value, bool) if expected is bool else isinstance(value, expected) and not isinstance(value, bool)
        )
        if not ok:
            raise TranscriptError(line, f"header key {key!r} has the wrong type ({type(value).__name__})")
    if obj["lagmem"] != FORMAT_VERSION:
        raise TranscriptError(line, f"unsupported format version {obj['lagmem']} (this lagmem reads {FORMAT_VERSION})")
    if "title" in obj and (problem := title_problem(obj["title"])):
        raise TranscriptError(line, f"the header's 'title' {problem}")
    # every setting checked for range here, at the edge, with the line number: the same checks
    # the memory layer makes (MemorySettings, the policy's declared parameter ranges)
    try:
        MemorySettings.from_dict(obj)
        make_policy(obj.get("policy", "measured"), **obj.get("policy_params", {}))
    except ValueError as exc:
        raise TranscriptError(line, str(exc)) from None
    return obj


def _check_cites(raw, number: int, line: int) -> tuple[tuple[int, float], ...]:
    if not isinstance(raw, list):
        raise TranscriptError(line, "'cites' must be a list of turn numbers")
    cites = []
    for item in raw:
        if isinstance(item, dict):
            if set(item) - {"turn", "weight"} or "turn" not in item:
                raise TranscriptError(line, 'a cite object must be {"turn": n} or {"turn": n, "weight": w}')
            turn, weight = item["turn"], item.get("weight", 1.0)
            if not _real_in(weight, 0, MAX_CITE_WEIGHT):
                raise TranscriptError(
                    line, f"cite weight must be a number in [0, {MAX_CITE_WEIGHT:g}], got {number_text(weight)}"
                )
        else:
            turn, weight = item, 1.0
        if not _is_int(turn):
            raise TranscriptError(line, f"a cite must name a turn number, got {turn!r}")
        if not 1 <= turn < number:
            raise TranscriptError(line, f"turn {number} cites turn {turn}, which is not an earlier turn")
        cites.append((turn, float(weight)))
    return tuple(cites)


def _parse_item(obj: dict, line: int, n_turns: int) -> TurnLine | EventLine:
    if "event" in obj:
        event = obj["event"]
        if event not in EVENTS:
            raise TranscriptError(line, f"unknown event {event!r} (known: {', '.join(EVENTS)})")
        allowed = {
            "feedback": {"event", "turn", "value"},
            "miss": {"event", "turn", "similarity", "restored"},
        }.get(event, {"event", "turn"})
        extra = set(obj) - allowed
        if extra:
            raise TranscriptError(line, f"unexpected key(s) {sorted(extra)} in a {event} event")
        turn = obj.get("turn")
        if not _is_int(turn):
            raise TranscriptError(line, f"a {event} event needs 'turn': a turn number")
        if not 1 <= turn <= n_turns:
            raise TranscriptError(line, f"{event} names turn {turn}, but only {n_turns} turns exist so far")
        value = None
        if event == "feedback":
            value = obj.get("value")
            if not _real_in(value, -1, 1):
                raise TranscriptError(line, "feedback needs 'value' between -1 and 1")
            value = float(value)
        if event == "miss":
            value = obj.get("similarity")
            if not _real_in(value, -1, 1):
                raise TranscriptError(line, "a miss needs 'similarity' between -1 and 1")
            value, restored = float(value), obj.get("restored", False)
            if not isinstance(restored, bool):
                raise TranscriptError(line, "a miss's 'restored' must be true or false")
            return EventLine(event, turn, value, line, restored)
        return EventLine(event, turn, value, line)
    if "role" in obj or "content" in obj:
        extra = set(obj) - TURN_KEYS
        if extra:
            raise TranscriptError(line, f"unexpected key(s) {sorted(extra)} in a turn")
        role, content = obj.get("role"), obj.get("content")
        if role not in ROLES:
            raise TranscriptError(line, f"role must be one of {', '.join(ROLES)}, got {role!r}")
        if not isinstance(content, str):
            raise TranscriptError(line, "a turn needs 'content': a string")
        try:
            content.encode("utf-8")
        except UnicodeEncodeError:
            raise TranscriptError(line, "content holds an invalid (lone surrogate) character") from None
        if "\x00" in content:
            raise TranscriptError(line, "content holds a NUL character (\\u0000), which databases cannot store")
        number = n_turns + 1
        cites = _check_cites(obj.get("cites", []), number, line)
        reply_to = obj.get("reply_to")
        if reply_to is not None and (role != "assistant" or not _is_int(reply_to) or not 1 <= reply_to < number):
            raise TranscriptError(line, f"'reply_to' belongs on an answer and names an earlier turn, got {reply_to!r}")
        prior, cut_at = obj.get("prior"), obj.get("cut_at")
        if prior is not None and not _real_in(prior, 0, 1):
            raise TranscriptError(line, f"'prior' must be a probability in [0, 1], got {number_text(prior)}")
        if cut_at is not None and (role != "assistant" or not _is_int(cut_at) or not 1 <= cut_at <= 10**9):
            raise TranscriptError(
                line, f"'cut_at' belongs on an answer and is a token limit, got {number_text(cut_at)}"
            )
        prior = None if prior is None else float(prior)
        return TurnLine(number, role, content, cites, line, reply_to, prior, cut_at)
    raise TranscriptError(line, "not a turn (role, content), an event (event, turn) or a header (lagmem)")


def parse(text: str) -> Transcript:
    """Parse a whole file. Raises ``TranscriptError`` at the first bad line; returns nothing partial."""
    if not isinstance(text, str):
        raise TranscriptError(0, "a saved conversation must be text")
    if len(text) > MAX_FILE_CHARS:
        raise TranscriptError(0, f"the file has {len(text):,} characters; the limit is {MAX_FILE_CHARS:,}")
    out = Transcript()
    n_turns = 0
    roles: list[str] = [""]  # by turn number
    answered: set[int] = set()
    # split on "\n" only: str.splitlines() would also split inside strings holding U+2028 etc.
    for i, raw in enumerate(text.split("\n"), start=1):
        raw = raw.removesuffix("\r")
        if not raw.strip():
            continue
        if len(raw) > MAX_LINE_CHARS:
            raise TranscriptError(i, f"line longer than {MAX_LINE_CHARS} characters")
        try:
            obj = json.loads(raw)
        except RecursionError:
            raise TranscriptError(i, "not valid JSON (too deeply nested)") from None
        except ValueError as exc:  # JSONDecodeError, or an integer longer than 4,300 digits
            raise TranscriptError(
                i, f"not valid JSON ({getattr(exc, 'msg', None) or 'a number too long to read'})"
            ) from None
        if not isinstance(obj, dict):
            raise TranscriptError(i, "each line must be a JSON object")
        if "lagmem" in obj:
            if out.header or out.items:
                raise TranscriptError(i, "the header (with 'lagmem') may only be the first line")
            out.header = _check_header(obj, i)
            continue
        item = _parse_item(obj, i, n_turns)
        if isinstance(item, TurnLine):
            n_turns += 1
            if n_turns > MAX_TURNS:
                raise TranscriptError(i, f"more than {MAX_TURNS:,} turns: split the conversation")
            q = answers(item, roles[-1])
            if item.reply_to is not None and roles[item.reply_to] != "user":
                raise TranscriptError(i, f"'reply_to' names turn {item.reply_to}, which is not a user turn")
            if q in answered:
                raise TranscriptError(i, f"turn {q} already has an answer: a question gets one")
            if q is not None:
                answered.add(q)
            roles.append(item.role)
        out.items.append(item)
    return out


def answers(item: TurnLine, previous_role: str) -> int | None:
    """The user turn an answer answers: its ``reply_to``, else the turn just before it when that is
    a user turn; None for a user turn or an answer to nothing."""
    if item.role != "assistant":
        return None
    if item.reply_to is not None:
        return item.reply_to
    return item.number - 1 if previous_role == "user" else None


def _dumps(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


def write(t: Transcript) -> str:
    """Serialize; ``write(parse(write(t))) == write(t)`` (export -> import -> export is stable)."""
    lines = []
    if t.header:
        lines.append(_dumps({"lagmem": FORMAT_VERSION, **{k: v for k, v in t.header.items() if k != "lagmem"}}))
    for item in t.items:
        if isinstance(item, TurnLine):
            obj: dict = {"role": item.role, "content": item.content}
            if item.cites:
                obj["cites"] = [n if w == 1.0 else {"turn": n, "weight": w} for n, w in item.cites]
            if item.reply_to is not None and item.reply_to != item.number - 1:
                obj["reply_to"] = item.reply_to
            if item.prior is not None:
                obj["prior"] = item.prior
            if item.cut_at is not None:
                obj["cut_at"] = item.cut_at
        else:
            obj = {"event": item.event, "turn": item.turn}
            if item.event == "feedback":
                v = item.value
                obj["value"] = int(v) if v is not None and float(v).is_integer() else v
            elif item.event == "miss":
                obj["similarity"] = item.value
                if item.restored:
                    obj["restored"] = True
        lines.append(_dumps(obj))
    return "\n".join(lines) + "\n"
