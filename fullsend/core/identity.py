"""Login identities (docs/architecture.md "Receipt reader").

GitHub spells App logins differently in REST (``name[bot]``) and GraphQL (``name``); logins are
case-insensitive; a ``User`` account never matches a Bot identity.
"""

from __future__ import annotations

from dataclasses import dataclass

_BOT_SUFFIX = "[bot]"


@dataclass(frozen=True)
class Identity:
    """A login with its account kind.  ``is_bot`` is ``None`` when the kind is not known.

    A known kind comes from a REST ``user.type`` (``"Bot"`` → True, anything else → False) or
    from the ``[bot]`` suffix of a resolved login.
    """

    login: str
    is_bot: bool | None = None

    @property
    def base(self) -> str:
        """Lowercase login without a trailing ``[bot]``."""
        low = self.login.strip().lower()
        return low[: -len(_BOT_SUFFIX)] if low.endswith(_BOT_SUFFIX) else low

    @property
    def bot(self) -> bool | None:
        """Bot-ness: the explicit kind, else True when the login carries ``[bot]``, else unknown."""
        if self.is_bot is not None:
            return self.is_bot
        return True if self.login.strip().lower().endswith(_BOT_SUFFIX) else None


def from_rest(login: str, user_type: str) -> Identity:
    """Identity of a REST author (``user.login``, ``user.type``).

    An author whose ``type`` GitHub did not send is unknown and matches nobody (a
    ``github-actions[bot]`` login without a type is not taken for the job bot).
    """
    if not user_type:
        return Identity("")
    return Identity(login, user_type == "Bot")


def same_identity(a: Identity, b: Identity) -> bool:
    """True when two identities name the same account.

    Empty logins match nothing.  Case-insensitive.  A ``[bot]`` suffix is optional on a Bot, but
    a login with the suffix names a Bot, so ``x[bot]`` never matches a ``User`` ``x``; and a known
    ``User`` never matches a known Bot.
    """
    if not a.login.strip() or not b.login.strip():
        return False
    if a.base != b.base:
        return False
    ka, kb = a.bot, b.bot
    if ka is not None and kb is not None and ka != kb:
        return False
    a_suffixed = a.login.strip().lower().endswith(_BOT_SUFFIX)
    b_suffixed = b.login.strip().lower().endswith(_BOT_SUFFIX)
    if a_suffixed != b_suffixed:
        # One side is spelled as a Bot; the other must not be a known User.
        other = b if a_suffixed else a
        if other.is_bot is False:
            return False
    return True
