"""Which OIDC issuer signs receipts, and where its keys are: from configuration, never from a token.

docs/rules.md "Receipt proof": the input ``receipt_issuer`` when set, else the issuer that
``GITHUB_SERVER_URL`` implies — github.com's ``https://token.actions.githubusercontent.com``,
GHE.com's ``https://token.actions.<SUBDOMAIN>.ghe.com``, a GitHub Enterprise Server's
``https://HOST/_services/token`` — with its keys at ``<issuer>/.well-known/jwks``.  Pure.
"""

from __future__ import annotations

from urllib.parse import urlsplit

GITHUB_COM_ISSUER = "https://token.actions.githubusercontent.com"
#: GitHub Enterprise Server's issuer path under the instance's own URL.
GHES_ISSUER_PATH = "/_services/token"
#: Where an issuer publishes its keys (GitHub's ``jwks_uri``), under the issuer.
JWKS_PATH = "/.well-known/jwks"


def default_issuer(server_url: str) -> str:
    """The issuer ``server_url`` (``GITHUB_SERVER_URL``) implies: github.com's for github.com (or
    an unreadable URL), ``https://token.actions.<host>`` for a ``*.ghe.com`` host, else
    ``<scheme>://<host[:port]>/_services/token`` (GHES)."""
    try:
        parts = urlsplit(server_url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return GITHUB_COM_ISSUER
    if not host or host in ("github.com", "www.github.com"):
        return GITHUB_COM_ISSUER
    if host.endswith(".ghe.com"):
        return f"https://token.actions.{host}"
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{GHES_ISSUER_PATH}"


def server_for_api(api_url: str) -> str:
    """The web server an API base belongs to: ``https://api.github.com`` → ``https://github.com``,
    ``https://api.<sub>.ghe.com`` → ``https://<sub>.ghe.com``, ``<server>/api/v3`` (GHES) → ``<server>``,
    anything else → its own scheme and host."""
    try:
        parts = urlsplit(api_url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return "https://github.com"
    if host == "api.github.com":
        return "https://github.com"
    if host.startswith("api.") and host.endswith(".ghe.com"):
        return f"https://{host[len('api.') :]}"
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def resolve_issuer(configured: str, server_url: str) -> str:
    """``configured`` (the ``receipt_issuer`` input, without a trailing ``/``) when set, else
    :func:`default_issuer`."""
    return configured.rstrip("/") if configured.strip() else default_issuer(server_url)


def keys_url(issuer: str) -> str:
    """``<issuer>/.well-known/jwks``."""
    return issuer.rstrip("/") + JWKS_PATH
