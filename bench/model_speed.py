"""The embedded model's speed: server start, time to first token and tokens/s (streamed).

``lagmem bench model`` (or ``python -m bench.model_speed``) prints one JSON object. A measurement
command, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from assistant.config import current


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=int, default=3, help="short prompts timed, each a cold prompt (default: 3)")
    p.add_argument("--max-tokens", type=int, default=64, help="answer length asked for (default: 64)")
    p.add_argument("--n-ctx", type=int, default=None, help="context window (default: LAGMEM_LOCAL_N_CTX, else 4096)")
    p.add_argument("--threads", type=int, default=None, help="threads (default: LAGMEM_LOCAL_THREADS, else 2)")
    p.set_defaults(func=cmd_model)


def cmd_model(args) -> int:
    return run(args.rounds, args.max_tokens, n_ctx=args.n_ctx, n_threads=args.threads)


def run(rounds: int = 3, max_tokens: int = 64, *, n_ctx: int | None = None, n_threads: int | None = None) -> int:
    """Print the embedded model's start time, time to first token and tokens/s (streamed).

    llama.cpp's threads spin at barriers, so its speed collapses when the cores are busy with
    something else: the load average is printed with the numbers for that reason."""
    from assistant.models.llm import LLMClient, LLMConfig  # here: `lagmem --help` does not load openai
    from assistant.models.local_model import MODEL_ALIAS, start_server

    local = current().local
    n_ctx, n_threads = n_ctx or local.n_ctx, n_threads or local.threads
    load_before = os.getloadavg()
    t0 = time.monotonic()
    server = start_server(n_ctx=n_ctx, n_threads=n_threads)
    started = time.monotonic() - t0
    client = LLMClient(LLMConfig(backend="compatible", base_url=server.base_url, model=MODEL_ALIAS, timeout=300))
    question = {"role": "user", "content": "Explain in a few sentences why the sky is blue."}
    system = {"role": "system", "content": "You are a helpful assistant."}
    # A context like a full memory: ~1,500 tokens of earlier turns before the question.
    history = " ".join(f"Turn {i}: we talked about item number {i} and its colour." for i in range(110))
    memory = {"role": "user", "content": history}
    follow_up = {"role": "user", "content": "And why are sunsets red?"}
    results = []
    previous: list[dict] = []
    for label, prompt in [("short", [system, question])] * rounds + [
        ("memory", [system, memory, question]),
        ("memory_warm", [system, memory, question, follow_up]),
    ]:
        # The server's prompt cache would make repeated prompts look faster; a unique prefix
        # keeps every round a cold prompt evaluation, except memory_warm, which extends the
        # previous prompt by one turn the way the next exchange of a conversation does.
        if label != "memory_warm":
            prompt = [dict(prompt[0], content=f"[{len(results)}] " + prompt[0]["content"]), *prompt[1:]]
        else:
            prompt = [previous[0], *prompt[1:]]
        previous = prompt
        t = time.monotonic()
        first = None
        text = ""
        for delta in client.stream(prompt, max_tokens=max_tokens, temperature=0.0):
            first = first or time.monotonic()
            text += delta
        end = time.monotonic()
        tokens = server.count_tokens(text)
        gen = end - (first or end)
        prompt_tokens = sum(server.count_tokens(m["content"]) for m in prompt)
        results.append(
            {
                "prompt": label,
                "prompt_tokens": prompt_tokens,
                "ttft_s": round((first or end) - t, 3),
                "answer_tokens": tokens,
                "tokens_per_s": round((tokens - 1) / gen, 1) if gen > 0 else None,
            }
        )
    server.stop()
    print(
        json.dumps(
            {
                "model": MODEL_ALIAS,
                "server_start_s": round(started, 2),
                "n_ctx": n_ctx,
                "n_threads": n_threads,
                "max_tokens": max_tokens,
                "cpus": os.cpu_count(),
                "loadavg_1min_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
                "rounds": results,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.model_speed", description=__doc__)
    add_arguments(parser)
    sys.exit(cmd_model(parser.parse_args()))
