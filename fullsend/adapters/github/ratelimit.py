"""One rate-limit policy for every request to GitHub, REST and GraphQL (docs/rules.md#rate-limited).

GitHub's documented rule, for primary and secondary limits alike:

1. an answer with ``retry-after``: send nothing for that long (RFC 9110: delay-seconds or an
   HTTP-date; anything else is read as absent);
2. else, with ``x-ratelimit-remaining: 0``: send nothing before ``x-ratelimit-reset``;
3. else (a secondary limit without headers): wait at least one minute, then back off
   exponentially while the limit keeps answering.

Requests sent into an active limit can extend it, so :class:`RateLimitPolicy` remembers every limit
it was told about (also a successful answer that spent the last request) and
:func:`send_within_limits` asks it before each send.  A wait happens through the injected
``Clock``, and only while the caller's :class:`WaitBound` allows; a longer one raises
``RateLimited`` without sending.  What a refusal means is the caller's to decide (the watcher
settles, the pre-flight fails open, the receipt writer gives up).
"""

from __future__ import annotations

import email.utils
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from fullsend.core.scalars import format_time
from fullsend.errors import ForgeError, RateLimited

if TYPE_CHECKING:  # annotations only: the fast skip never loads the ports
    from fullsend.ports import Clock

MAX_ATTEMPTS = 5  # a request is sent at most 5 times (docs/architecture.md "Constants")
BACKOFF_MAX_S = 60.0  # the backoff of server errors and lost connections: 1, 2, 4, 8 s
SECONDARY_MIN_WAIT_S = 60.0  # GitHub: "wait for at least one minute before retrying"
SECONDARY_MAX_WAIT_S = 15 * 60.0  # the exponential backoff of a headerless limit stops growing here
RESET_MARGIN_S = 1.0  # x-ratelimit-reset is whole seconds: send nothing before the second after it
DEFAULT_MAX_WAIT_S = 60.0  # the wait a caller that names no bound accepts
SECONDARY = "secondary"  # a limit on the token as a whole, whatever the resource
_DIGITS_MAX = 12  # longer header numbers are not seconds anyone means


@dataclass(frozen=True)
class WaitBound:
    """How long one call may wait for rate limits, in total: ``max_wait_s`` seconds (``None`` =
    no duration bound) and never past ``until`` (an aware instant, ``None`` = no instant bound)."""

    max_wait_s: float | None = DEFAULT_MAX_WAIT_S
    until: datetime | None = None

    def allows(self, total_wait_s: float, ends_at: datetime) -> bool:
        """True when a total wait of ``total_wait_s`` seconds, ending at ``ends_at``, is within the bound."""
        if self.max_wait_s is not None and total_wait_s > self.max_wait_s:
            return False
        return self.until is None or ends_at <= self.until


@dataclass(frozen=True)
class Answer:
    """What came back: status, lower-cased headers, the body text."""

    status: int
    headers: Mapping[str, str]
    text: str


class Transient(Exception):
    """An attempt that may succeed when repeated (a lost connection, 5xx, an undecodable GET)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class _Limited(Transient):
    """A rate-limited answer: never processed by GitHub, so it may be repeated (writes too)."""


def retry_after_s(value: str, now: datetime) -> float | None:
    """``Retry-After`` per RFC 9110 (section 10.2.3): delay-seconds (ASCII digits) or an HTTP-date (its
    distance from ``now``, never negative).  ``None`` for an absent or unreadable value."""
    text = (value or "").strip()
    if not text:
        return None
    if text.isascii() and text.isdigit():
        return float(int(text)) if len(text) <= _DIGITS_MAX else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)  # HTTP-dates are GMT
    return max(0.0, (when - now).total_seconds())


def reset_at(headers: Mapping[str, str]) -> datetime | None:
    """``x-ratelimit-reset`` (epoch seconds) as an aware UTC instant; ``None`` when absent or unreadable."""
    text = headers.get("x-ratelimit-reset", "").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > _DIGITS_MAX:
        return None
    try:
        return datetime.fromtimestamp(int(text), UTC)
    except (OverflowError, OSError, ValueError):
        return None


def is_rate_limited(status: int, headers: Mapping[str, str], text: str) -> bool:
    """429, or a 403 that says it is a rate limit (a header of the rule, or the words in its message)."""
    if status == 429:
        return True
    if status != 403:
        return False
    if headers.get("retry-after", "").strip() or headers.get("x-ratelimit-remaining", "").strip() == "0":
        return True
    return "rate limit" in text.lower()


class RateLimitPolicy:
    """The limits one token is under; shared by its REST and GraphQL clients.  Thread-safe.

    ``resource`` keys follow ``x-ratelimit-resource`` (``core``, ``graphql`` …); a ``retry-after``
    or headerless limit holds the whole token (``secondary``).
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._until: dict[str, datetime] = {}
        self._strikes = 0  # consecutive headerless limits: the exponent of the backoff
        self._lock = threading.Lock()

    def active_until(self, resource: str) -> datetime | None:
        """The instant before which nothing may be sent for ``resource``, or ``None`` when free."""
        now = self._clock.now()
        with self._lock:
            ends = [t for t in (self._until.get(resource), self._until.get(SECONDARY)) if t is not None and t > now]
        return max(ends) if ends else None

    def note(self, resource: str, answer: Answer) -> datetime | None:
        """Learn from an answer.  Returns the end of the limit a rate-limited answer reports (rules
        1-3), else ``None`` (an answer that spent the last request still blocks its resource)."""
        now = self._clock.now()
        res = answer.headers.get("x-ratelimit-resource", "").strip() or resource
        exhausted = answer.headers.get("x-ratelimit-remaining", "").strip() == "0"
        if not is_rate_limited(answer.status, answer.headers, answer.text):
            if 200 <= answer.status < 400:
                with self._lock:
                    self._strikes = 0
                reset = reset_at(answer.headers) if exhausted else None
                if reset is not None:
                    self._block(res, reset + timedelta(seconds=RESET_MARGIN_S))
            return None
        asked = retry_after_s(answer.headers.get("retry-after", ""), now)
        reset = reset_at(answer.headers) if exhausted else None
        if asked is not None:
            key, until = SECONDARY, now + timedelta(seconds=asked)
        elif reset is not None:
            key, until = res, max(reset + timedelta(seconds=RESET_MARGIN_S), now)
        else:
            with self._lock:
                self._strikes += 1
                wait_s = min(SECONDARY_MIN_WAIT_S * 2 ** min(self._strikes - 1, 10), SECONDARY_MAX_WAIT_S)
            key, until = SECONDARY, now + timedelta(seconds=wait_s)
        self._block(key, until)
        return until

    def waited_until(self, until: datetime) -> None:
        """A caller slept until ``until``: every limit ending by then is over (also for a clock
        whose ``sleep`` does not move ``now``, as in tests)."""
        with self._lock:
            for key in [k for k, t in self._until.items() if t <= until]:
                del self._until[key]

    def _block(self, key: str, until: datetime) -> None:
        with self._lock:
            if key not in self._until or self._until[key] < until:
                self._until[key] = until


def send_within_limits(
    policy: RateLimitPolicy,
    clock: Clock,
    label: str,
    resource: str,
    bound: WaitBound,
    send: Callable[[], Answer],
    retry_transient: bool,
) -> Answer:
    """Send through the policy: wait out (or refuse) a known limit before every attempt, note every
    answer, repeat rate-limited answers and — when ``retry_transient`` (reads) — transient
    failures, at most :data:`MAX_ATTEMPTS` sends in all.

    Returns the first answer that is not rate limited.  Raises ``RateLimited`` when a limit
    outlasts ``bound`` (nothing sent into it) or limited answers used every attempt, and
    ``ForgeError`` (transient) when transient failures did; ``send``'s own errors pass through.
    """
    waited, last = [0.0], [""]

    def attempt() -> Answer:
        waited[0] += _wait_out(policy, clock, label + last[0], resource, bound, waited[0])
        answer = send()
        if policy.note(resource, answer) is not None:
            last[0] = f": {answer.status} rate limited"
            raise _Limited(f"{label}{last[0]}", answer.status)
        return answer

    def sleep(seconds: float) -> None:
        if seconds > 0:
            clock.sleep(seconds)

    repeat = _Limited if not retry_transient else Transient
    retrying = Retrying(
        stop=stop_after_attempt(MAX_ATTEMPTS),
        retry=retry_if_exception(lambda e: isinstance(e, repeat)),
        wait=_backoff_s,
        sleep=sleep,
        reraise=True,
    )
    try:
        return retrying(attempt)
    except _Limited as exc:
        until = policy.active_until(resource) or clock.now()
        raise RateLimited(
            f"{exc}; GitHub's limit for this token holds until {format_time(until)}",
            until,
            max(0.0, (until - clock.now()).total_seconds()),
            exc.status,
        ) from None
    except Transient as exc:
        raise ForgeError(str(exc), exc.status, transient=True) from None


def _wait_out(
    policy: RateLimitPolicy, clock: Clock, label: str, resource: str, bound: WaitBound, waited_s: float
) -> float:
    """Sleep until a known limit of ``resource`` ends, within ``bound``; returns the seconds slept.

    Raises ``RateLimited`` (nothing sent) when the wait would break the bound, ``ForgeError`` when
    the sleep was interrupted (the run is being cancelled).
    """
    until = policy.active_until(resource)
    if until is None:
        return 0.0
    wait_s = float(math.ceil(max(0.0, (until - clock.now()).total_seconds())))  # limits end on whole seconds
    if not bound.allows(waited_s + wait_s, until):
        raise RateLimited(
            f"{label}; not sent: GitHub's rate limit for this token holds until {format_time(until)}", until, wait_s
        )
    if not clock.sleep(wait_s):
        raise ForgeError(f"{label}: interrupted while waiting out a rate limit", None, transient=True)
    policy.waited_until(until)
    return wait_s


def _backoff_s(state: RetryCallState) -> float:
    """Server errors and lost connections: 1, 2, 4, 8 s.  A limited answer: nothing here (the next
    attempt waits the limit out before it is sent)."""
    exc = state.outcome.exception() if state.outcome else None
    if isinstance(exc, _Limited):
        return 0.0
    return min(2.0 ** (state.attempt_number - 1), BACKOFF_MAX_S)
