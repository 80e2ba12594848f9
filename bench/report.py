"""Metrics, tables and plots from benchmark results (the metrics are pure computation).

* recall: micro over (question, evidence turn) pairs; several seeds pool their pairs.
* per_question: mean over questions of the fraction of its evidence in memory.
* all_evidence: share of questions with all their evidence in memory.
* by_category: recall per category: LoCoMo's (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
  5 adversarial) or, for chained LongMemEval records, its question types (``category_names``).
* gap_closed: (recall - fifo) / (oracle - fifo) at the same budget; None without both references.

``plot_lines`` draws one line per policy (recall vs budget, retention vs lag) into a PNG.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bench.locomo import CATEGORIES, PERSON_ASSISTANT
from bench.longmemeval import CATEGORY_NAMES as LME_CATEGORIES
from bench.protocol import QuestionResult


def category_names(kind: str) -> Mapping[int, str]:
    """What the category numbers mean: LoCoMo's, or LongMemEval's question types (person-assistant)."""
    return LME_CATEGORIES if kind == PERSON_ASSISTANT else CATEGORIES


def metrics(results: Sequence[QuestionResult], names: Mapping[int, str] = CATEGORIES) -> dict:
    pairs = sum(r.evidence for r in results)
    kept = sum(r.kept for r in results)
    n = len(results)
    cats: dict[int, list[int]] = {}
    for r in results:
        c = cats.setdefault(r.category, [0, 0])
        c[0] += r.kept
        c[1] += r.evidence
    return {
        "recall": kept / pairs if pairs else 0.0,
        "per_question": sum(r.kept / r.evidence for r in results) / n if n else 0.0,
        "all_evidence": sum(r.kept == r.evidence for r in results) / n if n else 0.0,
        "questions": n,
        "pairs": pairs,
        "by_category": {
            str(k): {"name": names.get(k, str(k)), "recall": v[0] / v[1] if v[1] else 0.0, "pairs": v[1]}
            for k, v in sorted(cats.items())
        },
    }


def add_gap_closed(rows: list[dict]) -> list[dict]:
    """Fill ``gap_closed`` in each row from the fifo and oracle rows at the same budget."""
    ref: dict[tuple[int, str], float] = {(r["budget"], r["policy"]): r["recall"] for r in rows}
    for r in rows:
        fifo, best = ref.get((r["budget"], "fifo")), ref.get((r["budget"], "oracle"))
        if fifo is None or best is None or best - fifo <= 1e-12:
            r["gap_closed"] = None
        else:
            r["gap_closed"] = (r["recall"] - fifo) / (best - fifo)
    return rows


def _fmt(x: float | None, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def table(rows: Iterable[Mapping], title: str = "", names: Mapping[int, str] = CATEGORIES) -> str:
    """A plain-text table: one line per (budget, policy); ``names``: what the categories mean."""
    rows = list(rows)
    cats = sorted({c for r in rows for c in r.get("by_category", {})}, key=int)
    head = ["budget", "policy", "recall", "per_q", "all_ev", "gap"] + [f"c{c}" for c in cats]
    body = []
    for r in rows:
        bc = r.get("by_category", {})
        body.append(
            [
                str(r["budget"]),
                r["policy"],
                _fmt(r["recall"]),
                _fmt(r["per_question"]),
                _fmt(r["all_evidence"]),
                _fmt(r.get("gap_closed"), 3),
            ]
            + [_fmt(bc[c]["recall"], 3) if c in bc else "-" for c in cats]
        )
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    lines = [title] if title else []
    lines.append("  ".join(h.rjust(w) if i != 1 else h.ljust(w) for i, (h, w) in enumerate(zip(head, widths))))
    lines.append("  ".join("-" * w for w in widths))
    prev = None
    for r, b in zip(rows, body):
        if prev is not None and r["budget"] != prev:
            lines.append("")
        prev = r["budget"]
        lines.append("  ".join(x.rjust(w) if i != 1 else x.ljust(w) for i, (x, w) in enumerate(zip(b, widths))))
    if cats:
        lines.append("categories: " + ", ".join(f"c{c} {names.get(int(c), c)}" for c in cats))
    return "\n".join(lines)


def plot_lines(rows: list[dict], x: str, y: str, out: str, title: str, xlabel: str, ylabel: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for policy in dict.fromkeys(r["policy"] for r in rows):
        pts = sorted((r[x], r[y]) for r in rows if r["policy"] == policy)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=policy)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
