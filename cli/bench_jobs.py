"""What the bench commands share: fanning runs out over worker processes with a progress bar,
and ``--param POLICY.NAME=VALUE`` options."""

from __future__ import annotations

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
