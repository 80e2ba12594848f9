"""Who is signed in, and the sign-in page a page shows a visitor who is not.

Sign-in is on when the app's secrets configure ``st.login`` (an ``[auth]`` section); then each
conversation belongs to the person who started it. Two separate things: :func:`current_owner` is a
getter (it draws nothing; asked while nobody is signed in it raises, so a page that forgot the guard
fails closed instead of showing everyone's conversations), and :func:`require_sign_in` is the guard
each page calls first, which draws the sign-in button and stops the script for a visitor. Which
owner a sign-in maps to (a verified email, else issuer + subject, else refused) is
``assistant.identity``'s rule; a refused sign-in is shown why, with a way to sign out, and sees nothing.
The cookie secret signs who is signed in: when it is missing, under 32 bytes or a published example,
everyone is refused (anyone could forge the cookie), and the page says how to set a good one.
"""

from __future__ import annotations

import streamlit as st

from assistant.identity import SignInRefused, cookie_secret_problem, owner_from_claims


class NotSignedIn(PermissionError):
    """Sign-in is configured and nobody is signed in: nothing may be read for this visitor."""


def auth_configured() -> bool:
    """Sign-in is on when the app's secrets configure ``st.login`` (an ``[auth]`` section)."""
    try:
        return "auth" in st.secrets
    except (FileNotFoundError, KeyError, st.errors.StreamlitSecretNotFoundError):
        return False


def configured_cookie_secret() -> object:
    """The ``[auth] cookie_secret`` the app's secrets give ``st.login`` (None when there is none)."""
    try:
        return st.secrets["auth"].get("cookie_secret")
    except (FileNotFoundError, KeyError, AttributeError, st.errors.StreamlitSecretNotFoundError):
        return None


def sign_in_problem() -> str | None:
    """Why sign-in is refused to everyone (a missing, short or public cookie secret), or None."""
    return cookie_secret_problem(configured_cookie_secret())


def signed_in_user() -> str | None:
    """The signed-in user's owner string (``assistant.identity.owner_from_claims``), or None when
    nobody is signed in. Raises ``SignInRefused`` when the provider's claims name nobody usable."""
    if not st.user.is_logged_in:
        return None
    return owner_from_claims(st.user)


def current_owner() -> str | None:
    """Whose conversations this session sees: None in single-user mode, else the signed-in user.
    Raises :class:`NotSignedIn` when sign-in is configured and nobody is signed in."""
    if not auth_configured():
        return None
    problem = sign_in_problem()
    if problem:  # a cookie signed with a known secret proves nothing: nobody is signed in
        raise NotSignedIn(problem)
    user = signed_in_user()
    if user is None:
        raise NotSignedIn("sign-in is configured and nobody is signed in")
    return user


def require_sign_in() -> None:
    """The page guard, called first by every page: with sign-in configured, a visitor who is not
    signed in sees only a sign-in button, and the script stops there (nothing else is read)."""
    if not auth_configured():
        return
    problem = sign_in_problem()
    if problem:
        st.title("lagmem", anchor=False)
        st.error(f"Sign-in is turned off: {problem}", icon=":material/block:")
        st.stop()
    try:
        if signed_in_user() is not None:
            return
    except SignInRefused as exc:
        st.title("lagmem", anchor=False)
        st.error(str(exc), icon=":material/block:")
        st.button("Sign out", icon=":material/logout:", on_click=st.logout)
        st.stop()
    st.title("lagmem", anchor=False)
    st.write("Sign in to see your conversations. Each conversation is private to the person who started it.")
    st.button("Sign in", icon=":material/login:", on_click=st.login, type="primary")
    st.stop()
