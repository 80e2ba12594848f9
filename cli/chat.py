"""Terminal use: ``lagmem chat``, ``lagmem ask``, ``lagmem serve-model``."""

from __future__ import annotations

import json
import sys

from assistant.errors import LLMError
from assistant.redact import redact
from cli.users import user_arg


def _service(args):
    from assistant.runtime import get_service

    return get_service(args.db)


def _conversation(svc, args) -> int:
    """--conversation ID, else the most recent conversation, else a new one: all of them the
    user's own (``--user``), or owner-less ones without it, never another user's."""
    from assistant.store import NotFound

    if args.conversation is not None:
        try:
            svc.store.conversation(args.conversation, owner=args.user)
        except NotFound as exc:
            raise SystemExit(f"lagmem: {exc}")
        return args.conversation
    existing = svc.store.conversations(owner=args.user)
    if existing:
        return existing[0].id
    return svc.store.create("terminal chat", owner=args.user)


def _summary(result) -> str:
    lines = []
    if result.cut_at:
        lines.append(f"cut at {result.cut_at} tokens: the answer reached the length limit")
    if result.cited:
        lines.append("cited: " + ", ".join(f"T{n}" for n in result.cited))
    if result.evictions:
        lines.append(
            "left memory: " + ", ".join(f"T{r.turn} (importance {r.importance:.3g})" for r in result.evictions)
        )
    if result.misses:
        lines.append(
            "missed (evicted but wanted): " + ", ".join(f"T{m.turn} ({m.similarity:.2f})" for m in result.misses)
        )
    if result.restored:
        lines.append("restored: " + ", ".join(f"T{n}" for n in result.restored))
    return "\n".join(f"  [{line}]" for line in lines)


def cmd_ask(args) -> int:
    from assistant.service import EmptyMessage

    svc = _service(args)
    conv = _conversation(svc, args)
    if not args.retry and args.message is None:
        raise SystemExit("lagmem ask: give a message, or --retry to answer a saved message that failed")
    try:
        ex = svc.answer_pending(conv, owner=args.user) if args.retry else svc.send(conv, args.message, owner=args.user)
        if ex is None:
            raise SystemExit("lagmem ask: no unanswered message to retry")
        if args.json:
            result = ex.run()
        else:
            for delta in ex.stream():
                sys.stdout.write(delta)
                sys.stdout.flush()
            sys.stdout.write("\n")
            result = ex.result
    except EmptyMessage as exc:
        raise SystemExit(f"lagmem: {exc}")
    except LLMError as exc:
        print(
            f"lagmem: {redact(exc.message)}\n(your message is saved; run `lagmem ask --retry` to answer it)",
            file=sys.stderr,
        )
        return 3
    if args.json:
        print(json.dumps(result.as_dict(), ensure_ascii=False, indent=1))
    else:
        print(_summary(result))
    return 0


def cmd_chat(args) -> int:
    from assistant.runtime import model_note
    from assistant.service import EmptyMessage

    svc = _service(args)
    conv = _conversation(svc, args)
    c = svc.store.conversation(conv, owner=args.user)
    print(f"conversation {conv}: {c.title} (budget {c.budget} tokens, lag {c.lag}, policy {c.policy})")
    print(model_note(svc))
    print("Type a message; /retry answers a message that failed; /quit or Ctrl-D leaves.")
    while True:
        try:
            line = input("you> ")
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        if line.strip() in ("/quit", "/exit"):
            return 0
        try:
            ex = (
                svc.answer_pending(conv, owner=args.user)
                if line.strip() == "/retry"
                else svc.send(conv, line, owner=args.user)
            )
            if ex is None:
                print("nothing to retry")
                continue
            sys.stdout.write("lagmem> ")
            for delta in ex.stream():
                sys.stdout.write(delta)
                sys.stdout.flush()
            print()
            summary = _summary(ex.result)
            if summary:
                print(summary)
        except EmptyMessage:
            continue
        except LLMError as exc:
            print(f"\n[error] {redact(exc.message)} — your message is saved; type /retry to answer it.")


def register(sub) -> None:
    def common(p):
        p.add_argument(
            "--conversation",
            type=int,
            metavar="ID",
            help="conversation to use (default: the most recent, or a new one)",
        )
        p.add_argument("--db", metavar="URL", help="database URL")
        p.add_argument(
            "--user", type=user_arg, help="act as this user; without it, only owner-less conversations are used"
        )

    chat = sub.add_parser("chat", help="chat in the terminal, showing citations and evictions after each answer")
    common(chat)
    chat.set_defaults(func=cmd_chat)

    ask = sub.add_parser("ask", help="one exchange; --json prints answer, citations, evictions, misses, model, timings")
    ask.add_argument("message", nargs="?")
    ask.add_argument("--json", action="store_true")
    ask.add_argument("--retry", action="store_true", help="answer the last message if its answer failed")
    common(ask)
    ask.set_defaults(func=cmd_ask)

    # its own flags (see `lagmem serve-model --help`) are passed through by cli.main
    sub.add_parser("serve-model", help="run the embedded local model server alone (OpenAI-compatible)", add_help=False)
