"""The memory inspector: what the model sees now, what left and why, and the controls to steer it.

Live: a small ``st.fragment`` reads the conversation's version every few seconds (a sidebar switch
pauses it) and redraws the page only when it moved, so an answer arriving in another tab shows up
here while an idle page reads one row. Long conversations are paged in SQL: a draw reads one page
of the turn table (newest last), one page of the eviction history (newest first), one turn in full,
the memory itself and the newest misses and citations (``page_view``), and the token chart reads
only the steps since its last read (``timeline``). So a draw costs what the page shows and what
changed, not the conversation's length. Every control (pin checkbox, pin/unpin/restore
buttons) writes in a callback; the table is always rebuilt from the database, never from the
editor's own output, and its key carries the conversation's version and the page so a stale edit
never lingers.
"""

from __future__ import annotations

import streamlit as st

from assistant.store import NotFound
from web import notices, whatif_panel
from web.actions import restore, set_pin
from web.calibration import calibration_text
from web.chart_series import citation_series, importance_series
from web.charts import budget_bar, citation_chart, importance_chart, timeline_chart
from web.inspector_tables import (
    budget_summary,
    eviction_history,
    misses_table,
    page_bounds,
    page_count,
    pin_changes,
    turn_table,
)
from web.loading import progress
from web.over_budget import over_budget_text
from web.page_view import inspector_view, pinned_flags
from web.shell import Shell, current
from web.text import md_text
from web.view_cache import current_view, derived, timeline_for
from web.views import policy_description
from web.why_forgotten import why_forgotten

REFRESH_SECONDS = 2.0
TURNS_PER_PAGE = 100
EVICTIONS_PER_PAGE = 100
DRAWN = "inspector_drawn"  # session state: (conversation, version) the page last drew


def turns_key(conv_id: int) -> str:
    return f"turns_page-{conv_id}"  # session state: the turn table's page


def history_key(conv_id: int) -> str:
    return f"history_page-{conv_id}"  # session state: the eviction history's page


def apply_pin_edits(shell: Shell) -> bool:
    """Store the pins edited in the table since the last run (its edit state is read, applied to
    the database, and never fed back in as the table's data). True when something changed."""
    store, conv_id = shell.store, shell.conv_id
    changed = False
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(f"turns-{conv_id}-")]:
        numbers = st.session_state.get(f"numbers-{key}")
        edits = (st.session_state.get(key) or {}).get("edited_rows", {})
        if numbers and edits:
            pinned_now = pinned_flags(store, conv_id, numbers)
            for number, want in pin_changes(edits, numbers, pinned_now):
                set_pin(store, conv_id, number, want)
                changed = True
        del st.session_state[key]
        st.session_state.pop(f"numbers-{key}", None)
    return changed


def turn_details(shell: Shell, view) -> None:
    """One turn in full, picked by its number (a box, not a list of every turn: it costs the same
    at 10 turns and at 100,000). The page read it in full (``view.detail``; default the last)."""
    store, conv_id = shell.store, shell.conv_id
    last = view.last_turn
    st.session_state["detail_pick"] = view.detail or last  # follows the chat's links and the last pick
    number = st.number_input(
        "Show a turn in full (its number)",
        min_value=1,
        max_value=last,
        step=1,
        key="detail_pick",
        on_change=lambda: st.session_state.update(detail_turn=st.session_state["detail_pick"]),
    )
    number = int(number)
    if number != view.detail:
        st.caption(f"There is no turn #{number}.")
        return
    st.session_state["detail_turn"] = number
    t, state = view.by_number[number], view.layer.turn(number)
    where = "in memory" if state.active else "evicted (still stored)"
    st.caption(f"#{number} · {t.role} · {t.tokens} tokens · {where}" + (" · pinned" if state.pinned else ""))
    with st.container(border=True):
        st.text(t.content)
    c1, c2, _ = st.columns([1, 1, 3])
    if state.pinned:
        c1.button(
            "Unpin",
            key=f"unpin-{number}",
            icon=":material/keep_off:",
            on_click=set_pin,
            args=(store, conv_id, number, False),
        )
    else:
        c1.button(
            "Pin", key=f"pin-{number}", icon=":material/keep:", on_click=set_pin, args=(store, conv_id, number, True)
        )
    if not state.active:
        c2.button(
            "Restore",
            key=f"restore-{number}",
            icon=":material/undo:",
            type="primary",
            on_click=restore,
            args=(store, conv_id, number),
        )
    if any(r.turn == number for r in view.evictions):
        st.markdown("**Why was this forgotten?**")
        st.text(why_forgotten(view, number))


def page_span(key: str, total: int, size: int, *, newest_last: bool) -> tuple[int, int]:
    """The [start, stop) of the page picked under ``key`` (settling its default: the newest rows,
    the last page of the turns, the first of the newest-first history), without drawing."""
    pages = page_count(total, size)
    if pages == 1:
        return 0, total
    if key not in st.session_state or not 1 <= st.session_state[key] <= pages:
        st.session_state[key] = pages if newest_last else 1
    return page_bounds(total, size, int(st.session_state[key]))


def pager(label: str, key: str, total: int, size: int, *, newest_last: bool) -> tuple[int, int]:
    """A page picker when ``total`` rows need more than one page; returns the page's [start, stop)."""
    pages = page_count(total, size)
    if pages == 1:
        return 0, total
    page_span(key, total, size, newest_last=newest_last)
    page = st.number_input(f"{label} (of {pages:,}, {size} rows each)", min_value=1, max_value=pages, step=1, key=key)
    start, stop = page_bounds(total, size, int(page))
    st.caption(f"Rows {start + 1:,}–{stop:,} of {total:,}" + (" (newest last)." if newest_last else " (newest first)."))
    return start, stop


def watch(shell: Shell) -> None:
    """The live refresh: one row read every few seconds; the page is drawn again only when the
    conversation's version moved (a new turn, a pin, an eviction: every change bumps it)."""
    try:
        version = shell.store.conversation(shell.conv_id).version
    except NotFound:  # deleted meanwhile: the full run says so
        st.rerun()
    if st.session_state.get(DRAWN) != (shell.conv_id, version):
        st.rerun()


def read_page(shell: Shell):
    store = shell.store
    view = inspector_view(
        store,
        shell.conv_id,
        detail=st.session_state.get("detail_turn"),
        timeline=lambda conv: timeline_for(store, conv),
        turn_page=lambda total: page_span(turns_key(shell.conv_id), total, TURNS_PER_PAGE, newest_last=True),
        history_page=lambda total: page_span(history_key(shell.conv_id), total, EVICTIONS_PER_PAGE, newest_last=False),
    )
    if view.detail is not None:  # the turn it settled on (the last by default) is the one asked for now
        st.session_state["detail_turn"] = view.detail
    return view


def inspector(shell: Shell) -> None:
    store, conv_id = shell.store, shell.conv_id
    apply_pin_edits(shell)
    # read again only when the stored version moved or another page or turn is asked for
    view = current_view(
        store,
        conv_id,
        lambda: read_page(shell),
        lambda: (
            st.session_state.get(turns_key(shell.conv_id)),
            st.session_state.get(history_key(shell.conv_id)),
            st.session_state.get("detail_turn"),
        ),
    )
    conv = view.conv
    st.session_state[DRAWN] = (conv_id, conv.version)
    st.title("Memory inspector", anchor=False)
    st.caption(
        f"**{md_text(conv.title)}** · policy **{conv.policy}** ({policy_description(conv.policy)}) · "
        f"lag {view.layer.lag} steps · step {conv.step}"
    )
    loading = progress()
    if loading.ready.is_set() and loading.service is not None:  # which tokenizer the budget is counted in
        st.caption(f"Token counts: {loading.service.counter.describe()}.")
    notices.show()

    b = budget_summary(view)
    m = st.columns(4)
    m[0].metric(
        "Tokens in memory",
        f"{b['used']:,} of {b['budget']:,}",
        help="What the model sees as context, against the budget.",
    )
    m[1].metric("Pinned", f"{b['pinned']:,} tokens")
    m[2].metric("Protected (lag)", f"{b['protected']:,} tokens")
    m[3].metric("Turns in memory / evicted", f"{b['active']} / {b['evicted']}")
    st.altair_chart(derived(view, "budget_bar", lambda: budget_bar(b)), width="stretch")
    warning = over_budget_text(b, view.layer.lag)
    if warning:
        st.warning(warning, icon=":material/warning:")

    if not view.turn_count:
        st.info("No turns yet: send a message on the chat page.")
        return

    st.subheader("Turns", anchor=False)
    numbers = pager("Turns page", turns_key(shell.conv_id), view.turn_count, TURNS_PER_PAGE, newest_last=True)
    df = turn_table(view, view.page)
    key = f"turns-{conv_id}-{conv.version}-{numbers[0]}"  # a new table whenever the stored state or the page moves
    st.session_state[f"numbers-{key}"] = list(df.index)
    st.data_editor(
        df,
        key=key,
        width="stretch",
        disabled=[c for c in df.columns if c != "pinned"],
        column_config={
            "role": st.column_config.TextColumn("role", width="small"),
            "tokens": st.column_config.NumberColumn("tokens", width="small"),
            "text": st.column_config.TextColumn(
                "text", width="medium", help="Shortened; pick the turn below to read it in full."
            ),
            "protected": st.column_config.NumberColumn("protected", help="Steps of lag left (0: not protected)."),
            "pinned": st.column_config.CheckboxColumn("pinned", help="Pinned turns are never evicted."),
            "citations": st.column_config.NumberColumn("cited", help="How many times answers cited it."),
            "last cited": st.column_config.TextColumn("last cited", help="Step of the last citation."),
            "importance": st.column_config.NumberColumn(
                "importance now", format="%.3f", help="Under the active policy, computed now."
            ),
            "at eviction": st.column_config.NumberColumn(
                "importance at eviction",
                format="%.3f",
                help="What it scored when it was last evicted (blank: never evicted). It may be higher now: "
                "importance is measured again at every decision, from the citations up to then.",
            ),
            "need prior": st.column_config.NumberColumn(
                "need prior",
                format="%.2f",
                help="The need estimator's chance, at arrival, that a later question needs this turn.",
            ),
            "from prior": st.column_config.NumberColumn(
                "from prior", format="%.3f", help="The part of the importance that comes from the prior."
            ),
            "from evidence": st.column_config.NumberColumn(
                "from evidence", format="%.3f", help="The part that comes from citations."
            ),
            "rank": st.column_config.TextColumn(
                "evict rank", help="1 = the next turn eviction would take; blank: pinned, protected or evicted."
            ),
        },
    )
    calibration = calibration_text(view.layer)
    if calibration:
        st.caption(calibration)
    turn_details(shell, view)

    st.subheader("Charts", anchor=False)
    tabs = st.tabs(["Tokens in memory", "Importance now", "Citations over time"])
    points, markers, width = derived(view, "timeline", timeline_for(store, conv).frames)
    tabs[0].altair_chart(
        derived(view, "timeline_chart", lambda: timeline_chart(points, markers, conv.budget)), width="stretch"
    )
    tabs[0].caption(
        "Red triangles: steps where turns were evicted (at the peak before eviction). Dashed line: the budget."
        + (f" Each point is the highest of {width:,} steps." if width > 1 else "")
    )
    tabs[1].altair_chart(
        derived(view, "importance_chart", lambda: importance_chart(importance_series(view))), width="stretch"
    )
    cites = derived(view, "citations", lambda: citation_series(view, view.cites))
    if cites.empty:
        tabs[2].info("No citations yet.")
    else:
        tabs[2].altair_chart(derived(view, "citation_chart", lambda: citation_chart(cites)), width="stretch")
        if view.cites_count > len(view.cites):
            tabs[2].caption(f"The newest {len(view.cites):,} of {view.cites_count:,} citations.")

    st.subheader("Misses", anchor=False)
    misses = misses_table(view)
    if misses.empty:
        st.caption("No misses: no later question wanted an evicted turn.")
    else:
        more = f" The newest {len(misses):,} of {view.misses_count:,}." if view.misses_count > len(misses) else ""
        st.caption("Evicted turns a later question wanted (closer to it than anything in memory)." + more)
        st.dataframe(misses, hide_index=True, width="stretch")
        for n in dict.fromkeys(misses.loc[~misses["in memory now"], "turn"]):
            st.button(
                f"Restore #{n}",
                key=f"miss-restore-{n}",
                icon=":material/undo:",
                on_click=restore,
                args=(store, conv_id, int(n)),
            )

    st.subheader("Eviction history", anchor=False)
    pager("History page", history_key(shell.conv_id), view.history_count, EVICTIONS_PER_PAGE, newest_last=False)
    history = eviction_history(view.history)
    if history.empty:
        st.caption("Nothing has been evicted yet.")
    else:
        st.dataframe(history, hide_index=True, width="stretch")


def render(shell: Shell) -> None:
    st.set_page_config(page_title="lagmem · memory inspector", page_icon=":material/insights:", layout="wide")
    if str(st.query_params.get("turn", "")).isdigit():  # the chat's "open it in the inspector" link
        st.session_state["detail_turn"] = int(st.query_params["turn"])
        del st.query_params["turn"]
    live = st.sidebar.toggle(
        "Live updates",
        value=True,
        key="inspector_live",
        help=f"Refresh this page every {REFRESH_SECONDS:g} s; switch off to pause while you read.",
    )
    inspector(shell)
    if live:
        st.fragment(run_every=REFRESH_SECONDS)(watch)(shell)
    whatif_panel.draw(shell.store, shell.conv_id)


render(current())  # the router (app.py) chose the conversation for this run
