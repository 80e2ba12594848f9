"""The memory inspector: what the model sees now, what left and why, and the controls to steer it.

Live: the body is an ``st.fragment`` that reruns every few seconds (a sidebar switch pauses it), so
an answer arriving in another tab shows up here. Every control (pin checkbox, pin/unpin/restore
buttons) writes in a callback; the table is always rebuilt from the database, never from the
editor's own output, and its key carries the conversation's version so a stale edit never lingers.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from assistant.ui import views as V
from assistant.ui import widgets as W

REFRESH_SECONDS = 2.0

st.set_page_config(page_title="lagmem · memory inspector", page_icon=":material/insights:", layout="wide")

store = W.store()
conv_id = st.session_state["conv_id"]  # picked in the sidebar by app.py, which runs this page
live = st.sidebar.toggle("Live updates", value=True, key="inspector_live",
                         help=f"Refresh this page every {REFRESH_SECONDS:g} s; switch off to pause while you read.")


def budget_bar(b: dict) -> alt.Chart:
    parts = [("pinned", b["pinned"]), ("protected (lag)", b["protected"]), ("other turns", b["other"]), ("free", b["free"])]
    df = pd.DataFrame([{"part": p, "tokens": n, "order": i} for i, (p, n) in enumerate(parts)])
    colors = alt.Scale(domain=[p for p, _ in parts], range=["#7c3aed", "#f59e0b", "#3b82f6", "#e5e7eb"])
    bar = alt.Chart(df).mark_bar(height=26).encode(
        x=alt.X("sum(tokens):Q", title=None, scale=alt.Scale(domain=[0, max(b["budget"], b["used"])])),
        color=alt.Color("part:N", scale=colors, legend=alt.Legend(orient="top", direction="horizontal", title=None)),
        order=alt.Order("order:Q"),
        tooltip=["part", "tokens"],
    )
    rule = alt.Chart(pd.DataFrame({"budget": [b["budget"]]})).mark_rule(color="#dc2626", strokeWidth=2).encode(x="budget:Q")
    return (bar + rule).properties(height=50)


def timeline_chart(points: pd.DataFrame, markers: pd.DataFrame, budget: int) -> alt.Chart:
    line = alt.Chart(points).mark_line(interpolate="step-after", point=True).encode(
        x=alt.X("step:Q", title="step", axis=alt.Axis(tickMinStep=1, format="d")), y=alt.Y("tokens:Q", title="tokens in memory"), tooltip=["step", "tokens"])
    rule = alt.Chart(pd.DataFrame({"budget": [budget]})).mark_rule(color="#dc2626", strokeDash=[6, 4]).encode(y="budget:Q")
    chart = line + rule
    if not markers.empty:
        chart += alt.Chart(markers).mark_point(shape="triangle-down", size=110, filled=True, color="#dc2626").encode(
            x="step:Q", y=alt.Y("peak:Q"), tooltip=["step", alt.Tooltip("peak:Q", title="tokens before"), "evicted"])
    return chart.properties(height=260)


def importance_chart(df: pd.DataFrame) -> alt.Chart:
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("turn:O", title="turn"), y=alt.Y("importance:Q"),
        color=alt.Color("status:N", scale=alt.Scale(domain=["pinned", "protected", "can be evicted"],
                                                    range=["#7c3aed", "#f59e0b", "#3b82f6"]),
                        legend=alt.Legend(orient="bottom", title=None)),
        tooltip=["turn", "importance", "status", "tokens"],
    ).properties(height=260)


def citation_chart(df: pd.DataFrame) -> alt.Chart:
    return alt.Chart(df).mark_circle(color="#0d9488", opacity=0.75).encode(
        x=alt.X("step:Q", title="step (when cited)"), y=alt.Y("turn:Q", title="cited turn"),
        size=alt.Size("weight:Q", legend=None, scale=alt.Scale(range=[30, 200])),
        tooltip=["step", "turn", "weight", "source", "answer"],
    ).properties(height=260)


def apply_pin_edits() -> bool:
    """Store the pins edited in the table since the last run (its edit state is read, applied to
    the database, and never fed back in as the table's data). True when something changed."""
    changed = False
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(f"turns-{conv_id}-")]:
        numbers = st.session_state.get(f"numbers-{key}")
        edits = (st.session_state.get(key) or {}).get("edited_rows", {})
        if numbers and edits:
            pinned_now = {t.number: t.pinned for t in store.layer(conv_id).turns()}
            for number, want in V.pin_changes(edits, numbers, pinned_now):
                W.set_pin(store, conv_id, number, want)
                changed = True
        del st.session_state[key]
        st.session_state.pop(f"numbers-{key}", None)
    return changed


def turn_details(view: V.MemoryView) -> None:
    numbers = [t.seq for t in view.turns]
    default = st.session_state.get("detail_turn")
    number = st.selectbox("Show a turn in full", numbers, index=numbers.index(default) if default in numbers else len(numbers) - 1,
                          format_func=lambda n: f"#{n} · {view.by_number[n].role} · {V.shorten(view.by_number[n].content, 70)}")
    st.session_state["detail_turn"] = number
    t, state = view.by_number[number], view.layer.turn(number)
    where = "in memory" if state.active else "evicted (still stored)"
    st.caption(f"#{number} · {t.role} · {t.tokens} tokens · {where}" + (" · pinned" if state.pinned else ""))
    with st.container(border=True):
        st.text(t.content)
    c1, c2, _ = st.columns([1, 1, 3])
    if state.pinned:
        c1.button("Unpin", key=f"unpin-{number}", icon=":material/keep_off:", on_click=W.set_pin, args=(store, conv_id, number, False))
    else:
        c1.button("Pin", key=f"pin-{number}", icon=":material/keep:", on_click=W.set_pin, args=(store, conv_id, number, True))
    if not state.active:
        c2.button("Restore", key=f"restore-{number}", icon=":material/undo:", type="primary",
                  on_click=W.restore, args=(store, conv_id, number))
    if any(r.turn == number for r in view.evictions):
        st.markdown("**Why was this forgotten?**")
        st.text(V.why_forgotten(view, number))


def inspector() -> None:
    apply_pin_edits()
    view = V.load_view(store, conv_id)
    conv = view.conv
    st.title("Memory inspector", anchor=False)
    st.caption(f"**{W.md_text(conv.title)}** · policy **{conv.policy}** ({V.policy_description(conv.policy)}) · "
               f"lag {view.layer.lag} steps · step {conv.step}")
    W.show_flash()

    b = V.budget_summary(view)
    m = st.columns(4)
    m[0].metric("Tokens in memory", f"{b['used']:,} of {b['budget']:,}", help="What the model sees as context, against the budget.")
    m[1].metric("Pinned", f"{b['pinned']:,} tokens")
    m[2].metric("Protected (lag)", f"{b['protected']:,} tokens")
    m[3].metric("Turns in memory / evicted", f"{b['active']} / {b['evicted']}")
    st.altair_chart(budget_bar(b), width="stretch")
    if b["held_over"]:
        st.warning(f"Pinned and protected turns alone hold {b['pinned'] + b['protected']:,} tokens, more than the "
                   f"{b['budget']:,}-token budget: nothing else can be evicted to make room. Unpin a turn or raise the budget.",
                   icon=":material/warning:")
    elif b["over"]:
        st.warning("The memory is over budget.", icon=":material/warning:")

    if not view.turns:
        st.info("No turns yet: send a message on the chat page.")
        return

    st.subheader("Turns", anchor=False)
    df = V.turn_table(view)
    key = f"turns-{conv_id}-{conv.version}"  # a new table whenever the stored state moves
    st.session_state[f"numbers-{key}"] = list(df.index)
    st.data_editor(
        df, key=key, width="stretch", disabled=[c for c in df.columns if c != "pinned"],
        column_config={
            "role": st.column_config.TextColumn("role", width="small"),
            "tokens": st.column_config.NumberColumn("tokens", width="small"),
            "text": st.column_config.TextColumn("text", width="medium", help="Shortened; pick the turn below to read it in full."),
            "protected": st.column_config.NumberColumn("protected", help="Steps of lag left (0: not protected)."),
            "pinned": st.column_config.CheckboxColumn("pinned", help="Pinned turns are never evicted."),
            "citations": st.column_config.NumberColumn("cited", help="How many times answers cited it."),
            "last cited": st.column_config.TextColumn("last cited", help="Step of the last citation."),
            "importance": st.column_config.NumberColumn("importance", format="%.3f", help="Under the active policy, now."),
            "rank": st.column_config.TextColumn("evict rank", help="1 = the next turn eviction would take; blank: pinned, protected or evicted."),
        },
    )
    turn_details(view)

    st.subheader("Charts", anchor=False)
    tabs = st.tabs(["Tokens in memory", "Importance now", "Citations over time"])
    points, markers = V.memory_timeline(view)
    tabs[0].altair_chart(timeline_chart(points, markers, conv.budget), width="stretch")
    tabs[0].caption("Red triangles: steps where turns were evicted (at the peak before eviction). Dashed line: the budget.")
    imp = V.importance_series(view)
    tabs[1].altair_chart(importance_chart(imp), width="stretch")
    cites = V.citation_series(view)
    if cites.empty:
        tabs[2].info("No citations yet.")
    else:
        tabs[2].altair_chart(citation_chart(cites), width="stretch")

    st.subheader("Misses", anchor=False)
    misses = V.misses_table(view)
    if misses.empty:
        st.caption("No misses: no later question wanted an evicted turn.")
    else:
        st.caption("Evicted turns a later question wanted (closer to it than anything in memory).")
        st.dataframe(misses, hide_index=True, width="stretch")
        for n in dict.fromkeys(misses.loc[~misses["in memory now"], "turn"]):
            st.button(f"Restore #{n}", key=f"miss-restore-{n}", icon=":material/undo:",
                      on_click=W.restore, args=(store, conv_id, int(n)))

    st.subheader("Eviction history", anchor=False)
    history = V.eviction_history(view)
    if history.empty:
        st.caption("Nothing has been evicted yet.")
    else:
        st.dataframe(history, hide_index=True, width="stretch")


st.fragment(run_every=REFRESH_SECONDS if live else None)(inspector)()
