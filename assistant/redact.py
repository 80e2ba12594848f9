"""Secrets taken out of text shown to people: the one redaction every shell uses.

A compatible server's address comes from settings and may carry credentials three ways: userinfo
(``https://user:pass@host``), a query parameter (``?api-key=...``, ``&token=...``) and, rarely, a
fragment. Wherever such an address (or an error quoting it) is shown -- the sidebar, ``lagmem
chat``'s banner, an error -- :func:`redact` replaces each of those with ``***``: the userinfo
whole, the value of every query parameter whose name looks like a secret, and any fragment. The
rest (scheme, host, port, path, harmless parameters) stays, so the user can still tell which
server is meant. Text that is not a URL is left alone.
"""

from __future__ import annotations

import re

MASK = "***"
# a URL: a scheme, "://", then anything up to whitespace, a quote, an angle bracket or a parenthesis
# (so "model (https://host/v1)" does not swallow the ")")
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s<>\"'()]+")
_SECRET_NAME = re.compile(
    r"key|token|secret|passw|pwd|auth|sig|credential|session|bearer|jwt|code|access|private", re.IGNORECASE
)


def _redact_query(query: str) -> str:
    parts = []
    for part in re.split(r"([&;])", query):
        name, eq, value = part.partition("=")
        parts.append(f"{name}={MASK}" if eq and value and _SECRET_NAME.search(name) else part)
    return "".join(parts)


def _redact_url(url: str) -> str:
    scheme, _, rest = url.partition("://")
    end = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        authority = f"{MASK}@{authority.rpartition('@')[2]}"
    tail, hash_, fragment = tail.partition("#")
    path, q, query = tail.partition("?")
    out = f"{scheme}://{authority}{path}{q}{_redact_query(query)}"
    return out + (f"#{MASK}" if hash_ and fragment else hash_)


def redact(text: str) -> str:
    """``text`` with every URL's credentials replaced by ``***`` (see the module's docstring)."""
    return _URL.sub(lambda m: _redact_url(m.group(0)), text)
