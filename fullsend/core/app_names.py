"""The names of an adopter's two GitHub Apps, derived from the repository's owner so that no
adopter's name can be another's (docs/adopting.md "Create the GitHub Apps from the manifests").
Pure.

GitHub App names are global and at most 34 characters; GitHub shows an App as its name in lower
case with anything but letters, digits and hyphens replaced (the slug), and its login is
``<slug>[bot]``.  An owner login is letters, digits and single hyphens, at most 39 characters, so
``<owner>-<suffix>`` is its own slug.  When it is too long the owner is cut and six hex digits of
the owner's SHA-256 keep the names of two owners with one prefix apart.

``docs/create-app.html`` derives the same names in the browser (a test runs both on one list).
"""

from __future__ import annotations

import hashlib
import re

APP_NAME_MAX_CHARS = 34
#: The App that authors pull requests and pushes (code, fix; every stage but review).
AUTHOR_SUFFIX = "fullsend"
#: The App that posts reviews: distinct, since GitHub refuses a "changes requested" review by the
#: pull request's author (422), and its login is Route's default ``review_app``.
REVIEW_SUFFIX = "review"
_HASH_HEX = 6
_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")


def app_name(owner: str, suffix: str) -> str:
    """``<owner>-<suffix>`` in lower case, at most 34 characters: a longer one keeps the owner's
    first characters, then ``-<6 hex of sha256(owner)>-<suffix>``.  Raises ``ValueError`` for an
    ``owner`` that is no GitHub login (letters, digits, hyphens; 1 to 39 characters)."""
    base = owner.strip().lower()
    if not _OWNER.fullmatch(base):
        raise ValueError(f"{owner[:60]!r} is not a GitHub user or organization login")
    name = f"{base}-{suffix}"
    if len(name) <= APP_NAME_MAX_CHARS:
        return name
    digest = hashlib.sha256(base.encode("ascii")).hexdigest()[:_HASH_HEX]
    keep = APP_NAME_MAX_CHARS - len(suffix) - _HASH_HEX - 2
    return f"{base[:keep].rstrip('-')}-{digest}-{suffix}"


def review_app_name(owner: str) -> str:
    """The review App's name for ``owner`` (see :func:`app_name`); raises ``ValueError`` likewise."""
    return app_name(owner, REVIEW_SUFFIX)


def author_app_name(owner: str) -> str:
    """The authoring App's name for ``owner`` (see :func:`app_name`); raises ``ValueError`` likewise."""
    return app_name(owner, AUTHOR_SUFFIX)


def review_app_login(owner: str) -> str:
    """The review App's login, ``<review App name>[bot]``; ``""`` when ``owner`` is no login (a
    missing owner then matches no App: fail closed).  Never raises."""
    try:
        return review_app_name(owner) + "[bot]"
    except ValueError:
        return ""
