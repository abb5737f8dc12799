"""The token mint client: GitHub OIDC token request, then the mint exchange.

Implements docs/architecture.md "Tokens" (WIRE request and response shapes) over the action's
one HTTP client (``fullsend.adapters.github.client``: the runner's OIDC service and the mint are
hosts other than the API's) and ``tenacity``.  Every wait goes through the injected ``fullsend.ports.Clock``
(its ``sleep`` and ``monotonic``), so tests never really sleep.  Errors are
``fullsend.errors.MintError`` with messages that never carry a token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import tenacity

from fullsend.adapters.github.client import Client, HttpAnswer, SendFailed
from fullsend.core.scalars import parse_time
from fullsend.core.tokens.policy import TOKEN_FORMAT_RE, mint_url_allowed
from fullsend.errors import ConfigError, MintError

if TYPE_CHECKING:  # annotations only: the fast skip never loads the ports
    from fullsend.ports import Clock, Log

OIDC_AUDIENCE = "fullsend-mint"
OIDC_MAX_ATTEMPTS = 10
OIDC_WINDOW_S = 60.0  # no new OIDC attempt starts later than this after the first
MINT_MAX_ATTEMPTS = 5
FORMAT_MAX_ATTEMPTS = 4  # outer attempts when the minted token is malformed (waits 2, 4, 8 s)
MAX_MINT_DURATION_S = 120.0
REQUEST_TIMEOUT_S = 10.0
BODY_EXCERPT_CHARS = 200
_EXPIRES_KEEP = re.compile(r"[^0-9\-:TZ+.]")


class _Transient(Exception):
    """A transport error or HTTP >= 500: retried by the inner loops."""


class _BadFormat(Exception):
    """The minted token does not match ``^[a-zA-Z0-9._-]+$``; retried by the outer loop."""


@dataclass(frozen=True)
class MintedToken:
    """A role token from the mint.  ``token`` is hidden from ``repr``; ``expires_at`` is UTC or
    ``None`` when the mint did not say; ``expires_at_raw`` is the response string.
    """

    token: str = field(repr=False)
    expires_at: datetime | None = None
    expires_at_raw: str = ""

    @property
    def expires_label(self) -> str:
        """``expires_at_raw`` filtered to ``[0-9-:TZ+.]`` for a log line."""
        return _EXPIRES_KEEP.sub("", self.expires_at_raw)


def _excerpt(text: str, secrets: Sequence[str]) -> str:
    """At most 200 characters of a response body, with any known secret blanked out."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text[:BODY_EXCERPT_CHARS]


def _retrying(
    clock: Clock,
    attempts: int,
    deadline: float,
    first_wait_s: float,
    retry_on: tuple[type[Exception], ...] = (),
    before_sleep: Callable[[tenacity.RetryCallState], None] | None = None,
) -> tenacity.Retrying:
    """Retry ``_Transient`` (and ``retry_on``) with waits doubling from ``first_wait_s`` up to
    8 s; stop after ``attempts`` or when the next attempt would start after ``deadline``
    (``clock.monotonic()`` seconds).  Sleeps through ``clock.sleep``.
    """

    def past_deadline(state: tenacity.RetryCallState) -> bool:
        return clock.monotonic() + (state.upcoming_sleep or 0.0) > deadline

    return tenacity.Retrying(
        retry=tenacity.retry_if_exception_type((_Transient, *retry_on)),
        # stop_any calls any stop callable; tenacity's annotations only allow a stop_base after '|'.
        stop=tenacity.stop_after_attempt(attempts) | past_deadline,  # type: ignore[operator]  # tenacity types | loosely
        wait=tenacity.wait_exponential(multiplier=first_wait_s, min=first_wait_s, max=8.0),
        sleep=clock.sleep,  # type: ignore[arg-type]  # tenacity drops the return value; Clock.sleep's bool is unused here
        before_sleep=before_sleep,
        reraise=True,
    )


def _send(
    client: Client, method: str, url: str, what: str, headers: dict[str, str], body: dict[str, Any] | None = None
) -> HttpAnswer:
    """One HTTP call; transport errors and 5xx raise ``_Transient``."""
    data = json.dumps(body) if body is not None else None
    try:
        response = client.send(method, url, headers, data, REQUEST_TIMEOUT_S)
    except SendFailed as exc:
        raise _Transient(f"{what}: {exc}") from None
    if response.status >= 500:
        raise _Transient(f"{what} returned HTTP {response.status}")
    return response


def _json_object(response: HttpAnswer, what: str) -> dict[str, Any]:
    try:
        data = json.loads(response.text)
    except ValueError:
        raise MintError(f"{what} returned a body that is not JSON") from None
    if not isinstance(data, dict):
        raise MintError(f"{what} returned JSON that is not an object")
    return data


def request_oidc_token(url: str, bearer: str, audience: str = OIDC_AUDIENCE, *, client: Client, clock: Clock) -> str:
    """The GitHub OIDC JWT: ``GET <ACTIONS_ID_TOKEN_REQUEST_URL>&audience=…`` with
    ``Authorization: bearer <ACTIONS_ID_TOKEN_REQUEST_TOKEN>``; response ``{"value": jwt}`` (WIRE).

    Retries transport errors and HTTP >= 500 up to 10 attempts, waits 1 s doubling capped at
    8 s, none started more than 60 s after the first.  Raises ``MintError`` (also on other
    non-200 statuses and an empty value).
    """
    if not url or not bearer:
        raise MintError("the OIDC token request URL or token is not set (the job needs id-token: write)")
    headers = {"Authorization": f"bearer {bearer}", "Accept": "application/json"}
    retrying = _retrying(clock, OIDC_MAX_ATTEMPTS, clock.monotonic() + OIDC_WINDOW_S, 1.0)
    try:
        target = url + ("&" if "?" in url else "?") + urlencode({"audience": audience})
        response = retrying(_send, client, "GET", target, "the OIDC token request", headers)
    except _Transient as exc:
        raise MintError(str(exc)) from None
    if response.status != 200:
        body = _excerpt(response.text, [bearer])
        raise MintError(f"the OIDC token request returned HTTP {response.status}: {body}")
    value = _json_object(response, "the OIDC token request").get("value")
    if not isinstance(value, str) or not value:
        raise MintError("the OIDC token response has no value")
    return value


def oidc_token_for(url: str, bearer: str, audience: str, clock: Clock, client: Client | None = None) -> str:
    """:func:`request_oidc_token` for ``audience`` through ``client`` (default: a new one reading
    ``os.environ``): the receipt writer's request, docs/architecture.md "Signed receipts".
    Raises ``MintError``."""
    return request_oidc_token(url, bearer, audience, client=client or Client(), clock=clock)


def _mint_once(
    mint_url: str, jwt: str, body: dict[str, Any], client: Client, clock: Clock, deadline: float
) -> MintedToken:
    """One mint exchange with its own transport/5xx retries (5 attempts, waits 1, 2, 4, 8 s)."""
    url = mint_url.rstrip("/") + "/v1/token"
    headers = {"Authorization": f"Bearer {jwt}", "Content-Type": "application/json", "Accept": "application/json"}
    retrying = _retrying(clock, MINT_MAX_ATTEMPTS, deadline, 1.0)
    response = retrying(_send, client, "POST", url, "the mint", headers, body)
    if response.status != 200:
        raise MintError(f"mint returned HTTP {response.status}: {_excerpt(response.text, [jwt])}")
    data = _json_object(response, "the mint")
    token, expires = data.get("token"), data.get("expires_at")
    if not isinstance(token, str) or not token:
        raise MintError("the mint response has no token")
    expires_raw = expires if isinstance(expires, str) else ""
    return MintedToken(token=token, expires_at=parse_time(expires_raw), expires_at_raw=expires_raw)


def _retry_warning(log: Log | None) -> Callable[[tenacity.RetryCallState], None]:
    """The WARN line before another mint exchange; the token is never in it."""

    def warn(state: tenacity.RetryCallState) -> None:
        if log is not None and state.outcome is not None:
            log(
                "warning",
                f"Minting the agent token failed (attempt {state.attempt_number}/{FORMAT_MAX_ATTEMPTS}): "
                f"{state.outcome.exception()}; retrying in {state.upcoming_sleep:g}s",
            )

    return warn


def mint_role_token(
    mint_url: str,
    jwt: str,
    role: str,
    repos: Sequence[str],
    level: str = "write",
    *,
    client: Client,
    clock: Clock,
    log: Log | None = None,
) -> MintedToken:
    """Exchange the OIDC ``jwt`` for a role token: ``POST <mint_url>/v1/token`` with
    ``{"role", "level", "repos"}`` (WIRE; ``level`` omitted when empty).

    Transport errors and 5xx are retried inside one exchange; a token that fails the format
    check, or an exchange whose retries ran out, is retried up to 4 exchanges in all (waits 2,
    4, 8 s, WARN through ``log``); the whole call stays within 120 s.  Raises ``MintError``,
    or ``ConfigError`` before any request when ``mint_url_allowed`` refuses ``mint_url``.
    """
    _check_mint_url(mint_url)
    body: dict[str, Any] = {"role": role}
    if level:
        body["level"] = level
    body["repos"] = list(repos)
    deadline = clock.monotonic() + MAX_MINT_DURATION_S
    outer = _retrying(clock, FORMAT_MAX_ATTEMPTS, deadline, 2.0, (_BadFormat,), _retry_warning(log))

    def attempt() -> MintedToken:
        minted = _mint_once(mint_url, jwt, body, client, clock, deadline)
        if not TOKEN_FORMAT_RE.fullmatch(minted.token):
            raise _BadFormat("the minted token has an unexpected format")
        return minted

    try:
        return outer(attempt)
    except (_Transient, _BadFormat) as exc:
        raise MintError(str(exc)) from None


def _check_mint_url(mint_url: str) -> None:
    """Raise ``ConfigError`` (exit 2) when ``core.tokens.policy.mint_url_allowed`` refuses ``mint_url``.

    The URL itself is never part of the message (it may carry a password).
    """
    if not mint_url_allowed(mint_url):
        raise ConfigError(
            "mint_url must be an https:// URL, or http://localhost / http://127.0.0.1, "
            "with no user@ part; no token was requested"
        )


def mint_for_run(
    *,
    oidc_url: str,
    oidc_bearer: str,
    mint_url: str,
    role: str,
    repos: Sequence[str],
    level: str = "write",
    client: Client | None = None,
    clock: Clock,
    log: Log,
    mask: Callable[[str], None],
) -> MintedToken:
    """The whole sequence for a run: START line, OIDC JWT, exchange, DONE line.

    ``mask`` (the ``::add-mask::`` writer) is called with the JWT and the role token before any
    later output.  ``client`` defaults to a new :class:`~fullsend.adapters.github.client.Client`.
    Raises ``ConfigError`` before any request when ``mint_url`` is refused
    (``core.tokens.policy.mint_url_allowed``), else ``MintError`` prefixed so the run can fail
    with it.
    """
    _check_mint_url(mint_url)
    client = client or Client()
    log("info", f"Minting the agent token (role: {role}, level: {level})")
    try:
        jwt = request_oidc_token(oidc_url, oidc_bearer, client=client, clock=clock)
        mask(jwt)
        minted = mint_role_token(mint_url, jwt, role, repos, level, client=client, clock=clock, log=log)
    except MintError as exc:
        raise MintError(f"agent token minting failed: {exc}") from None
    mask(minted.token)
    log("done", f"Agent token minted (expires {minted.expires_label or 'at an unknown time'})")
    return minted
