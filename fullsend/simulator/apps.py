"""GitHub Apps and their installation tokens, as ``actions/create-github-app-token`` gets one
(https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/authenticating-as-a-github-app-installation).

An App authenticates with a JSON Web Token it signs with its private key (RS256; ``iss`` its
client ID, ``iat`` and ``exp`` at most ten minutes apart:
https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app).
Two endpoints take it (``Authorization: Bearer <JWT>``):

- ``GET /repos/{owner}/{repo}/installation`` → the App's installation on the simulator's
  repository (``id``, ``app_id``, ``app_slug``, ``permissions``);
- ``POST /app/installations/{id}/access_tokens`` (optional body ``{"permissions": {...}}``, at
  most the App's own) → 201 ``{"token", "expires_at", "permissions"}``: an installation token the
  simulator then knows as ``<slug>[bot]``, with git's ``contents`` permission as granted.

A JWT that is malformed, expired, of an unknown ``iss`` or not signed by the App's key (checked
with ``openssl dgst -verify``) is a 401 "A JSON web token could not be decoded"; a wider
permission than the App's is a 422.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fullsend.core.scalars import parse_time
from fullsend.simulator.shapes import stable_id, user_json

if TYPE_CHECKING:  # pragma: no cover
    from fullsend.simulator.server import GitHubSimulator

_INSTALLATION = re.compile(r"/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/installation")
_TOKENS = re.compile(r"/app/installations/(?P<id>\d+)/access_tokens")
_LEVELS = {"read": 1, "write": 2, "admin": 3}
TOKEN_LIFE_S = 3600
JWT_MAX_LIFE_S = 600


@dataclass(frozen=True)
class App:
    """One App installed on the simulator's repository: its ``slug`` (login ``<slug>[bot]``), its
    client ID, its public key (PEM) and the permissions the installation grants."""

    slug: str
    client_id: str
    public_key_pem: str
    permissions: dict[str, str] = field(default_factory=dict)

    @property
    def app_id(self) -> int:
        return stable_id("app", self.slug, digits=7)

    @property
    def installation_id(self) -> int:
        return stable_id("installation", self.slug, digits=8)


class AppsServer:
    """The two JWT endpoints above, on the simulator's port (``GitHubSimulator.extensions``)."""

    def __init__(self, sim: GitHubSimulator) -> None:
        self.sim = sim
        self.apps: dict[str, App] = {}
        self.issued: list[tuple[str, str, dict[str, str]]] = []  # (slug, token, permissions) in order
        self._count = 0

    def add(self, app: App) -> App:
        """Install ``app`` on the repository; returns it."""
        self.apps[app.client_id] = app
        return app

    def serve(self, handler: BaseHTTPRequestHandler) -> bool:
        """Answer the installation and access-token requests; False for any other path."""
        path = handler.path.partition("?")[0].removeprefix(self.sim.prefix)
        installation, tokens = _INSTALLATION.fullmatch(path), _TOKENS.fullmatch(path)
        if not (installation and handler.command == "GET") and not (tokens and handler.command == "POST"):
            return False
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length > 0 else b""
        app = self._app_of(handler.headers.get("Authorization", ""))
        if app is None:
            status, answer = 401, {"message": "A JSON web token could not be decoded"}
        elif installation:
            status, answer = self._installation(app, installation["o"], installation["r"])
        else:
            status, answer = self._token(app, int(tokens["id"]) if tokens else 0, body)
        raw = json.dumps({**answer, "documentation_url": "https://docs.github.com/rest"} if status >= 400 else answer)
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(raw.encode())))
        handler.end_headers()
        handler.wfile.write(raw.encode())
        return True

    def _installation(self, app: App, owner: str, repo: str) -> tuple[int, dict[str, Any]]:
        if (owner.lower(), repo.lower()) != (self.sim.urls.owner.lower(), self.sim.urls.repo.lower()):
            return 404, {"message": "Not Found"}
        account = user_json(self.sim.urls, self.sim.urls.owner, "Organization")
        api, web = self.sim.urls.api, self.sim.urls.web
        return 200, {
            "id": app.installation_id,
            "app_id": app.app_id,
            "app_slug": app.slug,
            "client_id": app.client_id,
            "account": account,
            "target_id": account["id"],
            "target_type": "Organization",
            "single_file_name": None,
            "repository_selection": "selected",
            "access_tokens_url": f"{api}/app/installations/{app.installation_id}/access_tokens",
            "repositories_url": f"{api}/installation/repositories",
            "html_url": f"{web}/organizations/{self.sim.urls.owner}/settings/installations/{app.installation_id}",
            "permissions": dict(app.permissions),
            "events": [],
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "suspended_by": None,
            "suspended_at": None,
        }

    def _token(self, app: App, installation_id: int, body: bytes) -> tuple[int, dict[str, Any]]:
        if installation_id != app.installation_id:
            return 404, {"message": "Not Found"}
        try:
            asked = (json.loads(body) if body else {}).get("permissions") or dict(app.permissions)
        except (ValueError, AttributeError):
            return 400, {"message": "Problems parsing JSON"}
        wider = [k for k, v in asked.items() if _LEVELS.get(v, 9) > _LEVELS.get(app.permissions.get(k, ""), 0)]
        if wider:
            return 422, {"message": f"The permissions requested are not granted to this installation: {wider[0]}"}
        self._count += 1
        token = f"ghs_sim-{app.slug}-{self._count:04d}"
        contents = "write" if asked.get("contents") == "write" else "read"
        writes = any(v in ("write", "admin") for v in asked.values())
        self.sim.add_token(token, app.slug, "Bot", contents=contents, read_only=not writes)
        self.issued.append((app.slug, token, dict(asked)))
        expires = parse_time(self.sim.now())
        stamp = (expires + timedelta(seconds=TOKEN_LIFE_S)).strftime("%Y-%m-%dT%H:%M:%SZ") if expires else ""
        return 201, {
            "token": token,
            "expires_at": stamp,
            "permissions": dict(asked),
            "repository_selection": "selected",
        }

    def _app_of(self, authorization: str) -> App | None:
        """The App whose key signed the bearer JWT, or None (module docstring)."""
        scheme, _, jwt = authorization.strip().partition(" ")
        parts = jwt.strip().split(".")
        if scheme.lower() != "bearer" or len(parts) != 3:
            return None
        try:
            header, claims = (json.loads(_unb64(p)) for p in parts[:2])
            signature = _unb64(parts[2])
        except ValueError:
            return None
        now = parse_time(self.sim.now())
        app = self.apps.get(str(claims.get("iss", "")))
        if app is None or header.get("alg") != "RS256" or now is None:
            return None
        iat, exp = claims.get("iat"), claims.get("exp")
        if not isinstance(iat, int) or not isinstance(exp, int) or not 0 < exp - iat <= JWT_MAX_LIFE_S:
            return None
        if not iat - 60 <= now.timestamp() <= exp:
            return None
        return app if _signed(f"{parts[0]}.{parts[1]}".encode(), signature, app.public_key_pem) else None


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _signed(data: bytes, signature: bytes, public_key_pem: str) -> bool:
    """RS256 (RSASSA-PKCS1-v1_5, SHA-256) checked by ``openssl dgst -sha256 -verify``."""
    with tempfile.TemporaryDirectory() as tmp:
        key, sig = Path(tmp) / "key.pem", Path(tmp) / "sig"
        key.write_text(public_key_pem)
        sig.write_bytes(signature)
        proc = subprocess.run(
            ["openssl", "dgst", "-sha256", "-verify", str(key), "-signature", str(sig)],
            input=data,
            capture_output=True,
            timeout=30,
            check=False,
        )
    return proc.returncode == 0
