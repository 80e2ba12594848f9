"""The sidebar's memory settings for one conversation: budget, lag, policy and second chance.

Saved in one form submit through ``store.update_settings`` (which may evict at once when the budget
shrinks; the flash message names what left). A policy's own parameters are kept while the policy
stays the same and dropped when it changes.
"""

from __future__ import annotations

import streamlit as st

from assistant.store import MemoryStore
from memory.policies import POLICIES
from memory.types import MemorySettings
from web.actions import evicted_note
from web.notices import flash
from web.views import policy_description


def settings_panel(store: MemoryStore, conv_id: int) -> None:
    conv = store.conversation(conv_id)
    with st.sidebar.expander("Memory settings"):
        with st.form(f"settings-{conv_id}", border=False):
            budget = st.number_input(
                "Budget (tokens)",
                min_value=1,
                max_value=1_000_000,
                step=100,
                value=int(conv.budget),
                help="The most tokens of conversation the model sees at once.",
            )
            lag = st.number_input(
                "Lag (steps)",
                min_value=0,
                max_value=1000,
                value=int(conv.lag),
                help="How many steps a new turn is protected from eviction while evidence about it accrues.",
            )
            names = list(POLICIES)
            # names only in the box (a description there is cut off); the descriptions in the help
            policy = st.selectbox(
                "Policy",
                names,
                index=names.index(conv.policy) if conv.policy in names else 0,
                help="\n".join(f"* **{n}**: {policy_description(n)}" for n in names),
            )
            st.caption(f"{conv.policy}: {policy_description(conv.policy)}")
            second_chance = st.checkbox(
                "Second chance (auto-restore)",
                value=bool(conv.auto_restore),
                help="When a question is closer to a forgotten turn than to anything in memory, bring "
                "that turn back instead of only logging the miss.",
            )
            if st.form_submit_button("Save settings"):
                # a policy's own parameters are kept while it stays, dropped when it changes
                settings = MemorySettings.of(conv).override(budget=int(budget), lag=int(lag), policy=policy)
                records = store.update_settings(conv_id, settings, auto_restore=second_chance)
                flash("Memory settings saved." + evicted_note(records), "success")
                st.rerun()
