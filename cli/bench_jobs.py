"""What the bench commands share: fanning runs out over worker processes with a progress bar,
``--param POLICY.NAME=VALUE`` options and comma-separated list arguments."""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor


def params(items: list[str]) -> dict[str, dict[str, float]]:
    """``measured.decay=0.99`` -> {"measured": {"decay": 0.99}}."""
    out: dict[str, dict[str, float]] = {}
    for item in items or []:
        try:
            key, value = item.split("=", 1)
            policy, name = key.split(".", 1)
            out.setdefault(policy, {})[name] = float(value)
        except ValueError:
            raise SystemExit(f"--param {item!r}: expected POLICY.NAME=NUMBER, e.g. measured.decay=0.99") from None
    return out


def run_jobs(fn, jobs: list, n_jobs: int, desc: str):
    from tqdm import tqdm

    if n_jobs <= 1 or len(jobs) <= 1:
        for j in tqdm(jobs, desc=desc, unit="run", file=sys.stderr):
            yield fn(j)
        return
    with ProcessPoolExecutor(max_workers=n_jobs) as pool:
        yield from tqdm(pool.map(fn, jobs), total=len(jobs), desc=desc, unit="run", file=sys.stderr)


def ints(text: str) -> list[int]:
    """A comma-separated list of integers (an argparse ``type``)."""
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def names(text: str) -> list[str]:
    """A comma-separated list of names (an argparse ``type``)."""
    return [x.strip() for x in text.split(",") if x.strip()]
