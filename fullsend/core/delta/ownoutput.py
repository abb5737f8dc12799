"""Own-output exclusion (``is_own_output``, docs/architecture.md "Own output").

Applied to comments and reviews before anything else.  Two rules, never the shape of a login:

* ``self-login`` — the author is one of the self logins, compared as identities
  (case-insensitive; ``[bot]`` optional on a Bot; a User never matches a Bot identity);
* ``app-marker`` — the author is an App (``user.type == "Bot"``) and the body carries the WIRE
  marker ``<!-- fullsend:`` anywhere (whitespace allowed around ``fullsend``, any letter case).

A human is never own output by the marker rule, even quoting a marker; a foreign App's comment
without the marker is context.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from fullsend.core.identity import Identity, same_identity

RULE_SELF_LOGIN = "self-login"
RULE_APP_MARKER = "app-marker"

# `<!--`, optional whitespace, `fullsend`, optional whitespace, `:` (Go's ASCII \s, newlines too).
_MARKER = re.compile(r"<!--[\t\n\f\r ]*fullsend[\t\n\f\r ]*:", re.IGNORECASE)


def has_own_marker(body: str) -> bool:
    """True when ``body`` carries the fullsend own-output marker opener anywhere."""
    return isinstance(body, str) and _MARKER.search(body) is not None


def is_own_output(login: str, is_app: bool, body: str, self_logins: AbstractSet[str]) -> str | None:
    """The own-output rule id that drops this item, or ``None``.

    ``login``/``is_app`` are the forge author (``user.login``, ``user.type == "Bot"``);
    ``self_logins`` the resolved self logins.  Returns ``"self-login"``, ``"app-marker"`` or None.
    An empty login matches nothing.
    """
    author = Identity(login or "", is_bot=bool(is_app))
    if any(same_identity(author, Identity(own)) for own in self_logins):
        return RULE_SELF_LOGIN
    if is_app and has_own_marker(body):
        return RULE_APP_MARKER
    return None
