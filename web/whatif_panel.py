"""The inspector's "What if" panel: the current conversation replayed under other settings.

Its own ``st.fragment`` (not the inspector's live one): changing a control reruns only the panel,
and it does not recompute every few seconds while someone reads it. It is behind a toggle, so an
inspector view that does not ask for it replays nothing. The conversation is read once
per stored version (``assistant.whatif.load``) and each what-if is kept per session, so moving a
control back is instant. Replays of long conversations show a progress bar. "Apply these
settings" is the only write: ``store.update_settings`` (one unit of work, an eviction record for
each turn that leaves), then the whole page reruns so the sidebar and the inspector show it.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from assistant import whatif as W
from assistant.errors import TooMuchWork
from assistant.work_budget import Deadline
from memory.types import MemorySettings
from web.chart_series import memory_timeline
from web.views import load_view, policy_description

SLOW_STEPS = 2000  # above this many steps a replay shows a progress bar
# a what-if replay's time limit inside the page (its cost is turns x memory); the terminal's
# `lagmem whatif` has none
WHATIF_SECONDS = 60.0
HINT = "Try a smaller budget here, or run `lagmem whatif` in a terminal, which has no time limit."
KEEP = 12  # what-if results kept per session
HINDSIGHT = (
    "Judged with hindsight: a miss is a moment a stored citation (or the miss log) wanted a turn that "
    "setting had evicted. The settings the conversation ran with are favoured: its answers could only "
    "cite what was in memory then."
)


def _cache() -> dict:
    return st.session_state.setdefault("whatif-cache", {})


def _recorded(store, conv_id: int, version: int) -> dict:
    """The recording, the stored token line and the memory now, read once per stored version."""
    cache = _cache()
    key = ("rec", conv_id, version)
    if key not in cache:
        for k in [k for k in cache if k[0] == "rec" and k[1] == conv_id]:
            del cache[k]
        with st.spinner("Reading the conversation…"):
            view = load_view(store, conv_id)
            points, _ = memory_timeline(view)
            rec = W.load(store, conv_id)
        cache[key] = {
            "rec": rec,
            "points": points,
            "now": rec.now,
            "tokens": {t.seq: t.tokens for t in view.turns},
            "roles": {t.seq: t.role for t in view.turns},
        }
    return cache[key]


def _progress(label: str, steps: int, fn):
    """``fn(progress)`` with a progress bar when the replay is long enough to be noticed."""
    if steps < SLOW_STEPS:
        return fn(None)
    bar = st.progress(0.0, text=label)
    try:
        return fn(lambda f: bar.progress(min(max(f, 0.0), 1.0), text=label))
    finally:
        bar.empty()


def _run(conv_id: int, version: int, rec: W.Recording, settings: MemorySettings) -> W.WhatIf:
    cache = _cache()
    key = ("run", conv_id, version, settings.policy, settings.budget, settings.lag, settings.low_watermark)
    if key not in cache:
        cache[key] = _progress(
            f"Replaying {rec.steps:,} steps under {settings.policy}…",
            rec.steps,
            lambda p: W.run(rec, settings, progress=p, deadline=Deadline(WHATIF_SECONDS, "the what-if replay", HINT)),
        )
        _trim(cache)
    return cache[key]


def _compare(conv_id: int, version: int, rec: W.Recording, settings: MemorySettings) -> list[dict]:
    cache = _cache()
    key = ("compare", conv_id, version, settings.budget, settings.lag, settings.low_watermark)
    if key not in cache:
        cache[key] = _progress(
            f"Replaying {rec.steps:,} steps under every policy…",
            rec.steps,
            lambda p: W.comparison_rows(
                W.compare(rec, settings, progress=p, deadline=Deadline(WHATIF_SECONDS, "the comparison", HINT))
            ),
        )
        _trim(cache)
    return cache[key]


def _trim(cache: dict) -> None:
    done = [k for k in cache if k[0] != "rec"]
    for k in done[: max(0, len(done) - KEEP)]:
        del cache[k]


def token_chart(now: pd.DataFrame, whatif: list[int], label: str, budget: int) -> alt.Chart:
    """Tokens in memory over time: as stored, and under the what-if settings, on one chart."""
    df = pd.concat(
        [
            now.assign(memory="as stored"),
            pd.DataFrame({"step": range(1, len(whatif) + 1), "tokens": whatif}).assign(memory=label),
        ],
        ignore_index=True,
    )
    line = (
        alt.Chart(df)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("step:Q", title="step", axis=alt.Axis(tickMinStep=1, format="d")),
            y=alt.Y("tokens:Q", title="tokens in memory"),
            color=alt.Color(
                "memory:N", scale=alt.Scale(range=["#3b82f6", "#f97316"]), legend=alt.Legend(orient="top", title=None)
            ),
            tooltip=["memory", "step", "tokens"],
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"budget": [budget]})).mark_rule(color="#f97316", strokeDash=[6, 4]).encode(y="budget:Q")
    )
    return (line + rule).properties(height=260)


def difference_table(now, result: W.WhatIf, tokens: dict, roles: dict) -> pd.DataFrame:
    """The turns the two memories disagree on at the current step."""
    here, there = set(now.active), set(result.final.active)
    last = {r.turn: r.step for r in result.evictions}
    rows = [
        {
            "turn": n,
            "role": roles.get(n, ""),
            "tokens": tokens.get(n, 0),
            "in memory now": n in here,
            "what if": n in there,
            "what-if evicted at": last.get(n) if n not in there else None,
        }
        for n in sorted(here ^ there)
    ]
    return pd.DataFrame(rows, columns=["turn", "role", "tokens", "in memory now", "what if", "what-if evicted at"])


def compare_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(
        [
            {
                "best": "★" if r["best"] else "",
                "policy": r["policy"],
                "lag": r["lag"],
                "turns kept": r["turns_kept"],
                "tokens kept": r["tokens_kept"],
                "evictions": r["evictions"],
                "misses": r["misses"],
                "wanted turns kept": f"{r['wanted_kept']} of {r['wanted_turns']}",
            }
            for r in rows
        ]
    )
    return df


def _highlight(row: pd.Series) -> list[str]:
    return ["background-color: #dcfce7; font-weight: 600" if row["best"] else ""] * len(row)


@st.fragment
def draw(store, conv_id: int) -> None:
    conv = store.conversation(conv_id)
    if not conv.step:
        return
    st.divider()
    if not st.toggle(
        "What if: replay this conversation under other settings",
        key=f"whatif-on-{conv_id}",
        help="Another policy, budget, lag or low watermark, side by side with the memory now.",
    ):
        return
    st.subheader("What if", anchor=False)
    st.caption(
        "Replays this conversation (its turns, citations, feedback, pins and restores, in order) through "
        "the memory layer under other settings, in memory: nothing is stored unless you apply them."
    )
    data = _recorded(store, conv_id, conv.version)
    rec: W.Recording = data["rec"]
    names = list(W.POLICY_NAMES)
    c = st.columns(4)
    policy = c[0].selectbox(
        "Policy",
        names,
        index=names.index(conv.policy) if conv.policy in names else 0,
        key=f"whatif-policy-{conv_id}",
        format_func=lambda n: f"{n} — {policy_description(n)}",
    )
    budget = c[1].number_input(
        "Budget (tokens)",
        min_value=1,
        max_value=10_000_000,
        step=100,
        value=int(conv.budget),
        key=f"whatif-budget-{conv_id}",
    )
    lag = c[2].number_input(
        "Lag (steps)", min_value=0, max_value=10_000, value=int(conv.lag), key=f"whatif-lag-{conv_id}"
    )
    low = c[3].slider(
        "Low watermark",
        min_value=0.05,
        max_value=1.0,
        step=0.05,
        value=float(conv.low_watermark),
        key=f"whatif-low-{conv_id}",
        help="When over budget, evict down to this share of the budget.",
    )
    try:
        settings = W.settings_for(
            rec.settings, policy=policy, budget=int(budget), lag=int(lag), low_watermark=float(low)
        )
    except ValueError as exc:
        st.error(str(exc))
        return
    try:
        result = _run(conv_id, conv.version, rec, settings)
    except TooMuchWork as exc:
        st.error(exc.message, icon=":material/timer_off:")
        return
    now = data["now"]

    m = st.columns(4)
    m[0].metric("In memory now", f"{len(now.active)} turns", f"{now.used_tokens:,} tokens", delta_color="off")
    m[1].metric(
        "What if", f"{len(result.final.active)} turns", f"{result.final.used_tokens:,} tokens", delta_color="off"
    )
    m[2].metric("What-if evictions", f"{len(result.evictions):,}")
    m[3].metric("What-if misses", f"{len(result.misses):,}", help=HINDSIGHT)
    label = f"what if: {policy}, {int(budget):,} tokens, lag {result.effective_lag}"
    st.altair_chart(token_chart(data["points"], result.tokens, label, int(budget)), width="stretch")
    st.caption("Blue: tokens in memory as stored. Orange: under the what-if settings; dashed: its budget.")

    diff = difference_table(now, result, data["tokens"], data["roles"])
    if diff.empty:
        st.caption(f"At step {now.step} the what-if would hold exactly the turns in memory now.")
    else:
        st.markdown(f"**Where they differ at step {now.step}** ({len(diff)} turns)")
        st.dataframe(diff, hide_index=True, width="stretch")
    left, right = st.columns(2)
    with left:
        st.markdown(f"**What-if evictions** ({len(result.evictions):,}, newest first)")
        ev = pd.DataFrame(
            [
                {"step": r.step, "turn": r.turn, "importance": round(r.importance, 4)}
                for r in reversed(result.evictions)
            ],
            columns=["step", "turn", "importance"],
        )
        st.dataframe(ev, hide_index=True, width="stretch", height=220)
    with right:
        st.markdown(f"**What-if misses** ({len(result.misses):,})")
        if result.misses:
            ms = pd.DataFrame(
                [
                    {"step": x.step, "turn": x.turn, "evicted at": x.evicted_at, "wanted by": x.source}
                    for x in result.misses
                ],
                columns=["step", "turn", "evicted at", "wanted by"],
            )
            st.dataframe(ms, hide_index=True, width="stretch", height=220)
        else:
            st.caption("None: every turn a question wanted was in memory under these settings.")

    st.markdown(f"**Every policy at {int(budget):,} tokens, lag {int(lag)}, low watermark {float(low):g}**")
    try:
        rows = _compare(conv_id, conv.version, rec, settings)
    except TooMuchWork as exc:
        st.error(exc.message, icon=":material/timer_off:")
        return
    frame = compare_frame(rows)
    st.dataframe(frame.style.apply(_highlight, axis=1), hide_index=True, width="stretch")
    best = ", ".join(r["policy"] for r in rows if r["best"])
    st.caption(
        f"★ Best for this conversation: **{best}** (fewest misses, then the most wanted turns kept). {HINDSIGHT}"
    )

    st.caption(
        "Applying changes this conversation's settings from now on: the memory is brought within the new "
        "budget at once (an eviction record for each turn that leaves). It does not rewrite the past, so "
        "the memory can differ from the what-if."
    )
    if st.button("Apply these settings", icon=":material/check:", key=f"whatif-apply-{conv_id}"):
        records = store.update_settings(conv_id, settings)
        gone = ", ".join(f"#{r.turn}" for r in records)
        st.session_state["whatif-applied"] = (
            f"Applied: policy {settings.policy}, budget {settings.budget:,}, lag "
            f"{settings.lag}, low watermark {settings.low_watermark:g}."
            + (f" {len(records)} turns left memory ({gone})." if records else "")
        )
        st.rerun()
    if msg := st.session_state.pop("whatif-applied", None):
        st.success(msg)
