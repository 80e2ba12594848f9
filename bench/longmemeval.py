"""LongMemEval's own JSON, chained into long person-assistant conversations in LoCoMo's format.

A LongMemEval record is one question over a few chat sessions between a person and an assistant
(``haystack_sessions``, each a list of ``{"role", "content", "has_answer"?}`` turns, dated by
``haystack_dates``); its evidence is the turns marked ``has_answer``. One record is too short to
need a memory, so records are chained into conversations, the rule that reproduces
the chained dev file (``lme_dev_chained.json``) from ``longmemeval_dev.json`` exactly (checked by
``tests/bench/test_bench_longmemeval.py``):

1. abstention records (``question_id`` ending in ``_abs``: the answer is not in the history) are
   skipped, before anything else: they have no evidence to keep;
2. the remaining records are sorted by ``question_id``, then shuffled with
   ``random.Random(seed).shuffle`` (``CHAIN_SEED`` = 7 reproduces the chained dev file);
3. consecutive runs of ``per`` records (``PER_CONVERSATION`` = 19, conversations of about 400
   turns) make one conversation each, the last one holding what remains; conversation ``k`` is
   ``<prefix>-<k>`` (``lme-dev-1``, ... for ``longmemeval_dev.json``: see ``prefix_for``);
4. within a record its sessions go in date order (stable for equal dates), numbered on through the
   conversation as LoCoMo sessions (``session_<n>``, ``session_<n>_date_time``); turn ``j`` of
   session ``n`` is ``D<n>:<j>``, its speaker the turn's role (``user`` / ``assistant``);
5. each record becomes one LoCoMo question (``question``, ``answer``, ``question_id``) whose
   evidence is its ``has_answer`` turns and whose category is the question type's
   (``CATEGORIES``). A record without ``has_answer`` turns keeps its sessions (they are part of the
   conversation), and its question is skipped and counted by the LoCoMo loader like any question
   left without evidence.

When a question is asked is the LoCoMo protocol's placement (``bench.locomo.place``), the same
rules as for LoCoMo questions: ``random`` (the default) asks it at the end of a session drawn from
its latest evidence session to the last one, ``earliest`` right after that session, ``end`` after
the whole conversation. A record's question date is not used: chained records are not in date order
across records, so "after its own last session" (``earliest``) is the closest a date could say.

A malformed record raises ``LongMemEvalError`` naming it (its position and ``question_id``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from datetime import datetime

CHAIN_SEED = 7
PER_CONVERSATION = 19
# LongMemEval's question types as LoCoMo category numbers (bench.locomo.CATEGORIES names them)
CATEGORIES = {
    "multi-session": 1,
    "temporal-reasoning": 2,
    "knowledge-update": 3,
    "single-session-user": 4,
    "single-session-assistant": 4,
    "single-session-preference": 5,
}
CATEGORY_NAMES = {1: "multi-session", 2: "temporal", 3: "knowledge-update", 4: "single-session", 5: "preference"}
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"  # LongMemEval's: "2023/05/30 (Tue) 21:48"
ROLES = ("user", "assistant")


class LongMemEvalError(ValueError):
    """A record that is not LongMemEval's format; the message names the record."""


def is_longmemeval(data) -> bool:
    """A list of records with ``haystack_sessions`` (LongMemEval's format), not LoCoMo's."""
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "haystack_sessions" in data[0]


def prefix_for(stem: str) -> str:
    """Conversation names from the file's name: ``longmemeval_dev`` -> ``lme-dev``, ``mine`` -> ``lme-mine``
    (the chained dev file calls its conversations ``lme-dev-1`` and ``lme-dev-2``)."""
    rest = re.sub(r"^longmemeval[_\-]?", "", stem).replace("_", "-").strip("-")
    return f"lme-{rest}" if rest else "lme"


def _name(i: int, record) -> str:
    qid = record.get("question_id") if isinstance(record, dict) else None
    return f"record {i} (question_id {qid!r})" if qid is not None else f"record {i}"


def _session_order(record: dict, where: str) -> list[int]:
    """Session indices in date order; equal dates keep file order. Dates in LongMemEval's format
    sort by time; any other string sorts as text (still deterministic)."""
    dates = record["haystack_dates"]

    def key(i: int):
        try:
            return (0, datetime.strptime(dates[i], DATE_FORMAT).isoformat(), i)
        except ValueError:
            return (1, dates[i], i)

    keys = [key(i) for i in range(len(dates))]
    if len({k[0] for k in keys}) > 1:
        raise LongMemEvalError(f"{where}: haystack_dates mixes LongMemEval's date format with others: {dates!r}")
    return sorted(range(len(dates)), key=keys.__getitem__)


def check_record(i: int, record) -> None:
    """Raise ``LongMemEvalError`` naming record ``i`` unless it has what chaining reads."""
    where = _name(i, record)
    if not isinstance(record, dict):
        raise LongMemEvalError(f"{where}: a record must be a JSON object, got {type(record).__name__}")
    for key, kind in (
        ("question_id", str),
        ("question", str),
        ("question_type", str),
        ("haystack_sessions", list),
        ("haystack_dates", list),
    ):
        if not isinstance(record.get(key), kind):
            got = "missing" if key not in record else f"a {type(record[key]).__name__}"
            raise LongMemEvalError(f"{where}: {key!r} must be a {'list' if kind is list else 'string'}, got {got}")
    if "answer" not in record:
        raise LongMemEvalError(f"{where}: 'answer' is missing")
    sessions, dates = record["haystack_sessions"], record["haystack_dates"]
    if len(sessions) != len(dates):
        raise LongMemEvalError(f"{where}: {len(sessions)} haystack_sessions but {len(dates)} haystack_dates")
    if not all(isinstance(d, str) for d in dates):
        raise LongMemEvalError(f"{where}: haystack_dates must be strings")
    if record["question_type"] not in CATEGORIES:
        raise LongMemEvalError(
            f"{where}: unknown question_type {record['question_type']!r} (known: {', '.join(CATEGORIES)})"
        )
    for s, session in enumerate(sessions):
        if not isinstance(session, list):
            raise LongMemEvalError(f"{where}: haystack_sessions[{s}] must be a list of turns")
        for j, turn in enumerate(session):
            at = f"{where}: haystack_sessions[{s}][{j}]"
            if not isinstance(turn, dict):
                raise LongMemEvalError(f"{at} must be an object with 'role' and 'content'")
            if turn.get("role") not in ROLES:
                raise LongMemEvalError(f"{at}: role must be user or assistant, got {turn.get('role')!r}")
            if not isinstance(turn.get("content"), str):
                raise LongMemEvalError(f"{at}: 'content' must be a string")
            if not isinstance(turn.get("has_answer", False), bool):
                raise LongMemEvalError(f"{at}: 'has_answer' must be true or false")
    _session_order(record, where)


def chain(records: Sequence, prefix: str = "lme", seed: int = CHAIN_SEED, per: int = PER_CONVERSATION) -> list[dict]:
    """The records as LoCoMo-format conversations (see the module docstring for the rule)."""
    if not isinstance(records, list):
        raise LongMemEvalError("a LongMemEval file must hold a JSON list of records")
    if per < 1:
        raise ValueError(f"records per conversation must be at least 1, got {per}")
    for i, record in enumerate(records):
        check_record(i, record)
    seen: dict[str, int] = {}
    for i, record in enumerate(records):
        qid = record["question_id"]
        if qid in seen:
            raise LongMemEvalError(f"{_name(i, record)}: question_id also used by record {seen[qid]}")
        seen[qid] = i
    kept = sorted((r for r in records if not r["question_id"].endswith("_abs")), key=lambda r: r["question_id"])
    random.Random(seed).shuffle(kept)
    return [_conversation(f"{prefix}-{k // per + 1}", kept[k : k + per]) for k in range(0, len(kept), per)]


def _conversation(sample_id: str, records: Sequence[dict]) -> dict:
    conv: dict = {"speaker_a": "user", "speaker_b": "assistant"}
    qa = []
    n = 0
    for record in records:
        evidence = []
        for s in _session_order(record, record["question_id"]):
            n += 1
            turns = []
            for j, t in enumerate(record["haystack_sessions"][s], start=1):
                turns.append({"speaker": t["role"], "dia_id": f"D{n}:{j}", "text": t["content"]})
                if t.get("has_answer"):
                    evidence.append(f"D{n}:{j}")
            conv[f"session_{n}"] = turns
            conv[f"session_{n}_date_time"] = record["haystack_dates"][s]
        qa.append(
            {
                "question": record["question"],
                "answer": record["answer"],
                "evidence": evidence,
                "category": CATEGORIES[record["question_type"]],
                "question_id": record["question_id"],
            }
        )
    return {"sample_id": sample_id, "conversation": conv, "qa": qa}
