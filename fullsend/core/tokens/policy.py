"""Tokens as data: the receipt token, child environments, the provider rule, mint inputs.

Implements the receipt token (docs/architecture.md "Receipt"), the ``GH_WORKFLOW_TOKEN`` provider
rule over given file texts (docs/architecture.md "Receipt reader"), and the mint inputs (role,
repos, mint URL) and the child-environment scrub (docs/architecture.md "Tokens").

Pure: no ``os.environ``; the caller passes the process environment and the file texts in.
YAML parsing is injected (``load_yaml``) so this module imports the standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from fullsend.core.tokens.gitpush import git_push_env
from fullsend.core.tokens.reach import secret_forms

#: Never passed to a child (agent, pre-/post-/validation script), whatever the value: what belongs to
#: the runner and the mint.  Model-provider keys are per runtime (``fullsend.core.tokens.providers``).
DENIED_KEYS = frozenset(
    {
        "ACTIONS_ID_TOKEN_REQUEST_URL",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "FULLSEND_GCP_OIDC_URL",
        "FULLSEND_GCP_OIDC_AUTH_FILE",
        "FULLSEND_OPENAI_AUDIENCE",
        "FULLSEND_OPENAI_IDENTITY_PROVIDER_ID",
        "FULLSEND_OPENAI_SERVICE_ACCOUNT_ID",
        "GH_WORKFLOW_TOKEN",
        "INPUT_GITHUB_TOKEN",
        "INPUT_ROLE_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_RUNTIME_URL",
        "ACTIONS_RESULTS_URL",
        "ACTIONS_CACHE_URL",
    }
)
#: Set by the action itself (role token) or dropped; never inherited from the process env.
TOKEN_KEYS = ("GH_TOKEN", "GITHUB_TOKEN")
WORKFLOW_TOKEN_VAR = "GH_WORKFLOW_TOKEN"  # WIRE

#: The runner's shape check on a minted token.
TOKEN_FORMAT_RE = re.compile(r"[a-zA-Z0-9._-]+")
_ROLE_RE = re.compile(r"[a-z][a-z0-9_-]*")
ROLE_ALIASES = {"code": "coder", "fix": "coder"}
_PROVIDER_NAME_RE = re.compile(r"[a-zA-Z0-9_-]+")
_SHELL_SPECIAL = frozenset("*#$@!?-0123456789")


def counts_as_minted(mint_succeeded: bool, role_token_input: str, job_token: str) -> bool:
    """``minted``: a mint succeeded, or the ``role_token`` input is set and differs
    from the job token.
    """
    return mint_succeeded or (bool(role_token_input) and role_token_input != job_token)


def receipt_token(job_token: str, role_token: str, minted: bool) -> str:
    """The credential receipts are written and read under.

    The job token iff a swap really happened (``minted``), the job token is non-empty, a role
    token exists and differs from it; otherwise ``""`` (receipt writer and reader both off).
    """
    if minted and job_token and role_token and job_token != role_token:
        return job_token
    return ""


def child_env(
    base: Mapping[str, str],
    job_token: str,
    role_token: str,
    extra_registered: Iterable[str] = (),
    *,
    traceparent: str = "",
) -> dict[str, str]:
    """The environment of a child process (agent in the ``local`` sandbox, pre-/post-/validation
    script; docs/architecture.md "Tokens").

    ``base`` is the process env overlaid with whatever the caller adds.  Drops: the denied keys,
    any inherited ``GH_TOKEN``/``GITHUB_TOKEN``/``TRACEPARENT``, every entry whose key or value
    contains the job token or an ``extra_registered`` token (empty entries ignored), and every
    entry containing the role token.  Then ``GH_TOKEN`` = ``GITHUB_TOKEN`` = the role token,
    unless there is none or it contains a registered token (then no GitHub token at all); with it,
    git's push credential (``fullsend.core.tokens.gitpush``).
    ``traceparent``, when given, is the run's own ``TRACEPARENT``.
    """
    registered = [t for t in (job_token, *extra_registered) if t]
    out: dict[str, str] = {}
    for key, value in base.items():
        if key in DENIED_KEYS or key in TOKEN_KEYS or key == "TRACEPARENT":
            continue
        if any(t in value or t in key for t in registered):
            continue
        if role_token and (role_token in value or role_token in key):
            continue
        out[key] = value
    if traceparent:
        out["TRACEPARENT"] = traceparent
    if role_token and not any(t in role_token for t in registered):
        for key in TOKEN_KEYS:
            out[key] = role_token
        out.update(git_push_env(out))  # git pushes with the role token (docs/adopting.md "The push credential")
    return out


def encoded_forms(token: str) -> tuple[str, ...]:
    """Spellings of ``token`` besides its raw value, from the one list of them: ``secret_forms``
    of ``fullsend.core.tokens.reach`` (base64, actions/checkout's Basic header, URL-encoded,
    JSON-escaped, the base64 cores), so the environment scrub and the file scan agree on what
    "the token" looks like; ``()`` for an empty token."""
    raw = token.encode()
    return tuple(form.decode() for form in secret_forms(token) if form != raw)


def holds_token(key: str, value: str, token: str) -> bool:
    """True when ``key`` or ``value`` contains ``token`` raw or in one of its ``encoded_forms``
    (False for an empty token)."""
    forms = (token, *encoded_forms(token)) if token else ()
    return any(form in value or form in key for form in forms)


def expanded_names(value: str) -> list[str]:
    """Variable names Go's ``os.Expand`` would look up in ``value``.

    ``$NAME`` (name = longest run of ``[A-Za-z0-9_]``), ``${ANYTHING}`` (to the first ``}``),
    one-character special names (``$$``, ``$1``, ``$*`` …, which consume that character).
    ``${}`` and an unclosed ``${`` name nothing.
    """
    names, i, n = [], 0, len(value)
    while i < n:
        if value[i] != "$" or i + 1 >= n:
            i += 1
            continue
        name, width = _shell_name(value[i + 1 :])
        if name:
            names.append(name)
        i += 1 + width
    return names


def _is_alnum(ch: str) -> bool:
    return ch == "_" or "0" <= ch <= "9" or "a" <= ch <= "z" or "A" <= ch <= "Z"


def _shell_name(s: str) -> tuple[str, int]:
    """The name after a ``$`` and how many characters it takes, as Go's ``os.Expand`` reads it
    (its ``getShellName``)."""
    if s[0] == "{":
        if len(s) > 2 and s[1] in _SHELL_SPECIAL and s[2] == "}":
            return s[1], 3
        close = s.find("}", 1)
        if close == -1:
            return "", 1
        return ("", 2) if close == 1 else (s[1:close], close + 1)
    if s[0] in _SHELL_SPECIAL:
        return s[0], 1
    width = 0
    while width < len(s) and _is_alnum(s[width]):
        width += 1
    return s[:width], width


def provider_refusal(files: Mapping[str, str] | None, *, load_yaml: Callable[[str], Any]) -> str | None:
    """Why receipts are NOT honoured given the provider definitions, or ``None`` (honoured).

    ``files`` maps each ``*.yaml``/``*.yml``
    file name of ``<fullsend_dir>/providers`` to its text; ``None`` means the directory does
    not exist.  ``load_yaml`` parses one text (e.g. ``yaml.safe_load``); any exception it raises
    and any shape error refuse.  A credential value expanding ``GH_WORKFLOW_TOKEN`` refuses.
    """
    if files is None:
        return None
    for filename in sorted(files):
        try:
            name, credentials = _provider_definition(load_yaml(files[filename]))
        except Exception as exc:  # any parse/shape defect refuses (fail open)
            return f"provider definitions unreadable: {filename}: {exc}"
        for value in credentials.values():
            if WORKFLOW_TOKEN_VAR in expanded_names(value):
                return f'provider "{name}" delivers {WORKFLOW_TOKEN_VAR} to a sandbox'
    return None


def _provider_definition(doc: Any) -> tuple[str, dict[str, str]]:
    """Validate one definition: ``name`` and ``type`` (``[a-zA-Z0-9_-]+``), ``credentials`` a
    mapping of scalars, ``config`` a mapping if present.  Raises ``ValueError``.
    """
    if not isinstance(doc, dict):
        raise ValueError("a provider definition must be a mapping")
    for key in ("name", "type"):
        value = doc.get(key)
        if not isinstance(value, str) or not _PROVIDER_NAME_RE.fullmatch(value):
            raise ValueError(f"'{key}' is missing or not [a-zA-Z0-9_-]+")
    credentials = doc.get("credentials") or {}
    config = doc.get("config") or {}
    if not isinstance(credentials, dict) or not isinstance(config, dict):
        raise ValueError("'credentials' and 'config' must be mappings")
    out = {}
    for key, value in credentials.items():
        if isinstance(value, (dict, list)):
            raise ValueError(f"credential {key!s} is not a scalar")
        out[str(key)] = "" if value is None else str(value)
    return doc["name"], out


def normalize_role(role: str) -> str | None:
    """The mint role: aliases ``code``/``fix`` → ``coder``; ``None`` unless it matches
    ``^[a-z][a-z0-9_-]*$`` without ``--``.
    """
    role = ROLE_ALIASES.get(role, role)
    if not _ROLE_RE.fullmatch(role) or "--" in role:
        return None
    return role


#: The only hosts a mint may be reached on over plain ``http://`` (local tests and the simulator).
LOCAL_MINT_HOSTS = ("localhost", "127.0.0.1")


def mint_url_allowed(url: str) -> bool:
    """True when ``url`` may be the mint (docs/architecture.md "Tokens"): the one check every
    caller uses.

    Decided on the parsed URL, never on a string prefix: ``https://<host>…`` with a host, or
    ``http://`` whose parsed hostname is exactly ``localhost`` or ``127.0.0.1``.  Refused: any
    userinfo (``user@``, ``user:pw@``), white space or control characters anywhere, an invalid
    port, any other scheme — so ``http://localhost@evil.example`` (host ``evil.example``),
    ``http://localhost.evil.example`` and ``http://127.0.0.10:8080`` are all refused.
    """
    if not isinstance(url, str) or any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in range
    except ValueError:
        return False
    if not host or "@" in parts.netloc:
        return False
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and host in LOCAL_MINT_HOSTS


def mint_repos(repository: str) -> tuple[str, ...]:
    """The ``repos`` of the mint request: the name part of ``owner/repo``; ``()`` if malformed."""
    owner, sep, name = repository.partition("/")
    return (name,) if sep and owner and name and "/" not in name else ()
