"""Who owns a conversation: the owner string derived from a sign-in's claims, and its normal form.

The rule (the README's "Private conversations" section says the same):

* a **verified email** (``email_verified`` is true) is the owner, stripped and lower-cased, so one
  person signing in as ``Ana@Example.org`` and ``ana@example.org`` is one owner, and conversations
  stored under an email before this rule stay theirs;
* otherwise (no email, or the provider does not vouch for it: anyone can type any address into an
  account at some providers) the owner is ``"<iss>#<sub>"``, the issuer and the subject the provider
  guarantees stable and unique, kept exactly as given (subjects are case-sensitive);
* nothing usable (no verified email and no issuer + subject) refuses the sign-in
  (:class:`SignInRefused`): an identity that cannot be trusted sees nothing rather than somebody's.

An issuer is an ``https://`` URL with no fragment (OpenID Connect Core 1.0, section 2), so an owner
of that shape (``"://"`` before the first ``#``) is never an email. An email owner compares without
case, stored lower-cased (:func:`normal_owner`); any other owner (a CLI user name, the bare subject
an older version stored for a provider that sent no email) is kept as given: subjects are
case-sensitive, and two of them differing in case are two people.
"""

from __future__ import annotations

from collections.abc import Mapping

OWNER_MAX_CHARS = 320  # the owner column's width (storage/models.py)


class SignInRefused(PermissionError):
    """The provider's claims name nobody this app can trust: no verified email and no issuer + subject."""


def _verified(value: object) -> bool:
    # some providers send the claim as the string "true"
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _is_email(text: str) -> bool:
    local, at, domain = text.rpartition("@")
    return bool(at and local and domain) and not any(c.isspace() for c in text)


def is_subject_owner(owner: str) -> bool:
    """Is ``owner`` an ``"<iss>#<sub>"`` identity (case-sensitive), not an email or a name?"""
    head, sep, tail = owner.partition("#")
    return bool(sep and tail) and "://" in head


def normal_owner(owner: str) -> str:
    """The stored form of an owner given by hand (the CLI's ``--user``), stripped: an email
    lower-cased, as a signed-in email is; anything else (a name, a subject) kept as given."""
    owner = owner.strip()
    if not owner:
        raise ValueError("an owner cannot be empty")
    return owner if is_subject_owner(owner) or not _is_email(owner) else owner.lower()


def owner_from_claims(claims: Mapping) -> str:
    """The owner of a signed-in person's conversations, from the provider's ID-token claims.

    Raises :class:`SignInRefused` (fail closed) when the claims name nobody usable."""
    email = _text(claims.get("email"))
    if email and _verified(claims.get("email_verified")) and _is_email(email):
        owner = email.lower()
    else:
        iss, sub = _text(claims.get("iss")), _text(claims.get("sub"))
        if not (iss and sub):
            why = "its email address is not verified" if email else "it sent no email address"
            raise SignInRefused(
                f"The sign-in provider did not say who you are: {why}, and it sent no "
                "issuer and subject. Nothing can be shown; ask the app's operator."
            )
        if "://" not in iss:
            iss = "https://" + iss  # OpenID Connect issuers are https URLs; keep the owner recognisable
        owner = f"{iss}#{sub}"
    if len(owner) > OWNER_MAX_CHARS:
        raise SignInRefused(
            f"The sign-in identity is {len(owner)} characters long; at most {OWNER_MAX_CHARS} can be stored."
        )
    return owner


# The cookie secret signs the identity cookie: anyone who knows it can sign in as anyone. The
# examples docs have shown are public, so never a secret; and a short one can be guessed.
EXAMPLE_COOKIE_SECRETS = frozenset({"a long random string", "xxx", "..."})
MIN_COOKIE_SECRET_BYTES = 32
COOKIE_SECRET_HOWTO = 'Set one with: python -c "import secrets; print(secrets.token_urlsafe(32))"'


def cookie_secret_problem(secret: object) -> str | None:
    """Why sign-in must stay off with this ``[auth] cookie_secret``, or None when it will do."""
    if not isinstance(secret, str) or not secret.strip():
        return f"Sign-in is configured without a cookie_secret. {COOKIE_SECRET_HOWTO}"
    if secret.strip() in EXAMPLE_COOKIE_SECRETS:
        return f"The sign-in cookie_secret is the docs' public example. {COOKIE_SECRET_HOWTO}"
    if len(secret.encode()) < MIN_COOKIE_SECRET_BYTES:
        return (
            f"The sign-in cookie_secret is {len(secret.encode())} bytes; at least "
            f"{MIN_COOKIE_SECRET_BYTES} are needed. {COOKIE_SECRET_HOWTO}"
        )
    return None
