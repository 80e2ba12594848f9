"""LoCoMo's JSON format: turns, evidence repair, token costs and question placement.

``load`` also reads LongMemEval's own JSON (a list of records with ``haystack_sessions``): the
records are chained into LoCoMo-format conversations first (``bench/longmemeval.py``).

Two kinds of conversation (``Conversation.kind``): ``two people`` (LoCoMo: two named speakers, both
people, so every turn is stored with role ``user``, as a person's messages are in the app, and
``userfirst`` has nothing to tell apart there) and ``person-assistant`` (every speaker is ``user``
or ``assistant``: LongMemEval, chained; the turn's role is its speaker).

Built for the format, not for the four conversations we hold: sessions are found by key
(``session_<N>`` holding a list; a ``session_<N>_date_time`` without its list is skipped), turns are
taken in numeric session order, and evidence ids are repaired by rule.

Protocol decisions (pinned down by reproducing the reference fifo, lru and oracle figures held in
``tests/bench/test_bench_locomo.py`` to the third decimal on ``locomo_dev.json``):

* A turn's text is ``"<speaker>: <text>"`` plus ``" [shares photo: <blip_caption>]"`` when the turn
  has a (non-empty) caption.
* ``words`` tokens are ``len(text.split()) * 1.3``. The layer counts integer tokens, so costs are
  kept *exactly* by counting in tenths of a token: a turn costs ``13 * words`` units and a budget of
  B tokens is ``10 * B`` units (``TokenScale.units``). Rounding each turn to whole tokens instead
  (round/ceil/floor) changes the figures in the third decimal; tenths match the reference.
  ``cl100k`` tokens are whole tiktoken tokens (scale 1).
* Evidence repair: an entry is split on ``;``, ``,`` and whitespace (``"D8:6; D9:17"``,
  ``"D9:1 D4:4"``); each piece is normalised by ``D:?<session>:<turn>`` with leading zeros dropped
  (``"D:11:26"`` -> ``D11:26``, ``"D30:05"`` -> ``D30:5``). Pieces that still name no turn are
  dropped and counted; duplicates within a question count once; a question left with no evidence
  is skipped and counted.
* Placement: ``end`` asks every question after the last turn; ``earliest`` right after the session
  holding the question's latest evidence turn; ``random`` at the end of a session drawn with
  ``rng.choice`` from the sorted list of sessions from that session to the last, one
  ``random.Random(seed)`` per seed shared by the conversations in file order, questions in file
  order (a skipped question draws nothing). Questions at the same point are asked in file order.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench import longmemeval

SESSION_KEY = re.compile(r"session_(\d+)")
EVIDENCE_ID = re.compile(r"D:?(\d+):0*(\d+)")
PLACEMENTS = ("end", "earliest", "random")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
TWO_PEOPLE, PERSON_ASSISTANT = "two people", "person-assistant"
ASSISTANT_ROLES = ("user", "assistant")


@dataclass(frozen=True, slots=True)
class Turn:
    number: int  # 1-based position in the conversation: turn n arrives at step n
    dia_id: str
    session: int
    speaker: str
    text: str
    role: str = "user"  # as the app would store it: the speaker for a person-assistant chat, else user


@dataclass(frozen=True, slots=True)
class Question:
    index: int  # position in the file's qa list
    category: int
    evidence: tuple[int, ...]  # turn numbers, sorted, unique
    latest_session: int
    question: str = ""


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    session_end: dict[int, int]  # session number -> number of its last turn
    dropped_ids: int = 0  # evidence pieces naming no turn, after repair
    repaired_ids: int = 0  # evidence pieces that needed repair and then named a turn
    skipped_questions: int = 0  # no evidence left
    raw: dict = field(default_factory=dict, repr=False)
    kind: str = TWO_PEOPLE

    @property
    def sessions(self) -> list[int]:
        return sorted(self.session_end)


def app_text(conv: Conversation, turn: Turn) -> str:
    """The turn's content as the app would hold it: a person-assistant turn without its ``"user: "``
    prefix (its role says who spoke), a turn between two people as written (``"Name: text"``: the
    name is part of what such a transcript says, and the retrieval step's speaker feature reads it)."""
    prefix = f"{turn.speaker}: "
    if conv.kind == PERSON_ASSISTANT and turn.text.startswith(prefix):
        return turn.text[len(prefix) :]
    return turn.text


def kind_of(conversations: Sequence[Conversation]) -> str:
    """The file's kind: person-assistant when every conversation is, else two people."""
    return PERSON_ASSISTANT if conversations and all(c.kind == PERSON_ASSISTANT for c in conversations) else TWO_PEOPLE


def turn_text(turn: dict) -> str:
    text = f"{turn.get('speaker', '')}: {turn.get('text', '')}"
    caption = turn.get("blip_caption")
    if caption:
        text += f" [shares photo: {caption}]"
    return text


def repair_evidence(entry: str) -> list[str]:
    """Split and normalise one evidence entry; returns canonical ``D<s>:<t>`` ids (maybe none)."""
    out = []
    for piece in re.split(r"[;,\s]+", str(entry).strip()):
        m = EVIDENCE_ID.fullmatch(piece)
        if m:
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
        elif piece:
            out.append(piece)  # unrepairable: kept so the caller counts it as dropped
    return out


def parse_conversation(item: dict) -> Conversation:
    conv = item.get("conversation", {})
    sessions = sorted(
        (int(m.group(1)), v) for k, v in conv.items() if (m := SESSION_KEY.fullmatch(k)) and isinstance(v, list) and v
    )
    turns: list[Turn] = []
    by_id: dict[str, int] = {}
    session_end: dict[int, int] = {}
    speakers = {str(t.get("speaker", "")) for _, items in sessions for t in items}
    kind = PERSON_ASSISTANT if speakers and speakers <= set(ASSISTANT_ROLES) else TWO_PEOPLE
    for s, items in sessions:
        for t in items:
            number = len(turns) + 1
            dia = str(t.get("dia_id", f"D{s}:{number}"))
            speaker = str(t.get("speaker", ""))
            turns.append(Turn(number, dia, s, speaker, turn_text(t), speaker if kind == PERSON_ASSISTANT else "user"))
            by_id.setdefault(dia, number)
        session_end[s] = len(turns)
    questions: list[Question] = []
    dropped = repaired = skipped = 0
    for i, qa in enumerate(item.get("qa", [])):
        found: set[int] = set()
        for entry in qa.get("evidence", []) or []:
            for piece in repair_evidence(entry):
                if piece in by_id:
                    found.add(by_id[piece])
                    repaired += piece != entry
                else:
                    dropped += 1
        if not found:
            skipped += 1
            continue
        ev = tuple(sorted(found))
        questions.append(
            Question(i, int(qa.get("category", 0) or 0), ev, turns[ev[-1] - 1].session, str(qa.get("question", "")))
        )
    return Conversation(
        str(item.get("sample_id", "")), turns, questions, session_end, dropped, repaired, skipped, kind=kind
    )


def load(
    path: str | Path, chain_seed: int = longmemeval.CHAIN_SEED, per_conversation: int = longmemeval.PER_CONVERSATION
) -> list[Conversation]:
    """All conversations of a LoCoMo JSON file (a list, or one conversation object), or of a
    LongMemEval file, its records chained by ``bench.longmemeval.chain`` (seed, records per
    conversation). Raises ``ValueError`` (a ``LongMemEvalError`` naming the record) on a file that
    is neither."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON ({exc.msg} at line {exc.lineno})") from None
    if longmemeval.is_longmemeval(data):
        data = longmemeval.chain(data, longmemeval.prefix_for(path.stem), chain_seed, per_conversation)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of LoCoMo conversations or LongMemEval records")
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("conversation", {}), dict):
            raise ValueError(f"{path}: conversation {i} is not a LoCoMo conversation object")
    return [parse_conversation(item) for item in data]


# ----- tokens ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class TokenScale:
    """Integer token costs for the layer: ``units`` per token (words: tenths, exact)."""

    name: str
    units: int
    count: Callable[[str], int]

    def budget(self, tokens: int) -> int:
        return tokens * self.units


def _words(text: str) -> int:
    return 13 * len(text.split())  # len * 1.3 tokens, in tenths: exact


def token_scale(name: str) -> TokenScale:
    if name == "words":
        return TokenScale("words", 10, _words)
    if name == "cl100k":
        return TokenScale("cl100k", 1, _cl100k_counter())
    raise ValueError(f"unknown token counting {name!r}; choose words or cl100k")


def _cl100k_counter() -> Callable[[str], int]:
    """cl100k_base through the project's offline tiktoken helper (no network needed)."""
    from assistant.models.tokens import TiktokenCounter

    counter = TiktokenCounter(encoding="cl100k_base")
    return counter.count


# ----- placement ------------------------------------------------------------------------------
def place(conversations: Sequence[Conversation], placement: str, seed: int = 0) -> list[dict[int, list[Question]]]:
    """For each conversation, the questions asked right after turn n: ``{n: [questions]}``.

    One ``random.Random(seed)`` is shared across the conversations in file order (``random``)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}; choose one of {', '.join(PLACEMENTS)}")
    rng = random.Random(seed)
    out = []
    for conv in conversations:
        sessions = conv.sessions
        schedule: dict[int, list[Question]] = {}
        for q in conv.questions:
            if placement == "end":
                at = len(conv.turns)
            elif placement == "earliest":
                at = conv.session_end[q.latest_session]
            else:
                later = [s for s in sessions if s >= q.latest_session]
                at = conv.session_end[rng.choice(later)]
            schedule.setdefault(at, []).append(q)
        out.append(schedule)
    return out
