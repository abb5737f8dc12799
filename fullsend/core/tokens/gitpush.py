"""The push credential (docs/adopting.md "The push credential"): how the agent's git authenticates
to the repository's server with the role token, and never the job token.

Nothing is written to a file: the child's environment carries git's own configuration variables
(``GIT_CONFIG_COUNT``, ``GIT_CONFIG_KEY_<n>``, ``GIT_CONFIG_VALUE_<n>``, git 2.31 and later), after
any the step already set.  For ``<server>`` (``GITHUB_SERVER_URL``) they reset the credential
helpers and add one that answers ``username=x-access-token`` and ``password=$GH_TOKEN`` (the role
token ``child_env`` sets, read when git asks), and they name a committer when none is configured.
"""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_SERVER = "https://github.com"
#: git's credential protocol: answer ``get`` only (``store``/``erase`` are no-ops), from the env.
HELPER = '!f() { test "$1" = get || exit 0; echo username=x-access-token; echo "password=$GH_TOKEN"; }; f'
COMMITTER = ("steer-action agent", "steer-action-agent@users.noreply.github.com")


def git_push_env(env: Mapping[str, str]) -> dict[str, str]:
    """The ``GIT_CONFIG_*`` entries to add to ``env`` (a child's environment holding ``GH_TOKEN``):
    ``{}`` without ``GH_TOKEN``.  Entries the step set keep their numbers; ours follow them."""
    if not env.get("GH_TOKEN"):
        return {}
    server = (env.get("GITHUB_SERVER_URL", "").strip() or DEFAULT_SERVER).rstrip("/")
    pairs = [(f"credential.{server}.helper", ""), (f"credential.{server}.helper", HELPER)]
    if not env.get("GIT_AUTHOR_NAME") and not env.get("GIT_COMMITTER_NAME"):
        pairs += [("user.name", COMMITTER[0]), ("user.email", COMMITTER[1])]
    text = env.get("GIT_CONFIG_COUNT", "0").strip()
    start = int(text) if text.isascii() and text.isdigit() else 0
    out = {"GIT_CONFIG_COUNT": str(start + len(pairs))}
    for offset, (key, value) in enumerate(pairs):
        out[f"GIT_CONFIG_KEY_{start + offset}"] = key
        out[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    return out
