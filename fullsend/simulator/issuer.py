"""The simulator's OIDC issuer: GitHub Actions' token service and its published keys, offline.

The simulator plays the issuer the way GitHub Enterprise Server lays it out: the issuer is
``<web>/_services/token``, its keys are published at ``<issuer>/.well-known/jwks`` and the runner's
token request (``ACTIONS_ID_TOKEN_REQUEST_URL``) is ``<issuer>/request?api-version=2.0``, answered
``{"value": <jwt>, "count": …}`` for the bearer of a registered request token.  Tokens are RS256,
signed with ``fullsend.simulator.issuer_keys`` and shaped like the example token of GitHub's
documentation (the claims of :data:`GITHUB_DOCS_CLAIMS`).  :func:`relying_party_claims` verifies a
token as a real relying party does (signature by a published key, issuer, audience, expiry);
the simulator's mint uses it.  Signing is the one thing here that core does not do.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from fullsend.core.receipt.proof.jwt import decode_jwt, encode_segment
from fullsend.core.receipt.proof.rs256 import RsaPublicKey, b64url_encode, expected_encoding, verify_rs256
from fullsend.simulator import issuer_keys
from fullsend.simulator.routes import Reply, error

#: The claim names of the example token in GitHub's documentation (docs.github.com, "OpenID
#: Connect", "Understanding the OIDC token"), plus ``workflow_ref``, ``workflow_sha`` and
#: ``job_workflow_sha`` of its claims reference; the simulator's tokens carry exactly these.
GITHUB_DOCS_CLAIMS = (
    "jti",
    "sub",
    "aud",
    "ref",
    "sha",
    "repository",
    "repository_owner",
    "actor_id",
    "repository_visibility",
    "repository_id",
    "repository_owner_id",
    "run_id",
    "run_number",
    "run_attempt",
    "runner_environment",
    "actor",
    "workflow",
    "head_ref",
    "base_ref",
    "event_name",
    "ref_type",
    "workflow_ref",
    "workflow_sha",
    "job_workflow_ref",
    "job_workflow_sha",
    "iss",
    "nbf",
    "exp",
    "iat",
)
#: GitHub's tokens: valid five minutes from issue, "not before" ten minutes earlier.
LIFETIME_S = 300
NOT_BEFORE_S = 600
ISSUER_PATH = "/_services/token"


@dataclass(frozen=True)
class SigningKey:
    """An issuer's RSA key pair (``d`` is the private exponent; public test values only)."""

    kid: str
    n: int
    e: int
    d: int = field(repr=False)

    @property
    def public(self) -> RsaPublicKey:
        return RsaPublicKey(self.n, self.e)

    def jwk(self) -> dict[str, str]:
        """The key as GitHub publishes one: ``kty``, ``alg``, ``use``, ``kid``, ``n``, ``e``."""
        size = self.public.size_bytes
        return {
            "kty": "RSA",
            "alg": "RS256",
            "use": "sig",
            "kid": self.kid,
            "n": b64url_encode(self.n.to_bytes(size, "big")),
            "e": b64url_encode(self.e.to_bytes((self.e.bit_length() + 7) // 8, "big")),
        }


CURRENT_KEY = SigningKey("sim-2026-10", issuer_keys.CURRENT_N, issuer_keys.CURRENT_E, issuer_keys.CURRENT_D)
PREVIOUS_KEY = SigningKey("sim-2026-04", issuer_keys.PREVIOUS_N, issuer_keys.PREVIOUS_E, issuer_keys.PREVIOUS_D)
STRANGER_KEY = SigningKey("stranger", issuer_keys.STRANGER_N, issuer_keys.STRANGER_E, issuer_keys.STRANGER_D)


def sign_rs256(key: SigningKey, message: bytes) -> bytes:
    """The RS256 signature of ``message`` with ``key`` (RFC 8017 section 8.2.1)."""
    size = key.public.size_bytes
    encoded = expected_encoding(message, size)
    assert encoded is not None  # a 2048-bit key always fits the encoding
    return pow(int.from_bytes(encoded, "big"), key.d, key.n).to_bytes(size, "big")


def sign_jwt(claims: Mapping[str, Any], key: SigningKey, *, kid: str | None = None, alg: str = "RS256") -> str:
    """A compact JWS of ``claims`` signed with ``key`` under the header ``typ``, ``alg``, ``x5t``,
    ``kid`` (GitHub's header); ``kid`` defaults to the key's own (a forger may name another)."""
    header = {"typ": "JWT", "alg": alg, "x5t": b64url_encode(key.kid.encode()), "kid": key.kid if kid is None else kid}
    signing_input = f"{encode_segment(header)}.{encode_segment(dict(claims))}"
    return f"{signing_input}.{b64url_encode(sign_rs256(key, signing_input.encode('ascii')))}"


@dataclass(frozen=True)
class JobIdentity:
    """Whom a request token belongs to: a job of a workflow run (the claims that differ by run)."""

    repository: str
    run_id: int
    workflow_ref: str
    job_workflow_ref: str
    event_name: str = "issue_comment"
    ref: str = "refs/heads/main"
    run_attempt: int = 1
    actor: str = "reviewer"
    sha: str = "0" * 40
    job_workflow_sha: str = "2a103497ee1e9a1b3c4d5e6f7a8b9c0d1e2f3a4b"


def claims_for(identity: JobIdentity, audience: str, issuer: str, now: datetime) -> dict[str, Any]:
    """The claims GitHub would issue ``identity`` for ``audience`` at ``now`` (the documented shape)."""
    owner = identity.repository.split("/", 1)[0]
    iat = int(now.timestamp())
    path = identity.workflow_ref.split("@", 1)[0]
    return {
        "jti": str(uuid.uuid4()),
        "sub": f"repo:{identity.repository}:ref:{identity.ref}",
        "aud": audience,
        "ref": identity.ref,
        "sha": identity.sha,
        "repository": identity.repository,
        "repository_owner": owner,
        "actor_id": "12",
        "repository_visibility": "private",
        "repository_id": "74",
        "repository_owner_id": "65",
        "run_id": str(identity.run_id),
        "run_number": "10",
        "run_attempt": str(identity.run_attempt),
        "runner_environment": "github-hosted",
        "actor": identity.actor,
        "workflow": path.rsplit("/", 1)[-1],
        "head_ref": "",
        "base_ref": "",
        "event_name": identity.event_name,
        "ref_type": "branch",
        "workflow_ref": identity.workflow_ref,
        "workflow_sha": identity.sha,
        "job_workflow_ref": identity.job_workflow_ref,
        "job_workflow_sha": identity.job_workflow_sha,
        "iss": issuer,
        "nbf": iat - NOT_BEFORE_S,
        "exp": iat + LIFETIME_S,
        "iat": iat,
    }


class Issuer:
    """The token service of one simulator at ``url`` (the ``iss``).  ``published`` keys are served
    at ``<url>/.well-known/jwks``; ``signing`` signs.  ``rotate()`` retires the signing key;
    ``add_request_token`` registers the bearer a job's token request presents; ``issued`` lists
    ``(audience, token)`` of every token handed out."""

    def __init__(self, url: str, clock: Callable[[], datetime]) -> None:
        self.url = url
        self._clock = clock
        self._lock = threading.Lock()
        self.signing = CURRENT_KEY
        self.published: list[SigningKey] = [CURRENT_KEY]
        self._request_tokens: dict[str, JobIdentity] = {}
        self.issued: list[tuple[str, str]] = []

    def now(self) -> datetime:
        """The issuer's clock (the simulator's)."""
        return self._clock()

    def jwks(self) -> dict[str, Any]:
        """The JWKS document: ``{"keys": [JWK, …]}``."""
        with self._lock:
            return {"keys": [key.jwk() for key in self.published]}

    def rotate(self, to: SigningKey = PREVIOUS_KEY) -> None:
        """Sign with ``to`` from now on and publish only it: tokens of the old key no longer verify."""
        with self._lock:
            self.signing, self.published = to, [to]

    def add_request_token(self, token: str, identity: JobIdentity) -> None:
        """Answer a token request carrying ``Authorization: bearer <token>`` for ``identity``."""
        with self._lock:
            self._request_tokens[token] = identity

    def identity_of(self, token: str) -> JobIdentity | None:
        with self._lock:
            return self._request_tokens.get(token)

    def issue(self, identity: JobIdentity, audience: str, **overrides: Any) -> str:
        """A signed token for ``identity`` and ``audience`` now; ``overrides`` replace claims."""
        claims = {**claims_for(identity, audience, self.url, self._clock()), **overrides}
        with self._lock:
            token = sign_jwt(claims, self.signing)
            self.issued.append((audience, token))
        return token

    def for_run(self, identity: JobIdentity, **changes: Any) -> JobIdentity:
        """``identity`` with ``changes`` (another run, workflow or dispatch of the same repository)."""
        return replace(identity, **changes)


def relying_party_claims(
    token: str, issuer: str, audience: str, keys: Mapping[str, RsaPublicKey], now: datetime
) -> dict[str, Any] | None:
    """The claims of ``token`` when a relying party accepts it: RS256 signature by the published
    key its ``kid`` names, ``iss`` equal to ``issuer``, ``aud`` equal to ``audience``, and ``now``
    within ``nbf`` … ``exp``; else ``None``."""
    jwt = decode_jwt(token)
    if jwt is None or jwt.header.get("alg") != "RS256":
        return None
    key = keys.get(str(jwt.header.get("kid")))
    if key is None or not verify_rs256(key, jwt.signing_input, jwt.signature):
        return None
    claims = jwt.claims
    stamp = now.timestamp()
    times = (claims.get("nbf"), claims.get("exp"))
    if not all(isinstance(t, int) for t in times) or not times[0] <= stamp < times[1]:  # type: ignore[operator]
        return None
    return claims if claims.get("iss") == issuer and claims.get("aud") == audience else None


def issuer_reply(issuer: Issuer, method: str, path: str, query: Mapping[str, list[str]], bearer_token: str) -> Reply:
    """The token service's answer to ``method path`` (``path`` from the server root):
    ``GET <issuer>/.well-known/jwks`` (no credential), ``GET <issuer>/.well-known/openid-configuration``,
    and the token request ``GET <issuer>/request?audience=…`` (``bearer`` a registered request
    token: 200 ``{"value", "count"}``; else 401)."""
    base = ISSUER_PATH
    if method != "GET":
        return error(405, "Method Not Allowed")
    if path == f"{base}/.well-known/jwks":
        return Reply(200, issuer.jwks())
    if path == f"{base}/.well-known/openid-configuration":
        return Reply(
            200,
            {
                "issuer": issuer.url,
                "jwks_uri": f"{issuer.url}/.well-known/jwks",
                "id_token_signing_alg_values_supported": ["RS256"],
                "claims_supported": list(GITHUB_DOCS_CLAIMS),
            },
        )
    if path == f"{base}/request":
        identity = issuer.identity_of(bearer_token)
        if identity is None:
            return error(401, "Bad OIDC request token")
        audience = query.get("audience", [""])[0]
        return Reply(200, {"value": issuer.issue(identity, audience), "count": 2000})
    return error(404, "Not Found")
