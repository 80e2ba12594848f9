"""The ``--user`` flag's value: the owner string the web app stores for the same person.

A signed-in email is stored lower-cased (``assistant.identity``), so ``--user Ana@Example.org``
must name the same owner as ``ana@example.org``; an ``"<iss>#<sub>"`` owner is kept as given.
"""

from __future__ import annotations

import argparse

from assistant.identity import normal_owner


def user_arg(text: str) -> str:
    """argparse ``type=`` for ``--user``: the normal owner form, or a clear usage error."""
    try:
        return normal_owner(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
