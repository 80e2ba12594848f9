"""User and model text on a page, shown literally: Markdown escaping.

Whatever a person or the model writes is data, never markup: a ``#`` must not become a heading, a
``$`` must not start LaTeX, ``:material/x:`` must not become an icon.
"""

from __future__ import annotations

import re

import streamlit as st

from assistant.redact import redact

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~<$:&])")


def md_text(text: str) -> str:
    """User or model text as Markdown that renders literally: every Markdown (and Streamlit
    directive, LaTeX, HTML-entity) character is escaped, and line breaks are kept."""
    escaped = _MD_SPECIAL.sub(r"\\\1", text)
    return escaped.replace("\r\n", "\n").replace("\n", "  \n")


def show_text(text: str) -> None:
    st.markdown(md_text(text))


def show_plain(text: str, *, kind: str = "caption", icon: str | None = None) -> None:
    """Text from outside (a model's error, a model's name, a server's address) shown literally,
    with credentials in URLs redacted (``assistant.redact``): ``kind`` is ``caption`` or ``error``."""
    safe = md_text(redact(text))
    if kind == "error":
        st.error(safe, icon=icon)
    else:
        st.caption(safe)
