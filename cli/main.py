"""The ``lagmem`` command: replay, export and import saved conversations; chat and ask from the
terminal; benchmarks; the embedded model server. ``lagmem COMMAND --help`` explains each."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from cli import bench as bench_commands
from cli import chat, loadtest, whatif
from cli.users import user_arg
from memory import transcript as T

EPILOG = """settings (environment):
  LAGMEM_DATABASE_URL   database URL (default: SQLite file under LAGMEM_DATA_DIR)
  LAGMEM_DATA_DIR       where lagmem keeps its files (default: the user's data directory)
  OPENAI_API_KEY, OPENAI_BASE_URL, LAGMEM_MODEL
                        connect any OpenAI-compatible model; with none set, the embedded
                        SmolLM2-135M-Instruct runs locally (no key, no network)
  LAGMEM_LLM_TIMEOUT, LAGMEM_LLM_RETRIES, LAGMEM_STRUCTURED, LAGMEM_LOCAL_MODEL,
  LAGMEM_LOCAL_N_CTX, LAGMEM_LOCAL_THREADS, LAGMEM_EMBED_THREADS, TIKTOKEN_CACHE_DIR
                        see the README's Settings table; a bad value is named in the error"""


def _read_transcript(path: str) -> T.Transcript:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SystemExit(f"lagmem: no such file: {path}")
    except UnicodeDecodeError as exc:
        raise SystemExit(f"lagmem: {path} is not UTF-8 text ({exc.reason} at byte {exc.start})")
    try:
        return T.parse(text)
    except T.TranscriptError as exc:
        raise SystemExit(f"lagmem: {path}: {exc} (nothing was stored)")


def _counter():
    from assistant.runtime import token_counter

    return token_counter()  # the model in use prices the turns, in every shell


def print_timeline(log, out=sys.stdout) -> None:
    """The readable replay: one line per stored turn, then what happened at that step."""
    s = log.settings
    print(
        f"policy {s['policy']}  budget {s['budget']} tokens  lag {s['effective_lag']}  tokens: {s['tokens']}", file=out
    )
    for kind, e in log.history:
        if kind == "turn":
            over = "  OVER BUDGET (pinned + protected turns alone exceed it)" if e["used_tokens"] > e["budget"] else ""
            print(
                f"step {e['step']:>4}  +T{e['turn']} {e['role']:<9} {e['tokens']:>5} tok   "
                f"memory {e['used_tokens']:>6}/{e['budget']}  active {len(e['active'])}{over}",
                file=out,
            )
        elif kind == "event":
            value = f" {e['value']:+g}" if "value" in e else ""
            refused = f" REFUSED: {e['refused']}" if "refused" in e else ""
            print(f"            {e['event']} T{e['turn']}{value}{refused}", file=out)
        else:
            ru = ", ".join(f"T{r['turn']} {r['importance']:g}" for r in e["runners_up"]) or "none"
            print(f"            evicted T{e['turn']} (importance {e['importance']:g}; next lowest: {ru})", file=out)
    f = log.final
    print(
        f"final: {len(f['active'])} turns in memory ({f['used_tokens']}/{f['budget']} tokens), "
        f"{len(f['evicted'])} evicted, {len(f['pinned'])} pinned, {log.dropped_cites} cites dropped",
        file=out,
    )


def cmd_replay(args) -> int:
    import tempfile

    from assistant.replay import replay, settings_from
    from assistant.store import open_store

    t = _read_transcript(args.file)
    try:
        settings = settings_from(t.header, budget=args.budget, lag=args.lag, policy=args.policy)
        from memory.layer import MemoryLayer

        MemoryLayer(settings)
    except ValueError as exc:
        raise SystemExit(f"lagmem: {exc}")
    if args.compare:
        whatif.compare_file(t, _counter(), settings, args.compare, args.json)
        return 0
    with tempfile.TemporaryDirectory(prefix="lagmem-replay-") as tmp:
        url = args.db or f"sqlite:///{Path(tmp) / 'replay.db'}"
        store = open_store(url)
        try:
            log = replay(
                store, t, _counter(), settings, title=t.header.get("title") or T.fit_title(Path(args.file).stem)
            )
        finally:
            store.close()
    if args.json:
        sys.stdout.write(json.dumps(log.as_dict(), ensure_ascii=False, sort_keys=True) + "\n")
    else:
        print_timeline(log)
        if args.db:
            print(f"stored as conversation {log.conversation_id} in {args.db}")
    return 0


def cmd_import(args) -> int:
    from assistant.replay import replay, settings_from
    from assistant.runtime import default_settings
    from assistant.store import open_store

    if args.title is not None and (problem := T.title_problem(args.title)):
        raise SystemExit(f"lagmem: --title {problem} (nothing was stored)")
    t = _read_transcript(args.file)
    settings = settings_from(t.header, defaults=default_settings())  # as the app's sidebar imports
    # the layer's work is turns x memory (no time limit here): on a terminal, a line says how far it is
    log = replay(
        open_store(args.db),
        t,
        _counter(),
        settings,
        title=args.title or t.header.get("title") or T.fit_title(Path(args.file).stem),
        owner=args.user,
        atomic=True,
        progress=import_progress(len(t.items), sys.stderr) if sys.stderr.isatty() else None,
    )
    print(f"lagmem: conversation {log.conversation_id} is {scope_note(args.user)}", file=sys.stderr)
    print(f"imported {len(log.turns)} turns as conversation {log.conversation_id}")
    return 0


def import_progress(total: int, out):
    """A replay's per-line progress written to ``out`` as one rewritten line, once per whole percent."""
    from assistant.replay import per_percent

    def report(done: int, pct: int) -> None:
        out.write(f"\rimport: {done:,} of {total:,} lines ({pct}%)" + ("\n" if done >= total else ""))
        out.flush()

    return per_percent(total, report)


def cmd_export(args) -> int:
    from assistant.replay import export_transcript
    from assistant.store import NotFound, open_store

    try:
        text = export_transcript(open_store(args.db), args.conversation, owner=args.user)
    except NotFound as exc:
        raise SystemExit(f"lagmem: {exc}")
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def cmd_claim(args) -> int:
    from assistant.store import NotFound, open_store

    store = open_store(args.db)
    try:
        store.claim(args.conversation, owner=args.user, holder=args.holder)
    except NotFound as exc:
        raise SystemExit(
            f"lagmem: {exc} (only an owner-less conversation, or one of the owner --from names, can be claimed)"
        )
    finally:
        store.close()
    print(f"conversation {args.conversation} now belongs to {args.user}")
    return 0


def scope_note(user: str | None) -> str:
    """Which conversations a command without sign-in acts on, said out loud."""
    if user:
        return f"{user}'s"
    return (
        "owner-less (no --user): visible only to commands and pages without sign-in; "
        "`lagmem claim ID --user NAME` gives it an owner"
    )


def cmd_list(args) -> int:
    from assistant.store import open_store

    for c in open_store(args.db).conversations(owner=args.user):
        print(f"{c.id:>5}  {c.title}  (step {c.step}, budget {c.budget}, lag {c.lag}, {c.policy})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lagmem",
        description=__doc__.replace("``", ""),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "-v",
        "--verbose",
        dest="log_verbosity",
        action="count",
        default=0,
        help="say more on standard error: -v what lagmem does (which model, which token counter, "
        "servers started), -vv debugging detail; without it, only warnings",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def db_flags(sp):
        sp.add_argument(
            "--db", metavar="URL", help="database URL (default: LAGMEM_DATABASE_URL or the data dir's SQLite file)"
        )
        sp.add_argument(
            "--user",
            type=user_arg,
            help="act as this user; without it, only owner-less conversations are seen and created",
        )

    r = sub.add_parser(
        "replay",
        help="replay a saved conversation through the memory layer and storage",
        description="Replay a saved conversation (JSONL) through the real memory layer and storage. "
        "Flags override the file's header; without --db a temporary SQLite file is used.",
    )
    r.add_argument("file")
    r.add_argument("--budget", type=int, help="token budget (default: header, else 2000)")
    r.add_argument("--lag", type=int, help="steps a new turn stays protected (default: header, else 4)")
    r.add_argument("--policy", help="fifo, lru, accumulate, window, measured (default: header, else measured)")
    r.add_argument("--db", metavar="URL", help="keep the replay in this database")
    r.add_argument("--json", action="store_true", help="print one JSON object (byte-identical for the same input)")
    r.add_argument(
        "--compare",
        type=whatif.policies_arg,
        metavar="P1,P2",
        help="instead: the side-by-side table of these policies, in memory",
    )
    r.set_defaults(func=cmd_replay)

    i = sub.add_parser("import", help="store a saved conversation (all or nothing)")
    i.add_argument("file")
    i.add_argument("--title")
    db_flags(i)
    i.set_defaults(func=cmd_import)

    e = sub.add_parser("export", help="write a conversation in the saved format")
    e.add_argument("conversation", type=int, metavar="CONVERSATION_ID")
    e.add_argument("-o", "--output", help="file to write (default: standard output)")
    db_flags(e)
    e.set_defaults(func=cmd_export)

    c = sub.add_parser(
        "claim",
        help="give an owner-less conversation (from before sign-in) to a user",
        description="Give an owner-less conversation to USER: it becomes private to them. "
        "A conversation that already has an owner is taken only with --from naming that owner "
        "(say, an unverified email's or a bare subject's, moved to the ISSUER#SUBJECT owner).",
    )
    c.add_argument("conversation", type=int, metavar="CONVERSATION_ID")
    c.add_argument(
        "--db", metavar="URL", help="database URL (default: LAGMEM_DATABASE_URL or the data dir's SQLite file)"
    )
    c.add_argument("--user", type=user_arg, required=True, help="the user who will own it")
    c.add_argument(
        "--from",
        dest="holder",
        metavar="OWNER",
        help="the owner it has now, exactly as stored (`lagmem list --user OWNER`)",
    )
    c.set_defaults(func=cmd_claim)

    ls = sub.add_parser("list", help="list conversations")
    db_flags(ls)
    ls.set_defaults(func=cmd_list)

    bench_commands.register(sub)
    chat.register(sub)
    whatif.register(sub)
    loadtest.register(sub)
    return p


# our packages' loggers; other libraries' stay at warnings whatever -v says
OUR_LOGGERS = ("assistant", "memory", "storage", "bench", "cli")


def configure_logging(verbosity: int) -> None:
    """Log to standard error: warnings by default, ``-v`` our info lines, ``-vv`` our debug lines."""
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="lagmem: %(levelname)s %(name)s: %(message)s")
    for name in OUR_LOGGERS:
        logging.getLogger(name).setLevel(level)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve-model"]:
        from assistant.models.local_model import serve_model_main

        return serve_model_main(argv[1:])
    args = build_parser().parse_args(argv)
    configure_logging(args.log_verbosity)
    from assistant.errors import ConfigError, LLMError

    try:
        return args.func(args) or 0
    except (ConfigError, LLMError) as exc:  # a bad setting or an unreachable model: say so, plainly
        from assistant.redact import redact

        raise SystemExit(f"lagmem: {redact(exc.message)}") from exc


if __name__ == "__main__":
    raise SystemExit(main())
